# bench/chaos outage (sourced by bench/chaos): the store has a bad day under load.
# shellcheck shell=bash

# Statuses of the answers recorded between two unix-ms instants: "200:n,206:n,…".
statuses_between() { # FILE FROM_MS TO_MS
  awk -F'\t' -v a="$2" -v b="$3" '$5 >= a && $5 < b {n[$3]++}
    END {for (s in n) printf "%s%s:%d", (k++ ? "," : ""), s, n[s]; if (!k) printf "none"}' "$1"
}

scenario_outage() {
  local kind=$1 baseline_s=10 error_s=30 html_s=60
  echo
  echo "-- outage ($kind): ${baseline_s} s healthy, ${error_s} s of 45 % 503, ${html_s} s of HTML pages with status 200, recovery; $rate uploads/s"
  reset_emulator
  new_database "$kind" "outage-$kind"
  local token port rec first count
  token=$(create_app)
  port=$(free_port)
  rec="$work/outage-$kind.answers"
  count=$((rate * (baseline_s + error_s + html_s + 30)))
  first=$next_body
  next_body=$((next_body + count))
  store_mode '{"mode":"up"}'
  # The per-store retry rate limit, when this build has it (store-b.retry-rate).
  local retry_rate="" rate_opts=()
  if "$receiptd_bin" --help 2>&1 | grep -q -- '--store-b.retry-rate'; then
    retry_rate=100
    rate_opts=(--store-b.retry-rate="$retry_rate")
  fi
  start_receiptd outage "$port" "${rate_opts[@]}"
  wait_listening outage || { tail -20 "$work/receiptd-outage.log"; failures+=("outage-$kind"); return; }
  start_load "$port" "$token" "$first" "$count" "$rec"
  local t_start t_error t_html t_recovery
  t_start=$(now_ms)
  sleep "$baseline_s"
  store_mode '{"mode":"error","status":503,"fraction":0.45}'
  t_error=$(now_ms)
  sleep "$error_s"
  store_mode '{"mode":"html","fraction":1}'
  t_html=$(now_ms)
  sleep "$html_s"
  # The load stops as the store recovers, so that every store call from now on is a retry.
  stop_load
  next_body=$((first + $(result_field used "$rec.out")))
  local jobs max_attempts
  jobs=$(sql "select count(*) from validation_jobs" | tr -d ' ')
  max_attempts=$(sql "select coalesce(max(attempts), 0) from validation_jobs" | tr -d ' ')
  # How far ahead the backoff put the last job: at most backoff_cap(attempts).
  local due_within_ms
  due_within_ms=$(sql "select coalesce(max(next_attempt_at), 0) from validation_jobs" | tr -d ' ')
  due_within_ms=$((due_within_ms > 0 ? due_within_ms - $(now_ms) : 0))
  store_mode '{"mode":"up"}'
  t_recovery=$(now_ms)
  # The store's calls per second while the queue drains (every one a revalidation).
  # Rates are divided by the time between the two readings as read (a reading late by
  # 150 ms would otherwise count 1.15 s of calls as one second's).
  local calls_before calls prev peak=0 total_calls drained="" n t_drained="" t_prev t_now rate
  calls_before=$(store_b_calls)
  prev=$calls_before
  t_prev=$(now_ms)
  while :; do
    n=$(pending_count)
    if [[ $n == 0 ]]; then t_drained=$(now_ms); break; fi
    if (( $(now_ms) - t_recovery > 180000 )); then drained="timeout ($n left)"; break; fi
    if (( $(now_ms) - t_prev >= 1000 )); then
      calls=$(store_b_calls)
      t_now=$(now_ms)
      rate=$(( (calls - prev) * 1000 / (t_now - t_prev) ))
      (( rate > peak )) && peak=$rate
      prev=$calls
      t_prev=$t_now
    fi
    sleep 0.1
  done
  calls=$(store_b_calls)
  total_calls=$((calls - calls_before))
  [[ -z $drained ]] && drained=$(awk -v d=$((t_drained - t_recovery)) 'BEGIN{printf "%.1f", d/1000}')
  # The bound: a job's next attempt is at most backoff_cap(attempts) = min(retry.max,
  # retry.initial * multiplier^attempts) away (checked: the last job was due within it),
  # then one poll interval, and the claims take jobs / (retry.batch per poll interval):
  # a ceiling of 400 jobs/s that the 2 shared cores may not reach (PostgreSQL: ~270/s),
  # so the drain fails only past twice the bound. With a retry rate limit, the claims
  # take jobs / rate.
  local bound
  bound=$(awk -v a="$max_attempts" -v j="$jobs" -v r="${retry_rate:-0}" 'BEGIN{
    cap = 1 * 2 ^ a; if (cap > 8) cap = 8; per_s = 100 / 0.25; if (r > 0 && r < per_s) per_s = r
    printf "%.1f", cap + 0.25 + j / per_s + 1 }')
  # After the drain, uploads are 200 again.
  local rec2="$work/outage-$kind.after"
  local first2=$next_body
  "$loadgen_bin" run --port="$port" --token="$token" --bodies="$bodies" --skip="$first2" \
    --count=200 --connections=8 --rate=100 --duration=2 --record="$rec2" --label=after >"$rec2.out" 2>&1
  next_body=$((first2 + $(result_field used "$rec2.out")))
  local rc=0
  stop_receiptd outage || rc=$?
  verify "$rec" "$rec2" || true
  row "phases" "healthy $(statuses_between "$rec" "$t_start" "$t_error"); 45 % 503 $(statuses_between "$rec" "$t_error" "$t_html"); HTML 200 $(statuses_between "$rec" "$t_html" "$t_recovery")"
  row "after the drain" "$(result_field statuses "$rec2.out") (200 again)"
  report_verify "outage-$kind"
  row "queue at recovery" "$jobs jobs, at most $max_attempts attempts each"
  row "last job due" "$(awk -v d="$due_within_ms" 'BEGIN{printf "%.1f", d/1000}') s after recovery (backoff cap 8 s)"
  row "time to drain" "$drained s after recovery ($(awk -v j="$jobs" -v d="$drained" 'BEGIN{if (d > 0) printf "%.0f", j/d; else print "-"}') jobs/s); bound $bound s (min(retry.max 8 s, retry.initial 1 s × 2^$max_attempts) + poll 0.25 s + $jobs jobs at ${retry_rate:-100 per poll of 0.25 s, i.e. 400}/s + 1 s)"
  row "store calls" "$total_calls while draining, peak $peak/s (windows of ≥ 1 s)${retry_rate:+; store-b.retry-rate $retry_rate/s}"
  if [[ -z $retry_rate ]]; then
    echo "   TODO: the per-store retry rate limit (store-b.retry-rate) is not in this build; the peak above is unthrottled. The check awaits those options."
  elif ((peak > retry_rate * 11 / 10 + 1)); then
    # The limiter's burst is a tenth of a second's worth: 10 % + 1 above the rate.
    say "outage: the store saw $peak retries/s, over store-b.retry-rate $retry_rate"
    failures+=("outage-$kind-rate")
  fi
  row "receiptd exit" "$rc (SIGTERM); log lines with error/fail: $(grep -ciE 'error|fail' "$work/receiptd-outage.log" || true)"
  if ((due_within_ms > 8000 + 500)); then
    say "outage: a job was scheduled beyond the backoff cap"
    failures+=("outage-$kind-backoff")
  fi
  if [[ $drained == timeout* ]] || awk -v d="$drained" -v b="$bound" 'BEGIN{exit !(d > 2 * b)}'; then
    say "outage: the queue did not drain within twice the bound"
    failures+=("outage-$kind-drain")
  fi
  return 0
}

# bench/chaos kill9 (sourced by bench/chaos): SIGKILL at random moments under load.
# shellcheck shell=bash

rand_seconds() { # MIN MAX -> a random duration in between, 2 decimals
  awk -v lo="$1" -v hi="$2" -v r="$RANDOM" 'BEGIN{printf "%.2f", lo + (hi - lo) * r / 32767}'
}

scenario_kill9() {
  local kind=$1
  echo
  echo "-- kill9 ($kind): $cycles SIGKILLs of receiptd under $rate uploads/s"
  reset_emulator
  new_database "$kind" "kill9-$kind"
  local token port rec first count
  token=$(create_app)
  port=$(free_port)
  rec="$work/kill9-$kind.answers"
  count=$((rate * (cycles * 4 + 60)))
  first=$next_body
  next_body=$((next_body + count))
  # What the store does during a cycle: answers at once, slowly (under the 1 s store
  # deadline: 200), past the deadline (206), or 503 for 30 % of the calls (206).
  local modes=('{"mode":"up"}' '{"mode":"slow","delay_ms":300}' '{"mode":"slow","delay_ms":1500}'
               '{"mode":"error","status":503,"fraction":0.3}')
  store_mode "${modes[3]}"
  start_receiptd k9 "$port"
  wait_listening k9 || { tail -20 "$work/receiptd-k9.log"; say "receiptd did not start"; failures+=("kill9-$kind"); return; }
  start_load "$port" "$token" "$first" "$count" "$rec"
  local c t0=0 started_at during_start=0 restarts=0 restart_total_ms=0 restart_max_ms=0 ms
  started_at=$(now_ms)
  for c in $(seq "$cycles"); do
    if ((RANDOM % 10 == 0)); then
      sleep "$(rand_seconds 0 0.3)" # while it starts: opening the database, binding
      during_start=$((during_start + 1))
    else
      if ! wait_listening k9 60; then
        tail -20 "$work/receiptd-k9.log"; say "receiptd did not come back (cycle $c)"
        failures+=("kill9-$kind"); stop_load; return
      fi
      ms=$(( $(now_ms) - t0 ))
      if ((c > 1)); then
        restarts=$((restarts + 1)); restart_total_ms=$((restart_total_ms + ms))
        ((ms > restart_max_ms)) && restart_max_ms=$ms
      fi
      sleep "$(rand_seconds 0.3 2.5)"
    fi
    store_mode "${modes[RANDOM % ${#modes[@]}]}"
    kill9 k9
    start_receiptd k9 "$port"
    t0=$(now_ms)
  done
  wait_listening k9 60 || { tail -20 "$work/receiptd-k9.log"; failures+=("kill9-$kind"); }
  sleep 2
  stop_load
  next_body=$((first + $(result_field used "$rec.out")))
  local load_s=$(( ($(now_ms) - started_at) / 1000 ))
  # The store heals; every pending upload must reach its final state.
  store_mode '{"mode":"up"}'
  local drained
  drained=$(drain 180) || true
  local rc=0
  stop_receiptd k9 || rc=$?
  verify "$rec" || true
  local out="$rec.out"
  row "cycles" "$cycles SIGKILLs over ${load_s} s ($during_start while starting); restart to listening avg $((restarts ? restart_total_ms / restarts : 0)) ms, max $restart_max_ms ms"
  report_verify "kill9-$kind"
  row "connection errors" "$(result_field errors "$out") uploads out when the connection died, $(result_field connect_failures "$out") connects refused (receiptd away)"
  row "time to drain" "$drained s after the store healed (retry.max 8 s, lease 5 s)"
  row "receiptd exit" "$rc (SIGTERM at the end); log lines with error/fail: $(grep -ciE 'error|fail' "$work/receiptd-k9.log" || true)"
  grep -iE 'error|fail' "$work/receiptd-k9.log" | sed -E 's/^[0-9TZ:. -]+//; s/trace_id=[^ ]*//' \
    | cut -c1-150 | sort | uniq -c | sort -rn | head -5 | sed 's/^/     /' || true
  [[ $drained == timeout* ]] && failures+=("kill9-$kind-drain")
  return 0
}

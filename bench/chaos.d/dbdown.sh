# bench/chaos dbdown (sourced by bench/chaos): PostgreSQL restarted under load.
# shellcheck shell=bash

pg_as_owner() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_stop() { pg_as_owner "$pg_bin/pg_ctl" -D "$pg_dir/data" -w -t 30 -m fast stop >/dev/null; }
pg_start() { # the options scripts/test-postgres starts it with, on the same port
  pg_as_owner "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 30 start \
    -o "-p $(cat "$pg_dir/port") -c listen_addresses=127.0.0.1 -c unix_socket_directories=''" >/dev/null
}

# The first answer with STATUS at or after FROM_MS: its unix ms, or "none".
first_status_after() { # FILE STATUS FROM_MS
  awk -F'\t' -v s="$2" -v a="$3" '$3 == s && $5 >= a && (!f || $5 < f) {f = $5}
    END {if (f) print f; else print "none"}' "$1"
}

scenario_dbdown() {
  local away_s=5
  echo
  echo "-- dbdown (postgresql): the cluster stopped (pg_ctl stop -m fast) for ${away_s} s under $rate uploads/s"
  reset_emulator
  new_database postgresql dbdown
  local token port rec first count
  token=$(create_app)
  port=$(free_port)
  rec="$work/dbdown.answers"
  count=$((rate * 60))
  first=$next_body
  next_body=$((next_body + count))
  # Some uploads 206 (a job to commit too), most 200.
  store_mode '{"mode":"error","status":503,"fraction":0.2}'
  start_receiptd dbdown "$port"
  wait_listening dbdown || { tail -20 "$work/receiptd-dbdown.log"; failures+=(dbdown); return; }
  start_load "$port" "$token" "$first" "$count" "$rec"
  sleep 8
  local t_stop t_up t_back
  t_stop=$(now_ms)
  pg_stop
  sleep "$away_s"
  pg_start
  t_up=$(now_ms)
  sleep 20
  stop_load
  next_body=$((first + $(result_field used "$rec.out")))
  store_mode '{"mode":"up"}'
  local drained
  drained=$(drain 120) || true
  local alive=yes rc=0
  kill -0 "${rd_pid[dbdown]}" 2>/dev/null || alive=no
  stop_receiptd dbdown || rc=$?
  verify "$rec" || true
  t_back=$(first_status_after "$rec" 200 "$t_up")
  local back_s=never
  [[ $t_back != none ]] && back_s=$(awk -v d=$((t_back - t_up)) 'BEGIN{printf "%.1f", d/1000}')
  local n503 ra
  n503=$(awk -F'\t' '$3 == 503' "$rec" | wc -l)
  ra=$(result_field retry_after_503 "$rec.out")
  row "while away" "$(statuses_between "$rec" "$t_stop" "$t_up") (from the stop to the cluster answering again, $(( (t_up - t_stop) / 1000 )) s)"
  row "after" "$(statuses_between "$rec" "$t_up" "$(now_ms)")"
  row "503 answers" "$n503, with Retry-After $ra"
  row "200 again" "${back_s} s after the cluster answered again (without a restart; receiptd alive: $alive)"
  report_verify dbdown
  row "time to drain" "$drained s"
  row "receiptd exit" "$rc (SIGTERM at the end)"
  grep -iE 'error|fail' "$work/receiptd-dbdown.log" | sed -E 's/^[0-9TZ:. -]+//; s/trace_id=[^ ]*//' \
    | cut -c1-160 | sort | uniq -c | sort -rn | head -5 | sed 's/^/     /' || true
  [[ $alive == yes && $back_s != never ]] || failures+=(dbdown-recovery)
  [[ $n503 == "$ra" ]] || failures+=(dbdown-retry-after)
  [[ $drained == timeout* ]] && failures+=(dbdown-drain)
  return 0
}

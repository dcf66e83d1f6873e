# bench/chaos two (sourced by bench/chaos): two instances on one PostgreSQL, one killed.
# shellcheck shell=bash

# outcome=… counters of receiptd_revalidation_jobs_total and the claims, as one line.
job_figures() { # PORT
  local m
  m=$(curl -sf "http://127.0.0.1:$1/metrics") || { echo "claimed ? completed ? rescheduled ? overtaken ? given_up ?"; return; }
  awk '
    $1 == "receiptd_revalidation_jobs_claimed_total" {c = $2}
    $1 ~ /^receiptd_revalidation_jobs_total\{/ {
      match($1, /outcome="[a-z_]+"/); o = substr($1, RSTART + 9, RLENGTH - 10); n[o] = $2 }
    END {printf "claimed %d completed %d rescheduled %d overtaken %d given_up %d",
      c, n["completed"], n["rescheduled"], n["overtaken"], n["given_up"]}' <<<"$m"
}
figure_of() { sed -n "s/.*$1 \([0-9?]*\).*/\1/p" <<<"$2"; } # NAME LINE

# A's leased jobs now: "ID<TAB>LEASE_UNTIL" lines.
leases_of() { sql "select id, lease_until from validation_jobs where lease_owner = '$1' and lease_until > $(now_ms)"; }
# Polls until none of the jobs listed (leases_of's output) is held by OWNER any more;
# prints "FIRST_MS ALL_MS" after SINCE_MS (ALL_MS "never" past 60 s).
takeover() { # OWNER SNAPSHOT SINCE_MS
  local ids held left first=""
  held=$(grep -c . <<<"$2" || true)
  ((held)) || { echo "- -"; return; }
  ids=$(cut -f1 <<<"$2" | sed "s/.*/'&'/" | paste -sd, -)
  while :; do
    left=$(sql "select count(*) from validation_jobs where id in ($ids) and lease_owner = '$1'" | tr -d ' ')
    [[ -z $first && $left -lt $held ]] && first=$(( $(now_ms) - $3 ))
    if [[ $left == 0 ]]; then echo "$first $(( $(now_ms) - $3 ))"; return; fi
    (( $(now_ms) - $3 > 60000 )) && { echo "${first:--} never"; return; }
    sleep 0.1
  done
}
lease_left() { cut -f2 -s <<<"$1" | awk -v t="$2" '$1 - t > m {m = $1 - t} END {printf "%.1f", m / 1000}'; }

scenario_two() {
  local lease_s=5
  echo
  echo "-- two (postgresql): instances A and B on one database, the store failing then slow; A frozen (SIGSTOP) past its leases, then SIGKILLed holding leases"
  reset_emulator
  new_database postgresql two
  local token port_a port_b rec_a rec_b first count
  token=$(create_app)
  port_a=$(free_port)
  port_b=$(free_port)
  rec_a="$work/two-a.answers"
  rec_b="$work/two-b.answers"
  count=$((rate * 60))
  store_mode '{"mode":"error","status":503}'
  start_receiptd A "$port_a"
  start_receiptd B "$port_b"
  wait_listening A && wait_listening B || { tail -n 5 "$work"/receiptd-[AB].log; failures+=(two); return; }
  local inst_a inst_b
  inst_a=$(instance_of A)
  inst_b=$(instance_of B)
  # Half the load each.
  local saved_rate=$rate
  rate=$((rate / 2))
  first=$next_body
  start_load "$port_a" "$token" "$first" "$count" "$rec_a"
  local load_a=$loadgen_pid
  start_load "$port_b" "$token" "$((first + count))" "$count" "$rec_b"
  local load_b=$loadgen_pid
  rate=$saved_rate
  sleep 8 # every upload 206: the queue grows
  store_mode '{"mode":"slow","delay_ms":700}' # under the store deadline: jobs complete, slowly
  sleep 2
  # A freezes (a stalled VM, a long pause) with jobs leased and calls out: B takes the
  # jobs over once the leases run out; when A thaws its late results are fenced out.
  local snap1 t_stop taken1 figs_a1
  snap1=$(leases_of "$inst_a")
  t_stop=$(now_ms)
  kill -STOP "${rd_pid[A]}"
  taken1=$(takeover "$inst_a" "$snap1" "$t_stop")
  kill -CONT "${rd_pid[A]}"
  store_mode '{"mode":"error","status":503}' # the queue grows again
  sleep 3
  figs_a1=$(job_figures "$port_a")
  # A's load stops first, so that no upload is out when A dies (every job A made was
  # answered 206); then, the store slow again, A dies holding leases.
  loadgen_pid=$load_a; stop_load
  sleep 3
  store_mode '{"mode":"slow","delay_ms":700}'
  sleep 1
  local snap2 t_kill taken2 figs_a
  snap2=$(leases_of "$inst_a")
  figs_a=$(job_figures "$port_a")
  t_kill=$(now_ms)
  kill9 A
  taken2=$(takeover "$inst_a" "$snap2" "$t_kill")
  store_mode '{"mode":"up"}'
  sleep 3
  loadgen_pid=$load_b; stop_load
  next_body=$((first + 2 * count))
  local drained
  drained=$(drain 120) || true
  local figs_b rc=0
  figs_b=$(job_figures "$port_b")
  stop_receiptd B || rc=$?
  verify "$rec_a" "$rec_b" || true
  local n206 done_a done_b over_a over_b
  n206=$(awk -F'\t' '$3 == 206' "$rec_a" "$rec_b" | wc -l)
  done_a=$(figure_of completed "$figs_a"); done_b=$(figure_of completed "$figs_b")
  over_a=$(figure_of overtaken "$figs_a"); over_b=$(figure_of overtaken "$figs_b")
  row "instance A" "$inst_a: $figs_a (its /metrics just before the SIGKILL)"
  row "instance B" "$inst_b: $figs_b (at the end)"
  row "A frozen (SIGSTOP)" "$(grep -c . <<<"$snap1" || true) jobs leased, leases ran $(lease_left "$snap1" "$t_stop") s more at most (retry.lease ${lease_s} s); B took the first after ${taken1% *} ms, all after ${taken1#* } ms; A thawed: $figs_a1"
  row "A killed (SIGKILL)" "$(grep -c . <<<"$snap2" || true) jobs leased, leases ran $(lease_left "$snap2" "$t_kill") s more at most; B took the first after ${taken2% *} ms, all after ${taken2#* } ms"
  row "jobs completed" "A $done_a + B $done_b = $((done_a + done_b)) for $n206 uploads answered 206 (one job each); fenced out: A $over_a, B $over_b"
  row "store calls" "products.get $(store_b_calls) (uploads and revalidations, both instances)"
  report_verify two
  row "time to drain" "$drained s"
  row "B exit" "$rc (SIGTERM)"
  (( done_a + done_b <= n206 )) || { say "two: more completions than jobs"; failures+=(two-completed-twice); }
  [[ ${taken1#* } != never && ${taken2#* } != never ]] || failures+=(two-takeover)
  return 0
}

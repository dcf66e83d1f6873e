# bench/chaos diskfull (sourced by bench/chaos): SQLite out of space, then read-only.
# shellcheck shell=bash

# One phase of a diskfull run: LABEL, then the load's record between two instants.
diskfull_report() { # LABEL REC T_BREAK T_FIX LOGNAME
  local label=$1 rec=$2 t_break=$3 t_fix=$4 log=$5 t_back back_s=never n503 line
  t_back=$(first_status_after "$rec" 200 "$t_fix")
  [[ $t_back != none ]] && back_s=$(awk -v d=$((t_back - t_fix)) 'BEGIN{printf "%.1f", d/1000}')
  n503=$(awk -F'\t' -v a="$t_break" -v b="$t_fix" '$3 == 503 && $5 >= a && $5 < b' "$rec" | wc -l)
  row "$label: broken" "$(statuses_between "$rec" "$t_break" "$t_fix")"
  row "$label: 503s" "$n503 (with Retry-After: $(result_field retry_after_503 "$rec.out") of $(awk -F'\t' '$3 == 503' "$rec" | wc -l) in the run)"
  line=$(grep -m1 -iE 'full|read-?only|database.*fail' "$work/receiptd-$log.log" | cut -c1-220 || true)
  row "$label: log line" "${line:-(none)}"
  row "$label: 200 again" "${back_s} s after the fix (no restart)"
  [[ $back_s != never && $n503 -gt 0 ]] || failures+=("diskfull-$label")
}

scenario_diskfull() {
  echo
  echo "-- diskfull (sqlite): the database's tmpfs filled up then freed; the database read-only then writable"
  if [[ $(id -u) != 0 ]]; then
    echo "   skipped: needs root (mount -t tmpfs, setpriv)"
    return 0
  fi
  reset_emulator
  store_mode '{"mode":"up"}'
  local mnt="$work/small"
  mkdir -p "$mnt"
  mount -t tmpfs -o size=32m tmpfs "$mnt"
  mounts+=("$mnt")
  new_database sqlite diskfull "$mnt"
  local token port rec first count
  token=$(create_app)
  port=$(free_port)
  rec="$work/diskfull.answers"
  count=$((rate * 60))
  first=$next_body
  next_body=$((next_body + count))
  start_receiptd full "$port"
  wait_listening full || { tail -20 "$work/receiptd-full.log"; failures+=(diskfull); return; }
  start_load "$port" "$token" "$first" "$count" "$rec"
  sleep 3
  local t_full t_freed
  dd if=/dev/zero of="$mnt/filler" bs=64k status=none 2>/dev/null || true # until ENOSPC
  t_full=$(now_ms)
  sleep 6
  rm -f "$mnt/filler"
  t_freed=$(now_ms)
  sleep 6
  stop_load
  next_body=$((first + $(result_field used "$rec.out")))
  local alive=yes rc=0
  kill -0 "${rd_pid[full]}" 2>/dev/null || alive=no
  stop_receiptd full || rc=$?
  verify "$rec" || true
  diskfull_report "disk full" "$rec" "$t_full" "$t_freed" full
  report_verify diskfull
  row "receiptd" "alive through it: $alive; exit $rc (SIGTERM at the end)"
  [[ $alive == yes ]] || failures+=(diskfull-crash)

  # Read-only: root writes through any permission, so receiptd runs as nobody here. A
  # database made read-only under a running receiptd cannot be produced on this machine:
  # its open descriptors keep write access whatever the mode bits say, and remounting a
  # file system read-only is refused (EBUSY) while a file on it is open for writing. So
  # this is the start on a read-only database (file 444, directory 555): receiptd must
  # refuse to start with a clear line and a non-zero exit, not crash, and start once the
  # database is writable again. (Under a running receiptd, the write errors take the
  # disk-full path above.)
  echo "   -- read-only database (receiptd as nobody)"
  local rodir="$work/ro"
  mkdir -p "$rodir"
  new_database sqlite readonly "$rodir"
  token=$(create_app)
  chown -R nobody: "$rodir"
  chmod 444 "$rodir"/readonly.db*
  chmod 555 "$rodir"
  RUN_AS=65534 start_receiptd ro "$port"
  local t0 ro_rc=0 ro_s
  t0=$(now_ms)
  if wait_listening ro 15; then
    row "read-only: start" "receiptd started on a read-only database"
    stop_receiptd ro || true
  else
    wait "${rd_pid[ro]}" || ro_rc=$?
    unset "rd_pid[ro]"
    ro_s=$(awk -v d=$(( $(now_ms) - t0 )) 'BEGIN{printf "%.1f", d/1000}')
    row "read-only: start" "refused after ${ro_s} s, exit status $ro_rc$( ((ro_rc > 128)) && echo " (killed by signal $((ro_rc - 128)): a crash)")"
    row "read-only: log line" "$(grep -m1 -iE 'read-?only|cannot open' "$work/receiptd-ro.log" | cut -c1-240 || true)"
    ((ro_rc > 0 && ro_rc < 128)) || failures+=(readonly-start)
  fi
  chmod 755 "$rodir"
  chmod 644 "$rodir"/readonly.db*
  rec="$work/readonly.answers"
  first=$next_body
  RUN_AS=65534 start_receiptd ro "$port"
  if ! wait_listening ro 15; then
    row "read-only: writable" "receiptd did not start: $(grep -v '^----' "$work/receiptd-ro.log" | tail -1 | cut -c1-200)"
    failures+=(readonly-recovery)
    return 0
  fi
  "$loadgen_bin" run --port="$port" --token="$token" --bodies="$bodies" --skip="$first" \
    --count=300 --connections=8 --rate=100 --duration=3 --record="$rec" --label=rw >"$rec.out" 2>&1
  next_body=$((first + $(result_field used "$rec.out")))
  stop_receiptd ro || true
  row "read-only: writable" "started; uploads $(result_field statuses "$rec.out")"
  return 0
}

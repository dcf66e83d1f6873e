# Per-thread accounting of a process for the benchmarks (sourced by bench/load and
# bench/customers): how often each of its threads woke up, was preempted and ran.
#
#   thread_stats PID > FILE             one line per thread: tid name voluntary
#                                       involuntary-switches cpu-ticks
#   thread_table BEFORE AFTER N [UNIT]  per thread name, per unit of work (N of them,
#                                       default "upload") between two such files

# A thread that ends while it is read is left out.
thread_stats() {
  local t
  for t in /proc/"$1"/task/*; do
    awk -v tid="${t##*/}" 'FILENAME ~ /comm$/ {name = $1; next}
      /^voluntary_ctxt_switches/ {v = $2} /^nonvoluntary_ctxt_switches/ {n = $2}
      END {if (name != "") print tid, name, v, n}' "$t/comm" "$t/status" 2>/dev/null | tr '\n' ' '
    awk '{print $14 + $15}' "$t/stat" 2>/dev/null || echo
  done
}

# Threads of one name (a pool's workers) are summed.
thread_table() {
  join "$1" "$2" | awk -v n="$3" -v hz="$(getconf CLK_TCK)" '
    NF == 9 { name = $2; v[name] += $7 - $3; p[name] += $8 - $4; c[name] += $9 - $5 }
    END { for (k in v) if (n > 0) printf "     %-16s %5.2f wake-ups  %5.2f preemptions  %6.1f µs\n", k, v[k] / n, p[k] / n, c[k] * 1e6 / hz / n }' \
    | sort -k6 -nr
}

# bench/chaos abuse (sourced by bench/chaos): every attack docs/security.md bounds, all at
# once on PostgreSQL, beside one app's ordinary uploads; then what that app was promised.
# shellcheck shell=bash

# The bounds the guarantee is checked against; why each, in bench/README.md ("Abuse").
abuse_p99_bound_ms=3000   # the small uploads' p99
abuse_rss_bound_mib=512   # receiptd's peak RSS (VmHWM)
abuse_forged_row_bytes=$((4096 + 1024)) # a forged receipt as stored: its first 4 KiB and the rest of its row
abuse_webhook_bound_s=30  # the healthy endpoint has everything, this long after the drain

# new_app NAME OPTION…: creates an app; prints "ID TOKEN".
new_app() {
  local out
  out=$(cd "$root" && "$receiptctl_bin" --db.url="$(db_url_of)" --json app create --name="$1" "${@:2}")
  echo "$(grep -o '"id":"[^"]*"' <<<"$out" | head -1 | cut -d'"' -f4) $(grep -o '"token":"[^"]*"' <<<"$out" | cut -d'"' -f4)"
}
# new_webhook APP NAME: an endpoint of APP at the emulator's receiver NAME; prints its id.
new_webhook() {
  (cd "$root" && "$receiptctl_bin" --db.url="$(db_url_of)" --json webhook add "$1" \
    --url="$control/webhooks/$2") | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4
}
# signed_bodies PACKAGE COUNT: a file of COUNT genuine Play upload bodies of PACKAGE
# (signed once, cached beside the others); prints its path.
signed_bodies() {
  local file="$build_dir/bench-bodies/chaos-$1-$2.txt"
  if [[ ! -s $file ]]; then
    mkdir -p "$(dirname "$file")"
    say "signing $2 upload bodies of $1 (once; cached in $(dirname "$file"))"
    "$loadgen_bin" sign --key="$keypair/test_private_key_pkcs8.b64" --package="$1" \
      --product="$product" --count="$2" --prefix="abuse$(date +%s)" --out="$file"
  fi
  echo "$file"
}
kib() { awk -v b="$1" 'BEGIN{printf "%.0f KiB", b / 1024}'; }
mib() { awk -v b="$1" 'BEGIN{printf "%.1f MiB", b / 1048576}'; }

scenario_abuse() {
  local d=$abuse_duration small_rate=${rate_given:-50} outage_after=$((abuse_duration / 6))
  local stalled=2500 heavy_conns=3 forged_rate=2 over_rate=200 scrapers=4 retry_rate=200
  local hostile_package=com.example.abuse hostile_bundle=com.example.abuse.heavy
  echo
  echo "-- abuse (postgresql): ${d} s of every attack at once beside small uploads at ${small_rate}/s; the store fails from ${outage_after} s to the end"
  reset_emulator
  ctl PUT /control/store_b/accept_unregistered "{\"package_name\":\"$hostile_package\",\"kind\":\"product\"}"
  new_database postgresql abuse

  # ---- the apps: one genuine, one hostile --------------------------------------------
  local license genuine hostile genuine_id genuine_token hostile_id hostile_token
  license=$(tr -d '\r\n' <"$keypair/public_key.b64")
  genuine=$(new_app genuine --package-name="$package" --license-key="$license" \
    --service-account-file="$work/service-account.json")
  hostile=$(new_app hostile --package-name="$hostile_package" --license-key="$license" \
    --service-account-file="$work/service-account.json" --bundle-id="$hostile_bundle")
  read -r genuine_id genuine_token <<<"$genuine"
  read -r hostile_id hostile_token <<<"$hostile"
  [[ -n $genuine_token && -n $hostile_token ]] || { say "abuse: app create failed"; failures+=(abuse); return; }
  local healthy_endpoint hanging_endpoint
  healthy_endpoint=$(new_webhook "$genuine_id" genuine)
  hanging_endpoint=$(new_webhook "$hostile_id" hostile)
  ctl POST /control/webhooks/hostile/mode '{"hang":true}'
  # A long queue already there: a past outage's backlog, not due before 2100 (as
  # bench/load --queued-jobs), which every read of the queue figures counts.
  sql "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $abuse_backlog)
    INSERT INTO validation_jobs (id, record_kind, record_id, app_id, attempts, next_attempt_at,
      lease_owner, lease_until, version, last_error)
    SELECT 'backlog-' || i, 'store_b_purchase_order', 'backlog-' || i, '$hostile_id', 0,
      4102444800000, NULL, NULL, 0, '' FROM n; ANALYZE validation_jobs" >/dev/null

  # ---- what the attackers send -------------------------------------------------------
  local genuine_bodies hostile_bodies n_genuine forged_count
  n_genuine=$((small_rate * (d + 20)))
  ((n_genuine < 20000)) && n_genuine=20000
  genuine_bodies=$(signed_bodies "$package" "$n_genuine")
  hostile_bodies=$(signed_bodies "$hostile_package" 20000)
  # The heavy receipt, the root that signs it, and the forgeries: made once, cached.
  forged_count=$((forged_rate * d + 8))
  local heavy_dir="$build_dir/bench-bodies/abuse-heavy-$forged_count"
  if [[ ! -s $heavy_dir/forged.txt ]]; then
    mkdir -p "$heavy_dir"
    say "making a receipt of 2,000 purchases and $forged_count forgeries (once; cached in $heavy_dir)"
    "$heavy_bin" --bundle-id="$hostile_bundle" --purchases=2000 --body="$heavy_dir/heavy.txt" \
      --root="$heavy_dir/heavy-root.pem" --forged="$heavy_dir/forged.tmp" \
      --forged-count="$forged_count"
    mv "$heavy_dir/forged.tmp" "$heavy_dir/forged.txt"
  fi

  # ---- receiptd: the shipped limits, a metrics token -----------------------------------
  local port metrics_token store_a_url opts=() o
  port=$(free_port)
  metrics_token=$(openssl rand -hex 16)
  store_a_url="http://127.0.0.1:$(port_of store_a)"
  local saved_common=("${common_opts[@]}")
  common_opts=()
  for o in "${saved_common[@]}"; do [[ $o == --limits.* ]] || common_opts+=("$o"); done
  opts=(--metrics.token="$metrics_token" --store-b.retry-rate="$retry_rate"
        --store-a.production-url="$store_a_url/verifyReceipt"
        --store-a.sandbox-url="$store_a_url/sandbox/verifyReceipt"
        "--store-a.trust-roots=[\"config/trust/apple-root-ca.pem\",\"config/trust/apple-root-ca-g3.pem\",\"$heavy_dir/heavy-root.pem\"]")
  # ABUSE_TRACE=1: receiptd's trace on (receiptctl trace ID: where an upload's time went).
  [[ -n ${ABUSE_TRACE:-} ]] && opts+=(--trace.enabled=true --trace.file="$work/trace.jsonl")
  start_receiptd abuse "$port" "${opts[@]}"
  common_opts=("${saved_common[@]}")
  wait_listening abuse || { tail -20 "$work/receiptd-abuse.log"; failures+=(abuse); return; }
  local pid=${rd_pid[abuse]}
  local rss_before db_before receipts_before
  rss_before=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$pid/status")
  db_before=$(sql "select pg_database_size(current_database())" | tr -d ' ')
  receipts_before=$(sql "select pg_total_relation_size('store_a_receipts')" | tr -d ' ')

  # ---- everything at once --------------------------------------------------------------
  local t_start t_outage t_end t_recovery
  t_start=$(now_ms)
  # attack NAME COMMAND…: COMMAND in the background, its output in abuse-NAME.out.
  # ABUSE_ONLY=name,name… runs only those (and the small uploads): to find which
  # attack a failure comes from.
  local -A job=()
  attack() {
    [[ $1 == small || -z ${ABUSE_ONLY:-} || ,$ABUSE_ONLY, == *,$1,* ]] || return 0
    "${@:2}" >"$work/abuse-$1.out" 2>&1 &
    job[$1]=$!
    bg_pids+=("$!")
  }
  attack stall python3 "$here/stall_bodies.py" --port="$port" --connections="$stalled" --hold="$d" \
    --keep --target="/client/store_b/purchase_orders|made-up" \
    --target="/client/store_a/receipts|made-up" \
    --target="/notifications/store_b/$genuine_id?token=guess" \
    --target="/notifications/store_a/{uuid}"
  attack scrape-token "$loadgen_bin" flood --port="$port" --connections="$scrapers" \
    --token="$metrics_token" --label=scrape-token
  attack scrape-anonymous "$loadgen_bin" flood --port="$port" --connections="$scrapers" \
    --label=scrape-anonymous
  attack heavy "$loadgen_bin" run --port="$port" --token="$hostile_token" --bodies="$heavy_dir/heavy.txt" \
    --path=/client/store_a/receipts --connections="$heavy_conns" --repeat --source=127.0.0.2 \
    --duration="$d" --label=heavy
  attack over-rate "$loadgen_bin" run --port="$port" --token="$hostile_token" \
    --bodies="$hostile_bodies" --connections=256 --rate="$over_rate" --repeat --source=127.0.0.3 \
    --duration="$d" --label=over-rate
  attack forged "$loadgen_bin" run --port="$port" --token="$hostile_token" \
    --bodies="$heavy_dir/forged.txt" --path=/client/store_a/receipts --connections=4 \
    --rate="$forged_rate" --source=127.0.0.4 --duration="$d" \
    --record="$work/abuse-forged.answers" --label=forged
  local rec="$work/abuse-small.answers"
  attack small "$loadgen_bin" run --port="$port" --token="$genuine_token" \
    --bodies="$genuine_bodies" --connections=256 --rate="$small_rate" --source=127.0.0.10 \
    --duration="$d" --record="$rec" --label=small
  sleep "$outage_after"
  store_mode '{"mode":"error","status":503}'
  t_outage=$(now_ms)
  local name
  for name in small stall heavy over-rate forged; do
    [[ -n ${job[$name]:-} ]] && { wait "${job[$name]}" || true; }
  done
  for name in scrape-token scrape-anonymous; do
    [[ -n ${job[$name]:-} ]] && { kill -TERM "${job[$name]}" 2>/dev/null || true; wait "${job[$name]}" || true; }
  done
  t_end=$(now_ms)
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || true
    unset "rd_pid[abuse]"
    echo "   BROKEN: receiptd is gone; its log ends:"
    tail -5 "$work/receiptd-abuse.log" | sed 's/^/     /'
    failures+=(abuse)
    return 0
  fi
  local hwm_kib
  hwm_kib=$(awk '$1 == "VmHWM:" {print $2}' "/proc/$pid/status")

  # ---- the store heals: the small uploads' 206s validated within the bound -------------
  local jobs max_attempts drained t_drained="" n
  jobs=$(sql "select count(*) from validation_jobs where record_id not like 'backlog-%'" | tr -d ' ')
  max_attempts=$(sql "select coalesce(max(attempts), 0) from validation_jobs where record_id not like 'backlog-%'" | tr -d ' ')
  store_mode '{"mode":"up"}'
  t_recovery=$(now_ms)
  # The bound as bench/chaos outage's: the backoff's cap, a poll, the claims at the
  # retry rate, 1 s; a drain fails past twice the bound.
  local bound
  bound=$(awk -v a="$max_attempts" -v j="$jobs" -v r="$retry_rate" 'BEGIN{
    cap = 1 * 2 ^ a; if (cap > 8) cap = 8; printf "%.1f", cap + 0.25 + j / r + 1 }')
  drained=""
  while :; do
    n=$(sql "select (select count(*) from store_b_purchase_orders where app_id = '$genuine_id' and validation_state = 'pending')
                    + (select count(*) from validation_jobs where app_id = '$genuine_id')" | tr -d ' ')
    if [[ $n == 0 ]]; then t_drained=$(now_ms); break; fi
    if (( $(now_ms) - t_recovery > 180000 )); then drained="timeout ($n left)"; break; fi
    sleep 0.25
  done
  [[ -z $drained ]] && drained=$(awk -v d=$((t_drained - t_recovery)) 'BEGIN{printf "%.1f", d/1000}')

  # ---- the healthy app's webhooks: every event delivered ---------------------------------
  local undelivered webhooks_done="" t_hooks
  t_hooks=$(now_ms)
  while :; do
    undelivered=$(sql "select count(*) from webhook_deliveries where endpoint_id = '$healthy_endpoint' and state <> 'delivered'" | tr -d ' ')
    [[ $undelivered == 0 ]] && { webhooks_done=$(awk -v d=$(( $(now_ms) - t_hooks )) 'BEGIN{printf "%.1f", d/1000}'); break; }
    (( $(now_ms) - t_hooks > abuse_webhook_bound_s * 1000 )) && break
    sleep 0.25
  done
  local events delivered lag hanging
  events=$(sql "select count(*) from webhook_events where app_id = '$genuine_id'" | tr -d ' ')
  delivered=$(sql "select count(*) from webhook_deliveries where endpoint_id = '$healthy_endpoint' and state = 'delivered'" | tr -d ' ')
  lag=$(sql "select coalesce(percentile_cont(0.5) within group (order by x), 0)::bigint || ' ' ||
                    coalesce(percentile_cont(0.99) within group (order by x), 0)::bigint || ' ' || coalesce(max(x), 0)
             from (select d.delivered_at - e.created_at as x from webhook_deliveries d
                   join webhook_events e on e.id = d.event_id
                   where d.endpoint_id = '$healthy_endpoint' and d.state = 'delivered'
                     and e.created_at < $t_end) t")
  hanging=$(sql "select state || ':' || count(*) from webhook_deliveries where endpoint_id = '$hanging_endpoint' group by state order by state" | paste -sd, -)

  # ---- forged receipts: stored as what identifies them ---------------------------------
  local forged_402 forged_rows forged_stored forged_sent forged_row_bytes receipts_after db_after
  forged_402=$(cat "$work/abuse-forged.answers" 2>/dev/null | awk -F'\t' '$3 == 402 {n++} END {print n + 0}' || true)
  read -r forged_rows forged_stored forged_sent forged_row_bytes < <(sql "select count(*),
      coalesce(sum(octet_length(receipt_data)), 0), coalesce(sum(proof_size), 0), coalesce(sum(pg_column_size(r.*)), 0)
    from store_a_receipts r where app_id = '$hostile_id' and validation_state = 'rejected'" | tr '\t' ' ')
  receipts_after=$(sql "select pg_total_relation_size('store_a_receipts')" | tr -d ' ')
  db_after=$(sql "select pg_database_size(current_database())" | tr -d ' ')
  local heavy_row
  heavy_row=$(sql "select coalesce(sum(pg_column_size(r.*)), 0) from store_a_receipts r where app_id = '$hostile_id' and validation_state <> 'rejected'" | tr -d ' ')

  local rc=0
  stop_receiptd abuse || rc=$?
  sql "select purchase_token, id, validation_state, fraud_reason from store_b_purchase_orders where app_id = '$genuine_id'" >"$work/rows.tsv"
  sql "select record_kind, record_id from validation_jobs where app_id = '$genuine_id'" >"$work/jobs.tsv"
  /usr/bin/python3 "$here/chaos.d/verify.py" --answers="$rec" --rows="$work/rows.tsv" \
    --jobs="$work/jobs.tsv" >"$work/verify.out" || true

  # ---- figures ---------------------------------------------------------------------------
  local small stall field_of
  small=$(grep '^RESULT' "$work/abuse-small.out" || echo "RESULT none")
  stall=$(cat "$work/abuse-stall.out" 2>/dev/null || true)
  field_of() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" <<<" $2" | tail -1; }
  local heavy over forged scrape_t scrape_a
  heavy=$(grep -s '^RESULT' "$work/abuse-heavy.out" || echo "RESULT none")
  over=$(grep -s '^RESULT' "$work/abuse-over-rate.out" || echo "RESULT none")
  forged=$(grep -s '^RESULT' "$work/abuse-forged.out" || echo "RESULT none")
  scrape_t=$(grep -s '^RESULT' "$work/abuse-scrape-token.out" || echo "RESULT none")
  scrape_a=$(grep -s '^RESULT' "$work/abuse-scrape-anonymous.out" || echo "RESULT none")
  local p99 statuses
  p99=$(field_of p99_ms "$small")
  statuses=$(field_of statuses "$small")
  row "attack window" "$(awk -v d=$((t_end - t_start)) 'BEGIN{printf "%.1f", d/1000}') s; store 503 from $(awk -v d=$((t_outage - t_start)) 'BEGIN{printf "%.1f", d/1000}') s to the end; $abuse_backlog jobs queued before (not due)"
  row "stalled bodies" "$stalled at once (Content-Length 1 MiB, 64 KiB sent; uploads with made-up tokens, Play notifications with a wrong ?token=, App Store notifications of no app): $(field_of opened "$stall") opened in $(sed -n 's/.* in \([^ ]*\) .*/\1/p' <<<"$stall"), $(field_of reopened "$stall") reopened, at least $(field_of live_min "$stall") at any time; first answers $(field_of statuses "$stall")"
  row "/metrics flood" "$scrapers connections with metrics.token: $(field_of answered "$scrape_t") scrapes ($(field_of statuses "$scrape_t")); $scrapers without: $(field_of answered "$scrape_a") ($(field_of statuses "$scrape_a"))"
  row "heavy receipts" "$heavy_conns connections re-sending a $(( $(wc -c <"$heavy_dir/heavy.txt") / 1024 )) KiB receipt of 2,000 purchases: $(field_of answered "$heavy") answered ($(field_of statuses "$heavy")), p50 $(field_of p50_ms "$heavy") ms"
  row "forged receipts" "$(field_of answered "$forged") sent at ${forged_rate}/s, each distinct, $(( $(head -1 "$heavy_dir/forged.txt" | wc -c) / 1024 )) KiB: statuses $(field_of statuses "$forged")"
  row "over-rate client" "${over_rate}/s from one address: statuses $(field_of statuses "$over")"
  row "small uploads" "${small_rate}/s: $(field_of answered "$small") answered, statuses $statuses; p50 $(field_of p50_ms "$small") ms, p99 $p99 ms (bound $abuse_p99_bound_ms ms), max $(field_of max_ms "$small") ms"
  report_verify abuse
  row "206s validated" "$drained s after the store healed ($jobs jobs queued, ≤ $max_attempts attempts; bound $bound s, fails past twice that)"
  row "receiptd RSS" "before $((rss_before / 1024)) MiB, peak (VmHWM) $((hwm_kib / 1024)) MiB (bound $abuse_rss_bound_mib MiB)"
  row "healthy webhooks" "$delivered of $events events delivered (${webhooks_done:-not all} s after the drain); lag during the attack p50 $(cut -d' ' -f1 <<<"$lag") ms, p99 $(cut -d' ' -f2 <<<"$lag") ms, max $(cut -d' ' -f3 <<<"$lag") ms"
  row "hanging endpoint" "deliveries ${hanging:-none}"
  row "forged, stored" "$forged_rows rows of $(mib "$forged_sent") uploaded: $(kib "$forged_stored") of proof, rows $(kib "$forged_row_bytes") on disk (bound $(kib $((forged_rows * abuse_forged_row_bytes))))"
  row "database growth" "$(mib $((db_after - db_before))) in all; store_a_receipts $(mib $((receipts_after - receipts_before))) (the one heavy receipt's row $(kib "$heavy_row"))"
  row "receiptd exit" "$rc (SIGTERM); log lines with error/fail: $(grep -ciE 'error|fail' "$work/receiptd-abuse.log" || true)"

  # ---- the guarantee ---------------------------------------------------------------------
  local broken=()
  local odd
  odd=$(tr ',' '\n' <<<"$statuses" | awk -F: '$1 != 200 && $1 != 206 {printf "%s%s", (n++ ? "," : ""), $0}')
  [[ -n $odd || $statuses == none || -z $statuses ]] && broken+=("small uploads answered other than 200/206: ${odd:-none answered}")
  grep -q '^VIOLATION' "$work/verify.out" && broken+=("small uploads against the database (lost, wrong state or pending; above)")
  [[ $drained == timeout* ]] || awk -v d="$drained" -v b="$bound" 'BEGIN{exit !(d > 2 * b)}' \
    && broken+=("206s validated $drained s after the store healed, past twice the bound $bound s")
  awk -v p="${p99:-0}" -v b="$abuse_p99_bound_ms" 'BEGIN{exit !(p > b)}' \
    && broken+=("small uploads' p99 $p99 ms above $abuse_p99_bound_ms ms")
  ((hwm_kib > abuse_rss_bound_mib * 1024)) && broken+=("receiptd's peak RSS $((hwm_kib / 1024)) MiB above $abuse_rss_bound_mib MiB")
  [[ -z $webhooks_done ]] && broken+=("healthy endpoint: $undelivered deliveries not delivered $abuse_webhook_bound_s s after the drain")
  ((delivered < events)) && broken+=("healthy endpoint: $delivered deliveries of $events events")
  ((forged_rows < forged_402)) && broken+=("forged receipts: $forged_402 answered 402, $forged_rows stored")
  ((forged_row_bytes > forged_rows * abuse_forged_row_bytes)) \
    && broken+=("forged receipts take $(kib "$forged_row_bytes") stored, above $(kib $((forged_rows * abuse_forged_row_bytes)))")
  ((forged_402 == 0)) && broken+=("no forged receipt answered 402")
  [[ $(field_of statuses "$over") == *429:* ]] || broken+=("the over-rate client got no 429")
  local b
  for b in "${broken[@]}"; do echo "   BROKEN: $b"; done
  ((${#broken[@]})) && failures+=(abuse)
  return 0
}

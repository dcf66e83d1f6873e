#include "model/store_a/receipt_record.hpp"

#include "model/encoding.hpp"
#include "model/store_a/transaction_record.hpp"

namespace receiptd::model::store_a {

receipt_record make_record(const store_a_upload& u, const app& a, const verification& v,
                           std::string_view peer_ip, unix_ms now) {
  receipt_record r;
  r.app_id = a.id;
  // The re-upload key: what the signature covers when the bytes decoded (so a
  // receipt re-wrapped with other certificates is the same receipt), else the
  // bytes themselves.
  r.receipt_hash = v.receipt && !v.receipt->signed_content_hash.empty()
    ? v.receipt->signed_content_hash
    : sha256_hex(u.receipt_bytes);
  r.receipt_data = u.receipt_data;
  r.country_code = u.country_code;
  r.identifier_for_vendor = u.identifier_for_vendor;
  r.echo = u.common.echo(peer_ip);
  r.created_at = r.updated_at = now;
  r.terms.transfers = a.transfers;
  if (v.receipt) {
    r.style = v.receipt->style;
    r.bundle_id = v.receipt->bundle_id;
    r.env = v.receipt->env;
    r.said_at = v.receipt->signed_at;
  }
  if (v.reason != fraud_reason::none) {
    // A refused receipt is kept as its proof and the reason, not as what it claims.
    r.fraud = v.reason;
    r.state = validation_state::rejected;
    r.store_detail = v.detail;
    return r;
  }
  if (v.receipt)
    r.in_app_purchases = v.receipt->in_app;
  if (r.env == environment::xcode) {
    // Xcode StoreKit test receipts are signed with a key every Xcode ships with:
    // anyone can make one. Apple's servers do not know them, so the local check
    // is all there is, and only an app that opted in takes them.
    if (a.accept_storekit_test_receipts) {
      r.state = validation_state::validated;
      r.store_detail = "Xcode StoreKit test receipt: verified locally";
    } else {
      r.in_app_purchases.clear();
      r.fraud = fraud_reason::untrusted_certificate;
      r.state = validation_state::rejected;
      r.store_detail = "Xcode StoreKit test receipts are not accepted for this app "
                       "(receiptctl app update APP --accept-storekit-test-receipts)";
    }
  }
  return r;
}

verify_endpoint first_endpoint(const receipt_record& r) {
  return r.env != environment::production ? verify_endpoint::sandbox : verify_endpoint::production;
}

void apply_store_verdict(receipt_record& r, const store_verdict& v,
                         const std::vector<apple_in_app_purchase>& enriched) {
  model::apply_store_verdict(r, v);
  if (v.outcome == store_outcome::confirmed)
    r.in_app_purchases = enriched;
}

bool confirm_with_server_api(const receipt_record& r, confirmation how, bool app_has_key) {
  if (r.style != receipt_style::unified || how == confirmation::verify_receipt)
    return false;
  return how == confirmation::server_api || app_has_key;
}

std::optional<std::string> transaction_to_confirm(const receipt_record& r) {
  const apple_in_app_purchase* newest = nullptr;
  for (const auto& p : r.in_app_purchases)
    if (!newest || p.purchase_date.value_or(0) >= newest->purchase_date.value_or(0))
      newest = &p;
  if (!newest)
    return std::nullopt;
  return newest->transaction_id;
}

} // namespace receiptd::model::store_a

#include "model/store_a/transaction_record.hpp"

#include "model/encoding.hpp"
#include "model/store_time.hpp"

namespace receiptd::model::store_a {

namespace {

apple_transaction fields_of(const signed_transaction& t) {
  apple_transaction out;
  out.transaction_id = t.transaction_id;
  out.original_transaction_id = t.original_transaction_id;
  out.bundle_id = t.bundle_id;
  out.product_id = t.product_id;
  out.type = t.type;
  out.purchase_date = t.purchase_date;
  out.original_purchase_date = t.original_purchase_date;
  out.expires_date = t.expires_date;
  out.revocation_date = t.revocation_date;
  out.revocation_reason = t.revocation_reason;
  out.revocation_type = t.revocation_type;
  out.revocation_percentage = t.revocation_percentage;
  if (t.revocation_date)
    out.revocation_said_at = t.signed_date;
  out.app_account_token = t.app_account_token;
  out.quantity = t.quantity;
  out.storefront = t.storefront;
  out.price = t.price;
  out.currency = t.currency;
  out.ownership_type = t.in_app_ownership_type;
  out.is_upgraded = t.is_upgraded;
  out.offer_type = t.offer_type;
  out.offer_discount_type = t.offer_discount_type;
  out.offer_period = t.offer_period;
  out.app_transaction_id = t.app_transaction_id;
  out.billing_plan_type = t.billing_plan_type;
  out.commitment = t.commitment;
  return out;
}

void reject(transaction_record& r, fraud_reason reason, std::string detail) {
  apply_fraud(r, reason);
  r.store_detail = std::move(detail);
}

// The payload of a JWS that verified, as a transaction; an error names what
// is wrong with it. Apple signs the Xcode environment only under Xcode's own
// key, never its chain.
result<signed_transaction> transaction_of(const jws_verification& v) {
  auto t = parse_signed_transaction(v.payload);
  if (!t)
    return t;
  if (v.xcode != (t->env == environment::xcode))
    return field_error{"signed_transaction", "malformed_receipt",
                       v.xcode ? "a JWS under a StoreKit test root names another environment"
                               : "an App Store signed transaction names the Xcode environment"};
  return t;
}

} // namespace

transaction_record make_record(const store_a_transaction_upload& u, const app& a,
                               const jws_verification& v, std::string_view peer_ip, unix_ms now) {
  transaction_record r;
  r.app_id = a.id;
  r.signed_transaction = u.signed_transaction;
  r.transaction_key = "sha256:" + sha256_hex(u.signed_transaction);
  r.echo = u.common.echo(peer_ip);
  r.created_at = r.updated_at = now;
  r.terms.transfers = a.transfers;
  if (v.reason != fraud_reason::none) {
    // A refused JWS is kept as its proof and the reason, not as what it claims.
    reject(r, v.reason, v.detail);
    return r;
  }
  auto t = transaction_of(v);
  if (!t) {
    reject(r, fraud_reason::malformed_receipt, t.err().message());
    return r;
  }
  // Xcode numbers its test transactions from 0 on every machine: two testers'
  // transaction 0 are not one purchase, so those stay keyed by their JWS.
  if (!v.xcode)
    r.transaction_key = t->transaction_id;
  r.transaction = fields_of(*t);
  r.said_at = t->signed_date;
  r.env = t->env;
  if (t->bundle_id != a.bundle_id) {
    reject(r, fraud_reason::bundle_id_mismatch,
           "signed for bundle " + t->bundle_id.substr(0, 200) + ", not the app's");
    return r;
  }
  if (r.env == environment::xcode) {
    // Xcode makes its own signing key per project: anyone can sign such a
    // transaction. Apple's servers do not know it, so the local check is all
    // there is, and only an app that opted in takes it.
    if (a.accept_storekit_test_receipts) {
      r.state = validation_state::validated;
      r.store_detail = "Xcode StoreKit test transaction: verified locally";
    } else {
      reject(r, fraud_reason::untrusted_certificate,
             "Xcode StoreKit test transactions are not accepted for this app "
             "(receiptctl app update APP --accept-storekit-test-receipts)");
    }
  }
  return r;
}

result<signed_transaction> verified_server_transaction(std::string_view signed_info,
                                                       const trust_anchors& anchors) {
  auto fail = [](std::string why) {
    return field_error{"signedTransactionInfo", "unusable", std::move(why)};
  };
  auto checked = verify_jws(signed_info, anchors);
  if (checked.internal_error)
    return fail("verification failed internally: " + checked.detail);
  if (checked.reason != fraud_reason::none)
    return fail("signedTransactionInfo " + std::string(to_string(checked.reason)) + ": "
                + checked.detail);
  auto t = transaction_of(checked);
  if (!t)
    return fail("signedTransactionInfo: " + t.err().message());
  return t;
}

bool sandbox_first(const transaction_record& r) {
  return r.env != environment::production;
}

std::string apply_server_answer(transaction_record& r, const store_verdict& v,
                                std::string_view signed_info, const trust_anchors& anchors) {
  auto contradiction = [&](const signed_transaction& t) -> std::string {
    const auto& mine = r.transaction;
    const char* differs = t.transaction_id != mine.transaction_id ? "transactionId"
      : t.original_transaction_id != mine.original_transaction_id ? "originalTransactionId"
      : t.product_id != mine.product_id                           ? "productId"
      : t.bundle_id != mine.bundle_id                             ? "bundleId"
                                                                  : nullptr;
    if (!differs)
      return {};
    return std::string("the App Store's transaction has another ") + differs + " than the upload";
  };
  // Apple's answer is current on the transaction itself unless the record holds
  // what Apple signed later (a notification that overtook the call); what
  // notifications said about the subscription stays, and a revocation stays
  // until a REFUND_REVERSED undoes it (model/store_time.hpp).
  return apply_server_transaction(r, v, signed_info, anchors, contradiction,
                                  [&](const signed_transaction& t) {
                                    if (!not_older(t.signed_date, r.said_at))
                                      return;
                                    auto before = std::move(r.transaction);
                                    r.transaction = fields_of(t);
                                    keep_notified(r.transaction, before, true);
                                    r.said_at = t.signed_date;
                                  });
}

} // namespace receiptd::model::store_a

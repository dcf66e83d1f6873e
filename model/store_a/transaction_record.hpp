#pragma once
// From a StoreKit 2 upload and its local verification to a transaction record,
// and how the App Store Server API's answer lands on it.

#include <string_view>

#include "model/app.hpp"
#include "model/records.hpp"
#include "model/store_a/jws.hpp"
#include "model/upload_request.hpp"

namespace receiptd::model::store_a {

// The record as uploaded, keyed by its transactionId once the JWS verified
// under Apple's chain (else by its hash: records.hpp). Rejected with the fraud reason when the JWS
// did not verify (without what it claims), its payload is not a transaction
// (malformed_receipt), or it belongs to another bundle than the app's
// (bundle_id_mismatch); pending otherwise, for the Server API to confirm. A JWS
// under a StoreKit test root (environment xcode) never reaches Apple: validated
// when the app accepts StoreKit test receipts, untrusted_certificate when not.
transaction_record make_record(const store_a_transaction_upload& u, const app& a,
                               const jws_verification& v, std::string_view peer_ip, unix_ms now);

// Where to ask first: the environment the JWS names.
bool sandbox_first(const transaction_record& r);

// A Server API signedTransactionInfo verified like an upload and parsed as a
// transaction; the error's message says why it is unusable.
result<signed_transaction> verified_server_transaction(std::string_view signed_info,
                                                       const trust_anchors& anchors);

// How a Server API answer lands, the steps transactions and unified receipts
// share. A verdict other than confirmed applies as it is. A confirmed one counts
// only once `signed_info` verifies (else the record stays pending, for a retry,
// and the detail stored is returned for the operator's log); then
// `contradiction(t)` says what of Apple's transaction contradicts the record
// (store_rejected), or is empty and the record is validated in the answer's
// environment and `land(t)` takes the answer's fields.
template <class Record, class Contradiction, class Land>
std::string apply_server_transaction(Record& r, const store_verdict& v,
                                     std::string_view signed_info, const trust_anchors& anchors,
                                     Contradiction&& contradiction, Land&& land) {
  if (v.outcome != store_outcome::confirmed) {
    model::apply_store_verdict(r, v);
    return {};
  }
  auto t = verified_server_transaction(signed_info, anchors);
  if (!t) {
    auto pending
      = unreachable_verdict("App Store Server API answer unusable: " + t.err().message());
    model::apply_store_verdict(r, pending);
    return pending.detail;
  }
  if (std::string why = contradiction(*t); !why.empty()) {
    store_verdict rejected;
    rejected.outcome = store_outcome::rejected;
    rejected.detail = std::move(why);
    model::apply_store_verdict(r, rejected);
    return {};
  }
  store_verdict confirmed = v;
  confirmed.env = t->env;
  model::apply_store_verdict(r, confirmed);
  land(*t);
  return {};
}

// How the Server API's answer lands on the record. `v` is the store client's
// verdict (confirmed: a 200 carrying `signed_info`, the signedTransactionInfo).
// A confirmed answer counts only once `signed_info` verifies like an upload
// (else it is unusable: pending, for a retry) and names the same transaction,
// original transaction, product and bundle as the record (else store_rejected:
// Apple's own answer contradicts the upload). Then the record is validated, not
// fraud even when revoked, with the answer's fields (revocation, expiry, …)
// and environment. Returns why a confirmed answer was unusable (for the
// operator's log: Apple's answers should always verify), else "".
std::string apply_server_answer(transaction_record& r, const store_verdict& v,
                                std::string_view signed_info, const trust_anchors& anchors);

} // namespace receiptd::model::store_a

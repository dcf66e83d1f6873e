// StoreKit 2 signed transactions (POST /client/store_a/transactions): the upload
// body, verify_jws under the shipped roots (structure, ES256, x5c chain to Apple
// Root CA - G3 or the StoreKit test root), parse_signed_transaction, the record,
// the answer and the resource (jws_checks.hpp says what holds for verify_jws).
//
// The first byte picks how the rest is read:
//  - 0 (mod 3): the compact JWS as uploaded (Transaction.jwsRepresentation);
//  - 1: three fields separated by "|@|": header JSON, payload JSON, signature
//    bytes, base64url-encoded and joined here, so mutations reach the header
//    (alg, x5c) and the payload instead of breaking the base64url;
//  - 2: the request body, {"signed_transaction": …} with the echo fields.
// Its next bit says whether the app accepts StoreKit test (Xcode) transactions.

#include "model/store_a/transaction_record.hpp"
#include "tests/fuzz/jws_checks.hpp"
#include "tests/fuzz/upload_checks.hpp"

namespace {

using namespace receiptd;
namespace sa = model::store_a;

// What make_record may make of a verdict: a refused JWS keeps nothing of what
// it claims; only a JWS that verified is keyed by its transactionId.
void check_record(const model::transaction_record& r, const sa::jws_verification& v,
                  const model::app& app) {
  if (v.reason != model::fraud_reason::none) {
    FUZZ_CHECK(r.fraud == v.reason && r.state == model::validation_state::rejected);
    FUZZ_CHECK(r.transaction.transaction_id.empty() && r.transaction.bundle_id.empty());
  }
  if (r.transaction_key.rfind("sha256:", 0) != 0)
    FUZZ_CHECK(v.reason == model::fraud_reason::none && !v.xcode
               && r.transaction_key == r.transaction.transaction_id);
  if (r.state == model::validation_state::validated)
    FUZZ_CHECK(v.xcode && app.accept_storekit_test_receipts && r.env == model::environment::xcode);
  if (!r.is_fraud() && r.state != model::validation_state::validated)
    FUZZ_CHECK(r.state == model::validation_state::pending
               && r.transaction.bundle_id == app.bundle_id);
}

void check_signed_transaction(const model::store_a_transaction_upload& upload, bool accept_xcode) {
  auto v = fuzz::checked_verify_jws(upload.signed_transaction);

  // The payload as it claims to be, parsed whether or not it is signed: a
  // transaction, or field errors of the documented shape.
  std::optional<sa::signed_transaction> claimed;
  if (auto payload = fuzz::claimed_payload(upload.signed_transaction)) {
    auto t = sa::parse_signed_transaction(*payload);
    if (t) {
      for (const auto* id :
           {&t->transaction_id, &t->original_transaction_id, &t->bundle_id, &t->product_id})
        FUZZ_CHECK(!id->empty() && id->size() <= 256);
      FUZZ_CHECK(t->quantity >= 1);
      claimed = std::move(t).value();
    } else {
      for (const auto& e : t.errors())
        FUZZ_CHECK(e.field == "signed_transaction" && e.code == "malformed_receipt"
                   && !e.message.empty());
    }
  }
  if (v.reason == model::fraud_reason::none)
    FUZZ_CHECK(static_cast<bool>(sa::parse_signed_transaction(v.payload)) == claimed.has_value());

  auto app = fuzz::fuzz_app();
  app.accept_storekit_test_receipts = accept_xcode;
  if (claimed) // the app the transaction claims, so the checks after the bundle run too
    app.bundle_id = claimed->bundle_id;
  auto record = sa::make_record(upload, app, v, fuzz::peer_ip, fuzz::fixed_now);
  record.id = "00000000-0000-4000-8000-000000000002";
  check_record(record, v, app);
  auto resource = fuzz::check_answer(record, record.fraud);
  fuzz::check_echo(upload.common, resource);

  // The same payload as if it had verified (under Apple's chain, or Xcode's when
  // it names that environment): what a genuine JWS with these claims becomes.
  if (auto payload = fuzz::claimed_payload(upload.signed_transaction)) {
    sa::jws_verification as_if = v;
    as_if.reason = model::fraud_reason::none;
    as_if.payload = *payload;
    as_if.xcode = claimed && claimed->env == model::environment::xcode;
    auto r = sa::make_record(upload, app, as_if, fuzz::peer_ip, fuzz::fixed_now);
    r.id = "00000000-0000-4000-8000-000000000003";
    check_record(r, as_if, app);
    if (!claimed)
      FUZZ_CHECK(r.fraud == model::fraud_reason::malformed_receipt);
    fuzz::check_answer(r, r.fraud);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const bool accept_xcode = (data[0] / 3) & 1;
  auto rest = fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      model::store_a_transaction_upload upload;
      upload.signed_transaction = std::string(rest);
      check_signed_transaction(upload, accept_xcode);
      return 0;
    }
    case 1: {
      auto fields = fuzz::split_fields(rest, 3);
      model::store_a_transaction_upload upload;
      upload.signed_transaction = model::base64url_encode(fields[0]) + '.'
        + model::base64url_encode(fields[1]) + '.' + model::base64url_encode(fields[2]);
      check_signed_transaction(upload, accept_xcode);
      return 0;
    }
    default: {
      auto upload = model::parse_store_a_transaction_upload(rest);
      if (!upload) {
        fuzz::check_refusal(upload.errors());
        return 0;
      }
      // The 422 boundary: what passes it is a compact JWS within the bound.
      FUZZ_CHECK(sa::split_jws(upload->signed_transaction).has_value());
      FUZZ_CHECK(upload->signed_transaction.size() <= model::max_signed_transaction_length);
      check_signed_transaction(*upload, accept_xcode);
      return 0;
    }
  }
}

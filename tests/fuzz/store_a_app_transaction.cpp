// StoreKit 2 app transactions (POST /client/store_a/app_transactions): the
// upload body, verify_app_transaction_jws under the shipped roots (the chain at
// receiptCreationDate), parse_app_transaction, check_device, the record, the
// answer and the resource (jws_checks.hpp says what holds for verify_jws).
//
// The first byte picks how the rest is read:
//  - 0 (mod 3): the compact JWS as uploaded (AppTransaction.jwsRepresentation);
//  - 1: header JSON |@| payload JSON |@| signature bytes |@| nonce |@| device
//    id, the three first base64url-encoded and joined here, so mutations reach
//    the header and the payload instead of breaking the base64url;
//  - 2: the request body, {"signed_app_transaction": …} with the device fields
//    and the echo fields.
// Its next bit says whether the app accepts StoreKit test (Xcode) transactions.

#include "model/store_a/app_transaction.hpp"
#include "tests/fuzz/jws_checks.hpp"
#include "tests/fuzz/upload_checks.hpp"

namespace {

using namespace receiptd;
namespace sa = model::store_a;

// What make_record may make of a verdict: a refused JWS keeps nothing of what it
// claims; only a JWS that verified is keyed by its appTransactionId; a device
// check that failed is fraud; only Xcode or an app transaction without an id is
// validated without Apple.
void check_record(const sa::app_transaction_record& r, const sa::jws_verification& v,
                  const model::app& app) {
  if (v.reason != model::fraud_reason::none) {
    FUZZ_CHECK(r.fraud == v.reason && r.state == model::validation_state::rejected);
    FUZZ_CHECK(r.transaction.bundle_id.empty() && !r.transaction.app_transaction_id);
  }
  if (r.app_transaction_key.rfind("sha256:", 0) != 0)
    FUZZ_CHECK(v.reason == model::fraud_reason::none && !v.xcode
               && r.app_transaction_key == r.transaction.app_transaction_id);
  if (r.device == sa::device_verification::mismatch)
    FUZZ_CHECK(r.is_fraud());
  if (r.state == model::validation_state::validated)
    FUZZ_CHECK((v.xcode && app.accept_storekit_test_receipts)
               || (!r.transaction.app_transaction_id && !r.is_fraud()));
  if (!r.is_fraud() && r.state != model::validation_state::validated)
    FUZZ_CHECK(r.state == model::validation_state::pending
               && r.transaction.bundle_id == app.bundle_id && r.transaction.app_transaction_id);
}

void check_app_transaction(const model::app_transaction_upload& upload, bool accept_xcode) {
  sa::jws_options at_creation;
  at_creation.date_key = "receiptCreationDate";
  auto v = fuzz::checked_verify_jws(upload.signed_app_transaction, at_creation);
  FUZZ_CHECK(sa::verify_app_transaction_jws(upload.signed_app_transaction, fuzz::apple_anchors())
               .reason
             == v.reason);

  std::optional<sa::app_transaction> claimed;
  if (auto payload = fuzz::claimed_payload(upload.signed_app_transaction)) {
    auto t = sa::parse_app_transaction(*payload);
    if (t) {
      FUZZ_CHECK(!t->bundle_id.empty() && t->bundle_id.size() <= 256);
      // The device check answers for any nonce and id, and only a nonce equal to
      // the signed one (ignoring case) passes.
      auto d = sa::check_device(*t, upload.device_verification_nonce,
                                upload.device_verification_id);
      if (d == sa::device_verification::verified || d == sa::device_verification::nonce_matched)
        FUZZ_CHECK(t->device_verification_nonce.has_value());
      if (!upload.device_verification_nonce && !upload.device_verification_id)
        FUZZ_CHECK(d == sa::device_verification::not_checked);
      claimed = std::move(t).value();
    } else {
      for (const auto& e : t.errors())
        FUZZ_CHECK(e.field == "signed_app_transaction" && e.code == "malformed_receipt"
                   && !e.message.empty());
    }
  }

  auto app = fuzz::fuzz_app();
  app.accept_storekit_test_receipts = accept_xcode;
  if (claimed)
    app.bundle_id = claimed->bundle_id;
  auto record = sa::make_record(upload, app, v, fuzz::peer_ip, fuzz::fixed_now);
  record.id = "00000000-0000-4000-8000-000000000002";
  check_record(record, v, app);
  auto resource = fuzz::check_answer(record, record.fraud);
  fuzz::check_echo(upload.common, resource);

  // The same payload as if it had verified: what a genuine JWS with these
  // claims becomes, and a re-upload of it onto the record above.
  if (auto payload = fuzz::claimed_payload(upload.signed_app_transaction)) {
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
    auto merged = sa::merge_reupload(record, r);
    FUZZ_CHECK(merged.id == record.id && merged.created_at == record.created_at);
    fuzz::check_answer(merged, r.fraud);
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
      model::app_transaction_upload upload;
      upload.signed_app_transaction = std::string(rest);
      check_app_transaction(upload, accept_xcode);
      return 0;
    }
    case 1: {
      auto fields = fuzz::split_fields(rest, 5);
      model::app_transaction_upload upload;
      upload.signed_app_transaction = model::base64url_encode(fields[0]) + '.'
        + model::base64url_encode(fields[1]) + '.' + model::base64url_encode(fields[2]);
      if (!fields[3].empty())
        upload.device_verification_nonce = std::string(fields[3]);
      if (!fields[4].empty())
        upload.device_verification_id = std::string(fields[4]);
      check_app_transaction(upload, accept_xcode);
      return 0;
    }
    default: {
      auto upload = model::parse_app_transaction_upload(rest);
      if (!upload) {
        fuzz::check_refusal(upload.errors());
        return 0;
      }
      FUZZ_CHECK(sa::split_jws(upload->signed_app_transaction).has_value());
      FUZZ_CHECK(upload->signed_app_transaction.size() <= model::max_signed_transaction_length);
      check_app_transaction(*upload, accept_xcode);
      return 0;
    }
  }
}

// App Store Server Notifications V2 (POST /store/store_a/…, unauthenticated until
// its signature is checked): parse_store_a_notification_request, then
// verify_notification under the shipped roots (the outer signedPayload and the
// nested signedTransactionInfo / signedRenewalInfo), then what the notification
// does to the records it is about (apply_notification) and their resources.
//
// The first byte picks how the rest is read:
//  - even: the request body as Apple POSTs it ({"signedPayload": JWS});
//  - odd: three fields separated by "|@|": the responseBodyV2DecodedPayload
//    JSON, the nested transaction payload JSON and the renewal info payload
//    JSON. They are signed by no one (each JWS is assembled here with the header
//    of a real Apple notification and its signature), so they never verify; the
//    parsers and apply_notification then run on them as if they had.
// Its next bit: the app's bundle id is the one the payload claims (else another).

#include "model/resource_json.hpp"
#include "model/store_a/notification_verify.hpp"
#include "model/upload_request.hpp"
#include "tests/fuzz/jws_checks.hpp"

namespace {

using namespace receiptd;
namespace sa = model::store_a;

constexpr std::string_view other_bundle = "com.example.other";

// A real notification's header and signature segments, to wrap fuzzed payloads.
const std::string& real_notification() {
  static const auto jws = fuzz::source_file(
    "tests/data/apple-jws-notification/session-pro-refund-sandbox-2025/jws.txt");
  return jws;
}

std::string with_real_signature(std::string_view payload_json) {
  const auto& real = real_notification();
  auto first = real.find('.');
  auto last = real.rfind('.');
  return real.substr(0, first + 1) + model::base64url_encode(payload_json) + real.substr(last);
}

// The bundle id the outer payload claims, unverified (so verification reaches
// its nested JWS and the bundle checks).
std::string claimed_bundle(std::string_view jws) {
  auto payload = fuzz::claimed_payload(jws);
  if (!payload)
    return "com.example.receiptd";
  auto n = sa::parse_notification(*payload);
  return n ? n->bundle_id : "com.example.receiptd";
}

// Records the notification is about, as an upload of its transaction left them.
model::transaction_record transaction_record_for(const sa::verified_notification& v) {
  model::transaction_record r;
  r.id = "00000000-0000-4000-8000-000000000002";
  r.app_id = "00000000-0000-4000-8000-000000000001";
  r.env = v.n.env;
  r.state = model::validation_state::validated;
  r.signed_transaction = "a.b.c";
  auto& a = r.transaction;
  a.bundle_id = v.n.bundle_id;
  if (v.transaction) {
    a.transaction_id = v.transaction->transaction_id;
    a.original_transaction_id = v.transaction->original_transaction_id;
    a.product_id = v.transaction->product_id;
  }
  r.transaction_key = a.transaction_id;
  return r;
}

model::receipt_record receipt_record_for(const sa::verified_notification& v) {
  model::receipt_record r;
  r.id = "00000000-0000-4000-8000-000000000003";
  r.app_id = "00000000-0000-4000-8000-000000000001";
  r.env = v.n.env;
  r.state = model::validation_state::validated;
  r.bundle_id = v.n.bundle_id;
  model::apple_in_app_purchase p;
  p.product_id = "p";
  p.transaction_id = v.transaction ? v.transaction->transaction_id : "1";
  r.in_app_purchases = {p, p};
  return r;
}

// What applying a notification may do: nothing to a record of another bundle
// or environment, the same thing once only (a second application changes
// nothing), and never the verdict on the upload.
void check_apply(const sa::verified_notification& v) {
  auto t = transaction_record_for(v);
  const auto t_before = t;
  const bool changed = sa::apply_notification(t, v);
  FUZZ_CHECK(!sa::apply_notification(t, v));
  FUZZ_CHECK(t.state == t_before.state && t.fraud == t_before.fraud);
  FUZZ_CHECK(t.transaction.transaction_id == t_before.transaction.transaction_id);
  if (!changed)
    FUZZ_CHECK(model::transaction_json(t) == model::transaction_json(t_before));
  fuzz::parses_as_json(boost::json::serialize(model::transaction_json(t)));

  auto other = transaction_record_for(v);
  other.env = other.env == model::environment::sandbox ? model::environment::production
                                                       : model::environment::sandbox;
  FUZZ_CHECK(!sa::apply_notification(other, v));

  auto r = receipt_record_for(v);
  const auto r_before = r;
  sa::apply_notification(r, v);
  FUZZ_CHECK(!sa::apply_notification(r, v));
  FUZZ_CHECK(r.state == r_before.state && r.fraud == r_before.fraud);
  FUZZ_CHECK(r.in_app_purchases.size() == r_before.in_app_purchases.size());
  fuzz::parses_as_json(boost::json::serialize(model::receipt_json(r)));
}

// verify_notification's verdict: a value of one of the documented codes; a
// pass is for the app's bundle and every JWS in it verified (jws_checks.hpp).
void check_verified(std::string_view jws, std::string_view bundle) {
  auto v = sa::verify_notification(jws, fuzz::apple_anchors(), bundle);
  if (fuzz::verbose())
    std::fprintf(stderr, "verify_notification: %s\n", v ? "verified" : v.err().message().c_str());
  if (!v) {
    const auto code = v.err().code();
    FUZZ_CHECK(code == model::errc::unauthorized || code == model::errc::bad_request);
    FUZZ_CHECK(!v.errors().empty() && !v.err().message().empty());
    fuzz::parses_as_json(model::error_body(v.errors()));
    return;
  }
  // The outer JWS and every nested one: checked again with jws_checks' properties.
  const auto outer = fuzz::checked_verify_jws(jws);
  FUZZ_CHECK(outer.reason == model::fraud_reason::none && !outer.xcode);
  FUZZ_CHECK(v->n.bundle_id == bundle);
  FUZZ_CHECK(v->transaction.has_value() == !v->n.signed_transaction_info.empty());
  if (v->transaction) {
    FUZZ_CHECK(v->transaction->bundle_id == bundle);
    sa::jws_options at;
    at.at = v->n.signed_date;
    FUZZ_CHECK(fuzz::checked_verify_jws(v->n.signed_transaction_info, at).reason
               == model::fraud_reason::none);
  }
  if (v->renewal)
    FUZZ_CHECK(!v->n.signed_renewal_info.empty());
  check_apply(*v);
}

// The payloads parsed as if verified: the documented error shapes, and
// apply_notification on what parses.
void check_as_if_verified(std::string_view outer, std::string_view transaction,
                          std::string_view renewal) {
  auto n = sa::parse_notification(outer);
  if (!n) {
    for (const auto& e : n.errors())
      FUZZ_CHECK(e.field == "signedPayload" && e.code == "malformed_notification");
    return;
  }
  FUZZ_CHECK(!n->notification_uuid.empty() && n->notification_uuid.size() <= 128);
  FUZZ_CHECK(!n->type.empty() && n->type.size() <= 64 && !n->bundle_id.empty());
  sa::verified_notification v;
  v.n = std::move(n).value();
  if (auto t = sa::parse_signed_transaction(transaction))
    v.transaction = std::move(t).value();
  if (auto r = sa::parse_renewal_info(renewal))
    v.renewal = std::move(r).value();
  else
    for (const auto& e : r.errors())
      FUZZ_CHECK(e.field == "signedPayload" && e.code == "malformed_notification");
  check_apply(v);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const bool own_bundle = (data[0] & 2) == 0;
  auto rest = fuzz::as_text(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    auto jws = model::parse_store_a_notification_request(rest);
    if (!jws) {
      FUZZ_CHECK(jws.err().code() == model::errc::bad_request);
      for (const auto& e : jws.errors())
        FUZZ_CHECK(!e.code.empty() && !e.message.empty());
      fuzz::parses_as_json(model::error_body(jws.errors()));
      return 0;
    }
    FUZZ_CHECK(sa::split_jws(*jws) && jws->size() <= model::max_notification_length);
    check_verified(*jws, own_bundle ? claimed_bundle(*jws) : std::string(other_bundle));
    return 0;
  }
  auto fields = fuzz::split_fields(rest, 3);
  const auto jws = with_real_signature(fields[0]);
  // Apple's signature over other bytes never verifies, whatever the payload says.
  auto v = sa::verify_notification(jws, fuzz::apple_anchors(),
                                   own_bundle ? claimed_bundle(jws) : std::string(other_bundle));
  FUZZ_CHECK(!v || jws == real_notification());
  check_as_if_verified(fields[0], fields[1], fields[2]);
  return 0;
}

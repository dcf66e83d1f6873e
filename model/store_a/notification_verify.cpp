#include "model/store_a/notification_verify.hpp"

namespace receiptd::model::store_a {

namespace {

error refused(std::string why) {
  return error(errc::unauthorized, std::move(why));
}

// One JWS under Apple's chain; its verified payload. `at`: judge the chain then
// (a nested JWS at the notification's signedDate: Apple's renewal info signed
// over null has no date of its own).
result<std::string> verified_payload(std::string_view jws, const trust_anchors& anchors,
                                     const char* what, std::optional<unix_ms> at = {}) {
  jws_options options;
  options.at = at;
  auto v = verify_jws(jws, anchors, options);
  if (v.internal_error)
    return error(errc::internal_error, std::string(what) + " could not be verified: " + v.detail);
  if (v.reason != fraud_reason::none)
    return refused(std::string(what) + " does not verify: " + v.detail);
  if (v.xcode)
    return refused(std::string(what) + " is signed by a StoreKit test certificate");
  return std::move(v.payload);
}

// A verified payload that does not parse: the store's shape is not what it sent.
error not_a_notification(const error& e) {
  return error(errc::bad_request, e.fields());
}

} // namespace

result<verified_notification> verify_notification(std::string_view signed_payload,
                                                  const trust_anchors& anchors,
                                                  std::string_view bundle_id) {
  auto outer = verified_payload(signed_payload, anchors, "signedPayload");
  if (!outer)
    return outer.err();
  auto n = parse_notification(*outer);
  if (!n)
    return not_a_notification(n.err());
  if (n->bundle_id != bundle_id)
    return refused("the notification is for another app (bundle id " + n->bundle_id + ")");
  verified_notification out;
  if (!n->signed_transaction_info.empty()) {
    auto payload = verified_payload(n->signed_transaction_info, anchors, "signedTransactionInfo",
                                    n->signed_date);
    if (!payload)
      return payload.err();
    auto t = parse_signed_transaction(*payload);
    if (!t)
      return not_a_notification(t.err());
    if (t->bundle_id != bundle_id)
      return refused("the notification's transaction is for another app (bundle id " + t->bundle_id
                     + ")");
    out.transaction = std::move(t).value();
  }
  if (!n->signed_renewal_info.empty()) {
    auto payload
      = verified_payload(n->signed_renewal_info, anchors, "signedRenewalInfo", n->signed_date);
    if (!payload)
      return payload.err();
    if (*payload != "null") { // Apple signs a null renewal info at times (verify_jws)
      auto r = parse_renewal_info(*payload);
      if (!r)
        return not_a_notification(r.err());
      out.renewal = std::move(r).value();
    }
  }
  out.n = std::move(n).value();
  return out;
}

} // namespace receiptd::model::store_a

#include "model/store_a/refresh.hpp"

#include "model/store_time.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace receiptd::model::store_a {

bool is_live_subscription_status(std::string_view status) {
  return std::find(std::begin(live_subscription_statuses), std::end(live_subscription_statuses),
                   status)
    != std::end(live_subscription_statuses);
}

namespace {

error unusable(std::string why) {
  return error(errc::internal_error, "App Store Server API answer unusable: " + std::move(why));
}

// One JWS of the answer under Apple's chain (not a StoreKit test root): its
// payload. `at`: judge the chain then (the renewal info at its transaction's
// signedDate: Apple's renewal info signed over null has no date of its own).
result<std::string> verified(std::string_view jws, const trust_anchors& anchors, const char* what,
                             std::optional<unix_ms> at = {}) {
  jws_options options;
  options.at = at;
  auto v = verify_jws(jws, anchors, options);
  if (v.internal_error || v.reason != fraud_reason::none)
    return unusable(std::string(what) + " does not verify: " + v.detail);
  if (v.xcode)
    return unusable(std::string(what) + " is signed by a StoreKit test certificate");
  return std::move(v.payload);
}

} // namespace

result<std::optional<subscription_status>>
status_of(const transaction_record& r, const std::vector<subscription_status_entry>& entries,
          const trust_anchors& anchors) {
  const auto& a = r.transaction;
  const auto& subscription
    = a.original_transaction_id.empty() ? a.transaction_id : a.original_transaction_id;
  auto e = std::find_if(entries.begin(), entries.end(),
                        [&](const auto& x) { return x.original_transaction_id == subscription; });
  if (subscription.empty() || e == entries.end())
    return std::optional<subscription_status>();

  auto payload = verified(e->signed_transaction_info, anchors, "signedTransactionInfo");
  if (!payload)
    return payload.err();
  auto t = parse_signed_transaction(*payload);
  if (!t)
    return unusable("signedTransactionInfo is not a transaction: " + t.err().message());
  if (t->bundle_id != a.bundle_id || t->original_transaction_id != subscription || t->env != r.env)
    return unusable("signedTransactionInfo names another bundle, environment or subscription");

  subscription_status out;
  out.status = e->status;
  out.transaction = std::move(t).value();
  if (!e->signed_renewal_info.empty()) {
    auto renewal
      = verified(e->signed_renewal_info, anchors, "signedRenewalInfo", out.transaction.signed_date);
    if (!renewal)
      return renewal.err();
    if (*renewal != "null") { // Apple signs a null renewal info at times (verify_jws)
      auto i = parse_renewal_info(*renewal);
      if (!i)
        return unusable("signedRenewalInfo is not renewal info: " + i.err().message());
      out.renewal = std::move(i).value();
    }
  }
  return std::optional<subscription_status>(std::move(out));
}

bool apply_refresh(transaction_record& r, const store_verdict& v,
                   const std::optional<subscription_status>& s) {
  switch (v.outcome) {
    case store_outcome::unreachable:
      r.store_detail = v.detail;
      return false;
    case store_outcome::rejected:
      r.store_detail = "refresh: " + v.detail;
      return true;
    case store_outcome::confirmed:
      break;
  }
  if (!s) {
    r.store_detail = "refresh: " + v.detail + ", no status for this subscription";
    return true;
  }
  r.store_detail = "refresh: " + v.detail;
  auto& a = r.transaction;
  const auto& t = s->transaction;
  if (a.notified_at && (!t.signed_date || *t.signed_date < *a.notified_at))
    return true; // a newer notification has said more
  if (a.transaction_id == t.transaction_id && not_older(t.signed_date, r.said_at)) {
    take_own_fields(a, t);
    r.said_at = t.signed_date;
    // Apple's newest word on the transaction may revoke it; only a REFUND_REVERSED
    // undoes a revocation (model/store_a/notification.hpp).
    if (t.revocation_date)
      take_revocation(a, t, t.signed_date);
  }
  std::optional<std::string> status;
  if (auto name = subscription_status_name(s->status))
    status = std::move(name);
  take_subscription_fields(a, t, status, s->renewal, false);
  if (t.signed_date)
    a.notified_at = t.signed_date;
  return true;
}

} // namespace receiptd::model::store_a

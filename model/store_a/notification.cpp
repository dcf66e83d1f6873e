// App Store Server Notifications V2 (notification.hpp): the verified
// signedPayload (Apple, "responseBodyV2DecodedPayload") and signedRenewalInfo
// ("JWSRenewalInfoDecodedPayload") parsed, and what a notification does to the
// records it is about.
//
// Decisions the header leaves open, and why:
//  - Parsing is strict on what receiptd keys on (notificationUUID, the type,
//    the bundle and environment) and on every field's type, lenient on what
//    Apple adds (unknown fields, types and subtypes are kept or ignored).
//  - A notification is applied to a record only when the record belongs to the
//    notification's bundle and environment (a sandbox notification never
//    touches a production purchase) and the notification carries its verified
//    signedTransactionInfo of that bundle: every applied type carries one.
//  - Transaction records are ordered by signedDate (apple_transaction::
//    notified_at): one older than the newest applied changes nothing, so a
//    late REFUND_REVERSED cannot undo a newer REFUND, nor a late DID_RENEW a
//    newer EXPIRED. Receipt records have no such field: REFUND and
//    REFUND_REVERSED apply in arrival order (Apple sends the reversal after the
//    refund; a revalidation brings the store's truth anyway).
//  - The subscription fields are set only from a notification whose
//    transaction is an "Auto-Renewable Subscription" (REVOKE of a shared
//    non-consumable says nothing about a subscription).

#include "model/store_a/notification.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "model/store_a/jws_internal.hpp"
#include "model/store_a/payload_reader.hpp"
#include "model/store_time.hpp"

namespace receiptd::model::store_a {

namespace {

constexpr const char* error_field = "signedPayload";
constexpr const char* error_code = "malformed_notification";

// Apple's identifiers and short texts are tens of bytes (a UUID is 36).
constexpr std::size_t max_uuid_bytes = 128;
constexpr std::size_t max_type_bytes = 64;
constexpr std::size_t max_text_bytes = payload_reader::max_text_bytes;
// A nested compact JWS: at most what verify_jws accepts, base64url-encoded
// (4/3 of its decoded bounds) plus the two dots.
constexpr std::size_t max_nested_jws_bytes
  = (max_header_bytes + max_payload_bytes + es256_signature_bytes) / 3 * 4 + 8;

// A type word: visible ASCII, no space. Apple's notificationType and subtype
// are upper-case words (A–Z, 0–9, '_'); one Apple adds later is kept whatever
// its spelling, as long as it can be stored and answered as it came.
bool is_type_word(std::string_view s) {
  return !s.empty() && s.size() <= max_type_bytes
    && std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// What a notification is about: `data` for every In-App Purchase type,
// `summary` for RENEWAL_EXTENSION/SUMMARY, `externalPurchaseToken` for
// EXTERNAL_PURCHASE_TOKEN, `appData` for RESCIND_CONSENT (2026: bundleId,
// environment, appAppleId, signedAppTransactionInfo), in that order; else the
// first other object member that names a bundleId (a part Apple adds later).
std::pair<std::string, const boost::json::value*> part_of(const boost::json::object& payload) {
  for (const char* key : {"data", "summary", "externalPurchaseToken", "appData"}) {
    const auto* v = payload.if_contains(key);
    if (v != nullptr && !v->is_null())
      return {key, v};
  }
  for (const auto& kv : payload) {
    const auto& v = kv.value();
    if (v.is_object() && v.get_object().contains("bundleId"))
      return {std::string(kv.key()), &v};
  }
  return {{}, nullptr};
}

// A payload_reader whose errors are the notification's.
payload_reader reader(const boost::json::object& o, std::string prefix, field_errors& errors) {
  return payload_reader(o, error_field, error_code, std::move(prefix), errors);
}

// Parses `payload` as a JSON object and has `read(r, out, errors)` read it, the
// errors named after `what`; the value, or every field error found.
template <class T, class Read>
result<T> read_payload(std::string_view payload, const char* what, Read&& read) {
  boost::system::error_code ec;
  const auto doc = boost::json::parse(payload, ec);
  if (ec || !doc.is_object())
    return field_error{error_field, error_code,
                       std::string(what) + " payload is not a JSON object"};
  field_errors errors;
  auto r = reader(doc.get_object(), std::string(what) + " ", errors);
  T out;
  read(r, out, errors);
  if (!errors.empty())
    return errors;
  return out;
}

} // namespace

result<notification> parse_notification(std::string_view payload) {
  return read_payload<notification>(
    payload, "notification", [](payload_reader& r, notification& n, field_errors& errors) {
      r.required_text("notificationUUID", n.notification_uuid, max_uuid_bytes);
      r.required_text("notificationType", n.type, max_type_bytes);
      if (!n.type.empty() && !is_type_word(n.type)) {
        n.type.clear();
        r.fail("notificationType", "is not a word of visible ASCII");
      }
      std::optional<std::string> subtype;
      r.text("subtype", subtype, max_type_bytes);
      if (subtype && !is_type_word(*subtype))
        r.fail("subtype", "is not a word of visible ASCII");
      else
        n.subtype = subtype.value_or("");
      std::optional<std::string> version;
      r.text("version", version, 16);
      n.version = version.value_or("");
      r.date("signedDate", n.signed_date);

      // What the notification is about (part_of): one part is required, it
      // names the app. An externalPurchaseToken has no environment, nor may a
      // part Apple adds later: production unless it says otherwise.
      const auto [part, about] = part_of(r.object());
      if (about == nullptr) {
        r.fail("data", "is missing (and no summary, externalPurchaseToken or appData)");
        return;
      }
      if (!about->is_object()) {
        r.fail(part, "is not an object");
        return;
      }
      auto d = reader(about->get_object(), "notification " + part + ".", errors);
      d.required_text("bundleId", n.bundle_id);
      const bool has_environment = part == "data" || part == "summary" || part == "appData";
      if (has_environment || d.find("environment"))
        d.env("environment", n.env);
      d.integer("appAppleId", n.app_apple_id, 0, std::numeric_limits<std::int64_t>::max());
      // Apple's subscription status, 1–5 today; a later value is kept (and has no
      // name: subscription_status_name).
      d.integer("status", n.status, 0, std::numeric_limits<int>::max());
      d.text("consumptionRequestReason", n.consumption_request_reason);
      std::optional<std::string> nested;
      d.text("signedTransactionInfo", nested, max_nested_jws_bytes);
      n.signed_transaction_info = std::move(nested).value_or("");
      nested.reset();
      d.text("signedRenewalInfo", nested, max_nested_jws_bytes);
      n.signed_renewal_info = std::move(nested).value_or("");
    });
}

result<renewal_info> parse_renewal_info(std::string_view payload) {
  return read_payload<renewal_info>(
    payload, "renewal info", [](payload_reader& r, renewal_info& i, field_errors&) {
      r.required_text("originalTransactionId", i.original_transaction_id);
      r.text("productId", i.product_id);
      r.text("autoRenewProductId", i.auto_renew_product_id);
      // 0 off, 1 on; expirationIntent 1–5: later values kept.
      r.integer("autoRenewStatus", i.auto_renew_status, 0, std::numeric_limits<int>::max());
      r.integer("expirationIntent", i.expiration_intent, 0, std::numeric_limits<int>::max());
      r.boolean("isInBillingRetryPeriod", i.is_in_billing_retry_period);
      r.date("gracePeriodExpiresDate", i.grace_period_expires_date);
      r.date("renewalDate", i.renewal_date);
      r.date("signedDate", i.signed_date);
      r.env("environment", i.env);
      r.text("appAccountToken", i.app_account_token);
    });
}

std::optional<std::string> subscription_status_name(int status) {
  // Apple, "status" (App Store Server API): 1 active, 2 expired, 3 in billing
  // retry, 4 in billing grace period, 5 revoked.
  switch (status) {
    case 1:
      return "active";
    case 2:
      return "expired";
    case 3:
      return "billing_retry";
    case 4:
      return "grace_period";
    case 5:
      return "revoked";
    default:
      return std::nullopt;
  }
}

namespace {

enum class effect { none, revoke, reverse_revocation, subscription, transaction };

// What a notificationType does (the header's list); anything else is recorded only.
effect effect_of(std::string_view type) {
  if (type == "REFUND" || type == "REVOKE")
    return effect::revoke;
  if (type == "REFUND_REVERSED")
    return effect::reverse_revocation;
  // Apple, "notificationType": ONE_TIME_CHARGE is a one-time purchase's transaction.
  if (type == "ONE_TIME_CHARGE")
    return effect::transaction;
  for (std::string_view t :
       {"DID_RENEW", "SUBSCRIBED", "DID_CHANGE_RENEWAL_STATUS", "DID_CHANGE_RENEWAL_PREF",
        "EXPIRED", "GRACE_PERIOD_EXPIRED", "DID_FAIL_TO_RENEW", "OFFER_REDEEMED",
        "RENEWAL_EXTENDED", "MIGRATION", "PRICE_CHANGE", "METADATA_UPDATE"})
    if (type == t)
      return effect::subscription;
  return effect::none;
}

// dst = src; whether that changed dst.
template <class T>
bool assign(T& dst, const T& src) {
  if (dst == src)
    return false;
  dst = src;
  return true;
}

// The status the notification states (data.status), else the one its type
// implies, else nullopt (keep what the record has).
std::optional<std::string> stated_status(const notification& n) {
  if (n.status)
    if (auto name = subscription_status_name(*n.status))
      return name;
  if (n.type == "EXPIRED" || n.type == "GRACE_PERIOD_EXPIRED")
    return "expired";
  if (n.type == "REVOKE")
    return "revoked";
  if (n.type == "DID_RENEW" || n.type == "SUBSCRIBED")
    return "active";
  return std::nullopt;
}

constexpr std::string_view auto_renewable = "Auto-Renewable Subscription";

} // namespace

bool take_own_fields(apple_transaction& a, const signed_transaction& t) {
  bool changed = false;
  changed |= assign(a.product_id, t.product_id);
  if (!t.type.empty())
    changed |= assign(a.type, t.type);
  changed |= assign(a.purchase_date, t.purchase_date);
  changed |= assign(a.original_purchase_date, t.original_purchase_date);
  changed |= assign(a.expires_date, t.expires_date);
  changed |= assign(a.app_account_token, t.app_account_token);
  changed |= assign(a.quantity, std::optional<int>(t.quantity));
  changed |= assign(a.storefront, t.storefront);
  changed |= assign(a.price, t.price);
  changed |= assign(a.currency, t.currency);
  changed |= assign(a.ownership_type, t.in_app_ownership_type);
  changed |= assign(a.is_upgraded, t.is_upgraded);
  changed |= assign(a.offer_type, t.offer_type);
  changed |= assign(a.offer_discount_type, t.offer_discount_type);
  changed |= assign(a.offer_period, t.offer_period);
  changed |= assign(a.app_transaction_id, t.app_transaction_id);
  changed |= assign(a.billing_plan_type, t.billing_plan_type);
  changed |= assign(a.commitment, t.commitment);
  return changed;
}

bool take_revocation(apple_transaction& a, const signed_transaction& t,
                     std::optional<unix_ms> said_at) {
  bool changed = assign(a.revocation_date, t.revocation_date);
  changed |= assign(a.revocation_reason, t.revocation_reason);
  changed |= assign(a.revocation_type, t.revocation_type);
  changed |= assign(a.revocation_percentage, t.revocation_percentage);
  changed |= assign(a.revocation_said_at, said_at);
  return changed;
}

bool clear_revocation(apple_transaction& a) {
  bool changed = assign(a.revocation_date, std::optional<unix_ms>());
  changed |= assign(a.revocation_reason, std::optional<int>());
  changed |= assign(a.revocation_type, std::optional<std::string>());
  changed |= assign(a.revocation_percentage, std::optional<int>());
  changed |= assign(a.revocation_said_at, std::optional<unix_ms>());
  return changed;
}

bool take_subscription_fields(apple_transaction& a, const signed_transaction& t,
                              const std::optional<std::string>& status,
                              const std::optional<renewal_info>& renewal, bool keep_expiry) {
  if (t.type != auto_renewable)
    return false;
  bool changed = false;
  if (status)
    changed |= assign(a.subscription_status, status);
  if (!keep_expiry && t.expires_date
      && (!a.subscription_expires_date || *a.subscription_expires_date < *t.expires_date))
    changed |= assign(a.subscription_expires_date, t.expires_date);
  if (renewal && renewal->original_transaction_id == t.original_transaction_id) {
    const auto& i = *renewal;
    if (i.auto_renew_status == 0 || i.auto_renew_status == 1)
      changed |= assign(a.auto_renew, std::optional<bool>(*i.auto_renew_status == 1));
    if (i.auto_renew_product_id)
      changed |= assign(a.auto_renew_product_id, i.auto_renew_product_id);
    if (i.app_account_token)
      changed |= assign(a.renewal_app_account_token, i.app_account_token);
  }
  return changed;
}

// Transaction records, each part ordered by store time (model/store_time.hpp):
//  - the record of the very transactionId takes the signed transaction's own
//    fields (take_own_fields) when the notification was signed no earlier than
//    what the record holds (said_at: the upload's JWS, Apple's answer, an
//    earlier notification), and said_at moves to its signedDate;
//  - its revocation: REFUND/REVOKE set revocation_date/reason from it (when it
//    has a revocationDate); REFUND_REVERSED clears them, but only when signed
//    after the revocation it undoes (its date, and when Apple said it:
//    revocation_said_at); no other type touches them (a DID_RENEW
//    about the transaction that does not mention a refund is no reversal);
//  - every record of that originalTransactionId (the very one too) takes, when
//    the transaction is an auto-renewable subscription and the notification
//    was signed no earlier than the newest one applied (notified_at):
//    subscription_status (stated_status), subscription_expires_date (the later
//    of the known one and the transaction's expiresDate; REFUND/REVOKE keep
//    it), and from a signedRenewalInfo of that originalTransactionId
//    auto_renew (autoRenewStatus 0/1; another value keeps it) and
//    auto_renew_product_id; notified_at becomes its signedDate. Moving a time
//    counts as a change (the caller must store it, or a late older
//    notification would apply); whether the resource changed, the caller sees
//    by comparing resources (model::record_event). A notification without
//    signedDate (it cannot have verified) is not ordered and applies nothing.
bool apply_notification(transaction_record& r, const verified_notification& v) {
  const auto& n = v.n;
  const auto what = effect_of(n.type);
  if (what == effect::none || !v.transaction || !n.signed_date)
    return false;
  const auto& t = *v.transaction;
  auto& a = r.transaction;
  if (a.bundle_id.empty() || a.bundle_id != n.bundle_id || t.bundle_id != n.bundle_id
      || r.env != n.env)
    return false;
  const bool same_transaction = a.transaction_id == t.transaction_id;
  const bool same_subscription
    = !a.original_transaction_id.empty() && a.original_transaction_id == t.original_transaction_id;
  if (!same_transaction && !same_subscription)
    return false;

  bool changed = false;
  if (same_transaction) {
    if (not_older(n.signed_date, r.said_at)) {
      changed |= take_own_fields(a, t);
      // Newer word of the same values is not a change (nothing to store or announce).
      if (changed)
        assign(r.said_at, n.signed_date);
    }
    if (what == effect::revoke && t.revocation_date) {
      changed |= take_revocation(a, t, n.signed_date);
    } else if (what == effect::reverse_revocation && a.revocation_date
               && *n.signed_date > *a.revocation_date
               && (!a.revocation_said_at || *n.signed_date > *a.revocation_said_at)) {
      changed |= clear_revocation(a);
    }
  }
  if (same_subscription && what != effect::transaction && not_older(n.signed_date, a.notified_at)) {
    changed |= take_subscription_fields(a, t, stated_status(n), v.renewal, what == effect::revoke);
    changed |= assign(a.notified_at, n.signed_date);
  }
  return changed;
}

// Receipts: REFUND/REVOKE set cancellation_date = revocationDate and
// cancellation_reason = revocationReason on each in-app purchase of that
// transaction_id (a transaction without revocationDate changes nothing);
// REFUND_REVERSED clears both when signed after the cancellation it undoes.
// Same bundle and environment only; state and fraud are never touched.
bool apply_notification(receipt_record& r, const verified_notification& v) {
  const auto& n = v.n;
  const auto what = effect_of(n.type);
  if ((what != effect::revoke && what != effect::reverse_revocation) || !v.transaction)
    return false;
  const auto& t = *v.transaction;
  if (r.bundle_id.empty() || r.bundle_id != n.bundle_id || t.bundle_id != n.bundle_id
      || r.env != n.env)
    return false;
  if (what == effect::revoke && !t.revocation_date)
    return false;
  bool changed = false;
  for (auto& p : r.in_app_purchases) {
    if (p.transaction_id != t.transaction_id)
      continue;
    if (what == effect::revoke) {
      changed |= assign(p.cancellation_date, t.revocation_date);
      changed |= assign(p.cancellation_reason, t.revocation_reason);
    } else if (p.cancellation_date && n.signed_date && *n.signed_date > *p.cancellation_date) {
      changed |= assign(p.cancellation_date, std::optional<unix_ms>());
      changed |= assign(p.cancellation_reason, std::optional<int>());
    }
  }
  return changed;
}

} // namespace receiptd::model::store_a

// Google Play Real-time developer notifications (rtdn.hpp): the
// Pub/Sub push envelope and the DeveloperNotification inside it.
//
// Sources: Pub/Sub push (https://cloud.google.com/pubsub/docs/push: "message"
// {"data" base64, "messageId", "publishTime", "attributes"}, "subscription";
// real pushes also carry the snake_case duplicates message_id/publish_time,
// tests/data/google-play-rtdn/dmzlingyin-*) and Play's RTDN reference
// (https://developer.android.com/google/play/billing/rtdn-reference: version,
// packageName, eventTimeMillis as a decimal string, and exactly one of
// subscriptionNotification, oneTimeProductNotification,
// voidedPurchaseNotification, testNotification).
//
// The kinds and types as of the reference's 2026 revision: pendingRefundReview
// Notification joined the four kinds (a refund awaiting the developer's review);
// subscription notificationType 19 SUBSCRIPTION_PRICE_CHANGE_UPDATED, 20
// SUBSCRIPTION_PENDING_PURCHASE_CANCELED and 22
// SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED joined 1–13; voided purchases carry
// refundType (1 full, 2 quantity-based partial).
//
// Decisions the header leaves open, and why:
//  - Every problem found is reported (field "message" for the envelope,
//    "message.data" for what it decodes to), so a misconfigured push says all
//    that is wrong with it at once.
//  - message.data must be strict base64 (RFC 4648 §4: the standard alphabet,
//    length a multiple of 4, padding only at the end, no whitespace): Pub/Sub
//    writes exactly that, and the lenient decoder (which skips whitespace and
//    tolerates missing padding, for receipts) would accept bodies no Pub/Sub
//    push has.
//  - Unknown fields are ignored (Google adds them); a known field of the wrong
//    type is an error. notificationType values Google adds later are kept, and
//    a notification of none of the known kinds is kind `other`: Google adds
//    kinds too, and a 4xx would only make Pub/Sub redeliver it for a week.

#include "model/store_b/rtdn.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "model/encoding.hpp"
#include "model/json_fields.hpp"

namespace receiptd::model::store_b {

namespace json = boost::json;

namespace {

constexpr std::size_t max_id_bytes = 256;           // messageId, orderId
constexpr std::size_t max_product_id_bytes = 256;   // subscriptionId, sku
constexpr std::size_t max_package_name_bytes = 256; // packageName
constexpr std::size_t max_token_bytes = 2048;       // Play's tokens: about 150–250
// The decoded DeveloperNotification is a few hundred bytes; its JSON is shallow.
constexpr std::size_t max_depth = 16;

// Strict RFC 4648 §4 base64: non-empty, a multiple of 4 long, nothing but the
// alphabet and at most two trailing '='. The decoding itself is
// model::base64_decode's.
bool is_strict_base64(std::string_view s) {
  if (s.empty() || s.size() % 4 != 0)
    return false;
  std::size_t padding = 0;
  while (padding < 2 && s[s.size() - 1 - padding] == '=')
    ++padding;
  for (std::size_t i = 0; i < s.size() - padding; ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
      || c == '+' || c == '/';
    if (!alpha)
      return false;
  }
  return true;
}

std::optional<json::value> parse_json(std::string_view text) {
  boost::system::error_code ec;
  json::parse_options opts;
  opts.max_depth = max_depth;
  auto v = json::parse(text, ec, {}, opts);
  if (ec)
    return std::nullopt;
  return v;
}

// Reads one object's fields; every problem becomes an error under `field`,
// its message naming the key with `prefix`.
class reader {
public:
  reader(const json::object& o, const char* field, std::string prefix, field_errors& errors)
    : o_(o), field_(field), prefix_(std::move(prefix)), errors_(errors) {}

  const json::value* find(const char* key) const {
    const auto* v = o_.if_contains(key);
    return v == nullptr || v->is_null() ? nullptr : v;
  }

  void fail(const char* key, const char* code, const std::string& what) {
    errors_.push_back({field_, code, prefix_ + key + " " + what});
  }

  // A non-empty string of at most `max` bytes; nullopt (and an error when
  // `required`) otherwise.
  std::optional<std::string> text(const char* key, std::size_t max, bool required) {
    const auto* v = find(key);
    if (v == nullptr) {
      if (required)
        fail(key, "missing", "is missing");
      return std::nullopt;
    }
    if (!v->is_string()) {
      fail(key, "not_a_string", "is not a string");
      return std::nullopt;
    }
    const auto& s = v->get_string();
    if (s.empty()) {
      if (required)
        fail(key, "missing", "is empty");
      return std::nullopt;
    }
    if (s.size() > max) {
      fail(key, "too_long", "is longer than " + std::to_string(max) + " bytes");
      return std::nullopt;
    }
    return std::string(s);
  }

  // A JSON integer in [0, INT_MAX].
  std::optional<int> integer(const char* key, bool required) {
    const auto* v = find(key);
    if (v == nullptr) {
      if (required)
        fail(key, "missing", "is missing");
      return std::nullopt;
    }
    std::optional<std::int64_t> n;
    if (v->is_int64())
      n = v->get_int64();
    else if (v->is_uint64() && v->get_uint64() <= std::numeric_limits<int>::max())
      n = static_cast<std::int64_t>(v->get_uint64());
    if (!n || *n < 0 || *n > std::numeric_limits<int>::max()) {
      fail(key, "not_an_integer", "is not a non-negative integer");
      return std::nullopt;
    }
    return static_cast<int>(*n);
  }

  // An object (nullopt without error when absent).
  const json::object* object(const char* key) {
    const auto* v = find(key);
    if (v == nullptr)
      return nullptr;
    if (!v->is_object()) {
      fail(key, "not_an_object", "is not an object");
      return nullptr;
    }
    return &v->get_object();
  }

private:
  const json::object& o_;
  const char* field_;
  std::string prefix_;
  field_errors& errors_;
};

constexpr const char* envelope_field = "message";
constexpr const char* data_field = "message.data";

struct kind_key {
  const char* key;
  rtdn_kind kind;
};
constexpr kind_key kind_keys[] = {
  {"subscriptionNotification", rtdn_kind::subscription},
  {"oneTimeProductNotification", rtdn_kind::one_time_product},
  {"voidedPurchaseNotification", rtdn_kind::voided_purchase},
  {"testNotification", rtdn_kind::test},
  {"pendingRefundReviewNotification", rtdn_kind::pending_refund_review},
};

constexpr std::size_t max_kind_key_bytes = 64;

// The key an unknown kind arrived under: the first "…Notification" key of
// printable ASCII (Google's kinds are all named so); empty when none is.
std::string unknown_kind_key(const json::object& o) {
  constexpr std::string_view suffix = "Notification";
  for (const auto& [key, value] : o) {
    std::string_view k(key.data(), key.size());
    if (!value.is_object() || k.size() > max_kind_key_bytes || !k.ends_with(suffix))
      continue;
    if (std::all_of(k.begin(), k.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
      return std::string(k);
  }
  return {};
}

// The DeveloperNotification (message.data decoded) into n.
void parse_developer_notification(std::string_view decoded, rtdn& n, field_errors& errors) {
  const auto doc = parse_json(decoded);
  if (!doc || !doc->is_object()) {
    errors.push_back({data_field, "not_an_object",
                      "message.data does not decode to a JSON object (a DeveloperNotification)"});
    return;
  }
  reader r(doc->get_object(), data_field, "message.data ", errors);
  n.package_name = r.text("packageName", max_package_name_bytes, true).value_or("");
  // eventTimeMillis: a decimal string in Google's examples; a JSON number is
  // taken too (json_int reads both).
  if (const auto* t = r.find("eventTimeMillis")) {
    n.event_time = json_int(t);
    if (!n.event_time || *n.event_time < 0)
      r.fail("eventTimeMillis", "invalid_time", "is not a time in unix milliseconds");
  }

  const kind_key* found = nullptr;
  int count = 0;
  for (const auto& k : kind_keys)
    if (r.find(k.key) != nullptr) {
      found = &k;
      ++count;
    }
  if (count == 0) {
    n.kind = rtdn_kind::other;
    n.kind_key = unknown_kind_key(doc->get_object());
    return;
  }
  if (count != 1) {
    errors.push_back({data_field, "several_notifications",
                      "message.data holds more than one of subscriptionNotification, "
                      "oneTimeProductNotification, voidedPurchaseNotification, "
                      "pendingRefundReviewNotification, testNotification"});
    return;
  }
  n.kind = found->kind;
  const auto* inner = r.object(found->key);
  if (inner == nullptr)
    return;
  reader k(*inner, data_field, std::string("message.data ") + found->key + ".", errors);
  switch (n.kind) {
    case rtdn_kind::subscription:
      n.notification_type = k.integer("notificationType", true).value_or(0);
      n.purchase_token = k.text("purchaseToken", max_token_bytes, true).value_or("");
      n.product_id = k.text("subscriptionId", max_product_id_bytes, false).value_or("");
      break;
    case rtdn_kind::one_time_product:
      n.notification_type = k.integer("notificationType", true).value_or(0);
      n.purchase_token = k.text("purchaseToken", max_token_bytes, true).value_or("");
      n.product_id = k.text("sku", max_product_id_bytes, false).value_or("");
      break;
    case rtdn_kind::voided_purchase:
      n.purchase_token = k.text("purchaseToken", max_token_bytes, true).value_or("");
      n.order_id = k.text("orderId", max_id_bytes, false);
      n.product_type = k.integer("productType", false);
      n.refund_type = k.integer("refundType", false);
      break;
    case rtdn_kind::pending_refund_review:
      // pendingRefundToken and orderId: what orders.reviewrefund answers
      // (model/purchases/refund_request.hpp); refundReason is not kept.
      n.order_id = k.text("orderId", max_id_bytes, false);
      n.refund_token = k.text("pendingRefundToken", max_token_bytes, false);
      break;
    case rtdn_kind::test:
    case rtdn_kind::other:
      break;
  }
}

} // namespace

std::string_view to_string(rtdn_kind k) {
  switch (k) {
    case rtdn_kind::subscription:
      return "subscription";
    case rtdn_kind::one_time_product:
      return "one_time_product";
    case rtdn_kind::voided_purchase:
      return "voided_purchase";
    case rtdn_kind::test:
      return "test";
    case rtdn_kind::pending_refund_review:
      return "pending_refund_review";
    case rtdn_kind::other:
      return "other";
  }
  return "test";
}

std::string_view notification_type_name(const rtdn& n) {
  // Play's RTDN reference, SubscriptionNotification and
  // OneTimeProductNotification notificationType (14–16, 17, 18 and 21 are not
  // named there as receiptd reads it: kept by number).
  static constexpr std::string_view subscription[] = {
    "",
    "SUBSCRIPTION_RECOVERED",
    "SUBSCRIPTION_RENEWED",
    "SUBSCRIPTION_CANCELED",
    "SUBSCRIPTION_PURCHASED",
    "SUBSCRIPTION_ON_HOLD",
    "SUBSCRIPTION_IN_GRACE_PERIOD",
    "SUBSCRIPTION_RESTARTED",
    "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED",
    "SUBSCRIPTION_DEFERRED",
    "SUBSCRIPTION_PAUSED",
    "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED",
    "SUBSCRIPTION_REVOKED",
    "SUBSCRIPTION_EXPIRED",
    "",
    "",
    "",
    "",
    "",
    "SUBSCRIPTION_PRICE_CHANGE_UPDATED",
    "SUBSCRIPTION_PENDING_PURCHASE_CANCELED",
    "",
    "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED",
  };
  static constexpr std::string_view one_time[] = {
    "", "ONE_TIME_PRODUCT_PURCHASED", "ONE_TIME_PRODUCT_CANCELED"};
  const auto t = static_cast<std::size_t>(n.notification_type);
  if (n.kind == rtdn_kind::subscription && t < std::size(subscription))
    return subscription[t];
  if (n.kind == rtdn_kind::one_time_product && t < std::size(one_time))
    return one_time[t];
  return {};
}

std::string notification_subtype(const rtdn& n) {
  if (n.kind == rtdn_kind::other)
    return n.kind_key;
  return n.notification_type != 0 ? std::to_string(n.notification_type) : std::string();
}

result<rtdn> parse_rtdn_push(std::string_view body) {
  auto bad = [](field_errors errors) { return error(errc::bad_request, std::move(errors)); };
  const auto doc = parse_json(body);
  if (!doc || !doc->is_object())
    return bad({{envelope_field, "invalid_json", "the push body is not a JSON object"}});
  field_errors errors;
  reader top(doc->get_object(), envelope_field, "", errors);
  const auto* message = top.object("message");
  if (message == nullptr) {
    if (errors.empty())
      top.fail("message", "missing", "is missing");
    return bad(std::move(errors));
  }

  rtdn n;
  reader m(*message, envelope_field, "message.", errors);
  // Pub/Sub sends both spellings; either is enough (messageId wins).
  const char* id_key = m.find("messageId") == nullptr && m.find("message_id") != nullptr
    ? "message_id"
    : "messageId";
  if (auto id = m.text(id_key, max_id_bytes, true))
    n.message_id = std::move(*id);

  if (auto data = m.text("data", std::numeric_limits<std::size_t>::max(), true)) {
    std::optional<std::string> decoded;
    if (is_strict_base64(*data))
      decoded = base64_decode(*data);
    if (!decoded)
      m.fail("data", "invalid_base64", "is not strict base64");
    else
      parse_developer_notification(*decoded, n, errors);
  }
  if (!errors.empty())
    return bad(std::move(errors));
  return n;
}

bool land_rtdn_answer(purchase_order_record& stored, const purchase_order_record& answered) {
  const auto before = stored;
  stored.purchase = answered.purchase;
  keep_notified(stored.purchase, before.purchase); // voided stays voided
  if (before.purchase.acknowledged == true)
    stored.purchase.acknowledged = true;
  stored.state = answered.state;
  stored.fraud = answered.fraud;
  stored.env = answered.env;
  stored.store_detail = answered.store_detail;
  // When Play said it (model/store_time.hpp): moves forward only, and is no change by itself.
  if (answered.said_at && (!stored.said_at || *answered.said_at > *stored.said_at))
    stored.said_at = answered.said_at;
  return stored.purchase != before.purchase || stored.state != before.state
    || stored.fraud != before.fraud || stored.env != before.env;
}

bool names_purchase(const rtdn& n) {
  return n.kind == rtdn_kind::subscription || n.kind == rtdn_kind::one_time_product
    || n.kind == rtdn_kind::voided_purchase;
}

bool apply_voided_notification(play_purchase& p, const rtdn& n, unix_ms at) {
  if (n.kind != rtdn_kind::voided_purchase)
    return false;
  const auto when = n.event_time.value_or(at);
  // products.get: "If not present, the quantity is 1."
  const int bought = p.quantity.value_or(1);
  const bool whole = p.kind == product_kind::product
    ? p.purchase_state == purchase_state::cancelled
        || (p.refundable_quantity && *p.refundable_quantity <= 0)
    : p.kind == product_kind::subscription
      && p.subscription_state == "SUBSCRIPTION_STATE_EXPIRED";
  std::optional<int> voided_quantity;
  if (!whole) {
    if (p.kind != product_kind::product || !p.refundable_quantity
        || *p.refundable_quantity >= bought)
      return false; // the API says it stands as it was
    voided_quantity = bought - *p.refundable_quantity;
  }
  // Voided already as the API now says (by the voided purchases list or an
  // earlier push): nothing new.
  if (p.voided_time && p.voided_quantity == voided_quantity)
    return false;
  p.voided_time = when;
  p.voided_quantity = voided_quantity;
  p.voided_reason.reset();
  p.voided_source.reset();
  p.purchase_state = purchase_state::refunded;
  return true;
}

bool asks_subscriptions(const rtdn& n) {
  switch (n.kind) {
    case rtdn_kind::subscription:
      return true;
    case rtdn_kind::voided_purchase:
      // Play, VoidedPurchaseNotification.productType: 1 PRODUCT_TYPE_SUBSCRIPTION,
      // 2 PRODUCT_TYPE_ONE_TIME.
      return n.product_type == 1;
    case rtdn_kind::one_time_product:
    case rtdn_kind::test:
    case rtdn_kind::pending_refund_review:
    case rtdn_kind::other:
      return false;
  }
  return false;
}

} // namespace receiptd::model::store_b

#include "model/store_a/verify_receipt_api.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/json_fields.hpp"

namespace receiptd::model::store_a {

namespace json = boost::json;

std::string verify_receipt_body(std::string_view receipt_base64, std::string_view password,
                                bool exclude_old_transactions) {
  json::object o{{"receipt-data", receipt_base64},
                 {"exclude-old-transactions", exclude_old_transactions}};
  if (!password.empty())
    o["password"] = password;
  return json::serialize(o);
}

namespace {

std::optional<bool> flag(const json::value* v) {
  if (!v)
    return std::nullopt;
  if (v->is_bool())
    return v->get_bool();
  if (v->is_string())
    return v->get_string() == "true" || v->get_string() == "1";
  if (auto n = json_int(v))
    return *n != 0;
  return std::nullopt;
}

bool truthy(const json::object& o, const char* key) {
  auto f = flag(o.if_contains(key));
  return f && *f;
}

// A field under either spelling Apple used: underscores (unified answers and
// most transaction answers) or hyphens (the iOS 6 purchase-info keys).
const json::value* field(const json::object& o, const std::string& underscored) {
  if (auto* v = o.if_contains(underscored))
    return v;
  auto hyphenated = underscored;
  for (auto& c : hyphenated)
    if (c == '_')
      c = '-';
  return o.if_contains(hyphenated);
}

std::string text(const json::object& o, const std::string& key) {
  auto* v = field(o, key);
  if (!v)
    return {};
  if (v->is_string())
    return std::string(v->get_string());
  if (auto n = json_int(v))
    return std::to_string(*n);
  return {};
}

void enrich_one(apple_in_app_purchase& p, const json::object& o) {
  if (!p.expires_date)
    if (auto ms = json_int(field(o, "expires_date_ms")))
      p.expires_date = *ms;
  // iOS 6 answers put milliseconds under "expires_date" itself.
  if (!p.expires_date)
    if (auto ms = json_int(field(o, "expires_date")))
      p.expires_date = *ms;
  if (!p.cancellation_date)
    if (auto ms = json_int(field(o, "cancellation_date_ms")))
      p.cancellation_date = *ms;
  if (!p.is_trial_period)
    p.is_trial_period = flag(field(o, "is_trial_period"));
  if (!p.is_in_intro_offer_period)
    p.is_in_intro_offer_period = flag(field(o, "is_in_intro_offer_period"));
  if (!p.web_order_line_item_id) {
    auto w = text(o, "web_order_line_item_id");
    if (!w.empty() && w != "0")
      p.web_order_line_item_id = w;
  }
  if (!p.original_purchase_date)
    if (auto ms = json_int(field(o, "original_purchase_date_ms")))
      p.original_purchase_date = *ms;
}

void enrich_from(std::vector<apple_in_app_purchase>& purchases, const json::value* list) {
  if (!list || !list->is_array())
    return;
  for (const auto& entry : list->get_array()) {
    if (!entry.is_object())
      continue;
    auto id = text(entry.get_object(), "transaction_id");
    for (auto& p : purchases)
      if (!id.empty() && p.transaction_id == id)
        enrich_one(p, entry.get_object());
  }
}

} // namespace

verify_answer classify_verify_receipt(int http_status, std::string_view body,
                                      std::string_view transport_error, verify_endpoint asked) {
  verify_answer a;
  if (http_status == 0) {
    a.verdict = unreachable_verdict("store unreachable: " + std::string(transport_error));
    return a;
  }
  if (http_status != 200) {
    a.verdict = unreachable_verdict("HTTP " + std::to_string(http_status));
    return a;
  }
  boost::system::error_code ec;
  auto doc = json::parse(body, ec);
  if (ec || !doc.is_object()) {
    a.verdict = unreachable_verdict("HTTP 200 without a JSON object");
    return a;
  }
  const auto& o = doc.get_object();
  auto status = json_int(o.if_contains("status"));
  if (!status) {
    a.verdict = unreachable_verdict("answer without a status");
    return a;
  }
  auto code = "status " + std::to_string(*status);
  a.verdict.body = std::string(body);
  if (truthy(o, "is-retryable") || truthy(o, "is_retryable")) {
    a.verdict = unreachable_verdict(code + " (retryable)");
    return a;
  }
  switch (*status) {
    case 0:
    case 21006: { // valid; 21006: an expired subscription, still genuine
      a.verdict.outcome = store_outcome::confirmed;
      a.verdict.detail = code;
      auto env = text(o, "environment");
      if (env == "Sandbox")
        a.verdict.env = environment::sandbox;
      else if (env == "Production")
        a.verdict.env = environment::production;
      else
        a.verdict.env
          = asked == verify_endpoint::sandbox ? environment::sandbox : environment::production;
      return a;
    }
    case 21003: // the receipt could not be authenticated
    case 21010: // the account or the receipt is not found
      a.verdict.outcome = store_outcome::rejected;
      a.verdict.detail = code;
      return a;
    case 21007:
      a.retry_on = verify_endpoint::sandbox;
      a.verdict = unreachable_verdict(code + " (sandbox receipt at production)");
      return a;
    case 21008:
      a.retry_on = verify_endpoint::production;
      a.verdict = unreachable_verdict(code + " (production receipt at sandbox)");
      return a;
    case 21004: // the shared secret does not match: the operator's to fix
      a.verdict = unreachable_verdict(code + " (shared secret refused)", true);
      return a;
    default: // 21000–21002, 21005, 21009, 21100–21199 and anything new
      a.verdict = unreachable_verdict(code);
      return a;
  }
}

void enrich_in_app(std::vector<apple_in_app_purchase>& purchases, std::string_view body) {
  boost::system::error_code ec;
  auto doc = json::parse(body, ec);
  if (ec || !doc.is_object())
    return;
  const auto& o = doc.get_object();
  enrich_from(purchases, o.if_contains("latest_receipt_info"));
  if (auto* receipt = o.if_contains("receipt"); receipt && receipt->is_object()) {
    const auto& r = receipt->get_object();
    enrich_from(purchases, r.if_contains("in_app"));
    if (!r.contains("in_app")) { // a transaction receipt's answer: one purchase
      auto id = text(r, "transaction_id");
      for (auto& p : purchases)
        if (p.transaction_id == id)
          enrich_one(p, r);
    }
  }
}

} // namespace receiptd::model::store_a

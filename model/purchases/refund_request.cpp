#include "model/purchases/refund_request.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/store_b/service_account.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::purchases {

namespace json = boost::json;

std::string_view to_string(refund_preference p) {
  switch (p) {
    case refund_preference::none:
      return "none";
    case refund_preference::decline:
      return "decline";
    case refund_preference::grant:
      return "grant";
    case refund_preference::grant_prorated:
      return "grant-prorated";
  }
  return "none";
}

std::optional<refund_preference> parse_refund_preference(std::string_view text) {
  for (auto p : {refund_preference::none, refund_preference::decline, refund_preference::grant,
                 refund_preference::grant_prorated})
    if (text == to_string(p))
      return p;
  return std::nullopt;
}

namespace {

constexpr std::size_t max_report_bytes = 4096;
constexpr std::int32_t max_milliunits = 100000;

std::optional<std::string> delivery_status_of(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (auto s : delivery_statuses)
    if (upper == s)
      return std::string(s);
  return std::nullopt;
}

} // namespace

result<consumption_report> parse_consumption_report(std::string_view body) {
  if (body.size() > max_report_bytes)
    return field_error{"", "too_long", "the body is over 4,096 bytes"};
  json::error_code ec;
  auto doc = json::parse(body, ec);
  if (ec)
    return field_error{"", "invalid_json", "the body is not JSON"};
  if (!doc.is_object())
    return field_error{"", "not_an_object", "the body is not a JSON object"};
  const auto& o = doc.get_object();
  field_errors errors;
  consumption_report r;
  bool any = false;
  for (const auto& [key, value] : o) {
    std::string_view k(key.data(), key.size());
    if (k == "consumption_percentage") {
      any = true;
      if (value.is_null())
        continue;
      double pct = 0;
      if (value.is_int64())
        pct = static_cast<double>(value.get_int64());
      else if (value.is_uint64())
        pct = static_cast<double>(value.get_uint64());
      else if (value.is_double())
        pct = value.get_double();
      else {
        errors.push_back({"consumption_percentage", "wrong_type", "is not a number"});
        continue;
      }
      if (!std::isfinite(pct) || pct < 0 || pct > 100) {
        errors.push_back({"consumption_percentage", "number_out_of_range", "is not between 0 and 100"});
        continue;
      }
      r.consumption_milliunits = static_cast<std::int32_t>(std::lround(pct * 1000));
    } else if (k == "delivery_status") {
      any = true;
      if (value.is_null())
        continue;
      if (!value.is_string()) {
        errors.push_back({"delivery_status", "wrong_type", "is not a string"});
        continue;
      }
      const auto& s = value.get_string();
      r.delivery_status = delivery_status_of(std::string_view(s.data(), s.size()));
      if (!r.delivery_status)
        errors.push_back({"delivery_status", "invalid",
                          "is not one of delivered, undelivered_quality_issue, "
                          "undelivered_wrong_item, undelivered_server_outage, undelivered_other"});
    } else if (k == "sample_content_provided") {
      any = true;
      if (value.is_null())
        continue;
      if (!value.is_bool()) {
        errors.push_back({"sample_content_provided", "wrong_type", "is not a boolean"});
        continue;
      }
      r.sample_content_provided = value.get_bool();
    } else {
      errors.push_back({std::string(k.substr(0, 64)), "invalid", "is not a field of this request"});
    }
  }
  if (!any && errors.empty())
    errors.push_back({"", "missing",
                      "give consumption_percentage, delivery_status or sample_content_provided"});
  if (!errors.empty())
    return errors;
  return r;
}

std::string to_json_text(const consumption_report& r) {
  json::object o;
  if (r.consumption_milliunits)
    o["consumption_milliunits"] = *r.consumption_milliunits;
  if (r.delivery_status)
    o["delivery_status"] = *r.delivery_status;
  if (r.sample_content_provided)
    o["sample_content_provided"] = *r.sample_content_provided;
  return json::serialize(o);
}

consumption_report read_consumption_report(std::string_view text) {
  consumption_report r;
  json::error_code ec;
  auto doc = json::parse(text, ec);
  if (ec || !doc.is_object())
    return r;
  const auto& o = doc.get_object();
  if (auto* v = o.if_contains("consumption_milliunits"); v && v->is_int64()
      && v->get_int64() >= 0 && v->get_int64() <= max_milliunits)
    r.consumption_milliunits = static_cast<std::int32_t>(v->get_int64());
  if (auto* v = o.if_contains("delivery_status"); v && v->is_string())
    r.delivery_status = delivery_status_of(std::string_view(v->get_string()));
  if (auto* v = o.if_contains("sample_content_provided"); v && v->is_bool())
    r.sample_content_provided = v->get_bool();
  return r;
}

namespace {

std::string trimmed(std::string_view base) {
  std::string url(base);
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  return url;
}

} // namespace

std::string store_a_consumption_url(std::string_view base_url, std::string_view transaction_id) {
  return trimmed(base_url) + "/inApps/v2/transactions/consumption/"
    + store_b::url_encode(transaction_id);
}

std::string store_b_review_url(std::string_view api_base, std::string_view package_name,
                               std::string_view order_id) {
  return trimmed(api_base) + "/androidpublisher/v3/applications/"
    + store_b::url_encode(package_name) + "/orders/" + store_b::url_encode(order_id)
    + ":reviewrefund";
}

refund_request new_refund_request(std::string id, std::string app_id, std::string purchase_id,
                                  std::string marketplace, std::string environment,
                                  std::string store_key, unix_ms now,
                                  std::optional<unix_ms> asked_at) {
  refund_request r;
  r.id = std::move(id);
  r.app_id = std::move(app_id);
  r.purchase_id = std::move(purchase_id);
  r.marketplace = std::move(marketplace);
  r.environment = std::move(environment);
  r.store_key = std::move(store_key);
  r.received_at = now;
  r.deadline_at = asked_at.value_or(now) + (r.marketplace == "store_b" ? store_b_answer_window_ms
                                                    : store_a_answer_window_ms);
  r.next_attempt_at = now;
  return r;
}

std::string refund_request_text(const refund_request& r) {
  json::object o;
  o["store"] = r.marketplace;
  o["state"] = r.state;
  o["reason"] = r.reason ? json::value(*r.reason) : json::value(nullptr);
  o["received_at"] = timestamp_json(r.received_at);
  o["deadline_at"] = timestamp_json(r.deadline_at);
  o["answered_at"] = timestamp_json(r.answered_at);
  json::value sent = nullptr;
  if (r.sent) {
    json::error_code ec;
    auto v = json::parse(*r.sent, ec);
    if (!ec)
      sent = std::move(v);
  }
  o["sent"] = std::move(sent);
  o["store_status"] = r.store_status ? json::value(*r.store_status) : json::value(nullptr);
  o["attempts"] = r.attempts;
  o["last_error"] = r.last_error.empty() ? json::value(nullptr) : json::value(r.last_error);
  return json::serialize(o);
}

refund_answer store_a_consumption_body(const refund_settings& s, const refund_facts& f,
                                       const consumption_report& r) {
  refund_answer out;
  if (s.preference == refund_preference::none) {
    out.skipped = "preference_none";
    return out;
  }
  // Apple refuses customerConsented other than true: without consent the
  // customer's data is not sent at all.
  if (!s.customer_consent) {
    out.skipped = "no_consent";
    return out;
  }
  // What the app's backend said wins over receiptd's records; receiptd knows
  // only whether the store's purchase stands (validated, not revoked).
  std::string delivery = r.delivery_status.value_or(f.delivered ? "DELIVERED" : "UNDELIVERED_OTHER");
  json::object body;
  body["customerConsented"] = true;
  body["deliveryStatus"] = delivery;
  body["sampleContentProvided"] = r.sample_content_provided.value_or(s.sample_content_provided);
  const char* preference = s.preference == refund_preference::decline ? "DECLINE"
                           : s.preference == refund_preference::grant ? "GRANT_FULL"
                                                                      : "GRANT_PRORATED";
  body["refundPreference"] = preference;
  if (delivery != "DELIVERED")
    body["consumptionPercentage"] = 0; // Apple: required 0 unless DELIVERED
  else if (r.consumption_milliunits
           && !(f.auto_renewable && s.preference == refund_preference::grant_prorated))
    body["consumptionPercentage"] = *r.consumption_milliunits;
  out.body = std::move(body);
  return out;
}

refund_answer store_b_review_body(const refund_settings& s, const refund_facts& f,
                                  const consumption_report& r,
                                  const std::string& pending_refund_token) {
  refund_answer out;
  if (s.preference == refund_preference::none) {
    out.skipped = "preference_none";
    return out;
  }
  // orders.reviewrefund has no consent field and Play's reference asks for
  // none: the consent setting is Apple's.
  json::object body;
  body["pendingRefundToken"] = pending_refund_token;
  body["sampleContentProvided"] = r.sample_content_provided.value_or(s.sample_content_provided);
  // Play has no prorated refund preference: a prorated grant leaves the
  // decision to Play (NEUTRAL).
  body["refundPreference"] = s.preference == refund_preference::decline ? "DECLINE"
                             : s.preference == refund_preference::grant ? "APPROVE"
                                                                        : "NEUTRAL";
  const bool delivered = r.delivery_status ? *r.delivery_status == "DELIVERED" : f.delivered;
  if (!delivered)
    body["consumptionPercentageMilliunits"] = 0;
  else if (r.consumption_milliunits)
    body["consumptionPercentageMilliunits"] = *r.consumption_milliunits;
  out.body = std::move(body);
  return out;
}

} // namespace receiptd::model::purchases

#include "apple_body.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <boost/json/array.hpp>

namespace receiptd::emulator {

namespace {

using model::unix_ms;
using model::store_a::decoded_receipt;
using model::store_a::transaction_receipt;
using model::store_a::unified_receipt;

constexpr unix_ms hour_ms = 3600 * 1000;

// Days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// Day (1-based) of the n-th Sunday of a month.
unsigned nth_sunday(std::int64_t year, unsigned month, unsigned n) {
  auto first = days_from_civil(year, month, 1);
  auto weekday = ((first % 7) + 11) % 7; // 0 = Sunday (1970-01-01 was a Thursday)
  return static_cast<unsigned>(1 + (7 - weekday) % 7 + 7 * (n - 1));
}

// Apple's *_pst fields are America/Los_Angeles wall time. US rule since 2007:
// daylight time from the second Sunday of March 02:00 PST (10:00 UTC) to the
// first Sunday of November 02:00 PDT (09:00 UTC).
std::string pacific(unix_ms ms) {
  auto year = std::stoll(model::format_utc(ms).substr(0, 4));
  unix_ms dst_start
    = days_from_civil(year, 3, nth_sunday(year, 3, 2)) * 24 * hour_ms + 10 * hour_ms;
  unix_ms dst_end = days_from_civil(year, 11, nth_sunday(year, 11, 1)) * 24 * hour_ms + 9 * hour_ms;
  unix_ms offset = (ms >= dst_start && ms < dst_end) ? -7 * hour_ms : -8 * hour_ms;
  auto text = model::format_utc(ms + offset); // "YYYY-MM-DD hh:mm:ss UTC"
  return text.substr(0, text.size() - 3) + "America/Los_Angeles";
}

std::string gmt(unix_ms ms) {
  auto text = model::format_utc(ms);
  return text.substr(0, text.size() - 3) + "Etc/GMT";
}

const char* flag(bool b) {
  return b ? "true" : "false";
}

boost::json::object in_app_entry(const model::apple_in_app_purchase& p) {
  boost::json::object o;
  o["quantity"] = std::to_string(p.quantity);
  o["product_id"] = p.product_id;
  o["transaction_id"] = p.transaction_id;
  o["original_transaction_id"] = p.original_transaction_id;
  if (p.purchase_date)
    put_apple_date(o, "purchase_date", *p.purchase_date);
  if (p.original_purchase_date)
    put_apple_date(o, "original_purchase_date", *p.original_purchase_date);
  if (p.expires_date)
    put_apple_date(o, "expires_date", *p.expires_date);
  if (p.cancellation_date) {
    put_apple_date(o, "cancellation_date", *p.cancellation_date);
    o["cancellation_reason"] = "0";
  }
  if (p.web_order_line_item_id)
    o["web_order_line_item_id"] = *p.web_order_line_item_id;
  o["is_trial_period"] = flag(p.is_trial_period.value_or(false));
  // Apple sends the intro-offer flag for subscriptions only.
  if (p.expires_date || p.is_in_intro_offer_period)
    o["is_in_intro_offer_period"] = flag(p.is_in_intro_offer_period.value_or(false));
  o["in_app_ownership_type"] = "PURCHASED";
  return o;
}

unix_ms now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// latest_receipt_info: every transaction, oldest first (as in the RevenueCat
// sample); with exclude-old-transactions only the latest renewal of each
// subscription (Apple's documentation of that request field).
boost::json::array latest_receipt_info(const std::vector<model::apple_in_app_purchase>& in_app,
                                       bool exclude_old) {
  std::vector<const model::apple_in_app_purchase*> order;
  for (const auto& p : in_app)
    order.push_back(&p);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) {
    return a->purchase_date.value_or(0) < b->purchase_date.value_or(0);
  });
  if (exclude_old) {
    std::map<std::string, const model::apple_in_app_purchase*> latest;
    for (auto* p : order)
      if (p->expires_date)
        latest[p->original_transaction_id] = p;
    std::erase_if(
      order, [&](auto* p) { return p->expires_date && latest[p->original_transaction_id] != p; });
  }
  boost::json::array out;
  for (auto* p : order)
    out.push_back(in_app_entry(*p));
  return out;
}

// One entry per subscription, from its latest transaction.
boost::json::array pending_renewal_info(const std::vector<model::apple_in_app_purchase>& in_app) {
  std::map<std::string, const model::apple_in_app_purchase*> latest;
  for (const auto& p : in_app) {
    if (!p.expires_date)
      continue;
    auto& slot = latest[p.original_transaction_id];
    if (!slot || *slot->expires_date <= *p.expires_date)
      slot = &p;
  }
  boost::json::array out;
  const auto now = now_ms();
  for (const auto& [original_id, p] : latest) {
    bool renewing = *p->expires_date > now;
    boost::json::object o{{"auto_renew_product_id", p->product_id},
                          {"original_transaction_id", original_id},
                          {"product_id", p->product_id},
                          {"auto_renew_status", renewing ? "1" : "0"}};
    if (!renewing)
      o["expiration_intent"] = "1"; // the customer cancelled
    out.push_back(std::move(o));
  }
  return out;
}

boost::json::object unified_receipt_json(const decoded_receipt& receipt, const unified_receipt& u) {
  boost::json::object o;
  o["receipt_type"] = u.receipt_type;
  o["adam_id"] = 0;
  o["app_item_id"] = 0;
  o["bundle_id"] = receipt.bundle_id;
  o["application_version"] = u.app_version;
  o["download_id"] = 0;
  o["version_external_identifier"] = 0;
  if (u.creation_date)
    put_apple_date(o, "receipt_creation_date", *u.creation_date);
  put_apple_date(o, "request_date", now_ms());
  o["original_application_version"] = u.original_app_version;
  if (u.expiration_date)
    put_apple_date(o, "expiration_date", *u.expiration_date);
  boost::json::array in_app;
  for (const auto& p : u.in_app)
    in_app.push_back(in_app_entry(p));
  o["in_app"] = std::move(in_app);
  return o;
}

// iOS 6 answers echo purchase-info with Apple's JSON spelling: "product-id"
// becomes "product_id", "bid" and "bvrs" stay (e.g. karek314/Apple-AppStore-Receipt-PHP
// reads $data->receipt->product_id and ->bid).
boost::json::object transaction_receipt_json(const transaction_receipt& t) {
  boost::json::object o;
  for (const auto& [key, value] : t.purchase_info) {
    std::string name = key;
    std::replace(name.begin(), name.end(), '-', '_');
    o[name] = value;
  }
  return o;
}

} // namespace

std::string_view apple_environment(model::environment env) {
  return env == model::environment::sandbox ? "Sandbox" : "Production";
}

void put_apple_date(boost::json::object& o, std::string_view key, unix_ms ms) {
  std::string k(key);
  o[k] = gmt(ms);
  o[k + "_ms"] = std::to_string(ms);
  o[k + "_pst"] = pacific(ms);
}

boost::json::object apple_success_body(const decoded_receipt& receipt, std::string_view environment,
                                       std::string_view receipt_data, bool exclude_old) {
  boost::json::object body{{"status", 0}, {"environment", environment}};
  if (const auto* t = std::get_if<transaction_receipt>(&receipt.detail)) {
    body["receipt"] = transaction_receipt_json(*t);
    return body;
  }
  const auto& u = std::get<unified_receipt>(receipt.detail);
  body["receipt"] = unified_receipt_json(receipt, u);
  body["latest_receipt_info"] = latest_receipt_info(u.in_app, exclude_old);
  body["latest_receipt"] = receipt_data;
  auto renewals = pending_renewal_info(u.in_app);
  if (!renewals.empty())
    body["pending_renewal_info"] = std::move(renewals);
  return body;
}

} // namespace receiptd::emulator

#include "model/store_b/voided.hpp"

#include <algorithm>
#include <climits>
#include <exception>

#include <boost/json/parse.hpp>

#include "model/json_fields.hpp"
#include "model/store_b/service_account.hpp" // url_encode

namespace receiptd::model::store_b {

namespace json = boost::json;

namespace {

// Google answers at most maxResults (≤ 1000) entries a page; more is not read.
constexpr std::size_t max_entries = 1000;
// Real page tokens and purchase tokens are a few hundred bytes; these bound
// what a hostile answer can make receiptd store or look up.
constexpr std::size_t max_page_token = 2048;
constexpr std::size_t max_purchase_token = 4096;
constexpr std::size_t max_order_id = 256;
// A minute of clock slack against Google's 30 days.
constexpr unix_ms lookback_slack_ms = 60 * 1000;

constexpr std::string_view what = "Play voided purchases list: ";

// Tokens and order ids are printable ASCII; anything else (a NUL, a newline)
// would only make trouble in a URL, a log line or a text column.
bool printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

std::string excerpt(std::string_view text, std::size_t max = 200) {
  std::string out;
  for (unsigned char c : text.substr(0, max))
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  return out;
}

error list_error(std::string message) {
  return error(errc::store_unavailable, std::string(what) + std::move(message));
}

// An int32 field Google may leave out when it is 0 (proto3 JSON): absent → 0;
// a number or digit string in 0..INT_MAX → it; anything else → nullopt.
std::optional<int> small_int(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  if (!v)
    return 0;
  auto n = json_int(v);
  if (!n || *n < 0 || *n > INT_MAX)
    return std::nullopt;
  return static_cast<int>(*n);
}

// One entry of voidedPurchases; nullopt when it is not one receiptd can use.
std::optional<voided_purchase> read_entry(const json::value& entry) {
  if (!entry.is_object())
    return std::nullopt;
  const auto& o = entry.get_object();
  voided_purchase v;
  auto* token = o.if_contains("purchaseToken");
  if (!token || !token->is_string() || token->get_string().empty()
      || token->get_string().size() > max_purchase_token || !printable(token->get_string()))
    return std::nullopt;
  v.purchase_token = token->get_string();
  auto voided_time = json_int(o.if_contains("voidedTimeMillis"));
  if (!voided_time || *voided_time <= 0)
    return std::nullopt;
  v.voided_time = *voided_time;
  if (auto t = json_int(o.if_contains("purchaseTimeMillis")); t && *t >= 0)
    v.purchase_time = *t;
  // The order id only names the entry in logs: an odd one is left out, the
  // entry kept.
  if (auto id = json_text(o, "orderId"); id.size() <= max_order_id && printable(id))
    v.order_id = std::move(id);
  auto source = small_int(o, "voidedSource");
  auto reason = small_int(o, "voidedReason");
  if (!source || !reason)
    return std::nullopt;
  v.voided_source = *source;
  v.voided_reason = *reason;
  if (o.contains("voidedQuantity")) {
    auto quantity = small_int(o, "voidedQuantity");
    if (!quantity)
      return std::nullopt;
    v.voided_quantity = *quantity;
  }
  return v;
}

result<voided_page> read_page(std::string_view body) {
  boost::system::error_code ec;
  json::parse_options opts;
  opts.max_depth = 16;
  auto doc = json::parse(body, ec, {}, opts);
  if (ec || !doc.is_object())
    return list_error("HTTP 200 without a JSON object");
  const auto& o = doc.get_object();
  voided_page page;
  if (auto* pagination = o.if_contains("tokenPagination")) {
    auto* next
      = pagination->is_object() ? pagination->get_object().if_contains("nextPageToken") : nullptr;
    if (!pagination->is_object() || (next && !next->is_string()))
      return list_error("tokenPagination is not {\"nextPageToken\": string}");
    if (next) {
      if (next->get_string().size() > max_page_token || !printable(next->get_string()))
        return list_error("nextPageToken is not printable ASCII of at most "
                          + std::to_string(max_page_token) + " bytes");
      page.next_page_token = next->get_string();
    }
  }
  if (auto* list = o.if_contains("voidedPurchases")) {
    if (!list->is_array())
      return list_error("voidedPurchases is not an array");
    const auto& entries = list->get_array();
    auto n = std::min(entries.size(), max_entries);
    page.purchases.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      if (auto v = read_entry(entries[i]))
        page.purchases.push_back(std::move(*v));
  }
  return page;
}

} // namespace

std::string voided_purchases_url(std::string_view api_base, std::string_view package_name,
                                 unix_ms start_time, unix_ms end_time, int max_results,
                                 std::string_view page_token) {
  std::string url(api_base);
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  url += "/androidpublisher/v3/applications/";
  url += url_encode(package_name);
  url += "/purchases/voidedpurchases?startTime=";
  url += std::to_string(start_time);
  url += "&endTime=";
  url += std::to_string(end_time);
  url += "&maxResults=";
  url += std::to_string(max_results);
  // type=1: subscriptions too (type 0, the default, lists only in-app products).
  url += "&type=1";
  // Quantity-based partial refunds (voidedQuantity) are listed only when asked
  // for (VoidedPurchase.voidedQuantity: "only returned when
  // includeQuantityBasedPartialRefund is set to true").
  url += "&includeQuantityBasedPartialRefund=true";
  if (!page_token.empty()) {
    url += "&token=";
    url += url_encode(page_token);
  }
  return url;
}

result<voided_page> parse_voided_page(int http_status, std::string_view body,
                                      std::string_view transport_error) {
  if (http_status == 0)
    return list_error("no answer: " + excerpt(transport_error));
  if (http_status != 200)
    return list_error("HTTP " + std::to_string(http_status)
                      + (body.empty() ? std::string() : " " + excerpt(body)));
  try {
    return read_page(body);
  } catch (const std::exception& e) { // bad_alloc on a huge body: no exception escapes
    return list_error(std::string("HTTP 200 unreadable: ") + e.what());
  }
}

voided_cursor first_voided_cursor(unix_ms now) {
  voided_cursor c;
  c.window_start = now - voided_lookback_ms;
  c.high_water = c.window_start;
  return c;
}

unix_ms voided_start_time(const voided_cursor& c, unix_ms now) {
  return std::max(c.window_start, now - voided_lookback_ms + lookback_slack_ms);
}

voided_cursor advance_voided_cursor(const voided_cursor& c, const voided_page& page,
                                    unix_ms end_time) {
  voided_cursor next;
  next.high_water = c.high_water;
  for (const auto& v : page.purchases)
    next.high_water = std::max(next.high_water, std::min(v.voided_time, end_time));
  if (!page.next_page_token.empty()) {
    next.window_start = c.window_start;
    next.page_token = page.next_page_token;
    return next;
  }
  next.window_start = std::max(c.window_start, next.high_water);
  next.high_water = next.window_start;
  return next;
}

bool apply_voided(purchase_order_record& r, const voided_purchase& v) {
  auto& p = r.purchase;
  // Play lists one entry per voiding; the latest one holds (an older entry read
  // again after a newer one changes nothing).
  if (p.voided_time && *p.voided_time > v.voided_time) {
    bool changed = p.purchase_state != purchase_state::refunded;
    p.purchase_state = purchase_state::refunded;
    return changed;
  }
  bool same = p.purchase_state == purchase_state::refunded && p.voided_time == v.voided_time
    && p.voided_reason == v.voided_reason && p.voided_source == v.voided_source
    && p.voided_quantity == v.voided_quantity;
  if (same)
    return false;
  p.purchase_state = purchase_state::refunded;
  p.voided_time = v.voided_time;
  p.voided_reason = v.voided_reason;
  p.voided_source = v.voided_source;
  p.voided_quantity = v.voided_quantity;
  p.order_read_at.reset(); // the order's refunds changed: the orders sweep reads them
  return true;
}

} // namespace receiptd::model::store_b

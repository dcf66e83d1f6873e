#include "model/store_b/orders.hpp"

#include <algorithm>
#include <climits>
#include <exception>

#include <boost/json/parse.hpp>

#include "model/json_fields.hpp"
#include "model/store_b/service_account.hpp" // url_encode

namespace receiptd::model::store_b {

namespace json = boost::json;

namespace {

constexpr std::string_view what = "Play orders: ";
constexpr std::size_t max_id = 256;      // order ids are ~30 bytes
constexpr std::size_t max_token = 4096;  // purchase tokens a few hundred
constexpr std::size_t max_line_items = 50;
constexpr std::size_t max_refunds = 1000;

std::string excerpt(std::string_view text, std::size_t max = 200) {
  std::string out;
  for (unsigned char c : text.substr(0, max))
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  return out;
}

error orders_error(std::string message) {
  return error(errc::store_unavailable, std::string(what) + std::move(message));
}

bool printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// A printable text of 1..max bytes at key; empty otherwise.
std::string text_at(const json::object& o, const char* key, std::size_t max) {
  auto* v = o.if_contains(key);
  if (!v || !v->is_string() || v->get_string().size() > max || !printable(v->get_string()))
    return {};
  return std::string(v->get_string());
}

// ISO 4217: three upper-case letters.
std::optional<std::string> currency_of(const json::value* money) {
  if (!money || !money->is_object())
    return std::nullopt;
  auto code = text_at(money->get_object(), "currencyCode", 3);
  if (code.size() != 3 || !std::all_of(code.begin(), code.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
    return std::nullopt;
  return code;
}

const json::value* at(const json::object& o, const char* key) {
  return o.if_contains(key);
}

// Total and tax of an object holding them (an Order, a LineItem, RefundDetails).
play_price cost_of(const json::object& o) {
  play_price c;
  c.price = money_milliunits(at(o, "total"));
  c.currency_code = currency_of(at(o, "total"));
  c.tax = money_milliunits(at(o, "tax"));
  return c;
}

// orderHistory: the full refund's total, else the partial refunds' sum; none
// when nothing was refunded.
std::optional<std::int64_t> refunded_of(const json::object& order) {
  auto* history = order.if_contains("orderHistory");
  if (!history || !history->is_object())
    return std::nullopt;
  const auto& h = history->get_object();
  auto refund_total = [](const json::value& event) -> std::optional<std::int64_t> {
    if (!event.is_object())
      return std::nullopt;
    auto* details = event.get_object().if_contains("refundDetails");
    if (!details || !details->is_object())
      return std::nullopt;
    return money_milliunits(details->get_object().if_contains("total"));
  };
  if (auto* full = h.if_contains("refundEvent"))
    if (auto total = refund_total(*full))
      return total;
  auto* partial = h.if_contains("partialRefundEvents");
  if (!partial || !partial->is_array() || partial->get_array().empty())
    return std::nullopt;
  std::int64_t sum = 0;
  std::size_t n = 0;
  for (const auto& event : partial->get_array()) {
    if (++n > max_refunds)
      break;
    auto total = refund_total(event);
    if (!total || __builtin_add_overflow(sum, *total, &sum))
      return std::nullopt;
  }
  return sum;
}

result<play_order> read_order(const json::value& v) {
  if (!v.is_object())
    return orders_error("an order is not a JSON object");
  const auto& o = v.get_object();
  play_order out;
  out.order_id = text_at(o, "orderId", max_id);
  if (out.order_id.empty())
    return orders_error("an order without an orderId");
  out.purchase_token = text_at(o, "purchaseToken", max_token);
  out.cost = cost_of(o);
  out.cost.refunded = refunded_of(o);
  if (auto* items = o.if_contains("lineItems"); items && items->is_array()) {
    for (const auto& item : items->get_array()) {
      if (out.line_items.size() == max_line_items)
        break;
      if (!item.is_object())
        continue;
      auto product = text_at(item.get_object(), "productId", 256);
      if (!product.empty())
        out.line_items.emplace_back(std::move(product), cost_of(item.get_object()));
    }
  }
  return out;
}

result<json::value> read_body(int http_status, std::string_view body,
                              std::string_view transport_error) {
  if (http_status == 0)
    return orders_error("no answer: " + excerpt(transport_error));
  if (http_status != 200)
    return error(http_status == 404 ? errc::not_found : errc::store_unavailable,
                 std::string(what) + "HTTP " + std::to_string(http_status)
                   + (body.empty() ? std::string() : " " + excerpt(body)));
  json::error_code ec;
  auto doc = json::parse(body, ec);
  if (ec || !doc.is_object())
    return orders_error("HTTP 200 without a JSON object");
  return doc;
}

// The line item of `product` (empty when the order has none of it).
const play_price* line_cost(const play_order& order, const std::string& product) {
  for (const auto& [id, cost] : order.line_items)
    if (id == product)
      return &cost;
  return nullptr;
}

} // namespace

std::string order_url(std::string_view api_base, std::string_view package_name,
                      std::string_view order_id) {
  std::string url(api_base);
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  url += "/androidpublisher/v3/applications/";
  url += url_encode(package_name);
  url += "/orders/";
  url += url_encode(order_id);
  return url;
}

std::string orders_batch_url(std::string_view api_base, std::string_view package_name,
                             const std::vector<std::string>& order_ids) {
  std::string url(api_base);
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  url += "/androidpublisher/v3/applications/";
  url += url_encode(package_name);
  url += "/orders:batchGet";
  char sep = '?';
  for (const auto& id : order_ids) {
    url += sep;
    url += "orderIds=";
    url += url_encode(id);
    sep = '&';
  }
  return url;
}

std::optional<std::int64_t> money_milliunits(const json::value* money) {
  if (!money || !money->is_object())
    return std::nullopt;
  const auto& m = money->get_object();
  std::int64_t units = 0;
  if (auto* u = m.if_contains("units")) {
    auto n = json_int(u);
    if (!n)
      return std::nullopt;
    units = *n;
  }
  std::int64_t nanos = 0;
  if (auto* n = m.if_contains("nanos")) {
    auto v = json_int(n);
    if (!v || *v <= -1000000000 || *v >= 1000000000)
      return std::nullopt;
    nanos = *v;
  }
  if ((units > 0 && nanos < 0) || (units < 0 && nanos > 0))
    return std::nullopt; // google.type.Money: units and nanos share their sign
  std::int64_t out = 0;
  if (__builtin_mul_overflow(units, std::int64_t{1000}, &out)
      || __builtin_add_overflow(out, nanos / 1000000, &out))
    return std::nullopt;
  return out;
}

result<play_order> parse_order(int http_status, std::string_view body,
                               std::string_view transport_error) {
  try {
    auto doc = read_body(http_status, body, transport_error);
    if (!doc)
      return doc.err();
    return read_order(*doc);
  } catch (const std::exception& e) { // bad_alloc on a huge body: no exception escapes
    return orders_error(std::string("HTTP 200 unreadable: ") + e.what());
  }
}

result<std::vector<play_order>> parse_orders(int http_status, std::string_view body,
                                             std::string_view transport_error) {
  try {
    auto doc = read_body(http_status, body, transport_error);
    if (!doc)
      return doc.err();
    std::vector<play_order> out;
    auto* orders = doc->get_object().if_contains("orders");
    if (!orders) // proto3 JSON leaves an empty list out
      return out;
    if (!orders->is_array())
      return orders_error("orders is not a list");
    for (const auto& o : orders->get_array()) {
      if (out.size() == max_orders_per_batch)
        return orders_error("more than " + std::to_string(max_orders_per_batch) + " orders");
      auto order = read_order(o);
      if (!order)
        return order.err();
      out.push_back(std::move(*order));
    }
    return out;
  } catch (const std::exception& e) {
    return orders_error(std::string("HTTP 200 unreadable: ") + e.what());
  }
}

bool apply_order(play_purchase& p, const play_order& order, unix_ms now) {
  auto before = p;
  auto cost_for = [&](const std::string& product) {
    play_price c;
    if (auto* line = line_cost(order, product))
      c = *line;
    else if (order.line_items.size() <= 1) // the order is this product's alone
      c = order.cost;
    if (!c.currency_code && c.price)
      c.currency_code = order.cost.currency_code;
    c.refunded = order.cost.refunded;
    return c;
  };
  p.cost = cost_for(p.product_id);
  for (auto& item : p.line_items)
    item.cost = cost_for(item.product_id);
  p.order_read_at = now;
  auto changed = p.cost != before.cost || p.line_items != before.line_items;
  return changed;
}

} // namespace receiptd::model::store_b

#include "model/store_b/line_items.hpp"

#include <climits>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/json_fields.hpp"

namespace receiptd::model::store_b {

namespace json = boost::json;

namespace {

template <class T>
void put(json::object& o, const char* key, const std::optional<T>& v) {
  if (v)
    o[key] = *v;
}

std::optional<int> int_at(const json::object& o, const char* key) {
  auto n = json_int(o.if_contains(key));
  if (!n || *n < INT_MIN || *n > INT_MAX)
    return std::nullopt;
  return static_cast<int>(*n);
}

std::optional<std::string> text_at(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  if (!v || !v->is_string())
    return std::nullopt;
  return std::string(v->get_string());
}

} // namespace

std::optional<std::string> line_items_json(const std::vector<play_line_item>& items) {
  if (items.empty())
    return std::nullopt;
  json::array out;
  for (const auto& i : items) {
    json::object o{{"product_id", i.product_id}};
    put(o, "quantity", i.quantity);
    put(o, "refundable_quantity", i.refundable_quantity);
    put(o, "consumed", i.consumed);
    put(o, "offer_id", i.offer_id);
    put(o, "purchase_option_id", i.purchase_option_id);
    put(o, "price", i.cost.price);
    put(o, "currency_code", i.cost.currency_code);
    put(o, "tax", i.cost.tax);
    put(o, "refunded", i.cost.refunded);
    out.push_back(std::move(o));
  }
  return json::serialize(out);
}

std::optional<std::vector<play_line_item>> parse_line_items_json(std::string_view text) {
  json::error_code ec;
  auto doc = json::parse(text, ec);
  if (ec || !doc.is_array())
    return std::nullopt;
  std::vector<play_line_item> out;
  for (const auto& v : doc.get_array()) {
    if (!v.is_object())
      return std::nullopt;
    const auto& o = v.get_object();
    play_line_item i;
    auto product = text_at(o, "product_id");
    if (!product)
      return std::nullopt;
    i.product_id = std::move(*product);
    i.quantity = int_at(o, "quantity");
    i.refundable_quantity = int_at(o, "refundable_quantity");
    if (auto* c = o.if_contains("consumed"); c && c->is_bool())
      i.consumed = c->get_bool();
    i.offer_id = text_at(o, "offer_id");
    i.purchase_option_id = text_at(o, "purchase_option_id");
    i.cost.price = json_int(o.if_contains("price"));
    i.cost.currency_code = text_at(o, "currency_code");
    i.cost.tax = json_int(o.if_contains("tax"));
    i.cost.refunded = json_int(o.if_contains("refunded"));
    out.push_back(std::move(i));
  }
  return out;
}

} // namespace receiptd::model::store_b

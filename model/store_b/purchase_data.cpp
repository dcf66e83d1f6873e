#include "model/store_b/purchase_data.hpp"

#include <boost/json/parse.hpp>

#include "model/json_fields.hpp"

namespace receiptd::model::store_b {

namespace {

field_error bad(std::string message) {
  return {"purchase_data", "invalid_purchase_data", std::move(message)};
}

} // namespace

result<purchase_data> parse_purchase_data(std::string_view json) {
  stack_block<4096> block; // what is read from the document is copied out
  boost::system::error_code ec;
  auto doc = boost::json::parse(json, ec, block.storage());
  if (ec || !doc.is_object())
    return bad("purchase_data is not a JSON object");
  const auto& obj = doc.get_object();
  purchase_data out;
  field_errors errors;
  auto required = [&](const char* key, std::string& dest) {
    auto* v = obj.if_contains(key);
    if (!v || !v->is_string() || v->get_string().empty())
      errors.push_back(bad(std::string("purchase_data has no ") + key));
    else
      dest = v->get_string();
  };
  required("packageName", out.package_name);
  required("productId", out.product_id);
  required("purchaseToken", out.purchase_token);
  if (!errors.empty())
    return errors;
  if (auto* v = obj.if_contains("orderId"); v && v->is_string())
    out.order_id = std::string(v->get_string());
  out.purchase_time = json_int(obj.if_contains("purchaseTime"));
  if (auto s = json_int(obj.if_contains("purchaseState")))
    out.purchase_state = static_cast<int>(*s);
  if (auto q = json_int(obj.if_contains("quantity")))
    out.quantity = static_cast<int>(*q);
  if (auto* v = obj.if_contains("acknowledged"); v && v->is_bool())
    out.acknowledged = v->get_bool();
  if (auto* v = obj.if_contains("autoRenewing"); v && v->is_bool())
    out.auto_renewing = v->get_bool();
  // Play Billing: the app's own account id, set with setObfuscatedAccountId
  // (at most 64 characters; a longer one is not Play's and is ignored).
  if (auto* v = obj.if_contains("obfuscatedAccountId");
      v && v->is_string() && !v->get_string().empty() && v->get_string().size() <= 256)
    out.account_id = std::string(v->get_string());
  return out;
}

model::purchase_state purchase_state_of(std::optional<int> s) {
  if (!s)
    return purchase_state::unknown;
  switch (*s) {
    case 0:
      return purchase_state::purchased;
    case 1:
      return purchase_state::cancelled;
    case 2:
      return purchase_state::refunded;
    case 4:
      return purchase_state::pending;
    default:
      return purchase_state::unknown;
  }
}

} // namespace receiptd::model::store_b

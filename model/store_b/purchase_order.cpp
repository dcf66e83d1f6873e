#include "model/store_b/purchase_order.hpp"

namespace receiptd::model::store_b {

purchase_order_record make_record(const store_b_upload& u, const app& a, std::string_view peer_ip,
                                  unix_ms now) {
  purchase_order_record r;
  r.app_id = a.id;
  r.is_legacy = false;
  r.package_name = u.data.package_name;
  r.purchase_token = u.data.purchase_token;
  r.order_id = u.data.order_id;
  r.purchase.product_id = u.data.product_id;
  r.purchase.kind = u.data.is_subscription() ? product_kind::subscription : product_kind::product;
  r.purchase.purchase_time = u.data.purchase_time;
  r.purchase.purchase_state = purchase_state_of(u.data.purchase_state);
  r.purchase.quantity = u.data.quantity;
  r.purchase.acknowledged = u.data.acknowledged;
  r.purchase.auto_renewing = u.data.auto_renewing;
  r.purchase.account_id = u.data.account_id;
  // Play signed the purchase data when the purchase was made.
  r.said_at = u.data.purchase_time;
  r.purchase_data = u.purchase_data;
  r.purchase_signature = u.purchase_signature;
  r.echo = u.common.echo(peer_ip);
  r.created_at = r.updated_at = now;
  r.terms.transfers = a.transfers;
  return r;
}

purchase_order_record make_record(const store_b_legacy_upload& u, const app& a,
                                  std::string_view peer_ip, unix_ms now) {
  purchase_order_record r;
  r.app_id = a.id;
  r.is_legacy = true;
  r.package_name = u.package_name;
  r.purchase_token = u.purchase_token;
  r.order_id = u.order_id;
  r.purchase.product_id = u.product_id;
  r.echo = u.common.echo(peer_ip);
  r.created_at = r.updated_at = now;
  r.terms.transfers = a.transfers;
  return r;
}

fraud_reason check_locally(const store_b_upload& u, const licence_key& key, const app& a) {
  if (!key.verify(u.purchase_data, u.signature_bytes))
    return fraud_reason::invalid_signature;
  if (u.data.package_name != a.package_name)
    return fraud_reason::package_name_mismatch;
  return fraud_reason::none;
}

fraud_reason check_locally(const store_b_legacy_upload& u, const app& a) {
  return u.package_name == a.package_name ? fraud_reason::none
                                          : fraud_reason::package_name_mismatch;
}

purchase_api first_api(const purchase_order_record& r) {
  return r.purchase.kind == product_kind::subscription ? purchase_api::subscriptions_v2
                                                       : purchase_api::products;
}

} // namespace receiptd::model::store_b

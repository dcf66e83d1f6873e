#include "db/record_rows.hpp"

#include "model/store_a/app_transaction.hpp"
#include "model/store_b/line_items.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace receiptd::db {

namespace {

std::string text(std::string_view s) {
  return std::string(s);
}

std::optional<std::string> owners_text(const model::previous_owners& owners) {
  if (owners.empty())
    return std::nullopt;
  boost::json::array a;
  for (const auto& o : owners)
    a.emplace_back(o);
  return boost::json::serialize(a);
}

model::previous_owners owners_of(const std::optional<std::string>& text) {
  model::previous_owners out;
  if (!text)
    return out;
  boost::system::error_code ec;
  auto v = boost::json::parse(*text, ec);
  if (ec || !v.is_array())
    throw corrupt_row("previous_user_identifiers is not a JSON array");
  for (const auto& e : v.get_array()) {
    if (!e.is_string())
      throw corrupt_row("previous_user_identifiers holds a non-string");
    out.emplace_back(e.get_string());
  }
  return out;
}

// The columns every record row has, whichever store: identity, echo fields,
// fraud, environment, state. The row's own columns are its assign/record's.
template <class Row, class Record>
void assign_common(Row& row, const Record& r) {
  row.id = r.id;
  row.app_id = r.app_id;
  row.created_at = r.created_at;
  row.proof_size.set(r.proof_size);
  row.user_identifier.set(r.echo.user_identifier);
  row.previous_user_identifiers.set(owners_text(r.previous_users));
  row.metadata.set(r.echo.metadata);
  row.ip_address.set(r.echo.ip_address);
  row.fraud_reason = text(to_string(r.fraud));
  row.environment = text(to_string(r.env));
  row.validation_state = text(to_string(r.state));
  row.store_detail = r.store_detail;
  row.said_at.set(r.said_at);
  row.updated_at = r.updated_at;
}

template <class Row, class Record>
void read_common(const Row& row, Record& r) {
  r.id = row.id;
  r.app_id = row.app_id;
  r.created_at = row.created_at;
  r.proof_size = row.proof_size.template get<std::int64_t>();
  r.echo.user_identifier = row.user_identifier.get();
  r.previous_users = owners_of(row.previous_user_identifiers.get());
  r.echo.metadata = row.metadata.get();
  r.echo.ip_address = row.ip_address.get();
  r.fraud
    = parse_column(model::parse_fraud_reason(row.fraud_reason), "fraud_reason", row.fraud_reason);
  r.env = parse_column(model::parse_environment(row.environment), "environment", row.environment);
  r.state = parse_column(model::parse_validation_state(row.validation_state), "validation_state",
                         row.validation_state);
  r.store_detail = row.store_detail;
  r.said_at = row.said_at.template get<model::unix_ms>();
  r.updated_at = row.updated_at;
}

std::optional<std::string> text_or_none(const std::string& s) {
  if (s.empty())
    return std::nullopt;
  return s;
}

} // namespace

void purchase_order_row::assign(const model::purchase_order_record& r) {
  assign_common(*this, r);
  proof = r.purchase_token;

  is_legacy = to_flag(r.is_legacy);
  package_name = r.package_name;
  order_id.set(r.order_id);
  purchase_data = r.purchase_data;
  purchase_signature = r.purchase_signature;

  product_id = r.purchase.product_id;
  product_kind = std::string(to_string(r.purchase.kind));
  purchase_time.set(r.purchase.purchase_time);
  purchase_state = std::string(to_string(r.purchase.purchase_state));
  quantity.set(r.purchase.quantity);
  refundable_quantity.set(r.purchase.refundable_quantity);
  set_flag(acknowledged, r.purchase.acknowledged);
  set_flag(auto_renewing, r.purchase.auto_renewing);
  expiry_time.set(r.purchase.expiry_time);
  subscription_state.set(r.purchase.subscription_state);
  is_test = to_flag(r.purchase.is_test);
  voided_time.set(r.purchase.voided_time);
  voided_reason.set(r.purchase.voided_reason);
  voided_source.set(r.purchase.voided_source);
  voided_quantity.set(r.purchase.voided_quantity);
  std::optional<std::string> acknowledgement;
  if (r.acknowledgement)
    acknowledgement = std::string(to_string(*r.acknowledgement));
  acknowledgement_state.set(acknowledgement);
  linked_purchase_token.set(r.purchase.linked_purchase_token);
  region_code.set(r.purchase.region_code);
  account_id.set(r.purchase.account_id);
  set_flag(consumed, r.purchase.consumed);
  set_flag(in_free_trial, r.purchase.in_free_trial);
  set_flag(in_intro_price, r.purchase.in_intro_price);
  offer_phase.set(r.purchase.offer_phase);
  latest_order_id.set(r.purchase.latest_order_id);
  set_flag(prepaid, r.purchase.prepaid);
  allow_extend_after.set(r.purchase.allow_extend_after);
  const auto& i = r.purchase.installments;
  installment_initial_payments.set(i ? i->initial_payments : std::nullopt);
  installment_subsequent_payments.set(i ? i->subsequent_payments : std::nullopt);
  installment_remaining_payments.set(i ? i->remaining_payments : std::nullopt);
  set_flag(installment_pending_cancellation,
           i ? std::optional<bool>(i->pending_cancellation) : std::nullopt);
  deferred_product_id.set(r.purchase.deferred_product_id);
  offer_id.set(r.purchase.offer_id);
  purchase_option_id.set(r.purchase.purchase_option_id);
  line_items.set(model::store_b::line_items_json(r.purchase.line_items));
  price.set(r.purchase.cost.price);
  currency_code.set(r.purchase.cost.currency_code);
  tax.set(r.purchase.cost.tax);
  refunded.set(r.purchase.cost.refunded);
  order_read_at.set(r.purchase.order_read_at);
}

model::purchase_order_record purchase_order_row::record() const {
  model::purchase_order_record r;
  read_common(*this, r);
  r.purchase_token = proof;

  r.is_legacy = is_legacy != 0;
  r.package_name = package_name;
  r.order_id = order_id.get();
  r.purchase_data = purchase_data;
  r.purchase_signature = purchase_signature;

  r.purchase.product_id = product_id;
  r.purchase.kind = model::parse_product_kind(product_kind);
  r.purchase.purchase_time = purchase_time.get<model::unix_ms>();
  r.purchase.purchase_state = model::parse_purchase_state(purchase_state);
  r.purchase.quantity = quantity.get();
  r.purchase.refundable_quantity = refundable_quantity.get();
  r.purchase.acknowledged = get_flag(acknowledged);
  r.purchase.auto_renewing = get_flag(auto_renewing);
  r.purchase.expiry_time = expiry_time.get<model::unix_ms>();
  r.purchase.subscription_state = subscription_state.get();
  r.purchase.is_test = is_test != 0;
  r.purchase.voided_time = voided_time.get<model::unix_ms>();
  r.purchase.voided_reason = voided_reason.get();
  r.purchase.voided_source = voided_source.get();
  r.purchase.voided_quantity = voided_quantity.get();
  if (auto text = acknowledgement_state.get())
    r.acknowledgement
      = parse_column(model::parse_acknowledgement_state(*text), "acknowledgement_state", *text);
  r.purchase.linked_purchase_token = linked_purchase_token.get();
  r.purchase.region_code = region_code.get();
  r.purchase.account_id = account_id.get();
  r.purchase.consumed = get_flag(consumed);
  r.purchase.in_free_trial = get_flag(in_free_trial);
  r.purchase.in_intro_price = get_flag(in_intro_price);
  r.purchase.offer_phase = offer_phase.get();
  r.purchase.latest_order_id = latest_order_id.get();
  r.purchase.prepaid = get_flag(prepaid);
  r.purchase.allow_extend_after = allow_extend_after.get<model::unix_ms>();
  // pending_cancellation is never NULL for an installment plan: it says there is one.
  if (auto pending = get_flag(installment_pending_cancellation)) {
    model::play_installments i;
    i.initial_payments = installment_initial_payments.get();
    i.subsequent_payments = installment_subsequent_payments.get();
    i.remaining_payments = installment_remaining_payments.get();
    i.pending_cancellation = *pending;
    r.purchase.installments = i;
  }
  r.purchase.deferred_product_id = deferred_product_id.get();
  r.purchase.offer_id = offer_id.get();
  r.purchase.purchase_option_id = purchase_option_id.get();
  if (auto text = line_items.get()) {
    auto items = model::store_b::parse_line_items_json(*text);
    if (!items)
      throw corrupt_row("line_items is not a JSON array of line items");
    r.purchase.line_items = std::move(*items);
  }
  r.purchase.cost.price = price.get<std::int64_t>();
  r.purchase.cost.currency_code = currency_code.get();
  r.purchase.cost.tax = tax.get<std::int64_t>();
  r.purchase.cost.refunded = refunded.get<std::int64_t>();
  r.purchase.order_read_at = order_read_at.get<model::unix_ms>();
  return r;
}

void receipt_row::assign(const model::receipt_record& r) {
  assign_common(*this, r);
  proof = r.receipt_hash;

  style = text(to_string(r.style));
  bundle_id = r.bundle_id;
  receipt_data = r.receipt_data;
  country_code.set(r.country_code);
  identifier_for_vendor.set(r.identifier_for_vendor);
}

model::receipt_record receipt_row::record() const {
  model::receipt_record r;
  read_common(*this, r);
  r.receipt_hash = proof;

  r.style = parse_column(model::parse_receipt_style(style), "style", style);
  r.bundle_id = bundle_id;
  r.receipt_data = receipt_data;
  r.country_code = country_code.get();
  r.identifier_for_vendor = identifier_for_vendor.get();
  return r;
}

void in_app_purchase_row::assign(const std::string& receipt, int position,
                                 const model::apple_in_app_purchase& p) {
  receipt_id = receipt;
  ordinal = position;
  product_id = p.product_id;
  transaction_id = p.transaction_id;
  original_transaction_id = p.original_transaction_id;
  quantity = p.quantity;
  purchase_date.set(p.purchase_date);
  original_purchase_date.set(p.original_purchase_date);
  expires_date.set(p.expires_date);
  cancellation_date.set(p.cancellation_date);
  cancellation_reason.set(p.cancellation_reason);
  web_order_line_item_id.set(p.web_order_line_item_id);
  set_flag(is_trial_period, p.is_trial_period);
  set_flag(is_in_intro_offer_period, p.is_in_intro_offer_period);
  product_type.set(p.product_type);
  store_contradiction.set(p.store_contradiction);
}

model::apple_in_app_purchase in_app_purchase_row::purchase() const {
  model::apple_in_app_purchase p;
  p.product_id = product_id;
  p.transaction_id = transaction_id;
  p.original_transaction_id = original_transaction_id;
  p.quantity = quantity;
  p.purchase_date = purchase_date.get<model::unix_ms>();
  p.original_purchase_date = original_purchase_date.get<model::unix_ms>();
  p.expires_date = expires_date.get<model::unix_ms>();
  p.cancellation_date = cancellation_date.get<model::unix_ms>();
  p.cancellation_reason = cancellation_reason.get();
  p.web_order_line_item_id = web_order_line_item_id.get();
  p.is_trial_period = get_flag(is_trial_period);
  p.is_in_intro_offer_period = get_flag(is_in_intro_offer_period);
  p.product_type = product_type.get();
  p.store_contradiction = store_contradiction.get();
  return p;
}

void transaction_row::assign(const model::transaction_record& r) {
  const auto& t = r.transaction;
  assign_common(*this, r);
  proof = r.transaction_key;
  signed_transaction = r.signed_transaction;
  transaction_id.set(text_or_none(t.transaction_id));
  original_transaction_id.set(text_or_none(t.original_transaction_id));
  bundle_id.set(text_or_none(t.bundle_id));
  product_id.set(text_or_none(t.product_id));
  product_type.set(text_or_none(t.type));
  purchase_date.set(t.purchase_date);
  original_purchase_date.set(t.original_purchase_date);
  expires_date.set(t.expires_date);
  revocation_date.set(t.revocation_date);
  revocation_reason.set(t.revocation_reason);
  revocation_said_at.set(t.revocation_said_at);
  app_account_token.set(t.app_account_token);
  quantity.set(t.quantity);
  storefront.set(t.storefront);
  price.set(t.price);
  currency.set(t.currency);
  ownership_type.set(t.ownership_type);
  set_flag(is_upgraded, t.is_upgraded);
  offer_type.set(t.offer_type);
  offer_discount_type.set(t.offer_discount_type);
  app_transaction_id.set(t.app_transaction_id);
  offer_period.set(t.offer_period);
  billing_plan_type.set(t.billing_plan_type);
  revocation_type.set(t.revocation_type);
  revocation_percentage.set(t.revocation_percentage);
  const auto commitment = t.commitment.value_or(model::commitment_info{});
  commitment_billing_period_number.set(commitment.billing_period_number);
  commitment_total_billing_periods.set(commitment.total_billing_periods);
  commitment_expires_date.set(commitment.expires_date);
  commitment_price.set(commitment.price);
  subscription_status.set(t.subscription_status);
  subscription_expires_date.set(t.subscription_expires_date);
  set_flag(auto_renew, t.auto_renew);
  auto_renew_product_id.set(t.auto_renew_product_id);
  renewal_app_account_token.set(t.renewal_app_account_token);
  notified_at.set(t.notified_at);
}

model::transaction_record transaction_row::record() const {
  model::transaction_record r;
  auto& t = r.transaction;
  read_common(*this, r);
  r.transaction_key = proof;
  r.signed_transaction = signed_transaction;
  t.transaction_id = transaction_id.get().value_or("");
  t.original_transaction_id = original_transaction_id.get().value_or("");
  t.bundle_id = bundle_id.get().value_or("");
  t.product_id = product_id.get().value_or("");
  t.type = product_type.get().value_or("");
  t.purchase_date = purchase_date.get<model::unix_ms>();
  t.original_purchase_date = original_purchase_date.get<model::unix_ms>();
  t.expires_date = expires_date.get<model::unix_ms>();
  t.revocation_date = revocation_date.get<model::unix_ms>();
  t.revocation_reason = revocation_reason.get();
  t.revocation_said_at = revocation_said_at.get<model::unix_ms>();
  t.app_account_token = app_account_token.get();
  t.quantity = quantity.get();
  t.storefront = storefront.get();
  t.price = price.get<std::int64_t>();
  t.currency = currency.get();
  t.ownership_type = ownership_type.get();
  t.is_upgraded = get_flag(is_upgraded);
  t.offer_type = offer_type.get();
  t.offer_discount_type = offer_discount_type.get();
  t.app_transaction_id = app_transaction_id.get();
  t.offer_period = offer_period.get();
  t.billing_plan_type = billing_plan_type.get();
  t.revocation_type = revocation_type.get();
  t.revocation_percentage = revocation_percentage.get();
  model::commitment_info commitment;
  commitment.billing_period_number = commitment_billing_period_number.get();
  commitment.total_billing_periods = commitment_total_billing_periods.get();
  commitment.expires_date = commitment_expires_date.get<model::unix_ms>();
  commitment.price = commitment_price.get<std::int64_t>();
  if (commitment != model::commitment_info{}) // a commitmentInfo with no field reads as none
    t.commitment = commitment;
  t.subscription_status = subscription_status.get();
  t.subscription_expires_date = subscription_expires_date.get<model::unix_ms>();
  t.auto_renew = get_flag(auto_renew);
  t.auto_renew_product_id = auto_renew_product_id.get();
  t.renewal_app_account_token = renewal_app_account_token.get();
  t.notified_at = notified_at.get<model::unix_ms>();
  return r;
}

void app_transaction_row::assign(const model::store_a::app_transaction_record& r) {
  const auto& t = r.transaction;
  assign_common(*this, r);
  proof = r.app_transaction_key;
  signed_app_transaction = r.signed_app_transaction;
  device_verification = text(model::store_a::to_string(r.device));
  app_transaction_id.set(t.app_transaction_id);
  bundle_id.set(text_or_none(t.bundle_id));
  app_apple_id.set(t.app_apple_id);
  application_version.set(t.application_version);
  version_external_identifier.set(t.version_external_identifier);
  receipt_creation_date.set(t.receipt_creation_date);
  original_purchase_date.set(t.original_purchase_date);
  original_application_version.set(t.original_application_version);
  preorder_date.set(t.preorder_date);
  original_platform.set(t.original_platform);
  device_verification_value.set(t.device_verification);
  device_verification_nonce.set(t.device_verification_nonce);
}

model::store_a::app_transaction_record app_transaction_row::record() const {
  model::store_a::app_transaction_record r;
  auto& t = r.transaction;
  read_common(*this, r);
  r.app_transaction_key = proof;
  r.signed_app_transaction = signed_app_transaction;
  r.device = parse_column(model::store_a::parse_device_verification(device_verification),
                          "device_verification", device_verification);
  t.app_transaction_id = app_transaction_id.get();
  t.bundle_id = bundle_id.get().value_or("");
  t.env = r.env;
  t.app_apple_id = app_apple_id.get<std::int64_t>();
  t.application_version = application_version.get();
  t.version_external_identifier = version_external_identifier.get<std::int64_t>();
  t.receipt_creation_date = receipt_creation_date.get<model::unix_ms>();
  t.original_purchase_date = original_purchase_date.get<model::unix_ms>();
  t.original_application_version = original_application_version.get();
  t.preorder_date = preorder_date.get<model::unix_ms>();
  t.original_platform = original_platform.get();
  t.device_verification = device_verification_value.get();
  t.device_verification_nonce = device_verification_nonce.get();
  return r;
}

} // namespace receiptd::db

#include "model/resource_json.hpp"

#include <algorithm>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/purchases/resource_json.hpp"
#include "model/store_a/app_transaction.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model {

namespace json = boost::json;

namespace {

json::value opt(const std::optional<std::string>& s) {
  if (!s)
    return nullptr;
  return json::value(*s);
}

template <class T>
json::value opt_value(const std::optional<T>& x) {
  if (!x)
    return nullptr;
  return json::value(*x);
}

json::value metadata_json(const std::optional<std::string>& text) {
  if (!text)
    return nullptr;
  boost::system::error_code ec;
  // Uploads are held to max_metadata_depth now; records stored before that held up
  // to the request parser's 64 levels, past Boost.JSON's default of 32.
  json::parse_options opts;
  opts.max_depth = 64;
  auto v = json::parse(*text, ec, {}, opts);
  return ec ? json::value(nullptr) : v;
}

json::value text_or_null(const std::string& s) {
  if (s.empty())
    return nullptr;
  return json::value(s);
}

void put_common(json::object& o, const std::string& id, const std::string& app_id,
                fraud_reason fraud, environment env, const echo_fields& echo,
                const previous_owners& previous, validation_state state, unix_ms created,
                unix_ms updated) {
  o["id"] = id;
  o["app_family_id"] = app_id;
  o["is_fraud"] = fraud != fraud_reason::none;
  o["fraud_reason"]
    = fraud == fraud_reason::none ? json::value(nullptr) : json::value(to_string(fraud));
  o["environment"] = to_string(env);
  o["user_identifier"] = opt(echo.user_identifier);
  // Transfers between users: the owners before the current one.
  json::array owners;
  for (const auto& p : previous)
    owners.emplace_back(p);
  o["previous_user_identifiers"] = std::move(owners);
  o["metadata"] = metadata_json(echo.metadata);
  o["ip_address"] = opt(echo.ip_address);
  o["validation_state"] = to_string(state);
  o["created_at"] = timestamp_json(created);
  o["updated_at"] = timestamp_json(updated);
}

const char* fraud_message(fraud_reason r) {
  switch (r) {
    case fraud_reason::invalid_signature:
      return "the signature does not verify";
    case fraud_reason::untrusted_certificate:
      return "the signing certificate does not chain to a trusted root";
    case fraud_reason::malformed_receipt:
      return "the receipt bytes are not a receipt";
    case fraud_reason::bundle_id_mismatch:
      return "the receipt belongs to another bundle id";
    case fraud_reason::package_name_mismatch:
      return "the purchase belongs to another package name";
    case fraud_reason::device_hash_mismatch:
      return "the receipt was not issued to this device";
    case fraud_reason::store_rejected:
      return "the store says this purchase is not genuine";
    case fraud_reason::none:
      break;
  }
  return "rejected";
}

// The message of a 402: what the reason means, and for the reasons whose detail
// helps the app's developer and tells an attacker nothing new (what the store
// said; why an Xcode test receipt was refused), that detail.
template <class Record>
std::string rejection_message(const Record& r, fraud_reason reason) {
  std::string message = fraud_message(reason);
  bool explained = reason == fraud_reason::store_rejected || r.env == environment::xcode;
  if (reason == r.fraud && explained && !r.store_detail.empty())
    message += ": " + r.store_detail.substr(0, 300);
  return message;
}

std::string rejection(const char* key, json::object resource, fraud_reason reason,
                      const char* field, std::string message) {
  json::object err{{"code", to_string(reason)}, {"message", std::move(message)}};
  if (field)
    err["field"] = field;
  json::object body{{"errors", json::array{std::move(err)}}, {key, std::move(resource)}};
  return json::serialize(body);
}

// A transaction's commitmentInfo with Apple's fields in snake_case; null when none.
json::value commitment_json(const std::optional<commitment_info>& c) {
  if (!c)
    return nullptr;
  return json::object{
    {"billing_period_number", opt_value(c->billing_period_number)},
    {"total_billing_periods", opt_value(c->total_billing_periods)},
    {"commitment_expires_date", timestamp_json(c->expires_date)},
    {"commitment_price", opt_value(c->price)},
  };
}

// The In-App Purchase resource of the purchase named by `key` among those the
// record's save or lookup left on it; nullopt when none is.
std::optional<json::object> purchase_named(const std::shared_ptr<const purchases::purchase_set>& set,
                                           const std::string& key) {
  if (!set)
    return std::nullopt;
  for (std::size_t i = 0; i < set->items.size(); ++i) {
    const auto& p = set->items[i];
    if (std::find(p.keys.begin(), p.keys.end(), key) != p.keys.end())
      return purchases::purchase_json(p, set->entitlements.at(i), set->at);
  }
  return std::nullopt;
}

json::value installments_json(const std::optional<play_installments>& i) {
  if (!i)
    return nullptr;
  return json::object{
    {"initial_committed_payments", opt_value(i->initial_payments)},
    {"subsequent_committed_payments", opt_value(i->subsequent_payments)},
    {"remaining_committed_payments", opt_value(i->remaining_payments)},
    {"pending_cancellation", i->pending_cancellation},
  };
}

} // namespace

json::object in_app_purchase_json(const play_purchase& p) {
  return json::object{
    {"product_id", p.product_id},
    {"type", to_string(p.kind)},
    {"purchase_state", to_string(p.purchase_state)},
    {"quantity", opt_value(p.quantity)},
    // products.get refundableQuantity: what refunds left of quantity.
    {"refundable_quantity", opt_value(p.refundable_quantity)},
    {"purchased_at", timestamp_json(p.purchase_time)},
    {"expires_at", timestamp_json(p.expiry_time)},
    // Refunded or charged back, as Play's voided purchases list says:
    // voidedReason, voidedSource and voidedQuantity by Play's numbers.
    {"voided_at", timestamp_json(p.voided_time)},
    {"voided_reason", opt_value(p.voided_reason)},
    {"voided_source", opt_value(p.voided_source)},
    {"voided_quantity", opt_value(p.voided_quantity)},
    {"acknowledged", opt_value(p.acknowledged)},
    {"auto_renewing", opt_value(p.auto_renewing)},
    {"subscription_state", opt(p.subscription_state)},
    {"is_test", p.is_test},
    // subscriptionsv2's line item (null for one-time products and before the
    // API said it): latestSuccessfulOrderId, offerPhase, the plan (prepaid or
    // auto-renewing, an installment plan's commitment), a deferred replacement.
    {"latest_order_id", opt(p.latest_order_id)},
    {"offer_phase", opt(p.offer_phase)},
    {"prepaid", opt_value(p.prepaid)},
    {"allow_extend_after", timestamp_json(p.allow_extend_after)},
    {"installments", installments_json(p.installments)},
    {"deferred_replacement_product_id", opt(p.deferred_product_id)},
  };
}

json::object in_app_purchase_json(const apple_in_app_purchase& p) {
  return json::object{
    {"product_id", p.product_id},
    {"transaction_id", p.transaction_id},
    {"original_transaction_id", text_or_null(p.original_transaction_id)},
    {"quantity", p.quantity},
    {"purchase_date", timestamp_json(p.purchase_date)},
    {"original_purchase_date", timestamp_json(p.original_purchase_date)},
    {"expires_date", timestamp_json(p.expires_date)},
    {"cancellation_date", timestamp_json(p.cancellation_date)},
    // 0 other, 1 an issue in the app (Apple's cancellation_reason / revocationReason).
    {"cancellation_reason", opt_value(p.cancellation_reason)},
    {"web_order_line_item_id", opt(p.web_order_line_item_id)},
    {"is_trial_period", opt_value(p.is_trial_period)},
    {"is_in_intro_offer_period", opt_value(p.is_in_intro_offer_period)},
    // Why the App Store's transaction history contradicts it: the receipt does
    // not prove this purchase (null: nothing contradicts it).
    {"store_contradiction", opt(p.store_contradiction)},
  };
}

json::object purchase_order_json(const purchase_order_record& r) {
  json::object o;
  o.reserve(20);
  put_common(o, r.id, r.app_id, r.fraud, r.env, r.echo, r.previous_users, r.state, r.created_at,
             r.updated_at);
  o["package_name"] = r.package_name;
  o["is_legacy"] = r.is_legacy;
  o["purchase_token"] = r.purchase_token;
  o["order_id"] = opt(r.order_id);
  // What receiptd did about acknowledging the purchase; null: the app's part.
  o["acknowledgement_state"]
    = r.acknowledgement ? json::value(to_string(*r.acknowledgement)) : json::value(nullptr);
  auto embedded = in_app_purchase_json(r.purchase);
  if (auto purchase = purchase_named(r.purchases, r.purchase_token))
    purchases::add_purchase_fields(embedded, std::move(*purchase));
  o["in_app_purchase"] = std::move(embedded);
  return o;
}

json::object receipt_json(const receipt_record& r) {
  json::object o;
  o.reserve(20);
  put_common(o, r.id, r.app_id, r.fraud, r.env, r.echo, r.previous_users, r.state, r.created_at,
             r.updated_at);
  o["style"] = to_string(r.style);
  o["bundle_id"] = text_or_null(r.bundle_id);
  o["country_code"] = opt(r.country_code);
  o["identifier_for_vendor"] = opt(r.identifier_for_vendor);
  json::array purchases;
  purchases.reserve(r.in_app_purchases.size());
  for (const auto& p : r.in_app_purchases) {
    auto embedded = in_app_purchase_json(p);
    const auto& original = p.original_transaction_id.empty() ? p.transaction_id
                                                             : p.original_transaction_id;
    // The purchase's key (model/purchases/observe.cpp): Xcode's are the receipt's own.
    auto key = r.env == environment::xcode ? r.receipt_hash + ":" + original : original;
    if (auto purchase = purchase_named(r.purchases, key))
      purchases::add_purchase_fields(embedded, std::move(*purchase));
    purchases.emplace_back(std::move(embedded));
  }
  o["in_app_purchases"] = std::move(purchases);
  return o;
}

json::object transaction_json(const transaction_record& r) {
  const auto& t = r.transaction;
  json::object o;
  o.reserve(32);
  put_common(o, r.id, r.app_id, r.fraud, r.env, r.echo, r.previous_users, r.state, r.created_at,
             r.updated_at);
  o["transaction_id"] = text_or_null(t.transaction_id);
  o["original_transaction_id"] = text_or_null(t.original_transaction_id);
  o["bundle_id"] = text_or_null(t.bundle_id);
  o["product_id"] = text_or_null(t.product_id);
  o["type"] = text_or_null(t.type);
  o["purchase_date"] = timestamp_json(t.purchase_date);
  o["original_purchase_date"] = timestamp_json(t.original_purchase_date);
  o["expires_date"] = timestamp_json(t.expires_date);
  o["revocation_date"] = timestamp_json(t.revocation_date);
  o["revocation_reason"] = opt_value(t.revocation_reason);
  // Apple's revocationType and revocationPercentage (milliunits: 100000 is all).
  o["revocation_type"] = opt(t.revocation_type);
  o["revocation_percentage"] = opt_value(t.revocation_percentage);
  o["app_account_token"] = opt(t.app_account_token);
  o["app_transaction_id"] = opt(t.app_transaction_id);
  o["quantity"] = opt_value(t.quantity);
  o["storefront"] = opt(t.storefront);
  o["price"] = opt_value(t.price);
  o["currency"] = opt(t.currency);
  // Apple's offerType (1 introductory, 2 promotional, 3 offer code, 4 win-back),
  // offerDiscountType and offerPeriod (ISO 8601), as Apple writes them.
  o["offer_type"] = opt_value(t.offer_type);
  o["offer_discount_type"] = opt(t.offer_discount_type);
  o["offer_period"] = opt(t.offer_period);
  o["billing_plan_type"] = opt(t.billing_plan_type);
  o["commitment_info"] = commitment_json(t.commitment);
  // The subscription, as the newest App Store Server Notification tells it
  //; null until one arrives. notified_at is internal (ordering).
  o["subscription_status"] = opt(t.subscription_status);
  o["subscription_expires_date"] = timestamp_json(t.subscription_expires_date);
  o["auto_renew"] = opt_value(t.auto_renew);
  o["auto_renew_product_id"] = opt(t.auto_renew_product_id);
  o["renewal_app_account_token"] = opt(t.renewal_app_account_token);
  // The In-App Purchase this transaction belongs to (its subscription across
  // renewals), when the record's save or lookup read it.
  auto purchase = purchase_named(r.purchases, r.env == environment::xcode ? r.transaction_key
                                              : t.original_transaction_id.empty()
                                                ? t.transaction_id
                                                : t.original_transaction_id);
  o["in_app_purchase"] = purchase ? json::value(std::move(*purchase)) : json::value(nullptr);
  return o;
}

std::string error_body(const field_errors& errors) {
  json::array list;
  list.reserve(errors.size());
  for (const auto& e : errors) {
    json::object o;
    if (!e.field.empty())
      o["field"] = e.field;
    o["code"] = e.code;
    o["message"] = e.message;
    list.emplace_back(std::move(o));
  }
  return json::serialize(json::object{{"errors", std::move(list)}});
}

std::string rejection_body(const purchase_order_record& r, fraud_reason reason) {
  const char* field = reason == fraud_reason::invalid_signature ? "purchase_signature"
    : reason == fraud_reason::package_name_mismatch             ? "purchase_data"
                                                                : nullptr;
  return rejection("purchase_order", purchase_order_json(r), reason, field,
                   rejection_message(r, reason));
}

std::string rejection_body(const receipt_record& r, fraud_reason reason) {
  const char* field = reason == fraud_reason::store_rejected ? nullptr : "receipt";
  return rejection("receipt", receipt_json(r), reason, field, rejection_message(r, reason));
}

std::string rejection_body(const transaction_record& r, fraud_reason reason) {
  const char* field = reason == fraud_reason::store_rejected ? nullptr : "signed_transaction";
  return rejection("transaction", transaction_json(r), reason, field, rejection_message(r, reason));
}

json::object app_transaction_json(const store_a::app_transaction_record& r) {
  const auto& t = r.transaction;
  json::object o;
  o.reserve(24);
  put_common(o, r.id, r.app_id, r.fraud, r.env, r.echo, r.previous_users, r.state, r.created_at,
             r.updated_at);
  o["app_transaction_id"] = opt(t.app_transaction_id);
  o["bundle_id"] = text_or_null(t.bundle_id);
  o["app_apple_id"] = opt_value(t.app_apple_id);
  o["application_version"] = opt(t.application_version);
  o["original_application_version"] = opt(t.original_application_version);
  o["original_purchase_date"] = timestamp_json(t.original_purchase_date);
  o["preorder_date"] = timestamp_json(t.preorder_date);
  o["original_platform"] = opt(t.original_platform);
  o["receipt_creation_date"] = timestamp_json(t.receipt_creation_date);
  // not_checked, nonce_matched, verified or mismatch (store_a::check_device).
  o["device_verification"] = store_a::to_string(r.device);
  return o;
}

std::string rejection_body(const store_a::app_transaction_record& r, fraud_reason reason) {
  const char* field = reason == fraud_reason::store_rejected ? nullptr
    : reason == fraud_reason::device_hash_mismatch           ? "device_verification_nonce"
                                                             : "signed_app_transaction";
  std::string message = reason == fraud_reason::device_hash_mismatch
    ? "the app transaction was not issued to this device"
    : rejection_message(r, reason);
  return rejection("app_transaction", app_transaction_json(r), reason, field, std::move(message));
}

std::string rejection_body(const transaction_record& r) {
  return rejection_body(r, r.fraud);
}

std::string rejection_body(const purchase_order_record& r) {
  return rejection_body(r, r.fraud);
}

std::string rejection_body(const receipt_record& r) {
  return rejection_body(r, r.fraud);
}

namespace {

template <class Record>
upload_answer answer_for_record(const Record& stored, fraud_reason own_verdict) {
  if (stored.terms.refused)
    return {kind_of(errc::conflict).status, error_body({*stored.terms.refused})};
  if (own_verdict != fraud_reason::none && stored.state != validation_state::rejected)
    return {402, rejection_body(stored, own_verdict)};
  return {http_status_for(stored.state), upload_response_body(stored)};
}

} // namespace

upload_answer answer_for(const purchase_order_record& stored, fraud_reason own_verdict) {
  return answer_for_record(stored, own_verdict);
}

upload_answer answer_for(const receipt_record& stored, fraud_reason own_verdict) {
  return answer_for_record(stored, own_verdict);
}

upload_answer answer_for(const transaction_record& stored, fraud_reason own_verdict) {
  return answer_for_record(stored, own_verdict);
}

std::string upload_response_body(const transaction_record& r) {
  if (r.state == validation_state::rejected)
    return rejection_body(r);
  return json::serialize(transaction_json(r));
}

upload_answer answer_for(const store_a::app_transaction_record& stored, fraud_reason own_verdict) {
  return answer_for_record(stored, own_verdict);
}

std::string upload_response_body(const store_a::app_transaction_record& r) {
  if (r.state == validation_state::rejected)
    return rejection_body(r, r.fraud);
  return json::serialize(app_transaction_json(r));
}

std::string upload_response_body(const purchase_order_record& r) {
  if (r.state == validation_state::rejected)
    return rejection_body(r);
  return json::serialize(purchase_order_json(r));
}

std::string upload_response_body(const receipt_record& r) {
  if (r.state == validation_state::rejected)
    return rejection_body(r);
  return json::serialize(receipt_json(r));
}

} // namespace receiptd::model

#include "model/resource_json.hpp"

#include <algorithm>


#include "model/purchases/resource_json.hpp"
#include "model/store_a/app_transaction.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model {

namespace json = boost::json;

using json_out::put_timestamp;

namespace {

template <class Object>
void put_text_or_null(Object& o, std::string_view key, const std::string& s) {
  if (s.empty())
    o.put(key, nullptr);
  else
    o.put(key, s);
}

template <class Object>
void put_common(Object& o, const std::string& id, const std::string& app_id, fraud_reason fraud,
                environment env, const echo_fields& echo, const previous_owners& previous,
                validation_state state, unix_ms created, unix_ms updated) {
  o.put("id", id);
  o.put("app_family_id", app_id);
  o.put("is_fraud", fraud != fraud_reason::none);
  if (fraud == fraud_reason::none)
    o.put("fraud_reason", nullptr);
  else
    o.put("fraud_reason", to_string(fraud));
  o.put("environment", to_string(env));
  o.put("user_identifier", echo.user_identifier);
  // Transfers between users: the owners before the current one.
  json_out::put_strings(o, "previous_user_identifiers", previous);
  o.put_json("metadata", json_out::stored_json(echo.metadata));
  o.put("ip_address", echo.ip_address);
  o.put("validation_state", to_string(state));
  put_timestamp(o, "created_at", created);
  put_timestamp(o, "updated_at", updated);
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

template <class Shape>
std::string rejection(const char* key, Shape&& resource, fraud_reason reason, const char* field,
                      const std::string& message) {
  return json_out::text_of([&](auto& body) {
    body.put_array("errors", [&](auto& errors) {
      errors.push_object([&](auto& err) {
        err.put("code", to_string(reason));
        err.put("message", message);
        if (field)
          err.put("field", field);
      });
    });
    body.put_object(key, resource);
  });
}

// A transaction's commitmentInfo with Apple's fields in snake_case; null when none.
template <class Object>
void put_commitment(Object& o, const std::optional<commitment_info>& c) {
  if (!c)
    return o.put("commitment_info", nullptr);
  o.put_object("commitment_info", [&](auto& t) {
    t.put("billing_period_number", c->billing_period_number);
    t.put("total_billing_periods", c->total_billing_periods);
    put_timestamp(t, "commitment_expires_date", c->expires_date);
    t.put("commitment_price", c->price);
  });
}

// The purchase named by `key` among those the record's save or lookup left on
// it, with what it grants and the time they were read at.
struct named_purchase {
  const purchases::purchase& purchase;
  const std::vector<std::string>& entitlements;
  unix_ms at;
};

std::optional<named_purchase>
purchase_named(const std::shared_ptr<const purchases::purchase_set>& set, const std::string& key) {
  if (!set)
    return std::nullopt;
  for (std::size_t i = 0; i < set->items.size(); ++i) {
    const auto& p = set->items[i];
    if (std::find(p.keys.begin(), p.keys.end(), key) != p.keys.end())
      return named_purchase{p, set->entitlements.at(i), set->at};
  }
  return std::nullopt;
}

template <class Object>
void put_installments(Object& o, const std::optional<play_installments>& i) {
  if (!i)
    return o.put("installments", nullptr);
  o.put_object("installments", [&](auto& t) {
    t.put("initial_committed_payments", i->initial_payments);
    t.put("subsequent_committed_payments", i->subsequent_payments);
    t.put("remaining_committed_payments", i->remaining_payments);
    t.put("pending_cancellation", i->pending_cancellation);
  });
}

template <class Object>
void put_in_app_purchase(Object& o, const play_purchase& p) {
  o.put("product_id", p.product_id);
  o.put("type", to_string(p.kind));
  o.put("purchase_state", to_string(p.purchase_state));
  o.put("quantity", p.quantity);
  // products.get refundableQuantity: what refunds left of quantity.
  o.put("refundable_quantity", p.refundable_quantity);
  put_timestamp(o, "purchased_at", p.purchase_time);
  put_timestamp(o, "expires_at", p.expiry_time);
  // Refunded or charged back, as Play's voided purchases list says:
  // voidedReason, voidedSource and voidedQuantity by Play's numbers.
  put_timestamp(o, "voided_at", p.voided_time);
  o.put("voided_reason", p.voided_reason);
  o.put("voided_source", p.voided_source);
  o.put("voided_quantity", p.voided_quantity);
  o.put("acknowledged", p.acknowledged);
  o.put("auto_renewing", p.auto_renewing);
  o.put("subscription_state", p.subscription_state);
  o.put("is_test", p.is_test);
  // subscriptionsv2's line item (null for one-time products and before the
  // API said it): latestSuccessfulOrderId, offerPhase, the plan (prepaid or
  // auto-renewing, an installment plan's commitment), a deferred replacement.
  o.put("latest_order_id", p.latest_order_id);
  o.put("offer_phase", p.offer_phase);
  o.put("prepaid", p.prepaid);
  put_timestamp(o, "allow_extend_after", p.allow_extend_after);
  put_installments(o, p.installments);
  o.put("deferred_replacement_product_id", p.deferred_product_id);
}

template <class Object>
void put_in_app_purchase(Object& o, const apple_in_app_purchase& p) {
  o.put("product_id", p.product_id);
  o.put("transaction_id", p.transaction_id);
  put_text_or_null(o, "original_transaction_id", p.original_transaction_id);
  o.put("quantity", p.quantity);
  put_timestamp(o, "purchase_date", p.purchase_date);
  put_timestamp(o, "original_purchase_date", p.original_purchase_date);
  put_timestamp(o, "expires_date", p.expires_date);
  put_timestamp(o, "cancellation_date", p.cancellation_date);
  // 0 other, 1 an issue in the app (Apple's cancellation_reason / revocationReason).
  o.put("cancellation_reason", p.cancellation_reason);
  o.put("web_order_line_item_id", p.web_order_line_item_id);
  o.put("is_trial_period", p.is_trial_period);
  o.put("is_in_intro_offer_period", p.is_in_intro_offer_period);
  // Why the App Store's transaction history contradicts it: the receipt does
  // not prove this purchase (null: nothing contradicts it).
  o.put("store_contradiction", p.store_contradiction);
}

// A record's embedded in-app purchase object: the fields it held before
// purchases were kept, then the purchase's fields it does not hold (nothing
// existing is renamed or removed: where both have a key, the record's value
// stays).
template <class Object, class StorePurchase>
void put_embedded(Object& o, const StorePurchase& own, const std::optional<named_purchase>& p) {
  o.record_keys();
  put_in_app_purchase(o, own);
  if (!p)
    return;
  o.keep_first();
  purchases::put_purchase(o, p->purchase, p->entitlements, p->at);
}

template <class Object>
void put_record(Object& o, const purchase_order_record& r) {
  put_common(o, r.id, r.app_id, r.fraud, r.env, r.echo, r.previous_users, r.state, r.created_at,
             r.updated_at);
  o.put("package_name", r.package_name);
  o.put("is_legacy", r.is_legacy);
  o.put("purchase_token", r.purchase_token);
  o.put("order_id", r.order_id);
  // What receiptd did about acknowledging the purchase; null: the app's part.
  if (r.acknowledgement)
    o.put("acknowledgement_state", to_string(*r.acknowledgement));
  else
    o.put("acknowledgement_state", nullptr);
  o.put_object("in_app_purchase", [&](auto& embedded) {
    put_embedded(embedded, r.purchase, purchase_named(r.purchases, r.purchase_token));
  });
}

template <class Object>
void put_record(Object& o, const receipt_record& r) {
  put_common(o, r.id, r.app_id, r.fraud, r.env, r.echo, r.previous_users, r.state, r.created_at,
             r.updated_at);
  o.put("style", to_string(r.style));
  put_text_or_null(o, "bundle_id", r.bundle_id);
  o.put("country_code", r.country_code);
  o.put("identifier_for_vendor", r.identifier_for_vendor);
  o.put_array("in_app_purchases", [&](auto& list) {
    for (const auto& p : r.in_app_purchases) {
      const auto& original = p.original_transaction_id.empty() ? p.transaction_id
                                                               : p.original_transaction_id;
      // The purchase's key (model/purchases/observe.cpp): Xcode's are the receipt's own.
      auto key = r.env == environment::xcode ? r.receipt_hash + ":" + original : original;
      list.push_object(
        [&](auto& embedded) { put_embedded(embedded, p, purchase_named(r.purchases, key)); });
    }
  });
}

template <class Object>
void put_record(Object& o, const transaction_record& r) {
  const auto& t = r.transaction;
  put_common(o, r.id, r.app_id, r.fraud, r.env, r.echo, r.previous_users, r.state, r.created_at,
             r.updated_at);
  put_text_or_null(o, "transaction_id", t.transaction_id);
  put_text_or_null(o, "original_transaction_id", t.original_transaction_id);
  put_text_or_null(o, "bundle_id", t.bundle_id);
  put_text_or_null(o, "product_id", t.product_id);
  put_text_or_null(o, "type", t.type);
  put_timestamp(o, "purchase_date", t.purchase_date);
  put_timestamp(o, "original_purchase_date", t.original_purchase_date);
  put_timestamp(o, "expires_date", t.expires_date);
  put_timestamp(o, "revocation_date", t.revocation_date);
  o.put("revocation_reason", t.revocation_reason);
  // Apple's revocationType and revocationPercentage (milliunits: 100000 is all).
  o.put("revocation_type", t.revocation_type);
  o.put("revocation_percentage", t.revocation_percentage);
  o.put("app_account_token", t.app_account_token);
  o.put("app_transaction_id", t.app_transaction_id);
  o.put("quantity", t.quantity);
  o.put("storefront", t.storefront);
  o.put("price", t.price);
  o.put("currency", t.currency);
  // Apple's offerType (1 introductory, 2 promotional, 3 offer code, 4 win-back),
  // offerDiscountType and offerPeriod (ISO 8601), as Apple writes them.
  o.put("offer_type", t.offer_type);
  o.put("offer_discount_type", t.offer_discount_type);
  o.put("offer_period", t.offer_period);
  o.put("billing_plan_type", t.billing_plan_type);
  put_commitment(o, t.commitment);
  // The subscription, as the newest App Store Server Notification tells it;
  // null until one arrives. notified_at is internal (ordering).
  o.put("subscription_status", t.subscription_status);
  put_timestamp(o, "subscription_expires_date", t.subscription_expires_date);
  o.put("auto_renew", t.auto_renew);
  o.put("auto_renew_product_id", t.auto_renew_product_id);
  o.put("renewal_app_account_token", t.renewal_app_account_token);
  // The In-App Purchase this transaction belongs to (its subscription across
  // renewals), when the record's save or lookup read it.
  auto purchase = purchase_named(r.purchases, r.env == environment::xcode ? r.transaction_key
                                              : t.original_transaction_id.empty()
                                                ? t.transaction_id
                                                : t.original_transaction_id);
  if (!purchase)
    return o.put("in_app_purchase", nullptr);
  o.put_object("in_app_purchase", [&](auto& embedded) {
    purchases::put_purchase(embedded, purchase->purchase, purchase->entitlements, purchase->at);
  });
}

template <class Object>
void put_record(Object& o, const store_a::app_transaction_record& r) {
  const auto& t = r.transaction;
  put_common(o, r.id, r.app_id, r.fraud, r.env, r.echo, r.previous_users, r.state, r.created_at,
             r.updated_at);
  o.put("app_transaction_id", t.app_transaction_id);
  put_text_or_null(o, "bundle_id", t.bundle_id);
  o.put("app_apple_id", t.app_apple_id);
  o.put("application_version", t.application_version);
  o.put("original_application_version", t.original_application_version);
  put_timestamp(o, "original_purchase_date", t.original_purchase_date);
  put_timestamp(o, "preorder_date", t.preorder_date);
  o.put("original_platform", t.original_platform);
  put_timestamp(o, "receipt_creation_date", t.receipt_creation_date);
  // not_checked, nonce_matched, verified or mismatch (store_a::check_device).
  o.put("device_verification", store_a::to_string(r.device));
}

// The record's resource as a document and as text.
template <class Record>
json::object document(const Record& r) {
  return json_out::document_of([&](auto& o) { put_record(o, r); }, 32);
}

template <class Record>
std::string text(const Record& r) {
  return json_out::text_of([&](auto& o) { put_record(o, r); });
}

template <class Record>
std::string rejection_of(const char* key, const Record& r, fraud_reason reason, const char* field,
                         const std::string& message) {
  return rejection(
    key, [&](auto& o) { put_record(o, r); }, reason, field, message);
}

} // namespace

json::object in_app_purchase_json(const play_purchase& p) {
  return json_out::document_of([&](auto& o) { put_in_app_purchase(o, p); }, 24);
}

json::object in_app_purchase_json(const apple_in_app_purchase& p) {
  return json_out::document_of([&](auto& o) { put_in_app_purchase(o, p); }, 16);
}

json::object purchase_order_json(const purchase_order_record& r) {
  return document(r);
}

json::object receipt_json(const receipt_record& r) {
  return document(r);
}

json::object transaction_json(const transaction_record& r) {
  return document(r);
}

json::object app_transaction_json(const store_a::app_transaction_record& r) {
  return document(r);
}

std::string resource_text(const purchase_order_record& r) {
  return text(r);
}

std::string resource_text(const receipt_record& r) {
  return text(r);
}

std::string resource_text(const transaction_record& r) {
  return text(r);
}

std::string resource_text(const store_a::app_transaction_record& r) {
  return text(r);
}

std::string error_body(const field_errors& errors) {
  return json_out::text_of([&](auto& body) {
    body.put_array("errors", [&](auto& list) {
      for (const auto& e : errors)
        list.push_object([&](auto& o) {
          if (!e.field.empty())
            o.put("field", e.field);
          o.put("code", e.code);
          o.put("message", e.message);
        });
    });
  });
}

std::string rejection_body(const purchase_order_record& r, fraud_reason reason) {
  const char* field = reason == fraud_reason::invalid_signature ? "purchase_signature"
    : reason == fraud_reason::package_name_mismatch             ? "purchase_data"
                                                                : nullptr;
  return rejection_of("purchase_order", r, reason, field, rejection_message(r, reason));
}

std::string rejection_body(const receipt_record& r, fraud_reason reason) {
  const char* field = reason == fraud_reason::store_rejected ? nullptr : "receipt";
  return rejection_of("receipt", r, reason, field, rejection_message(r, reason));
}

std::string rejection_body(const transaction_record& r, fraud_reason reason) {
  const char* field = reason == fraud_reason::store_rejected ? nullptr : "signed_transaction";
  return rejection_of("transaction", r, reason, field, rejection_message(r, reason));
}

std::string rejection_body(const store_a::app_transaction_record& r, fraud_reason reason) {
  const char* field = reason == fraud_reason::store_rejected ? nullptr
    : reason == fraud_reason::device_hash_mismatch           ? "device_verification_nonce"
                                                             : "signed_app_transaction";
  std::string message = reason == fraud_reason::device_hash_mismatch
    ? "the app transaction was not issued to this device"
    : rejection_message(r, reason);
  return rejection_of("app_transaction", r, reason, field, message);
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

upload_answer answer_for(const store_a::app_transaction_record& stored, fraud_reason own_verdict) {
  return answer_for_record(stored, own_verdict);
}

std::string upload_response_body(const transaction_record& r) {
  if (r.state == validation_state::rejected)
    return rejection_body(r);
  return text(r);
}

std::string upload_response_body(const store_a::app_transaction_record& r) {
  if (r.state == validation_state::rejected)
    return rejection_body(r, r.fraud);
  return text(r);
}

std::string upload_response_body(const purchase_order_record& r) {
  if (r.state == validation_state::rejected)
    return rejection_body(r);
  return text(r);
}

std::string upload_response_body(const receipt_record& r) {
  if (r.state == validation_state::rejected)
    return rejection_body(r);
  return text(r);
}

} // namespace receiptd::model

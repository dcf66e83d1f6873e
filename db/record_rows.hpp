#pragma once
// The stored form of the records: one member per column, bound in place by the
// prepared statements (db/statements.hpp). Each row lists its columns once, in
// groups, and every column list in the SQL is rendered from these lists, so a
// SELECT, INSERT or UPDATE cannot disagree with the binding order.
//   identity: set at the first upload, never rewritten
//   upload:   rewritten by a re-upload (model::merge_reupload)
//   verdict:  rewritten by a re-upload and by a completed revalidation job
//   notified: what store notifications say: written with the verdict
//             by a completed job or an applied notification, whose record was
//             read from the row, but not by a re-upload, whose upload knows
//             nothing of them

#include <string>

#include "db/statements.hpp"
#include "model/records.hpp"

namespace receiptd::model::store_a {
struct app_transaction_record; // model/store_a/app_transaction.hpp
}

namespace receiptd::db {

// The columns every record row has, whichever store, in the order each group
// lists them: identity (id, app id, the row's proof, created), the proof's size
// and the echo fields at the end of the upload group, fraud and environment at the head of the
// verdict group and its state at the end. A row lists its own columns between them.
template <class Row>
struct record_row_base {
  std::string id;
  std::string app_id;
  long long created_at = 0;

  // The proof's size as uploaded when only its first bytes are kept (a proof its
  // own check refused); NULL when it is stored whole.
  nullable<long long> proof_size;
  nullable<std::string> user_identifier;
  nullable<std::string> previous_user_identifiers; // JSON array text
  nullable<std::string> metadata;
  nullable<std::string> ip_address;

  std::string fraud_reason;
  std::string environment;
  std::string validation_state;
  std::string store_detail;
  nullable<long long> said_at;
  long long updated_at = 0;

  template <class F>
  void identity_columns(F&& f) {
    f("id", id);
    f("app_id", app_id);
    f(Row::proof_column, static_cast<Row&>(*this).proof);
    f("created_at", created_at);
  }
  template <class F>
  void upload_columns(F&& f) {
    static_cast<Row&>(*this).own_upload_columns(f);
    f("proof_size", proof_size);
    f("user_identifier", user_identifier);
    f("previous_user_identifiers", previous_user_identifiers);
    f("metadata", metadata);
    f("ip_address", ip_address);
  }
  template <class F>
  void verdict_columns(F&& f) {
    f("fraud_reason", fraud_reason);
    f("environment", environment);
    static_cast<Row&>(*this).own_verdict_columns(f);
    f("validation_state", validation_state);
    f("store_detail", store_detail);
    f("said_at", said_at);
    f("updated_at", updated_at);
  }
  // What store notifications write (none but for StoreKit 2 transactions).
  template <class F>
  void notified_columns(F&& f) {
    if constexpr (requires(Row & r) { r.own_notified_columns(f); })
      static_cast<Row&>(*this).own_notified_columns(f);
  }
  template <class F>
  void all_columns(F&& f) {
    identity_columns(f);
    upload_columns(f);
    verdict_columns(f);
    notified_columns(f);
  }
};

struct purchase_order_row : record_row_base<purchase_order_row> {
  static constexpr const char* proof_column = "purchase_token";
  std::string proof; // the purchase token

  int is_legacy = 0;
  std::string package_name;
  nullable<std::string> order_id;
  std::string purchase_data;
  std::string purchase_signature;

  std::string product_id;
  std::string product_kind;
  nullable<long long> purchase_time;
  std::string purchase_state;
  nullable<int> quantity;
  nullable<int> refundable_quantity;
  nullable<int> acknowledged;
  nullable<int> auto_renewing;
  nullable<long long> expiry_time;
  nullable<std::string> subscription_state;
  int is_test = 0;
  nullable<long long> voided_time;
  nullable<int> voided_reason;
  nullable<int> voided_source;
  nullable<int> voided_quantity;
  nullable<std::string> acknowledgement_state;
  nullable<std::string> linked_purchase_token;
  nullable<std::string> region_code;
  nullable<std::string> account_id;
  nullable<int> consumed;
  nullable<int> in_free_trial;
  nullable<int> in_intro_price;
  nullable<std::string> offer_phase;
  nullable<std::string> latest_order_id;
  nullable<int> prepaid;
  nullable<long long> allow_extend_after;
  nullable<int> installment_initial_payments;
  nullable<int> installment_subsequent_payments;
  nullable<int> installment_remaining_payments;
  nullable<int> installment_pending_cancellation; // NULL: not an installment plan
  nullable<std::string> deferred_product_id;
  nullable<std::string> offer_id;
  nullable<std::string> purchase_option_id;
  nullable<std::string> line_items; // JSON (model/store_b/line_items.hpp)
  nullable<long long> price;
  nullable<std::string> currency_code;
  nullable<long long> tax;
  nullable<long long> refunded;
  nullable<long long> order_read_at;

  template <class F>
  void own_upload_columns(F&& f) {
    f("is_legacy", is_legacy);
    f("package_name", package_name);
    f("order_id", order_id);
    f("purchase_data", purchase_data);
    f("purchase_signature", purchase_signature);
  }
  template <class F>
  void own_verdict_columns(F&& f) {
    f("product_id", product_id);
    f("product_kind", product_kind);
    f("purchase_time", purchase_time);
    f("purchase_state", purchase_state);
    f("quantity", quantity);
    f("refundable_quantity", refundable_quantity);
    f("acknowledged", acknowledged);
    f("auto_renewing", auto_renewing);
    f("expiry_time", expiry_time);
    f("subscription_state", subscription_state);
    f("is_test", is_test);
    f("voided_time", voided_time);
    f("voided_reason", voided_reason);
    f("voided_source", voided_source);
    f("voided_quantity", voided_quantity);
    f("acknowledgement_state", acknowledgement_state);
    f("linked_purchase_token", linked_purchase_token);
    f("region_code", region_code);
    f("account_id", account_id);
    f("consumed", consumed);
    f("in_free_trial", in_free_trial);
    f("in_intro_price", in_intro_price);
    f("offer_phase", offer_phase);
    f("latest_order_id", latest_order_id);
    f("prepaid", prepaid);
    f("allow_extend_after", allow_extend_after);
    f("installment_initial_payments", installment_initial_payments);
    f("installment_subsequent_payments", installment_subsequent_payments);
    f("installment_remaining_payments", installment_remaining_payments);
    f("installment_pending_cancellation", installment_pending_cancellation);
    f("deferred_product_id", deferred_product_id);
    f("offer_id", offer_id);
    f("purchase_option_id", purchase_option_id);
    f("line_items", line_items);
    f("price", price);
    f("currency_code", currency_code);
    f("tax", tax);
    f("refunded", refunded);
    f("order_read_at", order_read_at);
  }

  void assign(const model::purchase_order_record& r);
  model::purchase_order_record record() const; // throws corrupt_row
};

struct receipt_row : record_row_base<receipt_row> {
  static constexpr const char* proof_column = "receipt_hash";
  std::string proof; // SHA-256 of the decoded receipt bytes

  std::string style;
  std::string bundle_id;
  std::string receipt_data;
  nullable<std::string> country_code;
  nullable<std::string> identifier_for_vendor;

  template <class F>
  void own_upload_columns(F&& f) {
    f("style", style);
    f("bundle_id", bundle_id);
    f("receipt_data", receipt_data);
    f("country_code", country_code);
    f("identifier_for_vendor", identifier_for_vendor);
  }
  // The in-app purchases belong to the verdict too (store_a_in_app_purchases).
  template <class F>
  void own_verdict_columns(F&&) {}

  void assign(const model::receipt_record& r);
  model::receipt_record record() const; // without in-app purchases; throws corrupt_row
};

struct transaction_row : record_row_base<transaction_row> {
  static constexpr const char* proof_column = "transaction_key";
  std::string proof; // the transaction key

  std::string signed_transaction;

  nullable<std::string> transaction_id;
  nullable<std::string> original_transaction_id;
  nullable<std::string> bundle_id;
  nullable<std::string> product_id;
  nullable<std::string> product_type;
  nullable<long long> purchase_date;
  nullable<long long> original_purchase_date;
  nullable<long long> expires_date;
  nullable<long long> revocation_date;
  nullable<int> revocation_reason;
  nullable<long long> revocation_said_at;
  nullable<std::string> app_account_token;
  nullable<int> quantity;
  nullable<std::string> storefront;
  nullable<long long> price;
  nullable<std::string> currency;
  nullable<std::string> ownership_type;
  nullable<int> is_upgraded;
  nullable<int> offer_type;
  nullable<std::string> offer_discount_type;
  nullable<std::string> app_transaction_id;
  nullable<std::string> offer_period;
  nullable<std::string> billing_plan_type;
  nullable<std::string> revocation_type;
  nullable<int> revocation_percentage;
  nullable<int> commitment_billing_period_number;
  nullable<int> commitment_total_billing_periods;
  nullable<long long> commitment_expires_date;
  nullable<long long> commitment_price;

  nullable<std::string> subscription_status;
  nullable<long long> subscription_expires_date;
  nullable<int> auto_renew;
  nullable<std::string> auto_renew_product_id;
  nullable<std::string> renewal_app_account_token;
  nullable<long long> notified_at;

  template <class F>
  void own_upload_columns(F&& f) {
    f("signed_transaction", signed_transaction);
  }
  template <class F>
  void own_verdict_columns(F&& f) {
    f("transaction_id", transaction_id);
    f("original_transaction_id", original_transaction_id);
    f("bundle_id", bundle_id);
    f("product_id", product_id);
    f("product_type", product_type);
    f("purchase_date", purchase_date);
    f("original_purchase_date", original_purchase_date);
    f("expires_date", expires_date);
    f("revocation_date", revocation_date);
    f("revocation_reason", revocation_reason);
    f("revocation_said_at", revocation_said_at);
    f("app_account_token", app_account_token);
    f("quantity", quantity);
    f("storefront", storefront);
    f("price", price);
    f("currency", currency);
    f("ownership_type", ownership_type);
    f("is_upgraded", is_upgraded);
    f("offer_type", offer_type);
    f("offer_discount_type", offer_discount_type);
    f("app_transaction_id", app_transaction_id);
    f("offer_period", offer_period);
    f("billing_plan_type", billing_plan_type);
    f("revocation_type", revocation_type);
    f("revocation_percentage", revocation_percentage);
    f("commitment_billing_period_number", commitment_billing_period_number);
    f("commitment_total_billing_periods", commitment_total_billing_periods);
    f("commitment_expires_date", commitment_expires_date);
    f("commitment_price", commitment_price);
  }
  template <class F>
  void own_notified_columns(F&& f) {
    f("subscription_status", subscription_status);
    f("subscription_expires_date", subscription_expires_date);
    f("auto_renew", auto_renew);
    f("auto_renew_product_id", auto_renew_product_id);
    f("renewal_app_account_token", renewal_app_account_token);
    f("notified_at", notified_at);
  }

  void assign(const model::transaction_record& r);
  model::transaction_record record() const; // throws corrupt_row
};

// store_a_app_transactions (db/migrations/020): a StoreKit 2 AppTransaction.
struct app_transaction_row : record_row_base<app_transaction_row> {
  static constexpr const char* proof_column = "app_transaction_key";
  std::string proof; // appTransactionId, or "sha256:" + the JWS's hash

  std::string signed_app_transaction;
  std::string device_verification; // this upload's device check

  nullable<std::string> app_transaction_id;
  nullable<std::string> bundle_id;
  nullable<long long> app_apple_id;
  nullable<std::string> application_version;
  nullable<long long> version_external_identifier;
  nullable<long long> receipt_creation_date;
  nullable<long long> original_purchase_date;
  nullable<std::string> original_application_version;
  nullable<long long> preorder_date;
  nullable<std::string> original_platform;
  nullable<std::string> device_verification_value;
  nullable<std::string> device_verification_nonce;

  template <class F>
  void own_upload_columns(F&& f) {
    f("signed_app_transaction", signed_app_transaction);
    f("device_verification", device_verification);
  }
  template <class F>
  void own_verdict_columns(F&& f) {
    f("app_transaction_id", app_transaction_id);
    f("bundle_id", bundle_id);
    f("app_apple_id", app_apple_id);
    f("application_version", application_version);
    f("version_external_identifier", version_external_identifier);
    f("receipt_creation_date", receipt_creation_date);
    f("original_purchase_date", original_purchase_date);
    f("original_application_version", original_application_version);
    f("preorder_date", preorder_date);
    f("original_platform", original_platform);
    f("device_verification_value", device_verification_value);
    f("device_verification_nonce", device_verification_nonce);
  }

  void assign(const model::store_a::app_transaction_record& r);
  model::store_a::app_transaction_record record() const; // throws corrupt_row
};

struct in_app_purchase_row {
  std::string receipt_id;
  int ordinal = 0;
  std::string product_id;
  std::string transaction_id;
  std::string original_transaction_id;
  int quantity = 1;
  nullable<long long> purchase_date;
  nullable<long long> original_purchase_date;
  nullable<long long> expires_date;
  nullable<long long> cancellation_date;
  nullable<int> cancellation_reason;
  nullable<std::string> web_order_line_item_id;
  nullable<int> is_trial_period;
  nullable<int> is_in_intro_offer_period;
  nullable<int> product_type;
  nullable<std::string> store_contradiction;

  template <class F>
  void all_columns(F&& f) {
    f("receipt_id", receipt_id);
    f("ordinal", ordinal);
    f("product_id", product_id);
    f("transaction_id", transaction_id);
    f("original_transaction_id", original_transaction_id);
    f("quantity", quantity);
    f("purchase_date", purchase_date);
    f("original_purchase_date", original_purchase_date);
    f("expires_date", expires_date);
    f("cancellation_date", cancellation_date);
    f("cancellation_reason", cancellation_reason);
    f("web_order_line_item_id", web_order_line_item_id);
    f("is_trial_period", is_trial_period);
    f("is_in_intro_offer_period", is_in_intro_offer_period);
    f("product_type", product_type);
    f("store_contradiction", store_contradiction);
  }

  void assign(const std::string& receipt, int position, const model::apple_in_app_purchase& p);
  model::apple_in_app_purchase purchase() const;
};

} // namespace receiptd::db

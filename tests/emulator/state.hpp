#pragma once
// The emulator's shared state (PROTOCOL.md "Modes" and "Control"): store modes,
// registered answers, credentials, issued tokens, call counters and the request
// log, and the PKI that signs App Store Server API answers. Store handlers read
// it from Pistache reactor threads while the control listener writes it, so
// every member sits behind a lock or is atomic (or, the PKI, is immutable).

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <openssl/types.h>

#include "tests/support/crypto/test_jws.hpp"

namespace receiptd::emulator {

enum class store_id { store_a, store_b };
std::string_view to_string(store_id x);
std::optional<store_id> parse_store_id(std::string_view text);

enum class store_mode { up, down, error, html, slow };
std::string_view to_string(store_mode x);
std::optional<store_mode> parse_store_mode(std::string_view text);

struct mode_setting {
  store_mode mode = store_mode::up;
  int delay_ms = 300; // slow
  int status = 503;   // error
  // error, html: the share of requests that get the failure (the others are answered
  // as in up), drawn per request: a store that fails some calls, not all.
  double fraction = 1.0;
};

// A registered verifyReceipt answer (PROTOCOL.md Store A, step 3).
struct apple_answer {
  // Only the receipt's true environment ("Sandbox"/"Production"), not an answer:
  // the normal steps run with it in place of what the receipt says (21007/21008).
  std::optional<std::string> belongs_to;
  int status = 0;
  std::optional<std::string> environment;
  std::optional<bool> is_retryable;
  std::optional<boost::json::value> body; // answered verbatim when set
};

// A transaction the App Store Server API knows (POST /control/store_a/transactions).
struct apple_transaction {
  // What its signedTransactionInfo says; fields.environment is the registered
  // environment ("Production" or "Sandbox"), signed_date is set when signing.
  test_support::transaction_fields fields;
  std::string known_in = "own"; // "own": its environment's host; "both"; "none"
  std::optional<int> http_status;
  std::optional<boost::json::value> body;             // answered verbatim when set
  // The Retry-After sent with a registered http_status (or statuses_http_status)
  // other than 200, verbatim: delta-seconds or an HTTP-date.
  std::optional<std::string> retry_after;
  std::optional<std::string> signed_transaction_info; // the 200 answer's field, verbatim
  // Get All Subscription Statuses (read from the latest transaction of its
  // original_transaction_id, except the overrides: from the one named).
  std::string subscription_group_id = "21000000";
  std::optional<int> subscription_status;           // 1–5; default derived
  std::optional<int> auto_renew_status;             // 0|1; default from the status
  std::optional<std::string> auto_renew_product_id; // default product_id
  std::optional<int> statuses_http_status;
  std::optional<boost::json::value> statuses_body; // answered verbatim when set
  std::uint64_t registered = 0; // registration order (set by register_transaction)
  // Get Transaction History: the customer it belongs to; the history a
  // transaction id names is every transaction of its bundle and customer.
  std::string customer;
};

// POST /control/store_a/history: Get Transaction History's page size, and a
// page (0-based, every history) answered with a failure instead.
struct history_setting {
  int page_size = 20; // Apple's
  std::optional<int> fail_page;
  int fail_status = 503;
};

// An app transaction Get App Transaction Info knows (POST
// /control/store_a/app_transactions), asked by its appTransactionId or by the id
// of a registered transaction that names it (Apple: "any transaction ID that
// belongs to the customer").
struct apple_app_transaction {
  // What its signedAppTransactionInfo says; fields.receipt_type is the
  // registered environment ("Production" or "Sandbox"); receiptCreationDate is
  // set when signing.
  test_support::app_transaction_fields fields;
  std::string known_in = "own"; // "own": its environment's host; "both"; "none"
  std::optional<int> http_status;
  std::optional<boost::json::value> body; // answered verbatim when set
  std::optional<std::string> retry_after; // with a registered http_status other than 200
  std::optional<std::string> signed_app_transaction_info; // the 200 answer's field, verbatim
};

// A registered App Store Connect in-app purchase key (POST
// /control/store_a/server_api/keys): JWTs with this kid must carry its issuer
// and bundle id and verify with its public key.
struct server_api_credential {
  std::string issuer_id;
  std::string key_id;
  std::string bundle_id;
  std::shared_ptr<EVP_PKEY> public_key; // EC P-256
};

// A registered Play purchase (POST /control/store_b/purchases).
struct play_purchase {
  std::string package_name;
  std::string product_id;
  std::string token;
  std::string kind = "product"; // "product" | "subscription"
  bool test = false;
  int purchase_state = 0; // products.get: 0 purchased, 1 cancelled, 2 pending
  int consumption_state = 0;
  bool acknowledged = true;
  bool auto_renewing = true;
  std::int64_t purchase_time_ms = 0; // default: the registration time
  std::int64_t expiry_ms = 0;        // subscriptions; default: purchase time + 30 days
  std::string order_id;              // default: a generated "GPA.…"
  std::string region_code = "US";
  std::optional<std::string> subscription_state; // overrides the derived "SUBSCRIPTION_STATE_…"
  // products.get quantity and refundableQuantity, sent only when registered
  // (refundable_quantity defaults to quantity, 0 when purchase_state is 1).
  std::optional<int> quantity;
  std::optional<int> refundable_quantity;
  // subscriptionsv2: keys merged into the line item (a null value removes the
  // emulator's own key, e.g. latestSuccessfulOrderId).
  std::optional<boost::json::object> line_item;
  // productsv2: false → it answers 404 (a purchase only products.get knows);
  // product_line_items (Google's productLineItem objects, verbatim) replace the
  // emulator's own one line item; offer_id / purchase_option_id go into it.
  bool productsv2 = true;
  // products: false → products.get answers 404 (a purchase only productsv2 knows).
  bool products = true;
  std::optional<boost::json::array> product_line_items;
  std::optional<std::string> offer_id;
  std::optional<std::string> purchase_option_id;
  std::optional<int> http_status;                // GETs only: acknowledge ignores both
  std::optional<boost::json::value> body;
  std::optional<std::string> retry_after; // sent with http_status (not 200), verbatim
  std::string developer_payload; // the last acknowledge's developerPayload (products.get echoes it)
  int acknowledge_calls = 0;     // acknowledge calls naming this purchase, whatever the answer
};

// An order orders.get / orders.batchGet answer (POST /control/store_b/orders):
// the Order object as sent.
struct play_order {
  std::string package_name;
  std::string order_id;
  boost::json::object body;
};

// A voided purchase the voidedpurchases list reports (POST /control/store_b/voided).
struct play_voided {
  std::string package_name;
  std::string token;
  std::string order_id;
  std::string kind = "product"; // "product" | "subscription"
  std::int64_t voided_time_ms = 0;
  std::int64_t purchase_time_ms = 0;
  int voided_source = 0; // 0 user, 1 developer, 2 Google
  int voided_reason = 0; // 0 other … 7 (Play's VoidedReason codes)
  std::optional<std::int64_t> voided_quantity;
};

// POST /control/store_b/acknowledge_failures: the next `count` acknowledge
// calls answer `status`.
// Refund answers (Send Consumption Information, orders.reviewrefund) as
// received, and the failures injected into them.
struct refund_answer_record {
  std::string store;       // "store_a", "store_b"
  std::string key;         // the transaction id, the order id
  std::string environment; // store_a: "Production", "Sandbox"; store_b: the package name
  std::string body;
};
struct refund_failure_setting {
  int count = 0;
  int status = 503;
  std::optional<std::string> retry_after;
};

struct acknowledge_failure_setting {
  int count = 0;
  int status = 503;
};

// The calls GET /control/calls counts.
enum class call_kind {
  store_a_production,
  store_a_sandbox,
  store_a_server_api_production,
  store_a_server_api_sandbox,
  store_a_server_api_unauthorized, // calls refused for their JWT (401)
  store_a_subscription_statuses_production,
  store_a_subscription_statuses_sandbox,
  store_a_app_transaction_production, // Get App Transaction Info
  store_a_app_transaction_sandbox,
  store_a_history_production,
  store_a_history_sandbox,
  store_b_token,
  store_b_products,
  store_b_subscriptionsv2,
  store_b_acknowledge, // products and subscriptions :acknowledge
  store_b_voidedpurchases,
  store_b_productsv2,
  store_b_orders, // orders.get and orders.batchGet
  store_a_consumption,     // Send Consumption Information, either host
  store_b_reviewrefund,    // orders.reviewrefund
  count_
};

struct logged_request {
  store_id store = store_id::store_a;
  std::string method;
  std::string path;
  std::string authorization;
  std::string body;
  std::uint64_t seq = 0; // 1 for the first request logged, then one more each
};

class emulator_state {
public:
  static constexpr std::size_t request_log_size = 200;
  static constexpr std::size_t logged_body_limit = 256 * 1024; // longer bodies are cut
  static constexpr std::int64_t default_token_lifetime = 3600;

  emulator_state();
  // Signing Server API answers with this PKI (--server-api-pki) instead of one made here.
  explicit emulator_state(test_support::test_pki jws_pki);

  mode_setting mode(store_id store) const;
  void set_mode(store_id store, const mode_setting& setting);

  // Forgets registrations, secrets, accounts and tokens; modes up; counters and
  // log cleared. (Reopening a closed listener is the control handler's job.)
  void reset();

  // ---- Store A
  void register_receipt(const std::string& sha256_hex, apple_answer answer);
  std::optional<apple_answer> receipt_answer(const std::string& sha256_hex) const;
  void set_shared_secret(const std::string& bundle_id, const std::string& password);
  std::optional<std::string> shared_secret(const std::string& bundle_id) const;

  // ---- Store A, App Store Server API
  // The PKI that signs signedTransactionInfo: made once at start (or given), kept by reset.
  const test_support::test_pki& jws_pki() const { return jws_pki_; }
  void add_server_api_key(server_api_credential credential); // replaces the same key id
  std::optional<server_api_credential> server_api_key(const std::string& key_id) const;
  void register_transaction(apple_transaction transaction); // replaces the same id
  std::optional<apple_transaction> transaction(const std::string& transaction_id) const;
  void register_app_transaction(apple_app_transaction t); // replaces the same id
  // By appTransactionId, or by a registered transaction's id whose
  // app_transaction_id is registered.
  std::optional<apple_app_transaction> app_transaction(const std::string& any_id) const;
  // Every registered transaction with this original_transaction_id.
  std::vector<apple_transaction> transactions_of(const std::string& original_transaction_id) const;
  // Every registered transaction of this bundle and customer, in registration order.
  std::vector<apple_transaction> history_of(const std::string& bundle_id,
                                            const std::string& customer) const;
  void set_history(history_setting setting);
  history_setting history() const;
  // PUT /control/store_a/accept_unregistered: a transaction id nobody registered,
  // asked of Get Transaction Info with a JWT of this bundle, answers as a purchase
  // of this product made now (for benchmarks: every upload its own transaction).
  struct store_a_unregistered_policy {
    std::string product_id;
    std::string type = "Consumable";
  };
  void accept_unregistered_transactions(const std::string& bundle_id,
                                        std::optional<store_a_unregistered_policy> policy);
  std::optional<store_a_unregistered_policy>
  unregistered_transactions(const std::string& bundle_id) const;

  // ---- Store B
  void add_service_account(const std::string& client_email, std::shared_ptr<EVP_PKEY> key);
  std::shared_ptr<EVP_PKEY> service_account_key(const std::string& client_email) const;
  void set_token_lifetime(std::int64_t seconds);
  struct issued_token {
    std::string access_token;
    std::int64_t expires_in = 0;
  };
  issued_token issue_token();
  bool token_is_live(const std::string& access_token) const;
  void revoke_tokens();
  void register_purchase(play_purchase purchase);
  std::optional<play_purchase> purchase(const std::string& token) const;
  // Runs `change` on the registered purchase under the write lock (read, check
  // and change at once); false when the token is not registered.
  template <class F>
  bool update_purchase(const std::string& token, F&& change) {
    std::unique_lock lock(mutex_);
    auto it = purchases_.find(token);
    if (it == purchases_.end())
      return false;
    change(it->second);
    return true;
  }
  void set_acknowledge_failures(acknowledge_failure_setting failures); // count 0: none
  // One injected failure, consumed: the status to answer, or nullopt.
  std::optional<int> take_acknowledge_failure();
  void add_order(play_order order); // the same package and order id again replaces it
  std::optional<play_order> order(const std::string& package_name,
                                  const std::string& order_id) const;
  void set_orders_failures(acknowledge_failure_setting failures); // count 0: none
  std::optional<int> take_orders_failure();
  // Adds a voided entry (the same token again replaces it).
  void add_voided(play_voided voided);
  std::vector<play_voided> voided(const std::string& package_name) const;
  // "GPA.voided-<n>", n counting from 1 since the start or the last reset.
  std::string next_voided_order_id();
  // PUT /control/store_b/accept_unregistered: tokens nobody registered, asked
  // about under this package, answer as a valid purchase of this kind.
  struct unregistered_policy {
    std::string kind = "product"; // "product" | "subscription"
    bool test = false;
    std::string product_id = "subscription"; // subscriptions' line item (products: the path's)
  };
  void accept_unregistered(const std::string& package_name,
                           std::optional<unregistered_policy> policy); // nullopt: stop
  std::optional<unregistered_policy> unregistered(const std::string& package_name) const;

  // ---- Refund answers
  void record_refund_answer(refund_answer_record r);
  boost::json::array refund_answers_json() const;
  void set_refund_failures(refund_failure_setting s);
  // The failure the next refund answer gets, if one is still injected.
  std::optional<refund_failure_setting> take_refund_failure();

  // ---- Counters and request log
  void count(call_kind kind);
  boost::json::object calls_json() const;
  void log_request(logged_request request);
  boost::json::array requests_json() const;

private:
  const test_support::test_pki jws_pki_; // immutable: read without the lock
  mutable std::shared_mutex mutex_;      // everything below up to the counters
  std::array<mode_setting, 2> modes_;
  std::unordered_map<std::string, apple_answer> receipts_;
  std::unordered_map<std::string, std::string> shared_secrets_;
  std::unordered_map<std::string, server_api_credential> server_api_keys_; // by key id
  std::unordered_map<std::string, apple_transaction> transactions_;        // by transaction id
  std::uint64_t transactions_registered_ = 0;
  std::unordered_map<std::string, apple_app_transaction> app_transactions_; // by appTransactionId
  history_setting history_;
  std::unordered_map<std::string, store_a_unregistered_policy> store_a_unregistered_; // by bundle
  std::unordered_map<std::string, std::shared_ptr<EVP_PKEY>> service_accounts_;
  std::int64_t token_lifetime_ = default_token_lifetime;
  std::unordered_map<std::string, std::int64_t> tokens_; // access token → expiry (unix ms)
  std::unordered_map<std::string, play_purchase> purchases_;
  std::unordered_map<std::string, unregistered_policy> unregistered_; // by package name
  acknowledge_failure_setting acknowledge_failures_;
  std::map<std::pair<std::string, std::string>, play_order> orders_; // by (package, order id)
  acknowledge_failure_setting orders_failures_;
  std::unordered_map<std::string, play_voided> voided_; // by purchase token
  std::uint64_t voided_order_ids_ = 0;
  std::vector<refund_answer_record> refund_answers_;
  refund_failure_setting refund_failures_;

  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(call_kind::count_)> calls_{};

  mutable std::mutex log_mutex_;
  std::deque<logged_request> log_;
  std::uint64_t logged_ = 0; // requests logged since the start
};

} // namespace receiptd::emulator

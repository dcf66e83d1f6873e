#pragma once
// The values actors exchange. Plain structs of model/ and http/ types; CAF sees
// them as local-only message types (actors/type_ids.hpp).

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <caf/timespan.hpp>

#include "db/database.hpp"
#include "http/admission.hpp"
#include "http/outbound_client.hpp"
#include "http/reply.hpp"
#include "model/app.hpp"
#include "model/entitlements/matcher.hpp"
#include "model/records.hpp"
#include "model/store_a/app_transaction.hpp"
#include "model/store_a/notification.hpp"
#include "model/store_a/server_api.hpp"
#include "model/store_b/licence_key.hpp"
#include "model/store_b/play_api.hpp"
#include "model/store_b/acknowledgement.hpp"
#include "model/store_b/orders_due.hpp"
#include "model/store_b/rtdn.hpp"
#include "model/store_b/voided_poll.hpp"
#include "model/store_b/service_account.hpp"
#include "model/verdict.hpp"
#include "model/webhooks.hpp"

namespace receiptd::actors {

// Travels inside every message of an upload: which trace, and which span caused it.
struct trace_context {
  std::string trace_id;
  std::uint64_t parent_span = 0;
};

// An upload or lookup from the HTTP layer, with the channel to answer it.
struct inbound {
  http::inbound_request request;
  http::reply_sink_ptr reply;
};

// A purchase-layer request (http::route_info::resource) whose token was good:
// the app it is for, and what the HTTP layer read (checked by the worker that
// answers it: actors/resource_requests.hpp).
struct resource_request {
  http::route target = http::route::purchase_get;
  std::string app_id;
  std::string id; // routes that take one
  std::vector<std::string> params;
  std::vector<std::pair<std::string, std::string>> query;
  std::string body;
  // A grant's: the entitlements the app defines (a grant of another is refused).
  std::vector<std::string> entitlement_names;
  // A customer answer's: the app's entitlement rules as its context compiled them
  // (never null), so that a lookup does not read the app's row again.
  std::shared_ptr<const model::entitlements::matcher> rules = model::entitlements::matcher::none();
  // A restore's: the customer's transactions as the App Store's history gave
  // them, verified and made records (actors/restore.cpp), saved all or none.
  std::vector<model::transaction_record> restored;
};

// A customer lookup's answer (GET /client|/server/customers/{id}), and what the
// supervisor needs to give it again without asking (actors/customer_answers.hpp):
// the time it was computed for, and until when it stays the same but for
// requested_at while nothing is written (none: until a write). `head`: the body
// cut before requested_at's value (empty: not to be given again, e.g. a 422).
struct customer_answer {
  http::reply reply;
  model::unix_ms asked_at = 0;
  std::optional<model::unix_ms> same_until;
  std::string head;
};

// A token lookup's answer: the app owning the token (none when it is unknown or
// revoked) and the token's kind, and the auth revision of the snapshot it was read
// in (db::database::auth_revision): the supervisor's token cache drops it once the
// revision has grown past it.
struct authenticated {
  std::optional<model::app> app;
  std::int64_t revision = 0;
  model::token_kind kind = model::token_kind::client;
};

// An app with its credentials parsed once (parsing a key costs more than using it).
struct app_context {
  model::app app;
  std::shared_ptr<const model::store_b::licence_key> licence_key;         // null: none usable
  std::shared_ptr<const model::store_b::service_account> service_account; // null: none usable
  // App Store Server API credentials; null: none, or unusable.
  std::shared_ptr<const model::store_a::server_api_key> server_api_key;
  // Why a configured credential is unusable, per store: Store B's licence key or
  // service account; the App Store Server API key.
  std::string store_b_problem;
  std::string server_api_problem;

  // The app's entitlement rules (app.entitlement_rules) compiled: `matcher` is
  // never null (no rules, or unusable ones, match nothing); `problem` says why
  // stored rules are unusable (only a row written by hand: receiptctl checks them),
  // empty when they compiled.
  struct compiled_entitlements {
    std::shared_ptr<const model::entitlements::matcher> matcher
      = model::entitlements::matcher::none();
    std::string problem;
  };
  // Compiled on first use, once per context (compiling costs 0.1–16 ms for 4–256
  // patterns: the supervisor's cached context compiles them once per version of the
  // app's row, and a revalidation job's context, which never matches, never does).
  // Thread-safe.
  const compiled_entitlements& entitlements() const;

private:
  mutable std::once_flag entitlements_once_;
  mutable compiled_entitlements entitlements_;
};
using app_context_ptr = std::shared_ptr<const app_context>;

// When the validator stops waiting for a store's answer: the store client answers
// by then (the store counts as unreachable), a call still waiting for a free slot
// is dropped instead of sent, one sent is let go (actors/outbound_calls.hpp).
using store_deadline = std::optional<std::chrono::steady_clock::time_point>;

// How long a store client is waited for: a check carries its deadline and the
// client answers by it, so the request has no CAF timeout of its own (each would
// wake CAF's clock thread twice per upload: set, then cancelled).
inline constexpr auto answered_by_deadline = caf::infinite;

// Validator → Store B client.
struct store_b_check {
  trace_context trace;
  app_context_ptr app;
  std::string package_name;
  std::string purchase_token;
  model::play_purchase purchase;           // what the upload says; enriched in the answer
  model::store_b::purchase_api api;        // the API to ask first
  bool fall_back_to_subscriptions = false; // legacy: products, then subscriptionsv2
  store_deadline deadline;
};

struct store_b_answer {
  model::store_verdict verdict;
  model::play_purchase purchase;
};

// Validator → Store B client: acknowledge the record's Play purchase.
struct store_b_acknowledge {
  trace_context trace;
  app_context_ptr app;
  model::purchase_order_record record; // its package, product, kind and token
  store_deadline deadline;
};

// Upkeep → Store B client: one page of the app's voided purchases list. The
// answer is the page, or an error saying why there is none.
struct store_b_voided_query {
  trace_context trace;
  app_context_ptr app;
  model::unix_ms start_time = 0;
  model::unix_ms end_time = 0;
  std::int32_t max_results = 1000;
  std::string page_token;
};

// Upkeep → Store B client: the app's orders (orders.get for one,
// orders.batchGet for more, at most model::store_b::max_orders_per_batch). The
// answer is the orders, or an error saying why there are none (a batch
// answered 404 names an order Play does not know: errc::not_found in the
// error's message, "HTTP 404").
struct store_b_orders_query {
  trace_context trace;
  app_context_ptr app;
  std::vector<std::string> order_ids;
};
using play_orders = std::vector<model::store_b::play_order>;
using orders_due_list = std::vector<model::store_b::orders_due>;
using order_reads = std::vector<model::store_b::order_read>;

// Validator → Store A client: one verifyReceipt check (with one 21007/21008 flip).
struct store_a_check {
  trace_context trace;
  std::string app_id;
  // The upload's canonical base64, lent by the validator rather than copied (one
  // copy of a receipt per upload); the client lets go of it before it answers.
  std::shared_ptr<const std::string> receipt_data;
  std::string password; // the app's shared secret
  bool sandbox_first = false;
  std::vector<model::apple_in_app_purchase> in_app; // the receipt's, enriched in the answer
  store_deadline deadline;
};

struct store_a_answer {
  model::store_verdict verdict;
  std::vector<model::apple_in_app_purchase> in_app;
};

// Validator → Store A client: one App Store Server API Get Transaction Info call
// (check_atom), or Get All Subscription Statuses (refresh_atom),
// at the host of the transaction's environment first, then — only when the
// transaction is unknown there (404 TransactionIdNotFound) — once at the other.
struct store_a_transaction_check {
  trace_context trace;
  app_context_ptr app; // its App Store Server API key (none: no credentials) and bundle id
  std::string transaction_id;
  bool sandbox_first = false;
  store_deadline deadline;
};

// Also Get App Transaction Info's answer (app_transaction_atom, asked by the app
// transaction's appTransactionId): signed_transaction_info then holds its
// signedAppTransactionInfo (model/store_a/app_transaction.hpp).
struct store_a_transaction_answer {
  // confirmed: the answer carried signed_transaction_info, which the validator
  // still verifies and compares (model/store_a/transaction_record.hpp).
  model::store_verdict verdict;
  std::string signed_transaction_info;
};

// Get All Subscription Statuses' answer (the scheduled refresh;
// asked with a store_a_transaction_check): confirmed carries the entries, which
// the validator still verifies (model/store_a/refresh.hpp).
struct store_a_statuses_answer {
  model::store_verdict verdict;
  std::vector<model::store_a::subscription_status_entry> entries;
};

// Get Transaction History's answer, every page of it (asked with a
// store_a_transaction_check): confirmed carries each page's signedTransactions
// in order, which the caller still verifies (model/store_a/history.hpp); a page
// that failed makes the whole answer that page's verdict (nothing half-read).
struct store_a_history_answer {
  model::store_verdict verdict;
  std::vector<std::string> signed_transactions;
  std::optional<model::environment> env; // the history's "environment"
};

// Refund answerer → a store client: the answer to a refund request
// (model/purchases/refund_request.hpp). Store A: Send Consumption Information
// for transaction `key` at the sandbox or production host; Store B:
// orders.reviewrefund of order `key` of `package_name`. `body` is JSON.
struct store_refund_answer {
  trace_context trace;
  app_context_ptr app;
  std::string key;
  std::string package_name;
  bool sandbox = false;
  std::string body;
  store_deadline deadline;
};

// What the store said: its HTTP status (0: no answer), a detail for the log,
// and the instant before which it asked not to be called again (a 429's
// Retry-After).
struct store_refund_reply {
  int status = 0;
  std::string detail;
  std::optional<model::unix_ms> not_before;
};

// A due revalidation job with what it needs, as the persistence pool claims it.
struct claimed_job {
  model::validation_job job;
  std::optional<model::any_record> record; // none: it has vanished (or an app transaction's job)
  // The record of a store_a_app_transaction job (an app transaction is no
  // any_record: it names no purchase).
  std::optional<model::store_a::app_transaction_record> app_transaction;
  std::optional<model::app> app;
};
using claimed_jobs = std::vector<claimed_job>;

// What applying a store notification did (db::notification_applied).
struct notification_result {
  bool duplicate = false; // applied before: nothing changed this time
  std::int32_t records_changed = 0;
  std::int32_t events = 0;
};

// Voided purchases polls claimed for the upkeep actor.
using voided_polls = std::vector<model::store_b::claimed_voided_poll>;
using voided_purchases = std::vector<model::store_b::voided_purchase>;

// Webhook deliveries claimed for the dispatcher (actors/webhook_dispatcher.hpp).
using webhook_deliveries = std::vector<model::webhook_delivery>;

// Due refund requests with what their answers are made of (db::refund_work).
using refund_works = std::vector<db::refund_work>;

// An HTTP transfer finished (outbound client → store client).
struct http_done {
  std::uint64_t call_id = 0;
  http::outbound_response response;
};

// The answer to a GET of a record: its JSON, when it exists.
struct found_record {
  std::optional<std::string> app_id;
  std::string json;
};

} // namespace receiptd::actors

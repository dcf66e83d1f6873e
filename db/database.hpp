#pragma once
// One database connection (a SOCI session) and every query receiptd runs on it.
// Blocking: call only from a persistence worker's own thread or from receiptctl.
// Same schema and behaviour on SQLite and PostgreSQL (DESIGN.md §5).
//
// - One object per thread: it owns one session and its prepared statements, and is
//   not thread-safe. Open one per persistence worker.
// - No method throws: driver failures come back as model::error values
//   (storage_unavailable, "<method>: <reason>"),
//   with the transaction rolled back.
// - A lost PostgreSQL session (server restarted, backend terminated, network cut) is
//   detected by the call that fails on it; that call reconnects and runs once more
//   unless its COMMIT was already sent (then its outcome is unknown and it returns the
//   error). While the server is down, calls fail with the connect error (after at most
//   connect_timeout, 10 s unless the URL says otherwise); the first call after it is
//   back reconnects. The object never needs to be reopened.
// - Records and tokens reference their app: saving for an unknown app is an error.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "db/failure.hpp"
#include "model/access_token.hpp"
#include "model/app.hpp"
#include "model/purchases/customer.hpp"
#include "model/purchases/purchase.hpp"
#include "model/purchases/refund_request.hpp"
#include "model/purchases/rules.hpp"
#include "model/records.hpp"
#include "model/store_a/app_transaction.hpp"
#include "model/store_a/notification.hpp"
#include "model/store_b/rtdn.hpp"
#include "model/store_b/orders_due.hpp"
#include "model/store_b/voided_poll.hpp"
#include "model/webhooks.hpp"

namespace receiptd::db {

enum class dialect { sqlite, postgresql };

using model::any_record;

// What applying a store notification did.
struct notification_applied {
  bool duplicate = false; // already applied (same app and notification id): nothing changed
  int records_changed = 0;
  int events = 0; // webhook deliveries written (one per event and wanting endpoint)
};

// One upload's save inside a batch (persistence group commit).
struct batch_save {
  any_record record;
  model::unix_ms first_attempt_at = 0;
};

// The record as stored, or why this save failed (it was rolled back alone).
using batch_saved = model::result<any_record>;

template <class Record>
struct saved {
  Record record; // as stored: merged with the earlier upload on a re-upload
  bool created;  // false on a re-upload of the same proof
};

struct token_info {
  std::string id;
  std::string app_id;
  std::string token_hash; // hex SHA-256 of the token
  model::unix_ms created_at = 0;
  std::optional<model::unix_ms> revoked_at;
  model::token_kind kind = model::token_kind::client;
};

// Who a token is: its app, and which routes it opens (http/routes.hpp).
struct token_owner {
  model::app app;
  model::token_kind kind = model::token_kind::client;
};

// The revalidation queue and the webhook outbox at a glance (GET /metrics): every job is in exactly
// one state. Due: next_attempt_at has come and its lease is free or expired (a claim would take
// it); leased: its lease runs; scheduled: not due yet.
struct job_queue_figures {
  std::int64_t due = 0;
  std::int64_t leased = 0;
  std::int64_t scheduled = 0;
  std::optional<model::unix_ms> oldest_due_at; // the earliest next_attempt_at of the due ones
  // Webhook deliveries not delivered yet (nor dead), and when the oldest event
  // among them was made: how far the app backends lag behind.
  std::int64_t webhook_pending = 0;
  std::optional<model::unix_ms> webhook_oldest_pending_at;
};

// Token lookups read in one snapshot, and the auth revision of that snapshot.
struct token_lookups {
  std::int64_t revision = 0;
  // Per hash, in order: none when unknown or revoked.
  std::vector<std::optional<token_owner>> owners;
};

// Where a customer's listing goes on from: after the purchase made at
// created_at with this id (newest first); the first page starts past every one.
struct purchase_cursor {
  model::unix_ms created_at = INT64_MAX;
  std::string id = "\x7f";
};

// A customer as one read sees it: its purchases (newest first), its grants, and
// the app's entitlement rules the answer is computed with.
struct customer_view {
  std::vector<model::purchases::purchase> purchases;
  std::vector<model::purchases::grant> grants;
  std::shared_ptr<const model::purchases::entitlement_rules> rules;
};

// What a customer's answer is computed from, with the app's rules the caller
// has: the purchases it shows (model::purchases::answer_purchases), newest
// first, and the customer's grants.
// A refund request claimed to be answered, with what its answer is made of:
// the app (its Server API key or service account), its settings, what the
// app's backend reported of the purchase, and what receiptd's records say.
struct refund_work {
  model::purchases::refund_request request;
  model::app app;
  model::purchases::refund_settings settings;
  model::purchases::consumption_report report;
  model::purchases::refund_facts facts;
};

struct customer_answer_view {
  std::vector<model::purchases::purchase> purchases;
  std::vector<model::purchases::grant> grants;
};

class database {
public:
  // url: SOCI connection string, "sqlite3://db=/path.db timeout=10" or
  // "postgresql://host=… port=… dbname=… user=…", or a PostgreSQL URI
  // (postgresql://user:password@host:port/dbname?…, model/database_url.hpp).
  // SQLite is put in WAL mode. An error shows the URL with its password masked.
  static model::result<std::unique_ptr<database>> open(const std::string& url);
  virtual ~database() = default;

  virtual dialect kind() const = 0;

  // Applies the numbered migrations of db/migrations not yet applied (idempotent,
  // safe when several processes start at once). Returns how many it applied.
  virtual model::result<int> migrate() = 0;

  // ---- apps and access tokens (receiptctl, supervisor) --------------------
  virtual model::result<model::app> create_app(model::app a) = 0;  // id made when empty
  virtual model::result<bool> update_app(const model::app& a) = 0; // false: no such app
  virtual model::result<std::vector<model::app>> list_apps() = 0;
  // By id, or else by name.
  virtual model::result<std::optional<model::app>> find_app(const std::string& id_or_name) = 0;
  virtual model::result<token_info> add_token(const std::string& app_id,
                                              const std::string& token_hash, model::unix_ms now,
                                              model::token_kind kind = model::token_kind::client)
    = 0;
  // By token id or token hash; false when nothing was revoked.
  virtual model::result<bool> revoke_token(const std::string& id_or_hash, model::unix_ms now) = 0;
  virtual model::result<std::vector<token_info>> list_tokens(const std::string& app_id) = 0;
  // The app owning a non-revoked token with this hash.
  virtual model::result<std::optional<model::app>> app_by_token_hash(const std::string& token_hash)
    = 0;
  // The owners (app and token kind) of several hashes at once, in order, read in one
  // snapshot together with the auth revision (the supervisor's token cache tags each
  // lookup with it).
  virtual model::result<token_lookups>
  apps_by_token_hashes(const std::vector<std::string>& token_hashes) = 0;
  // The auth revision: a counter that every change to apps, access_tokens or
  // webhook_endpoints bumps, by trigger, whoever makes it
  // (db/migrations/003_auth_revision.sql, 006_store_events.sql). A token
  // lookup read at revision r is stale once the revision is above r.
  virtual model::result<std::int64_t> auth_revision() = 0;

  // ---- records --------------------------------------------------------------
  // In one transaction: insert, or on a re-upload (same app and purchase token /
  // receipt hash / transaction key) merge with model::merge_reupload; then, when the stored state
  // is pending, make sure a job exists (first attempt at first_attempt_at), and
  // otherwise delete the record's job. An empty incoming id is generated.
  virtual model::result<saved<model::purchase_order_record>>
  save_purchase_order(const model::purchase_order_record& incoming, model::unix_ms first_attempt_at)
    = 0;
  virtual model::result<saved<model::receipt_record>>
  save_receipt(const model::receipt_record& incoming, model::unix_ms first_attempt_at) = 0;
  virtual model::result<saved<model::transaction_record>>
  save_transaction(const model::transaction_record& incoming, model::unix_ms first_attempt_at) = 0;

  // Group commit: every save of the batch as save_purchase_order/save_receipt
  // would do it, in one transaction with one commit; each inside its own
  // savepoint, so a save the database refuses fails alone. The results are in
  // the order of the batch; the outcome fails only when the whole batch did.
  virtual model::result<std::vector<batch_saved>> save_batch(const std::vector<batch_save>& batch)
    = 0;

  // A customer's restored App Store transactions (POST /server/customers/{user}/
  // restore): every record saved as save_transaction would save it (purchases
  // folded, events written), all in one transaction; or — when one of them is
  // refused as its upload would be (a purchase or transaction bound to another
  // user the app's policy protects) — none of them, and that refusal.
  virtual model::result<std::optional<model::field_error>>
  restore_transactions(const std::vector<model::transaction_record>& records, model::unix_ms now)
    = 0;

  virtual model::result<std::optional<model::purchase_order_record>>
  find_purchase_order(const std::string& id) = 0;
  virtual model::result<std::optional<model::receipt_record>> find_receipt(const std::string& id)
    = 0;
  virtual model::result<std::optional<model::transaction_record>>
  find_transaction(const std::string& id) = 0;

  // ---- StoreKit 2 app transactions ------------------------------------------
  // As save_transaction, keyed by (app, app_transaction_key), merged by
  // model::store_a::merge_reupload (a transfer the app's policy refuses comes
  // back in terms.refused, the stored record unchanged); a job while pending.
  // App transactions fold into no purchase and write no event.
  virtual model::result<saved<model::store_a::app_transaction_record>>
  save_app_transaction(const model::store_a::app_transaction_record& incoming,
                       model::unix_ms first_attempt_at)
    = 0;
  virtual model::result<std::optional<model::store_a::app_transaction_record>>
  find_app_transaction(const std::string& id) = 0;
  // The originalApplicationVersion of each app transaction of the customer
  // (app and user_identifier) that is validated and not fraud, in `env`
  // (production: production only; sandbox: sandbox and Xcode too), for the
  // entitlement rules' version subjects.
  virtual model::result<std::vector<std::string>>
  original_application_versions(const std::string& app_id, const std::string& user_identifier,
                                model::environment env)
    = 0;

  // ---- revalidation jobs ----------------------------------------------------
  // Claims up to `limit` jobs due at `now` whose lease is free or expired: sets
  // lease_owner/lease_until and bumps version (FOR UPDATE SKIP LOCKED on
  // PostgreSQL). The returned jobs carry the new version.
  virtual model::result<std::vector<model::validation_job>>
  claim_due_jobs(const std::string& owner, model::unix_ms now, model::unix_ms lease_until,
                 int limit)
    = 0;

  // Fenced by job.version (false when another claim overtook it): writes the
  // record's verdict fields (state, fraud, env, purchase / in-app purchases,
  // store_detail, updated_at) and deletes the job.
  virtual model::result<bool> complete_job(const model::validation_job& job,
                                           const model::purchase_order_record& updated)
    = 0;
  virtual model::result<bool> complete_job(const model::validation_job& job,
                                           const model::receipt_record& updated)
    = 0;
  virtual model::result<bool> complete_job(const model::validation_job& job,
                                           const model::transaction_record& updated)
    = 0;
  virtual model::result<bool> complete_job(const model::validation_job& job,
                                           const model::store_a::app_transaction_record& updated)
    = 0;

  // Fenced by job.version: stores attempts, next_attempt_at and last_error from
  // `job` and releases the lease.
  virtual model::result<bool> reschedule_job(const model::validation_job& job) = 0;

  // Fenced by job.version: deletes a job whose record (or app) is gone, so that
  // it is not leased again forever.
  virtual model::result<bool> drop_job(const model::validation_job& job) = 0;

  // Every job, for operators and tests.
  virtual model::result<std::vector<model::validation_job>> list_jobs() = 0;

  // ---- operations -------------------------------------------------
  // The revalidation queue at `now`, in one query (db/sql_metrics.hpp).
  virtual model::result<job_queue_figures> queue_figures(model::unix_ms now) = 0;
  // How many of this build's migrations (db/migrations.hpp) the database has not
  // applied: 0 when its schema is current. Fails when the database does not
  // answer, and on SQLite when its file is no longer at the path it was opened
  // from (moved or deleted: the next session, or a restart, would start on an
  // empty database).
  virtual model::result<int> missing_migrations() = 0;

  // ---- purchases, customers, entitlements -----------------------------------
  // The purchases a record names, as stored, with the names each grants under
  // its app's rules (what the record's resource embeds); empty for a record
  // that names none.
  virtual model::result<std::shared_ptr<const model::purchases::purchase_set>>
  purchases_of(const any_record& r, model::unix_ms now) = 0;
  // One purchase by id, with its entitlement names; none when there is none.
  virtual model::result<std::optional<model::purchases::purchase_set>>
  find_purchase(const std::string& id, model::unix_ms now) = 0;
  // A customer of the app in one environment: at most `limit` of its purchases
  // after `cursor`, newest first, its grants and the app's rules.
  virtual model::result<customer_view> find_customer(const std::string& app_id,
                                                     const std::string& user_identifier,
                                                     model::environment env,
                                                     const purchase_cursor& cursor, int limit)
    = 0;
  // What the customer's answer at `now` reads (GET …/customers/{user}): the
  // purchases it shows and the grants, in one statement whatever the number of
  // purchases, two for a customer with grants (see sql_database_purchases.cpp).
  virtual model::result<customer_answer_view>
  find_customer_answer(const std::string& app_id, const std::string& user_identifier,
                       model::environment env, model::unix_ms now)
    = 0;
  // In one transaction: the grant, and the customer's entitlements compared
  // with what was last announced (customer.entitlements_changed).
  virtual model::result<model::purchases::grant> add_grant(const model::purchases::grant& g,
                                                           model::unix_ms now)
    = 0;
  // The same for its removal; false when the customer has no such grant.
  virtual model::result<bool> remove_grant(const std::string& app_id, model::environment env,
                                           const std::string& user_identifier,
                                           const std::string& entitlement, const std::string& id,
                                           model::unix_ms now)
    = 0;
  // The period-end timers due at `now` (at most `limit` purchases) and the
  // grants that ended: each purchase's activity is evaluated now and what
  // changed announced (in_app_purchase.updated, customer.entitlements_changed);
  // its timer moves to its next change. Returns how many were handled.
  virtual model::result<int> expire_due(model::unix_ms now, int limit) = 0;

  // ---- refund requests (model/purchases/refund_request.hpp) ---------------
  // Due refund requests leased to owner until lease_until, at most limit.
  virtual model::result<std::vector<refund_work>>
  claim_refund_requests(const std::string& owner, model::unix_ms now, model::unix_ms lease_until,
                        int limit) = 0;
  // A request's outcome, fenced by its version (false: another claim overtook
  // it); its purchase shows it as refund_request, and the change is announced
  // (in_app_purchase.updated).
  virtual model::result<bool> finish_refund_request(const model::purchases::refund_request& r,
                                                    model::unix_ms now) = 0;
  // What the app's backend says of one of its purchases; false: the app has
  // no such purchase.
  virtual model::result<bool> set_consumption(const std::string& app_id,
                                              const std::string& purchase_id,
                                              const model::purchases::consumption_report& r,
                                              model::unix_ms now) = 0;
  virtual model::result<model::purchases::refund_settings>
  refund_settings_of(const std::string& app_id) = 0;
  virtual model::result<bool> set_refund_settings(const std::string& app_id,
                                                  const model::purchases::refund_settings& s) = 0;

  // ---- store notifications ---------------------------------------
  // In one transaction: records the notification (store_notifications: app,
  // store "store_a", notificationUUID, type, subtype, environment, signedDate,
  // received_at); when that app already has one with this id, nothing else
  // happens (duplicate). Otherwise every record it is about — StoreKit 2
  // transactions of the app by transaction_id (the verified key) or
  // original_transaction_id, receipts of the app whose in-app purchases hold
  // that transaction_id — gets model::store_a::apply_notification, and each
  // record that changed is updated with updated_at = now and an event
  // (model::record_event, *.updated) for each of the app's endpoints that wants it.
  virtual model::result<notification_applied>
  apply_store_a_notification(const std::string& app_id,
                             const model::store_a::verified_notification& v, model::unix_ms now)
    = 0;

  // Store B: the app's purchase order of this purchase token.
  virtual model::result<std::optional<model::purchase_order_record>>
  find_purchase_order_by_token(const std::string& app_id, const std::string& purchase_token) = 0;
  // In one transaction: records the RTDN (store_notifications, store "store_b",
  // notification id = messageId; duplicate → nothing else happens); when
  // `updated` is given (the purchase order as find_purchase_order_by_token gave
  // it, with the Play Developer API's fresh answer applied), locks and reads the
  // record again and lands on it what the answer owns
  // (model::store_b::land_rtdn_answer: what the voided purchases poll and the
  // acknowledgement wrote since stays) — only if the stored record still exists
  // and that changes it: then its verdict fields are written (update_verdict)
  // with updated_at = now, records_changed is 1, and an event
  // (purchase_order.updated) goes to each wanting endpoint when its resource changed.
  virtual model::result<notification_applied>
  apply_store_b_notification(const std::string& app_id, const model::store_b::rtdn& n,
                             const std::optional<model::purchase_order_record>& updated,
                             model::unix_ms now)
    = 0;

  // ---- Play upkeep -------------------------------------------------
  // The scheduled refresh's sweep of one store (`kind`), oldest expiry first:
  // gives a job, due at `now`, to up to `limit` records last updated before
  // `stale_before` that have no job and are
  //  - store_b_purchase_order: validated Play subscriptions whose expiry_time is
  //    before `now`, whose subscription_state is not final
  //    (model::store_b::is_final_subscription_state), not voided;
  //  - store_a_transaction: validated auto-renewable StoreKit 2 transactions
  //    (not Xcode's) of an app with App Store Server API credentials, not
  //    revoked, whose subscription's expiry (subscription_expires_date, else
  //    expires_date) is before `now` and whose subscription_status is none or
  //    live (model::store_a::is_live_subscription_status);
  //  - store_a_receipt: none (verifyReceipt answers what the receipt holds).
  // Returns how many got one.
  virtual model::result<int> enqueue_refreshes(model::record_kind kind, model::unix_ms now,
                                               model::unix_ms stale_before, int limit)
    = 0;
  // Voided purchases polls: every app with a package name and a service account
  // has one (made on the first claim after the app has both, its first window as
  // far back as Google allows). Claims up to `limit` polls due at `now` whose
  // lease is free or expired, leasing them to `owner` until lease_until
  // (version bumped), each with its app.
  virtual model::result<std::vector<model::store_b::claimed_voided_poll>>
  claim_voided_polls(const std::string& owner, model::unix_ms now, model::unix_ms lease_until,
                     int limit)
    = 0;
  // In one transaction, fenced by the claim (owner and version; none when it
  // was overtaken, and then nothing is written): every purchase order of the
  // app whose purchase token the page names gets model::store_b::apply_voided,
  // and each one that changed is updated (updated_at = now) with an event
  // (purchase_order.updated) for each wanting endpoint; then the poll's cursor,
  // next_poll_at and last_error are stored as `poll` has them, its lease going
  // on until keep_lease_until or, when none (the last page), ending. Returns
  // how many purchase orders changed.
  virtual model::result<std::optional<int>>
  apply_voided_page(const std::string& owner, const model::store_b::voided_poll& poll,
                    const std::vector<model::store_b::voided_purchase>& page, model::unix_ms now,
                    std::optional<model::unix_ms> keep_lease_until)
    = 0;

  // The orders sweep: up to `limit` validated purchase orders whose order is
  // still to be read (order_read_at NULL) and named (the Developer API's order
  // id, else the purchase data's), of apps with a service account, the least
  // recently updated first; grouped by app, each group with its app.
  virtual model::result<std::vector<model::store_b::orders_due>> orders_due(int limit) = 0;
  // In one transaction: each read applied to the app's purchase order of its
  // token (model::store_b::apply_order; a read without an order — Play does
  // not know it — only marks it read), with an event (purchase_order.updated)
  // and its purchases projected again when its cost changed. Returns how many
  // purchase orders' cost changed.
  virtual model::result<int> apply_orders(const std::string& app_id,
                                          const std::vector<model::store_b::order_read>& reads,
                                          model::unix_ms now)
    = 0;

  // ---- webhooks ---------------------------------------------------
  // Events are written by the changes that cause them, in the same transaction
  // (the outbox): a save whose record carries terms.announce, a completed job, an
  // applied notification. Each event gets one delivery per endpoint of its app
  // that wants it at that moment; an app without endpoints gets none.
  virtual model::result<model::webhook_endpoint> add_webhook_endpoint(model::webhook_endpoint e)
    = 0; // id made when empty; the app must exist
  // The app's endpoints; every app's when app_id is empty. Secrets included.
  virtual model::result<std::vector<model::webhook_endpoint>>
  list_webhook_endpoints(const std::string& app_id) = 0;
  // Removes the endpoint and its undelivered deliveries; false: no such endpoint.
  virtual model::result<bool> remove_webhook_endpoint(const std::string& id) = 0;
  // Every delivery of the event to an endpoint that still exists back to
  // pending, no attempts, due at now, version bumped (a send in flight cannot
  // finish it); an endpoint that has none — added since — gets one when it
  // wants the event. False: no such event.
  virtual model::result<bool> redeliver_event(const std::string& event_id, model::unix_ms now) = 0;
  // The event, by id.
  virtual model::result<std::optional<model::webhook_event>>
  find_webhook_event(const std::string& event_id) = 0;
  // Deliveries, newest event first (operators and tests): of one app's
  // endpoints, or every app's when app_id is empty; at most `limit`. With the
  // event's body and the endpoint's url and secret ('' once it is removed:
  // its delivered ones stay as history).
  virtual model::result<std::vector<model::webhook_delivery>>
  list_deliveries(const std::string& app_id, int limit) = 0;
  // Claims up to `limit` pending deliveries due at `now` whose lease is free or
  // expired, and only the first undelivered one per endpoint and record (events
  // of one record reach an endpoint in the order they were made; a dead one no
  // longer holds the next back): sets the lease and bumps version. Per endpoint
  // at most `per_endpoint` less the deliveries `owner` holds there already, the
  // endpoints taking turns (an endpoint that hangs holds its own share, never
  // another's), each its oldest due first. Each comes with the endpoint's url and
  // secret and the event's body.
  virtual model::result<std::vector<model::webhook_delivery>>
  claim_deliveries(const std::string& owner, model::unix_ms now, model::unix_ms lease_until,
                   int limit, int per_endpoint)
    = 0;
  // Fenced by version (false when another claim or a redelivery overtook it,
  // the endpoint was removed, or this claim was finished already): stores
  // state, attempts, next_attempt_at, last_error and delivered_at, and
  // releases the lease.
  virtual model::result<bool> finish_delivery(const model::webhook_delivery& d) = 0;
};

// The record of `kind` with this id, whichever table holds it.
model::result<std::optional<any_record>> find_record(database& db, model::record_kind kind,
                                                     const std::string& id);

} // namespace receiptd::db

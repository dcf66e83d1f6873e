#pragma once
// db::database over one SOCI session (SQLite or PostgreSQL).
//
// Errors: every SOCI/driver exception is caught here and returned as a model::error naming
// the operation; nothing thrown below crosses the public interface.
//
// Lost connections (PostgreSQL restarted, backend terminated, network cut): a failed
// call checks whether the session is still alive. If not, it drops the session with
// its prepared statements, reconnects and retries the call once, unless a COMMIT was
// already sent (its outcome is unknown: the caller gets the error and decides). If
// the server is still down the call returns the connect error and the next call tries
// again, so the object never stays unusable. Deadlocks and serialization failures
// (SQLSTATE 40P01, 40001) are retried the same way.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "db/redact.hpp"
#include "db/app_repository.hpp"
#include "db/app_settings.hpp"
#include "db/app_transaction_repository.hpp"
#include "db/connection.hpp"
#include "db/customer_repository.hpp"
#include "db/job_queue.hpp"
#include "db/purchase_projection.hpp"
#include "db/purchase_repository.hpp"
#include "db/notification_repository.hpp"
#include "db/purchase_order_repository.hpp"
#include "db/receipt_repository.hpp"
#include "db/refund_repository.hpp"
#include "db/upkeep_repository.hpp"
#include "db/webhook_repository.hpp"

namespace receiptd::db {

class sql_database final : public database {
public:
  sql_database(dialect kind, std::string url, std::unique_ptr<connection> c);
  ~sql_database() override;

  dialect kind() const override { return kind_; }
  model::result<int> migrate() override;

  model::result<model::app> create_app(model::app a) override;
  model::result<bool> update_app(const model::app& a) override;
  model::result<std::vector<model::app>> list_apps() override;
  model::result<std::optional<model::app>> find_app(const std::string& id_or_name) override;
  model::result<token_info> add_token(const std::string& app_id, const std::string& token_hash,
                                      model::unix_ms now,
                                      model::token_kind kind = model::token_kind::client) override;
  model::result<bool> revoke_token(const std::string& id_or_hash, model::unix_ms now) override;
  model::result<std::vector<token_info>> list_tokens(const std::string& app_id) override;
  model::result<std::optional<model::app>>
  app_by_token_hash(const std::string& token_hash) override;
  model::result<token_lookups>
  apps_by_token_hashes(const std::vector<std::string>& token_hashes) override;
  model::result<std::int64_t> auth_revision() override;

  model::result<saved<model::purchase_order_record>>
  save_purchase_order(const model::purchase_order_record& incoming,
                      model::unix_ms first_attempt_at) override;
  model::result<saved<model::receipt_record>>
  save_receipt(const model::receipt_record& incoming, model::unix_ms first_attempt_at) override;
  model::result<saved<model::transaction_record>>
  save_transaction(const model::transaction_record& incoming,
                   model::unix_ms first_attempt_at) override;
  model::result<std::vector<batch_saved>> save_batch(const std::vector<batch_save>& batch) override;
  model::result<std::optional<model::field_error>>
  restore_transactions(const std::vector<model::transaction_record>& records,
                       model::unix_ms now) override;
  model::result<std::optional<model::purchase_order_record>>
  find_purchase_order(const std::string& id) override;
  model::result<std::optional<model::receipt_record>> find_receipt(const std::string& id) override;
  model::result<std::optional<model::transaction_record>>
  find_transaction(const std::string& id) override;
  model::result<saved<model::store_a::app_transaction_record>>
  save_app_transaction(const model::store_a::app_transaction_record& incoming,
                       model::unix_ms first_attempt_at) override;
  model::result<std::optional<model::store_a::app_transaction_record>>
  find_app_transaction(const std::string& id) override;
  model::result<std::vector<std::string>>
  original_application_versions(const std::string& app_id, const std::string& user_identifier,
                                model::environment env) override;

  model::result<std::vector<model::validation_job>> claim_due_jobs(const std::string& owner,
                                                                   model::unix_ms now,
                                                                   model::unix_ms lease_until,
                                                                   int limit) override;
  model::result<bool> complete_job(const model::validation_job& job,
                                   const model::purchase_order_record& updated) override;
  model::result<bool> complete_job(const model::validation_job& job,
                                   const model::receipt_record& updated) override;
  model::result<bool> complete_job(const model::validation_job& job,
                                   const model::transaction_record& updated) override;
  model::result<bool> complete_job(const model::validation_job& job,
                                   const model::store_a::app_transaction_record& updated) override;
  model::result<bool> reschedule_job(const model::validation_job& job) override;
  model::result<bool> drop_job(const model::validation_job& job) override;
  model::result<std::vector<model::validation_job>> list_jobs() override;
  model::result<job_queue_figures> queue_figures(model::unix_ms now) override;
  model::result<int> missing_migrations() override;

  model::result<std::shared_ptr<const model::purchases::purchase_set>>
  purchases_of(const any_record& r, model::unix_ms now) override;
  model::result<std::optional<model::purchases::purchase_set>>
  find_purchase(const std::string& id, model::unix_ms now) override;
  model::result<customer_view> find_customer(const std::string& app_id,
                                             const std::string& user_identifier,
                                             model::environment env, const purchase_cursor& cursor,
                                             int limit) override;
  model::result<customer_answer_view> find_customer_answer(const std::string& app_id,
                                                           const std::string& user_identifier,
                                                           model::environment env,
                                                           model::unix_ms now) override;
  model::result<model::purchases::grant> add_grant(const model::purchases::grant& g,
                                                   model::unix_ms now) override;
  model::result<bool> remove_grant(const std::string& app_id, model::environment env,
                                   const std::string& user_identifier,
                                   const std::string& entitlement, const std::string& id,
                                   model::unix_ms now) override;
  model::result<int> expire_due(model::unix_ms now, int limit) override;
  model::result<std::vector<refund_work>> claim_refund_requests(const std::string& owner,
                                                                model::unix_ms now,
                                                                model::unix_ms lease_until,
                                                                int limit) override;
  model::result<bool> finish_refund_request(const model::purchases::refund_request& r,
                                            model::unix_ms now) override;
  model::result<bool> set_consumption(const std::string& app_id, const std::string& purchase_id,
                                      const model::purchases::consumption_report& r,
                                      model::unix_ms now) override;
  model::result<model::purchases::refund_settings>
  refund_settings_of(const std::string& app_id) override;
  model::result<bool> set_refund_settings(const std::string& app_id,
                                          const model::purchases::refund_settings& s) override;

  model::result<notification_applied>
  apply_store_a_notification(const std::string& app_id,
                             const model::store_a::verified_notification& v,
                             model::unix_ms now) override;
  model::result<std::optional<model::purchase_order_record>>
  find_purchase_order_by_token(const std::string& app_id,
                               const std::string& purchase_token) override;
  model::result<notification_applied>
  apply_store_b_notification(const std::string& app_id, const model::store_b::rtdn& n,
                             const std::optional<model::purchase_order_record>& updated,
                             model::unix_ms now) override;

  model::result<model::webhook_endpoint> add_webhook_endpoint(model::webhook_endpoint e) override;
  model::result<std::vector<model::webhook_endpoint>>
  list_webhook_endpoints(const std::string& app_id) override;
  model::result<bool> remove_webhook_endpoint(const std::string& id) override;
  model::result<bool> redeliver_event(const std::string& event_id, model::unix_ms now) override;
  model::result<std::optional<model::webhook_event>>
  find_webhook_event(const std::string& event_id) override;
  model::result<std::vector<model::webhook_delivery>> list_deliveries(const std::string& app_id,
                                                                      int limit) override;
  model::result<std::vector<model::webhook_delivery>>
  claim_deliveries(const std::string& owner, model::unix_ms now, model::unix_ms lease_until,
                   int limit, int per_endpoint) override;
  model::result<bool> finish_delivery(const model::webhook_delivery& d) override;

  model::result<int> enqueue_refreshes(model::record_kind kind, model::unix_ms now,
                                       model::unix_ms stale_before, int limit) override;
  model::result<std::vector<model::store_b::claimed_voided_poll>>
  claim_voided_polls(const std::string& owner, model::unix_ms now, model::unix_ms lease_until,
                     int limit) override;
  model::result<std::optional<int>>
  apply_voided_page(const std::string& owner, const model::store_b::voided_poll& poll,
                    const std::vector<model::store_b::voided_purchase>& page, model::unix_ms now,
                    std::optional<model::unix_ms> keep_lease_until) override;
  model::result<std::vector<model::store_b::orders_due>> orders_due(int limit) override;
  model::result<int> apply_orders(const std::string& app_id,
                                  const std::vector<model::store_b::order_read>& reads,
                                  model::unix_ms now) override;

private:
  // Runs one public call: converts exceptions to model::error and recovers the session.
  template <class T, class Body>
  model::result<T> guarded(std::string_view operation, Body&& body);
  // After a failed attempt: true when the call should run again.
  bool recover_after_failure(const std::exception& e, int attempt);

  // The session, reconnecting first when it was lost (throws when that fails).
  connection& conn();
  // The repositories prepare their statements on first use, after migrations.
  app_repository& apps();
  purchase_order_repository& purchase_orders();
  receipt_repository& receipts();
  transaction_repository& transactions();
  app_transaction_repository& app_transactions();
  job_queue& jobs();
  webhook_repository& webhooks();
  notification_repository& notifications();
  upkeep_repository& upkeep();
  purchase_repository& purchases();
  customer_repository& customers();
  refund_repository& refunds();
  // A store's refund request, recorded in the caller's write transaction and
  // shown on its purchase (db/sql_database_refunds.cpp).
  void open_refund_request(purchase_projection& projection, model::purchases::refund_request r);
  // The outbox of a write transaction about to start (db/webhook_repository.hpp).
  outbox make_outbox();
  // The passes over existing records a schema change needs (db/backfill.cpp),
  // once each.
  void backfill();
  void backfill_purchases(model::unix_ms now); // the "purchases" pass
  // The purchase layer's writer for a write transaction about to start, its
  // events going to `box` (db/purchase_projection.hpp).
  purchase_projection make_projection(outbox& box, model::unix_ms now);
  // What the purchase layer needs of an app (its rules compiled once per
  // version of its row, kept across transactions).
  purchase_terms terms_of(const std::string& app_id);
  // The app's webhook endpoints.
  std::vector<model::webhook_endpoint> endpoints_of(const std::string& app_id);
  // Inside a save batch, terms_of and endpoints_of answer what the session kept
  // (db/app_settings.hpp), once the batch confirmed the auth revision it was read
  // at; elsewhere they read.
  enum class kept_reads {
    unused,       // read every time
    trusted,      // kept at a revision the batch confirmed (or its statement checks)
    check_first,  // the revision is read at the first use, then trusted
  };
  // Sets kept_use_ back to unused when a batch ends, however it ends.
  struct kept_reads_scope {
    explicit kept_reads_scope(kept_reads& use) : use(use) {}
    ~kept_reads_scope() { use = kept_reads::unused; }
    kept_reads_scope(const kept_reads_scope&) = delete;
    kept_reads_scope& operator=(const kept_reads_scope&) = delete;
    kept_reads& use;
  };
  // The revision what is kept was read at, read first when none is known.
  std::int64_t kept_revision();
  // Whether what is kept may answer now (kept_reads::check_first reads the
  // revision here).
  bool use_kept();
  purchase_terms read_terms(const std::string& app_id);
  // Also after a statement threw on a healthy session: SOCI 4.0.3's PostgreSQL
  // backend frees the copies of a statement's bound values only after a successful
  // execution, or when the statement is destroyed; the next execution of a
  // statement that threw overwrote them, leaking a copy of the row per failure
  // (tests/integration/failed_save_test.cpp). Re-preparing costs a round trip per
  // statement, on failures only.
  void drop_statements() noexcept;
  void drop_session() noexcept;

  template <class Repo, class Record>
  saved<Record> save_record(Repo& repo, const Record& incoming, model::unix_ms first_attempt_at);
  // save_record's work inside a write transaction the caller holds; the change's
  // event goes to `box` when the upload announces it (terms.announce).
  template <class Repo, class Record>
  saved<Record> save_in_transaction(Repo& repo, const Record& incoming,
                                    model::unix_ms first_attempt_at, outbox& box,
                                    purchase_projection& projection, bool found_stored = false);
  // save_batch's parts (db/sql_database_records.cpp).
  any_record save_item(const batch_save& item, outbox& box, purchase_projection& projection,
                       bool found_stored);
  // What a batch's one statement found of the auth revision its kept reads
  // were made at.
  enum class revision_check { not_run, confirmed, moved };
  // What two of a batch's statements found: moved if either did.
  static revision_check either(revision_check a, revision_check b);
  template <class Repo, class Record>
  revision_check insert_new(Repo& repo, const std::vector<batch_save>& batch,
                            std::vector<std::optional<batch_saved>>& done,
                            std::vector<bool>& stored, purchase_projection& projection);
  // insert_new's records that start their purchase: batch index, the record
  // with its id, its purchase.
  template <class Record>
  struct starting_records {
    std::vector<std::size_t> at;
    std::vector<Record> records;
    std::vector<purchase_projection::first_purchase> firsts;
  };
  template <class Repo, class Record>
  revision_check insert_starting(Repo& repo, starting_records<Record> starting,
                       purchase_projection& projection,
                       std::vector<std::optional<batch_saved>>& done, std::vector<bool>& stored);
  template <class Repo, class Record>
  void update_stored(Repo& repo, const std::vector<batch_save>& batch,
                     const std::vector<std::size_t>& rest, const std::vector<bool>& stored,
                     std::vector<std::optional<batch_saved>>& done);
  template <class Repo, class Record>
  bool complete_record_job(Repo& repo, const model::validation_job& job, const Record& updated);

  dialect kind_;
  std::string url_;
  // Declared before the repositories: their statements must go first.
  std::unique_ptr<connection> conn_; // null after the session was lost
  std::unique_ptr<app_repository> apps_;
  std::unique_ptr<purchase_order_repository> purchase_orders_;
  std::unique_ptr<receipt_repository> receipts_;
  std::unique_ptr<transaction_repository> transactions_;
  std::unique_ptr<app_transaction_repository> app_transactions_;
  std::unique_ptr<job_queue> jobs_;
  std::unique_ptr<webhook_repository> webhooks_;
  std::unique_ptr<notification_repository> notifications_;
  std::unique_ptr<upkeep_repository> upkeep_;
  std::unique_ptr<purchase_repository> purchases_;
  std::unique_ptr<customer_repository> customers_;
  std::unique_ptr<refund_repository> refunds_;
  // Compiled entitlement rules by app, with the rules text they were compiled from.
  std::map<std::string, std::pair<std::string, purchase_terms>> terms_;
  app_settings kept_;
  kept_reads kept_use_ = kept_reads::unused;
};

template <class T, class Body>
model::result<T> sql_database::guarded(std::string_view operation, Body&& body) {
  for (int attempt = 1;; ++attempt) {
    std::string why;
    try {
      if (conn_)
        conn_->forget_commit();
      return model::result<T>(body());
    } catch (const std::exception& e) {
      why = safe_message(e);
      if (recover_after_failure(e, attempt))
        continue;
    } catch (...) {
      why = "unknown exception";
    }
    return failure(std::string(operation) + ": " + why);
  }
}

} // namespace receiptd::db

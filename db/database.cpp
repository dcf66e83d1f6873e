#include "db/database.hpp"

#include <soci/postgresql/soci-postgresql.h>

#include "db/backends.hpp"
#include "db/migrator.hpp"
#include "db/redact.hpp"
#include "db/sql_database.hpp"
#include "db/url.hpp"
#include "model/database_url.hpp"
#include "model/identifiers.hpp"

namespace receiptd::db {

namespace {

constexpr int max_attempts = 3;

// Retryable by running the transaction again (PostgreSQL SQLSTATE class 40).
bool transient(const std::exception& e) {
  auto* pg = dynamic_cast<const soci::postgresql_soci_error*>(&e);
  if (!pg)
    return false;
  auto state = pg->sqlstate();
  return state == "40001" || state == "40P01"; // serialization failure, deadlock
}

} // namespace

model::result<std::unique_ptr<database>> database::open(const std::string& given_url) {
  // A PostgreSQL URI (postgresql://user:password@host/dbname) in SOCI's form.
  auto keywords = model::keyword_database_url(given_url);
  if (!keywords)
    return failure("cannot open database '" + redacted_url(given_url)
                   + "': " + keywords.err().message());
  const auto& url = *keywords;
  auto kind = dialect_of(url);
  if (!kind)
    return failure("unsupported database URL '" + redacted_url(url)
                   + "': expected sqlite3://db=… or postgresql://…");
  register_backends();
  std::string full_url = url;
  try {
    full_url = with_connection_defaults(url);
    auto c = std::make_unique<connection>(*kind, full_url);
    return std::unique_ptr<database>(std::make_unique<sql_database>(*kind, full_url, std::move(c)));
  } catch (const std::exception& e) {
    return failure("cannot open database '" + redacted_url(full_url) + "': " + safe_message(e));
  }
}

sql_database::sql_database(dialect kind, std::string url, std::unique_ptr<connection> c)
  : kind_(kind), url_(std::move(url)), conn_(std::move(c)) {}

sql_database::~sql_database() {
  drop_session();
}

bool sql_database::recover_after_failure(const std::exception& e, int attempt) {
  if (!conn_)
    return false; // reconnecting failed: the server is still unreachable
  bool unknown_outcome = conn_->commit_unacknowledged();
  bool lost = !conn_->healthy();
  if (lost)
    drop_session(); // the next attempt, or the next call, reconnects
  else
    drop_statements(); // the failed statement would leak its values (sql_database.hpp)
  // A stuck SQLite transaction is no reason to run the call again; a lost server is.
  bool retry = (lost && kind_ == dialect::postgresql) || transient(e);
  return retry && !unknown_outcome && attempt < max_attempts;
}

connection& sql_database::conn() {
  if (!conn_)
    conn_ = std::make_unique<connection>(kind_, url_);
  return *conn_;
}

app_repository& sql_database::apps() {
  if (!apps_)
    apps_ = std::make_unique<app_repository>(conn());
  return *apps_;
}

purchase_order_repository& sql_database::purchase_orders() {
  if (!purchase_orders_)
    purchase_orders_ = std::make_unique<purchase_order_repository>(conn());
  return *purchase_orders_;
}

receipt_repository& sql_database::receipts() {
  if (!receipts_)
    receipts_ = std::make_unique<receipt_repository>(conn());
  return *receipts_;
}

transaction_repository& sql_database::transactions() {
  if (!transactions_)
    transactions_ = std::make_unique<transaction_repository>(conn());
  return *transactions_;
}

app_transaction_repository& sql_database::app_transactions() {
  if (!app_transactions_)
    app_transactions_ = std::make_unique<app_transaction_repository>(conn());
  return *app_transactions_;
}

job_queue& sql_database::jobs() {
  if (!jobs_)
    jobs_ = std::make_unique<job_queue>(conn());
  return *jobs_;
}

webhook_repository& sql_database::webhooks() {
  if (!webhooks_)
    webhooks_ = std::make_unique<webhook_repository>(conn());
  return *webhooks_;
}

notification_repository& sql_database::notifications() {
  if (!notifications_)
    notifications_ = std::make_unique<notification_repository>(conn());
  return *notifications_;
}

upkeep_repository& sql_database::upkeep() {
  if (!upkeep_)
    upkeep_ = std::make_unique<upkeep_repository>(conn());
  return *upkeep_;
}

purchase_repository& sql_database::purchases() {
  if (!purchases_)
    purchases_ = std::make_unique<purchase_repository>(conn());
  return *purchases_;
}

customer_repository& sql_database::customers() {
  if (!customers_)
    customers_ = std::make_unique<customer_repository>(conn());
  return *customers_;
}

refund_repository& sql_database::refunds() {
  if (!refunds_)
    refunds_ = std::make_unique<refund_repository>(conn());
  return *refunds_;
}

purchase_projection sql_database::make_projection(outbox& box, model::unix_ms now) {
  return purchase_projection([this]() -> purchase_repository& { return purchases(); },
                             [this]() -> customer_repository& { return customers(); }, box,
                             [this](const std::string& app_id) { return terms_of(app_id); }, now);
}

outbox sql_database::make_outbox() {
  return outbox([this]() -> webhook_repository& { return webhooks(); },
                [this](const std::string& app_id) { return endpoints_of(app_id); });
}

void sql_database::drop_statements() noexcept {
  apps_.reset();
  purchase_orders_.reset();
  receipts_.reset();
  transactions_.reset();
  app_transactions_.reset();
  jobs_.reset();
  webhooks_.reset();
  notifications_.reset();
  upkeep_.reset();
  purchases_.reset();
  customers_.reset();
  refunds_.reset();
}

void sql_database::drop_session() noexcept {
  drop_statements();
  conn_.reset();
}

model::result<int> sql_database::migrate() {
  return guarded<int>("migrate", [&] {
    int applied = apply_migrations(conn());
    install_auth_revision_triggers(conn()); // per dialect: db/migrations/003_auth_revision.sql
    install_customer_change_triggers(conn()); // PostgreSQL: db/sql_customers.hpp
    // PostgreSQL refuses to run a prepared statement whose tables changed shape
    // ("cached plan must not change result type"): prepare again after DDL.
    if (applied > 0)
      drop_statements();
    backfill();
    return applied;
  });
}

// ---- apps and access tokens -------------------------------------------------

model::result<model::app> sql_database::create_app(model::app a) {
  return guarded<model::app>("create_app", [&] {
    if (a.id.empty())
      a.id = model::make_uuid();
    apps().insert(a);
    return a;
  });
}

model::result<bool> sql_database::update_app(const model::app& a) {
  return guarded<bool>("update_app", [&] { return apps().update(a); });
}

model::result<std::vector<model::app>> sql_database::list_apps() {
  return guarded<std::vector<model::app>>("list_apps", [&] { return apps().list(); });
}

model::result<std::optional<model::app>> sql_database::find_app(const std::string& id_or_name) {
  return guarded<std::optional<model::app>>("find_app", [&] {
    auto& repo = apps();
    if (auto by_id = repo.find_by_id(id_or_name))
      return by_id;
    return repo.find_by_name(id_or_name);
  });
}

model::result<token_info> sql_database::add_token(const std::string& app_id,
                                                  const std::string& token_hash,
                                                  model::unix_ms now, model::token_kind kind) {
  return guarded<token_info>("add_token", [&] {
    auto& repo = apps();
    if (!repo.find_by_id(app_id))
      throw std::invalid_argument("no app with id " + app_id);
    token_info t{model::make_uuid(), app_id, token_hash, now, std::nullopt, kind};
    repo.insert_token(t);
    return t;
  });
}

model::result<bool> sql_database::revoke_token(const std::string& id_or_hash, model::unix_ms now) {
  return guarded<bool>("revoke_token", [&] { return apps().revoke_token(id_or_hash, now); });
}

model::result<std::vector<token_info>> sql_database::list_tokens(const std::string& app_id) {
  return guarded<std::vector<token_info>>("list_tokens",
                                          [&] { return apps().list_tokens(app_id); });
}

model::result<std::optional<model::app>>
sql_database::app_by_token_hash(const std::string& token_hash) {
  return guarded<std::optional<model::app>>("app_by_token_hash", [&] {
    auto owner = apps().find_by_token_hash(token_hash);
    return owner ? std::optional<model::app>(std::move(owner->app)) : std::nullopt;
  });
}

model::result<token_lookups>
sql_database::apps_by_token_hashes(const std::vector<std::string>& token_hashes) {
  return guarded<token_lookups>("apps_by_token_hashes", [&] {
    auto& repo = apps();
    // One snapshot: each lookup is exactly as current as the revision it is tagged
    // with. (Reading the revision first would also keep the tag from overstating it.)
    transaction tx(conn(), access::read);
    token_lookups out;
    out.revision = repo.revision();
    out.owners.reserve(token_hashes.size());
    for (const auto& hash : token_hashes)
      out.owners.push_back(repo.find_by_token_hash(hash));
    tx.commit();
    return out;
  });
}

model::result<std::int64_t> sql_database::auth_revision() {
  return guarded<std::int64_t>("auth_revision", [&] { return apps().revision(); });
}

namespace {

template <class Record>
model::result<std::optional<any_record>> as_any(model::result<std::optional<Record>> found) {
  if (!found)
    return found.err();
  if (!*found)
    return std::optional<any_record>();
  return std::optional<any_record>(std::move(**found));
}

} // namespace

model::result<std::optional<any_record>> find_record(database& db, model::record_kind kind,
                                                     const std::string& id) {
  switch (kind) {
    case model::record_kind::store_a_receipt:
      return as_any(db.find_receipt(id));
    case model::record_kind::store_a_transaction:
      return as_any(db.find_transaction(id));
    case model::record_kind::store_a_app_transaction: // not an any_record: find_app_transaction
      return std::optional<any_record>();
    case model::record_kind::store_b_purchase_order:
      break;
  }
  return as_any(db.find_purchase_order(id));
}

} // namespace receiptd::db

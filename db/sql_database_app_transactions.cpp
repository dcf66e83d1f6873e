// sql_database: StoreKit 2 app transactions (model/store_a/app_transaction.hpp).
#include "db/sql_app_transactions.hpp"
#include "db/sql_database.hpp"
#include "db/sql_session.hpp"
#include "model/identifiers.hpp"

namespace receiptd::db {

namespace {

constexpr auto app_transaction_kind = model::record_kind::store_a_app_transaction;

} // namespace

app_transaction_repository::app_transaction_repository(connection& c)
  : record_table<app_transaction_table>(c),
    versions_(prepare(c.session(), std::string(sql::app_transactions::original_versions),
                      [&](soci::statement& st) {
                        bind_into{st}("original_application_version", version_);
                        st.exchange(soci::use(key_app_id_, "key_app_id"));
                        st.exchange(soci::use(key_user_, "key_user"));
                        st.exchange(soci::use(key_env_, "key_env"));
                        st.exchange(soci::use(key_other_env_, "key_other_env"));
                      })) {}

std::vector<std::string>
app_transaction_repository::original_versions(const std::string& app_id,
                                              const std::string& user_identifier,
                                              std::string_view env, std::string_view other_env) {
  key_app_id_ = app_id;
  key_user_ = user_identifier;
  key_env_ = std::string(env);
  key_other_env_ = std::string(other_env);
  std::vector<std::string> out;
  for_each_row(versions_, [&] {
    if (auto v = version_.get())
      out.push_back(std::move(*v));
  });
  return out;
}

// As save_record (db/sql_database_records.cpp) without the purchase layer: an
// app transaction is no purchase. Insert first; a re-upload of the same key is
// read (locked on PostgreSQL) and merged; one job while pending.
model::result<saved<model::store_a::app_transaction_record>>
sql_database::save_app_transaction(const model::store_a::app_transaction_record& incoming,
                                   model::unix_ms first_attempt_at) {
  using record = model::store_a::app_transaction_record;
  return guarded<saved<record>>("save_app_transaction", [&] {
    auto& repo = app_transactions();
    auto& queue = jobs();
    transaction tx(conn(), access::write);
    saved<record> fresh{incoming, true};
    if (fresh.record.id.empty())
      fresh.record.id = model::make_uuid();
    if (repo.insert(fresh.record)) {
      if (model::store_a::needs_job(fresh.record))
        queue.ensure(app_transaction_kind, fresh.record.id, fresh.record.app_id, first_attempt_at);
      tx.commit();
      return fresh;
    }
    auto existing = repo.find_for_update(incoming);
    if (!existing) // records are never deleted
      throw std::runtime_error("the app transaction is stored but could not be read back");
    saved<record> out{model::store_a::merge_reupload(*existing, incoming), false};
    if (out.record.terms.refused) {
      tx.commit();
      return out; // the stored record did not change
    }
    repo.update(out.record);
    const bool has_job = repo.found_with_job();
    if (model::store_a::needs_job(out.record) && !has_job)
      queue.ensure(app_transaction_kind, out.record.id, out.record.app_id, first_attempt_at);
    else if (!model::store_a::needs_job(out.record) && has_job)
      queue.remove(app_transaction_kind, out.record.id);
    tx.commit();
    return out;
  });
}

model::result<std::optional<model::store_a::app_transaction_record>>
sql_database::find_app_transaction(const std::string& id) {
  return guarded<std::optional<model::store_a::app_transaction_record>>(
    "find_app_transaction", [&] { return app_transactions().find(id); });
}

model::result<std::vector<std::string>> sql_database::original_application_versions(
  const std::string& app_id, const std::string& user_identifier, model::environment env) {
  return guarded<std::vector<std::string>>("original_application_versions", [&] {
    // A sandbox answer counts Xcode's app transactions too, as it does purchases.
    const auto other = env == model::environment::production ? model::environment::production
                                                             : model::environment::xcode;
    return app_transactions().original_versions(app_id, user_identifier, model::to_string(env),
                                                model::to_string(other));
  });
}

// As complete_record_job: fenced by the job's version, the record locked
// first; the verdict columns written, the job removed (or kept while pending).
model::result<bool>
sql_database::complete_job(const model::validation_job& job,
                           const model::store_a::app_transaction_record& updated) {
  return guarded<bool>("complete_job", [&] {
    if (job.kind != app_transaction_kind || updated.id != job.record_id)
      throw std::invalid_argument("job " + job.id + " is not for app transaction " + updated.id);
    auto& repo = app_transactions();
    auto& queue = jobs();
    transaction tx(conn(), access::write);
    if (!repo.lock(job.record_id))
      throw std::runtime_error("job " + job.id + " points to a missing record " + job.record_id);
    auto next = job;
    next.attempts = 0;
    next.next_attempt_at = updated.updated_at;
    next.last_error.clear();
    if (!(model::store_a::needs_job(updated) ? queue.reschedule_fenced(next)
                                             : queue.remove_fenced(job)))
      return false; // overtaken by a later claim, or settled by a re-upload
    repo.update_verdict(updated);
    tx.commit();
    return true;
  });
}

} // namespace receiptd::db

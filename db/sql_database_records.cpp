// sql_database: records and revalidation jobs.
#include "db/sql_database.hpp"
#include "db/redact.hpp"
#include "db/sql_session.hpp"
#include "model/identifiers.hpp"

#include <type_traits>

namespace receiptd::db {

namespace {

constexpr model::record_kind kind_of(const model::purchase_order_record&) {
  return model::record_kind::store_b_purchase_order;
}
constexpr model::record_kind kind_of(const model::receipt_record&) {
  return model::record_kind::store_a_receipt;
}

} // namespace

// DESIGN.md §2 re-upload rule, in one transaction: insert the proof, or merge it into
// the stored record of the same proof; then keep exactly one job while it is pending.
template <class Repo, class Record>
saved<Record> sql_database::save_record(Repo& repo, const Record& incoming,
                                        model::unix_ms first_attempt_at) {
  transaction tx(conn(), access::write);
  auto out = save_in_transaction(repo, incoming, first_attempt_at);
  tx.commit();
  return out;
}

template <class Repo, class Record>
saved<Record> sql_database::save_in_transaction(Repo& repo, const Record& incoming,
                                                model::unix_ms first_attempt_at) {
  auto& queue = jobs();
  // Two rounds: when a concurrent first upload of the same proof commits between our
  // lookup and our insert, the insert does nothing and the second lookup finds it.
  for (int round = 0; round < 2; ++round) {
    saved<Record> out{incoming, true};
    if (auto existing = repo.find_for_update(incoming)) {
      out = {model::merge_reupload(*existing, incoming), false};
      repo.update(out.record);
    } else {
      if (out.record.id.empty())
        out.record.id = model::make_uuid();
      if (!repo.insert(out.record))
        continue;
    }
    if (out.record.state == model::validation_state::pending)
      queue.ensure(kind_of(out.record), out.record.id, out.record.app_id, first_attempt_at);
    else
      queue.remove(kind_of(out.record), out.record.id);
    return out;
  }
  throw std::runtime_error("the proof is stored but could not be read back");
}

model::result<saved<model::purchase_order_record>>
sql_database::save_purchase_order(const model::purchase_order_record& incoming,
                                  model::unix_ms first_attempt_at) {
  return guarded<saved<model::purchase_order_record>>("save_purchase_order", [&] {
    return save_record(purchase_orders(), incoming, first_attempt_at);
  });
}

model::result<saved<model::receipt_record>>
sql_database::save_receipt(const model::receipt_record& incoming, model::unix_ms first_attempt_at) {
  return guarded<saved<model::receipt_record>>(
    "save_receipt", [&] { return save_record(receipts(), incoming, first_attempt_at); });
}

model::result<std::vector<batch_saved>>
sql_database::save_batch(const std::vector<batch_save>& batch) {
  return guarded<std::vector<batch_saved>>("save_batch", [&] {
    std::vector<batch_saved> out;
    out.reserve(batch.size());
    auto& c = conn();
    transaction tx(c, access::write);
    for (const auto& item : batch) {
      c.session() << sql::session::savepoint;
      try {
        std::visit(
          [&](const auto& record) {
            if constexpr (std::is_same_v<std::decay_t<decltype(record)>,
                                         model::purchase_order_record>)
              out.emplace_back(
                save_in_transaction(purchase_orders(), record, item.first_attempt_at).record);
            else
              out.emplace_back(
                save_in_transaction(receipts(), record, item.first_attempt_at).record);
          },
          item.record);
        c.session() << sql::session::release_savepoint;
      } catch (const std::exception& e) {
        // This save alone is undone; a lost session throws again on the next
        // statement and fails the batch (guarded then reconnects and retries it).
        c.session() << sql::session::rollback_to_savepoint;
        c.session() << sql::session::release_savepoint;
        drop_statements(); // they would leak the failed save's values (sql_database.hpp)
        out.emplace_back(failure(safe_message(e)));
      }
    }
    tx.commit();
    return out;
  });
}

model::result<std::optional<model::purchase_order_record>>
sql_database::find_purchase_order(const std::string& id) {
  return guarded<std::optional<model::purchase_order_record>>(
    "find_purchase_order", [&] { return purchase_orders().find(id); });
}

model::result<std::optional<model::receipt_record>>
sql_database::find_receipt(const std::string& id) {
  return guarded<std::optional<model::receipt_record>>("find_receipt", [&] {
    auto& repo = receipts();
    transaction tx(conn(), access::read); // the receipt and its purchases from one snapshot
    auto found = repo.find(id);
    tx.commit();
    return found;
  });
}

// ---- revalidation jobs --------------------------------------------------------

model::result<std::vector<model::validation_job>>
sql_database::claim_due_jobs(const std::string& owner, model::unix_ms now,
                             model::unix_ms lease_until, int limit) {
  return guarded<std::vector<model::validation_job>>("claim_due_jobs", [&] {
    if (limit <= 0)
      return std::vector<model::validation_job>{};
    auto& queue = jobs();
    transaction tx(conn(), access::write);
    auto claimed = queue.claim(owner, now, lease_until, limit);
    tx.commit();
    return claimed;
  });
}

template <class Repo, class Record>
bool sql_database::complete_record_job(Repo& repo, const model::validation_job& job,
                                       const Record& updated) {
  if (job.kind != kind_of(updated))
    throw std::invalid_argument("job " + job.id + " is for a " + std::string(to_string(job.kind)));
  if (updated.id != job.record_id)
    throw std::invalid_argument("job " + job.id + " is for record " + job.record_id + ", not "
                                + updated.id);
  auto& queue = jobs();
  transaction tx(conn(), access::write);
  // Record first, then job: the lock order of save_*, so the two cannot deadlock.
  if (!repo.lock(job.record_id))
    throw std::runtime_error("job " + job.id + " points to a missing record " + job.record_id);
  if (!queue.remove_fenced(job))
    return false; // overtaken by a later claim, or the record was settled by a re-upload
  repo.update_verdict(updated);
  tx.commit();
  return true;
}

model::result<bool> sql_database::complete_job(const model::validation_job& job,
                                               const model::purchase_order_record& updated) {
  return guarded<bool>("complete_job",
                       [&] { return complete_record_job(purchase_orders(), job, updated); });
}

model::result<bool> sql_database::complete_job(const model::validation_job& job,
                                               const model::receipt_record& updated) {
  return guarded<bool>("complete_job",
                       [&] { return complete_record_job(receipts(), job, updated); });
}

model::result<bool> sql_database::reschedule_job(const model::validation_job& job) {
  return guarded<bool>("reschedule_job", [&] {
    auto& queue = jobs();
    transaction tx(conn(), access::write);
    bool done = queue.reschedule_fenced(job);
    tx.commit();
    return done;
  });
}

model::result<std::vector<model::validation_job>> sql_database::list_jobs() {
  return guarded<std::vector<model::validation_job>>("list_jobs", [&] { return jobs().list(); });
}

} // namespace receiptd::db

// sql_database: records and revalidation jobs.
#include "db/sql_database.hpp"
#include "db/redact.hpp"
#include "db/sql_session.hpp"
#include "model/identifiers.hpp"
#include "model/purchases/observation.hpp"
#include "model/resource_json.hpp"
#include "model/store_b/acknowledgement.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_set>
#include <utility>

namespace receiptd::db {

namespace {

constexpr model::record_kind kind_of(const model::purchase_order_record&) {
  return model::record_kind::store_b_purchase_order;
}
constexpr model::record_kind kind_of(const model::receipt_record&) {
  return model::record_kind::store_a_receipt;
}
constexpr model::record_kind kind_of(const model::transaction_record&) {
  return model::record_kind::store_a_transaction;
}

// What notifications and the voided purchases poll wrote survives a re-upload
// and a completed job, whose records know nothing of it: the transactions'
// notified columns, which a re-upload does not write (db/record_rows.hpp), as
// stored (but a refresh's newer answer); a receipt's cancellations and a Play purchase's voiding
// when the change does not say them.
void keep_notified(model::purchase_order_record& out, const model::purchase_order_record& stored) {
  model::keep_notified(out.purchase, stored.purchase);
}
void keep_notified(model::receipt_record& out, const model::receipt_record& stored) {
  model::keep_notified(out.in_app_purchases, stored.in_app_purchases);
}
void keep_notified(model::transaction_record& out, const model::transaction_record& stored) {
  auto& t = out.transaction;
  const auto& s = stored.transaction;
  // A scheduled refresh brings an answer of its own, newer than what
  // is stored: it stands, unless a notification signed later was stored since.
  if (t.notified_at && (!s.notified_at || *s.notified_at < *t.notified_at))
    return;
  t.subscription_status = s.subscription_status;
  t.subscription_expires_date = s.subscription_expires_date;
  t.auto_renew = s.auto_renew;
  t.auto_renew_product_id = s.auto_renew_product_id;
  t.notified_at = s.notified_at;
}

// A job's outcome on the record as stored at its completion: what notifications
// and the voided purchases poll wrote since its claim is kept (keep_notified).
// An acknowledgement's job (the record, validated, still waits for it: purpose_of)
// asked Play nothing about the purchase and writes only the acknowledgement, so
// that an RTDN applied meanwhile stays (model::store_b::land_acknowledgement).
template <class Record>
Record job_outcome(const Record& updated, const Record& stored) {
  auto merged = updated;
  keep_notified(merged, stored);
  return merged;
}
model::purchase_order_record job_outcome(const model::purchase_order_record& updated,
                                         const model::purchase_order_record& stored) {
  if (model::purpose_of(stored) == model::job_purpose::acknowledge)
    return model::store_b::land_acknowledgement(stored, updated);
  auto merged = updated;
  keep_notified(merged, stored);
  return merged;
}

// The event of a stored change (before null: the record was created), when an
// endpoint of the record's app wants that type of event. The resources are made
// only then.
template <class Record>
void announce(outbox& box, const Record* before, const Record& after) {
  auto kind = kind_of(after);
  if (!box.wanted(after.app_id, model::event_for(kind, before == nullptr)))
    return;
  std::optional<boost::json::object> old;
  if (before)
    old = model::resource_json(*before);
  box.announce(old, model::resource_json(after), kind, after.app_id, after.id, after.updated_at);
}

} // namespace

// DESIGN.md §2 re-upload rule, in one transaction: insert the proof, or merge it into
// the stored record of the same proof; then keep exactly one job while it is pending.
template <class Repo, class Record>
saved<Record> sql_database::save_record(Repo& repo, const Record& incoming,
                                        model::unix_ms first_attempt_at) {
  transaction tx(conn(), access::write);
  auto box = make_outbox();
  auto projection = make_projection(box, incoming.updated_at);
  auto out = save_in_transaction(repo, incoming, first_attempt_at, box, projection);
  tx.commit();
  return out;
}

// Most uploads are new proofs: the insert comes first and is all they cost (a new
// record has no job to remove; a pending one gets its job). Only when the proof is
// already stored is it read (locked on PostgreSQL) and merged. A concurrent first
// upload of the same proof that committed before our insert makes the insert do
// nothing (PostgreSQL waits for it to end to know), and the lookup then finds it.
// A proof the caller found stored already (a batch's INSERT skipped it) is looked
// up first: a re-upload costs no insert that cannot succeed.
// An upload that announces (its app has webhook endpoints) writes the change's
// event while it holds the record's row. Then the purchases it names fold what
// it says (db/purchase_projection.hpp); before anything, an upload that would
// take a purchase bound to another user the app's policy protects is refused,
// whatever record carries the purchase (a new one too).
template <class Repo, class Record>
saved<Record> sql_database::save_in_transaction(Repo& repo, const Record& incoming,
                                                model::unix_ms first_attempt_at, outbox& box,
                                                purchase_projection& projection,
                                                bool found_stored) {
  auto& queue = jobs();
  std::optional<Record> existing;
  if (found_stored)
    existing = repo.find_for_update(incoming);
  if (auto why = projection.refusal(incoming)) {
    if (!existing)
      existing = repo.find_for_update(incoming);
    saved<Record> refused{existing ? *existing : incoming, false};
    refused.record.terms.refused = std::move(why);
    return refused;
  }
  auto projected = [&](saved<Record> out) {
    out.record.purchases = projection.project(out.record);
    return out;
  };
  if (!existing) {
    saved<Record> fresh{incoming, true};
    if (fresh.record.id.empty())
      fresh.record.id = model::make_uuid();
    if (repo.insert(fresh.record)) {
      if (model::needs_job(fresh.record))
        queue.ensure(kind_of(fresh.record), fresh.record.id, fresh.record.app_id, first_attempt_at);
      if (incoming.terms.announce)
        announce<Record>(box, nullptr, fresh.record);
      return projected(std::move(fresh));
    }
    existing = repo.find_for_update(incoming);
  }
  if (!existing) // records are never deleted
    throw std::runtime_error("the proof is stored but could not be read back");
  saved<Record> out{model::merge_reupload(*existing, incoming), false};
  keep_notified(out.record, *existing);
  repo.update(out.record);
  // The lookup saw whether the record has a job: a re-upload of a settled record
  // without one (the everyday case) costs no DELETE, a pending one's no INSERT.
  const bool has_job = repo.found_with_job();
  if (model::needs_job(out.record) && !has_job)
    queue.ensure(kind_of(out.record), out.record.id, out.record.app_id, first_attempt_at);
  else if (!model::needs_job(out.record) && has_job)
    queue.remove(kind_of(out.record), out.record.id);
  if (incoming.terms.announce)
    announce(box, &*existing, out.record);
  if (out.record.terms.refused)
    return out; // the stored record did not change
  return projected(std::move(out));
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

model::result<saved<model::transaction_record>>
sql_database::save_transaction(const model::transaction_record& incoming,
                               model::unix_ms first_attempt_at) {
  return guarded<saved<model::transaction_record>>(
    "save_transaction", [&] { return save_record(transactions(), incoming, first_attempt_at); });
}

// One save of a batch inside the batch's transaction.
any_record sql_database::save_item(const batch_save& item, outbox& box,
                                   purchase_projection& projection, bool found_stored) {
  auto at = item.first_attempt_at;
  return std::visit(
    [&](const auto& record) -> any_record {
      using record_type = std::decay_t<decltype(record)>;
      if constexpr (std::is_same_v<record_type, model::purchase_order_record>)
        return save_in_transaction(purchase_orders(), record, at, box, projection, found_stored)
          .record;
      else if constexpr (std::is_same_v<record_type, model::receipt_record>)
        return save_in_transaction(receipts(), record, at, box, projection, found_stored).record;
      else
        return save_in_transaction(transactions(), record, at, box, projection, found_stored)
          .record;
    },
    item.record);
}

namespace {

// Whether a record names a purchase: its save must fold it in its own
// transaction, so it does not take the batch's one-statement paths.
template <class Record>
bool names_purchases(const Record& r) {
  return !model::purchases::observe(r, {}).empty();
}

// The time a batch's purchases fold at: its newest upload's.
model::unix_ms batch_time(const std::vector<batch_save>& batch) {
  model::unix_ms now = 0;
  for (const auto& item : batch)
    std::visit([&](const auto& r) { now = std::max(now, r.updated_at); }, item.record);
  return now;
}

// The proof a record is stored under (its table's re-upload key).
const std::string& proof_key(const model::purchase_order_record& r) {
  return purchase_order_table::proof(r);
}
const std::string& proof_key(const model::receipt_record& r) {
  return receipt_table::proof(r);
}
const std::string& proof_key(const model::transaction_record& r) {
  return transaction_table::proof(r);
}

} // namespace

sql_database::revision_check sql_database::either(revision_check a, revision_check b) {
  if (a == revision_check::moved || b == revision_check::moved)
    return revision_check::moved;
  return a == revision_check::confirmed || b == revision_check::confirmed
           ? revision_check::confirmed
           : revision_check::not_run;
}

// PostgreSQL: new settled records of one table (Play orders, StoreKit 2
// transactions) that announce nothing, as most uploads are: one INSERT for all of
// them, committed by itself (one round trip however many: no BEGIN, no COMMIT).
// A record that names a purchase no key names yet, which it starts by itself
// and of which nothing else is written (purchase_projection::first_of: a first
// upload, as most are), is inserted with its purchase and the purchase's key in
// one statement of its own (insert_many_starting). done[i] is set for each record
// inserted, stored[i] for each one whose proof was found stored (a re-upload, or
// a proof listed twice: the second). Those, a record whose purchase is there
// already, a receipt (its purchases are another table), a pending record (its job
// must commit with it) and an upload that announces its change (its event must)
// are left for the caller to save the usual way. Were the session lost after the
// server committed, the retry finds the proofs stored and merges the same uploads
// into them: the same records.
template <class Repo, class Record>
sql_database::revision_check
sql_database::insert_new(Repo& repo, const std::vector<batch_save>& batch,
                         std::vector<std::optional<batch_saved>>& done, std::vector<bool>& stored,
                         purchase_projection& projection) {
  auto check = revision_check::not_run;
  std::vector<std::size_t> at;
  starting_records<Record> starting;
  std::set<std::tuple<std::string, model::purchases::marketplace, model::environment, std::string>>
    keys; // one record per key in the statement: the others fold into its purchase
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (auto* r = std::get_if<Record>(&batch[i].record);
        r && !model::needs_job(*r) && !r->terms.announce) {
      if (!names_purchases(*r)) {
        at.push_back(i);
        continue;
      }
      auto fresh = *r;
      if (fresh.id.empty())
        fresh.id = model::make_uuid(); // before its purchase names it as a source
      auto first = projection.first_of(fresh);
      if (first
          && keys.emplace(first->purchase.app_id, first->purchase.market, first->purchase.env,
                          first->key)
               .second) {
        starting.at.push_back(i);
        starting.records.push_back(std::move(fresh));
        starting.firsts.push_back(std::move(*first));
      }
    }
  if (!starting.at.empty())
    check = insert_starting(repo, std::move(starting), projection, done, stored);
  if (at.empty())
    return check;
  // In proof order: concurrent batches that share proofs then take their rows'
  // locks in the same order and wait for each other instead of deadlocking.
  // Stable: of a proof listed twice, the first is inserted.
  auto key = [&](std::size_t i) {
    const auto& r = std::get<Record>(batch[i].record);
    return std::tie(r.app_id, Repo::table::proof(r));
  };
  std::stable_sort(at.begin(), at.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::vector<Record> fresh;
  fresh.reserve(at.size());
  for (auto i : at) {
    fresh.push_back(std::get<Record>(batch[i].record));
    if (fresh.back().id.empty())
      fresh.back().id = model::make_uuid();
  }
  const auto& ids = repo.insert_many(fresh);
  std::unordered_set<std::string_view> inserted(ids.begin(), ids.end());
  for (std::size_t k = 0; k < fresh.size(); ++k) {
    if (inserted.count(fresh[k].id))
      done[at[k]].emplace(any_record(std::move(fresh[k])));
    else
      stored[at[k]] = true; // committed before (ON CONFLICT waits for an inserter to end)
  }
  return check;
}

// insert_new's records that start their purchase: records, purchases and keys in
// one statement. A record it did not insert (its key named a purchase, or its
// proof was stored: then stored[i]) is left for the caller, who then finds what
// is there. The statement checks the auth revision the apps' terms and endpoints
// that chose these records were read at: when it moved, nothing is written.
template <class Repo, class Record>
sql_database::revision_check
sql_database::insert_starting(Repo& repo, starting_records<Record> starting,
                              purchase_projection& projection,
                              std::vector<std::optional<batch_saved>>& done,
                              std::vector<bool>& stored) {
  std::vector<purchase_to_write> purchases;
  std::vector<std::string> keys;
  purchases.reserve(starting.at.size());
  keys.reserve(starting.at.size());
  for (const auto& first : starting.firsts) {
    purchases.push_back({&first.purchase, first.next_change});
    keys.push_back(first.key);
  }
  auto& fresh = starting.records;
  auto outcome
    = repo.insert_many_starting(fresh, purchase_json_rows(purchases), keys, kept_revision());
  std::unordered_set<std::string_view> inserted(outcome.inserted.begin(), outcome.inserted.end());
  std::unordered_set<std::string_view> found(outcome.stored.begin(), outcome.stored.end());
  for (std::size_t k = 0; k < fresh.size(); ++k)
    if (inserted.count(fresh[k].id)) {
      // `purchases` (above) pointed into firsts: the statement is done with them.
      fresh[k].purchases = projection.started(std::move(starting.firsts[k].purchase));
      done[starting.at[k]].emplace(any_record(std::move(fresh[k])));
    } else if (found.count(fresh[k].id)) {
      stored[starting.at[k]] = true; // a re-upload: looked up, not inserted again
    }
  return outcome.revision_moved ? revision_check::moved : revision_check::confirmed;
}

// PostgreSQL, inside the batch's transaction: the re-uploads among `rest` whose
// proofs insert_new found stored (settled records of one table that announce
// nothing, as apps re-send them at each launch) are looked up together and
// updated together: two statements however many, instead of two each. The merge is
// save_in_transaction's, in batch order (a proof listed twice merges into the
// first's result); a job is inserted or removed only where the merge asks for it.
// done[i] is set for each one saved; a proof not found is left to the caller.
template <class Repo, class Record>
void sql_database::update_stored(Repo& repo, const std::vector<batch_save>& batch,
                                 const std::vector<std::size_t>& rest,
                                 const std::vector<bool>& stored,
                                 std::vector<std::optional<batch_saved>>& done) {
  std::vector<std::size_t> at;
  std::vector<const Record*> keys;
  for (auto i : rest)
    if (auto* r = std::get_if<Record>(&batch[i].record);
        r && stored[i] && !r->terms.announce && !names_purchases(*r)) {
      at.push_back(i);
      keys.push_back(r);
    }
  if (at.size() < 2) // one costs the same two statements the usual way
    return;
  // In proof order, as insert_new: concurrent batches lock shared rows in one order.
  std::sort(keys.begin(), keys.end(), [](const Record* a, const Record* b) {
    return std::tie(a->app_id, Repo::table::proof(*a))
      < std::tie(b->app_id, Repo::table::proof(*b));
  });
  struct current {
    Record record;
    bool has_job;
  };
  std::map<std::pair<std::string, std::string>, current> found; // by (app, proof)
  repo.find_many_for_update(keys, [&](Record r, bool has_job) {
    auto key = std::make_pair(r.app_id, Repo::table::proof(r));
    found.insert_or_assign(std::move(key), current{std::move(r), has_job});
  });
  auto& queue = jobs();
  std::map<std::string, const Record*> changed; // by id: the last merge of each
  for (auto i : at) {
    const auto& incoming = std::get<Record>(batch[i].record);
    auto it = found.find({incoming.app_id, Repo::table::proof(incoming)});
    if (it == found.end())
      continue; // the usual way: it says what is wrong
    auto& now = it->second;
    auto merged = model::merge_reupload(now.record, incoming);
    keep_notified(merged, now.record);
    if (model::needs_job(merged) && !now.has_job)
      queue.ensure(kind_of(merged), merged.id, merged.app_id, batch[i].first_attempt_at);
    else if (!model::needs_job(merged) && now.has_job)
      queue.remove(kind_of(merged), merged.id);
    now.has_job = model::needs_job(merged);
    done[i].emplace(any_record(merged));
    now.record = std::move(merged);
    now.record.terms = {}; // as stored: a proof listed again merges with the record alone
    changed[now.record.id] = &now.record;
  }
  std::vector<Record> rows;
  rows.reserve(changed.size());
  for (const auto& [id, r] : changed)
    rows.push_back(*r);
  if (!rows.empty())
    repo.update_many(rows);
}

// Group commit. On PostgreSQL the batch's new settled records first, one INSERT
// per table (insert_new); then the rest (on SQLite, in-process, all of it) in one
// transaction, first without savepoints (the common case: nothing fails, N + 2
// statements, on PostgreSQL two for all the re-uploads of a table: update_stored);
// if a save throws, that transaction is rolled back and run again with a savepoint
// around each save, so that only the failing save fails.
model::result<std::vector<batch_saved>>
sql_database::save_batch(const std::vector<batch_save>& batch) {
  return guarded<std::vector<batch_saved>>("save_batch", [&] {
    std::vector<std::optional<batch_saved>> done(batch.size());
    std::vector<bool> stored(batch.size(), false);
    auto& c = conn();
    const auto now = batch_time(batch);
    // Each app's endpoints and terms read once for the batch, its first
    // statements and its transaction, or not at all: the session keeps them
    // between batches (db/app_settings.hpp). The one statement checks that the
    // auth revision they were read at still holds; the transaction reads it
    // first, unless that statement just confirmed it.
    kept_reads_scope kept_scope(kept_use_);
    auto box = make_outbox();
    auto projection = make_projection(box, now);
    auto check = revision_check::not_run;
    try {
      if (kind_ == dialect::postgresql) {
        kept_use_ = kept_.revision() ? kept_reads::trusted : kept_reads::check_first;
        check = insert_new<purchase_order_repository, model::purchase_order_record>(
          purchase_orders(), batch, done, stored, projection);
        if (check != revision_check::moved) // else it would find the revision moved too
          check = either(check, insert_new<transaction_repository, model::transaction_record>(
                                  transactions(), batch, done, stored, projection));
      }
    } catch (const std::exception&) {
      if (!c.healthy())
        throw;           // the session's failure: guarded decides
      drop_statements(); // they would leak the statement's values (sql_database.hpp)
      // The records it would have inserted are saved one by one below, where a
      // refused one fails alone (a table's INSERT that succeeded stays).
    }
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (!done[i])
        rest.push_back(i);
    auto results = [&] {
      std::vector<batch_saved> out;
      out.reserve(batch.size());
      for (auto& d : done)
        out.push_back(std::move(*d));
      return out;
    };
    if (rest.empty())
      return results();
    // In proof order, whatever the batch's: concurrent batches that share proofs
    // (and so purchases, customers) take their rows' locks in the same order and
    // wait for each other instead of deadlocking. Stable: of a proof listed
    // twice, the first merges first.
    auto proof_of = [&](std::size_t i) {
      return std::visit(
        [](const auto& r) {
          return std::tuple<std::string_view, std::string_view>(r.app_id, proof_key(r));
        },
        batch[i].record);
    };
    std::stable_sort(rest.begin(), rest.end(), [&](std::size_t a, std::size_t b) {
      auto ka = std::make_pair(batch[a].record.index(), proof_of(a));
      auto kb = std::make_pair(batch[b].record.index(), proof_of(b));
      return ka < kb;
    });
    if (check == revision_check::moved)
      kept_.forget(); // what is kept is of an older revision
    if (check != revision_check::confirmed) {
      projection.forget_reads(); // read again, at the revision the transaction sees
      kept_use_ = kept_reads::check_first;
    }
    try {
      transaction tx(c, access::write);
      if (kind_ == dialect::postgresql) {
        update_stored<purchase_order_repository, model::purchase_order_record>(
          purchase_orders(), batch, rest, stored, done);
        update_stored<transaction_repository, model::transaction_record>(transactions(), batch,
                                                                         rest, stored, done);
      }
      for (auto i : rest)
        if (!done[i])
          done[i].emplace(save_item(batch[i], box, projection, stored[i]));
      tx.commit();
      return results();
    } catch (const std::exception&) {
      if (c.commit_unacknowledged() || !c.healthy())
        throw;           // the session's failure, not a save's: guarded decides
      drop_statements(); // they would leak the failed save's values (sql_database.hpp)
    }
    transaction tx(c, access::write);
    // What the projection noted in the rolled back transaction goes with it.
    kept_use_ = kept_reads::check_first;
    box.forget_reads();
    auto again = make_projection(box, now);
    for (auto i : rest) {
      c.session() << sql::session::savepoint;
      try {
        done[i].emplace(save_item(batch[i], box, again, stored[i]));
        c.session() << sql::session::release_savepoint;
      } catch (const std::exception& e) {
        // This save alone is undone; a lost session throws again on the next
        // statement and fails the batch (guarded then reconnects and retries it).
        c.session() << sql::session::rollback_to_savepoint;
        c.session() << sql::session::release_savepoint;
        drop_statements();
        done[i].emplace(failure(safe_message(e)));
      }
    }
    tx.commit();
    return results();
  });
}

model::result<std::optional<model::field_error>>
sql_database::restore_transactions(const std::vector<model::transaction_record>& records,
                                   model::unix_ms now) {
  using refusal = std::optional<model::field_error>;
  return guarded<refusal>("restore_transactions", [&]() -> refusal {
    transaction tx(conn(), access::write);
    auto box = make_outbox();
    auto projection = make_projection(box, now);
    for (const auto& r : records) {
      auto out = save_in_transaction(transactions(), r, now, box, projection);
      if (out.record.terms.refused)
        return out.record.terms.refused; // rolled back: nothing of the restore is written
    }
    tx.commit();
    return std::nullopt;
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

model::result<std::optional<model::transaction_record>>
sql_database::find_transaction(const std::string& id) {
  return guarded<std::optional<model::transaction_record>>("find_transaction",
                                                           [&] { return transactions().find(id); });
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
  // The record as stored now: what others wrote since the job was claimed is
  // kept (job_outcome).
  auto stored = repo.find(job.record_id);
  if (!stored)
    throw std::runtime_error("job " + job.id + " points to a missing record " + job.record_id);
  auto merged = job_outcome(updated, *stored);
  // A record that still needs its job (a Play acknowledgement to make once it
  // is validated) keeps it, due now with its attempts back to 0; fenced as the
  // removal would be.
  auto next = job;
  next.attempts = 0;
  next.next_attempt_at = merged.updated_at;
  next.last_error.clear();
  if (!(model::needs_job(merged) ? queue.reschedule_fenced(next) : queue.remove_fenced(job)))
    return false; // overtaken by a later claim, or the record was settled by a re-upload
  // The outbox: a revalidation's outcome is an update of the record, told to the
  // app's endpoints that want it, whatever the upload announced. Its resources
  // are the record as stored, before and after.
  auto box = make_outbox();
  auto kind = kind_of(updated);
  repo.update_verdict(merged);
  if (box.wanted(job.app_id, model::event_for(kind, false)))
    if (auto after = repo.find(job.record_id))
      box.announce(model::resource_json(*stored), model::resource_json(*after), kind, job.app_id,
                   job.record_id, after->updated_at);
  // What the store answered folds into the purchases the record names.
  if (auto after = repo.find(job.record_id))
    make_projection(box, merged.updated_at).project(*after);
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

model::result<bool> sql_database::complete_job(const model::validation_job& job,
                                               const model::transaction_record& updated) {
  return guarded<bool>("complete_job",
                       [&] { return complete_record_job(transactions(), job, updated); });
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

model::result<bool> sql_database::drop_job(const model::validation_job& job) {
  return guarded<bool>("drop_job", [&] {
    auto& queue = jobs();
    transaction tx(conn(), access::write);
    bool done = queue.remove_fenced(job);
    tx.commit();
    return done;
  });
}

model::result<std::vector<model::validation_job>> sql_database::list_jobs() {
  return guarded<std::vector<model::validation_job>>("list_jobs", [&] { return jobs().list(); });
}

} // namespace receiptd::db

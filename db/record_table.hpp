#pragma once
// One record table through statements prepared once per session, the same for both
// stores (as userver's storages::postgres: one generic query path, a variant
// supplies what differs). A table description names the table, the row type
// (db/record_rows.hpp, which names the proof's column) and the record's proof; the statements are
// db/sql_records.hpp's, filled in for it.

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include "db/connection.hpp"
#include "db/purchase_repository.hpp"
#include "db/record_rows.hpp"
#include "db/sql_records.hpp"
#include "db/statements.hpp"

namespace receiptd::db {

struct purchase_order_table {
  static constexpr model::record_kind kind = model::record_kind::store_b_purchase_order;
  using row = purchase_order_row;
  using record = model::purchase_order_record;
  static constexpr std::string_view name = "store_b_purchase_orders";
  static const std::string& proof(const record& r) { return r.purchase_token; }
};

struct receipt_table {
  static constexpr model::record_kind kind = model::record_kind::store_a_receipt;
  using row = receipt_row;
  using record = model::receipt_record;
  static constexpr std::string_view name = "store_a_receipts";
  static const std::string& proof(const record& r) { return r.receipt_hash; }
};

struct transaction_table {
  static constexpr model::record_kind kind = model::record_kind::store_a_transaction;
  using row = transaction_row;
  using record = model::transaction_record;
  static constexpr std::string_view name = "store_a_transactions";
  static const std::string& proof(const record& r) { return r.transaction_key; }
};

// A statement template of db/sql_records.hpp for one table.
std::string for_table(std::string_view tmpl, std::string_view table, std::string_view proof);

template <class Table>
class record_table {
public:
  using table = Table;
  using record = typename Table::record;

  explicit record_table(connection& c)
    : find_by_id_(
      prepare_select(c.session(), sql(sql::records::find_by_id), row_, &key_id_, "key_id")),
      find_by_key_(prepare_find_by_key(c)),
      insert_(prepare_insert(c.session(), sql(sql::records::insert), row_)),
      update_(prepare_update(
        c.session(), sql(sql::records::update),
        [this](auto f) {
          row_.upload_columns(f);
          row_.verdict_columns(f);
        },
        key_id_)),
      update_verdict_(prepare_update(
        c.session(), sql(sql::records::update),
        [this](auto f) {
          row_.verdict_columns(f);
          row_.notified_columns(f);
        },
        key_id_)),
      lock_(prepare_lock(c.session(),
                         sql(c.kind() == dialect::postgresql ? sql::records::lock_postgresql
                                                             : sql::records::lock_sqlite),
                         key_id_, row_.id)) {
    if (c.kind() == dialect::postgresql) {
      insert_many_.emplace(prepare_insert_many(c));
      if constexpr (!std::is_same_v<Table, receipt_table>) // a receipt's purchases: another table
        insert_many_starting_.emplace(prepare_insert_many_starting(c));
      find_many_by_key_.emplace(prepare_find_many_by_key(c));
      update_many_.emplace(prepare_update_many(c));
    }
  }
  record_table(const record_table&) = delete;
  record_table& operator=(const record_table&) = delete;

  std::optional<record> find(const std::string& id) {
    key_id_ = id;
    if (!fetch_single(find_by_id_))
      return std::nullopt;
    return row_.record();
  }

  // The stored record for the same proof (app and proof key) as `incoming`;
  // PostgreSQL keeps its row locked until the transaction ends.
  std::optional<record> find_for_update(const record& incoming) {
    key_app_id_ = incoming.app_id;
    key_proof_ = Table::proof(incoming);
    if (!fetch_single(find_by_key_))
      return std::nullopt;
    return row_.record();
  }
  // Whether the record the last find_for_update found had a revalidation job then.
  bool found_with_job() const { return found_with_job_ != 0; }

  // False when the proof is already stored (a concurrent first upload won).
  bool insert(const record& r) {
    row_.assign(r);
    return execute_change(insert_) == 1;
  }

  // PostgreSQL: new records at once, in one statement (one round trip): the ids of
  // those inserted. A proof already stored, or listed twice (the first is
  // inserted), is skipped. Not on SQLite, which has no round trips to save and
  // whose json_extract would parse each row once per column.
  const std::vector<std::string>& insert_many(const std::vector<record>& records) {
    if (!insert_many_)
      throw std::logic_error("insert_many is PostgreSQL's");
    auto rows = json_rows(records, [&](auto f) { row_.all_columns(f); });
    // SOCI fetches as many rows as the vector holds: one more than can come, so that
    // it runs the statement to its end (an SQLite statement left on a row is still
    // in progress: its autocommit would wait, and it would keep the write lock).
    inserted_ids_.assign(records.size() + 1, std::string());
    bool any = with_json(rows_, std::move(rows), [&] { return insert_many_->execute(true); });
    if (!any)
      inserted_ids_.clear();
    return inserted_ids_;
  }

  // PostgreSQL: new records, each with the new purchase it starts (their rows as
  // a JSON array, purchase_json_rows) and that purchase's key, in one statement
  // (sql::records::insert_many_starting): the ids of the records inserted, each
  // with its purchase, and of those whose proof was stored. The others wrote
  // nothing. Nothing is written when the auth revision is no longer `revision`,
  // the one the caller's reads of the apps were made at.
  struct starting_outcome {
    std::vector<std::string> inserted;
    std::vector<std::string> stored;
    bool revision_moved = false;
  };
  starting_outcome insert_many_starting(const std::vector<record>& records,
                                        std::string purchase_rows,
                                        const std::vector<std::string>& keys,
                                        std::int64_t revision) {
    if (!insert_many_starting_)
      throw std::logic_error("insert_many_starting is PostgreSQL's, not for receipts");
    if (keys.size() != records.size())
      throw std::invalid_argument("insert_many_starting: one key per record");
    auto rows = json_rows(records, [&](auto f) { row_.all_columns(f); });
    boost::json::array key_list(keys.begin(), keys.end());
    // One row per record at most, and one more (the revision's, or as insert_many).
    inserted_ids_.assign(records.size() + 1, std::string());
    inserted_.assign(records.size() + 1, 0);
    revision_ = revision;
    starting_outcome out;
    bool any = with_json(rows_, std::move(rows), [&] {
      return with_json(purchase_rows_, std::move(purchase_rows), [&] {
        return with_json(keys_, key_list, [&] { return insert_many_starting_->execute(true); });
      });
    });
    if (!any)
      return out;
    for (std::size_t i = 0; i < inserted_ids_.size(); ++i)
      if (inserted_[i] == 2)
        out.revision_moved = true;
      else
        (inserted_[i] ? out.inserted : out.stored).push_back(std::move(inserted_ids_[i]));
    return out;
  }

  // PostgreSQL: the stored records for the proofs of `incoming` (app and proof
  // key), locked until the transaction ends, at once (one round trip):
  // on_found(record, has_job) for each one found, whether it has a revalidation job.
  template <class OnFound>
  void find_many_for_update(const std::vector<const record*>& incoming, OnFound&& on_found) {
    if (!find_many_by_key_)
      throw std::logic_error("find_many_for_update is PostgreSQL's");
    boost::json::array keys;
    keys.reserve(incoming.size());
    for (const auto* r : incoming)
      keys.emplace_back(
        boost::json::object{{"key_app_id", r->app_id}, {"key_proof", Table::proof(*r)}});
    with_json(keys_, keys, [&] {
      for_each_row(*find_many_by_key_, [&] { on_found(row_.record(), found_with_job_ != 0); });
    });
  }

  // PostgreSQL: update()'s columns of several records at once (one round trip), one
  // record per id.
  void update_many(const std::vector<record>& records) {
    if (!update_many_)
      throw std::logic_error("update_many is PostgreSQL's");
    auto rows = json_rows(records, [&](auto f) {
      f("id", row_.id);
      row_.upload_columns(f);
      row_.verdict_columns(f);
    });
    auto changed = with_json(rows_, std::move(rows), [&] { return execute_change(*update_many_); });
    if (changed != static_cast<long long>(records.size()))
      throw std::runtime_error(std::string(Table::name) + ": "
                               + std::to_string(records.size() - changed)
                               + " rows vanished during their update");
  }

  // Rewrites the upload and verdict columns of the record with r.id (not the
  // notified ones: a re-upload).
  void update(const record& r) {
    row_.assign(r);
    key_id_ = r.id;
    if (execute_change(update_) != 1)
      throw std::runtime_error(std::string(Table::name) + " row " + r.id
                               + " vanished during its update");
  }

  // Rewrites the verdict and notified columns only (a completed job, an applied
  // notification); false when there is no such record.
  bool update_verdict(const record& r) {
    row_.assign(r);
    key_id_ = r.id;
    return execute_change(update_verdict_) == 1;
  }

  // Locks the record's row for the transaction (PostgreSQL); false when it is absent.
  bool lock(const std::string& id) {
    key_id_ = id;
    return fetch_single(lock_);
  }

private:
  // The records as a JSON array of objects (text), one member per column `group`
  // visits.
  template <class Group>
  std::string json_rows(const std::vector<record>& records, Group group) {
    std::string rows = "[";
    for (const auto& r : records) {
      row_.assign(r);
      if (rows.size() > 1)
        rows += ',';
      rows += '{';
      group(to_json_text{rows});
      rows += '}';
    }
    rows += ']';
    return rows;
  }

  // Runs a statement with its JSON parameter `slot` holding `json` (a document,
  // or its text); the values are not kept once it returns or throws.
  template <class Json, class Run>
  static auto with_json(std::string& slot, Json&& json, Run&& run) {
    struct clear {
      std::string& s;
      ~clear() { std::string().swap(s); }
    } guard{slot};
    if constexpr (std::is_same_v<std::decay_t<Json>, std::string>)
      slot = std::forward<Json>(json);
    else
      slot = boost::json::serialize(json);
    return run();
  }

  static std::string sql(std::string_view tmpl) {
    return for_table(tmpl, Table::name, Table::row::proof_column);
  }

  soci::statement prepare_find_by_key(connection& c) {
    auto tmpl = sql(c.kind() == dialect::postgresql ? sql::records::find_by_key_postgresql
                                                    : sql::records::find_by_key_sqlite);
    auto names = column_names([&](auto f) { row_.all_columns(f); });
    return prepare(c.session(), render(tmpl, names), [&](soci::statement& st) {
      row_.all_columns(bind_into{st});
      st.exchange(soci::into(found_with_job_));
      st.exchange(soci::use(key_kind_, "key_kind"));
      st.exchange(soci::use(key_app_id_, "key_app_id"));
      st.exchange(soci::use(key_proof_, "key_proof"));
    });
  }

  soci::statement prepare_find_many_by_key(connection& c) {
    auto names = column_names([&](auto f) { row_.all_columns(f); });
    return prepare(c.session(), render(sql(sql::records::find_many_by_key), names),
                   [&](soci::statement& st) {
                     row_.all_columns(bind_into{st});
                     st.exchange(soci::into(found_with_job_));
                     st.exchange(soci::use(key_kind_, "key_kind"));
                     st.exchange(soci::use(keys_, "keys"));
                   });
  }

  soci::statement prepare_update_many(connection& c) {
    auto names = column_names([&](auto f) {
      row_.upload_columns(f);
      row_.verdict_columns(f);
    });
    return prepare(c.session(), render(sql(sql::records::update_many), names),
                   [&](soci::statement& st) { st.exchange(soci::use(rows_, "rows")); });
  }

  soci::statement prepare_insert_many(connection& c) {
    auto tmpl = sql(sql::records::insert_many);
    auto names = column_names([&](auto f) { row_.all_columns(f); });
    return prepare(c.session(), render(tmpl, names), [&](soci::statement& st) {
      st.exchange(soci::into(inserted_ids_));
      st.exchange(soci::use(rows_, "rows"));
    });
  }

  soci::statement prepare_insert_many_starting(connection& c) {
    auto tmpl = render_names(sql(sql::records::insert_many_starting), "{purchase_columns}",
                             purchase_columns());
    auto names = column_names([&](auto f) { row_.all_columns(f); });
    return prepare(c.session(), render(tmpl, names), [&](soci::statement& st) {
      st.exchange(soci::into(inserted_ids_));
      st.exchange(soci::into(inserted_));
      st.exchange(soci::use(rows_, "records"));
      st.exchange(soci::use(purchase_rows_, "purchases"));
      st.exchange(soci::use(keys_, "keys"));
      st.exchange(soci::use(revision_, "revision"));
    });
  }

  // Bound by reference into the statements below: declared first, never moved.
  typename Table::row row_;
  std::string key_id_;
  std::string key_app_id_;
  std::string key_proof_;
  std::string key_kind_{model::to_string(Table::kind)};
  int found_with_job_ = 0;
  std::string rows_; // insert_many's and update_many's rows, as JSON
  std::string keys_; // find_many_for_update's keys, insert_many_starting's, as JSON
  std::string purchase_rows_; // insert_many_starting's purchases, as JSON
  std::vector<std::string> inserted_ids_;
  std::vector<int> inserted_; // insert_many_starting's: 1 inserted, 0 stored before, 2 moved
  long long revision_ = 0;    // insert_many_starting's auth revision

  soci::statement find_by_id_;
  soci::statement find_by_key_;
  soci::statement insert_;
  std::optional<soci::statement> insert_many_;      // PostgreSQL only
  std::optional<soci::statement> insert_many_starting_; // PostgreSQL, not receipts
  std::optional<soci::statement> find_many_by_key_; // PostgreSQL only
  std::optional<soci::statement> update_many_;      // PostgreSQL only
  soci::statement update_;
  soci::statement update_verdict_;
  soci::statement lock_;
};

} // namespace receiptd::db

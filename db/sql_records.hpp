#pragma once
// The records' statements. {columns}, {parameters}, {assignments} and
// {row_assignments} are rendered
// from a column group of db/record_rows.hpp (see db::render); :key_* parameters are
// bound to the repository's lookup keys.

#include <string_view>

namespace receiptd::db::sql {

// The record tables, store_b_purchase_orders, store_a_receipts and
// store_a_transactions, have the same shape: an id, the app, the proof's unique key
// within the app ({proof}: purchase_token, receipt_hash, transaction_key), upload
// and verdict columns. {table} and {proof}
// are filled in from db/record_table.hpp's table descriptions.
namespace records {

inline constexpr std::string_view find_by_id = "SELECT {columns} FROM {table} WHERE id = :key_id";

// The re-upload lookup inside save_purchase_order's/save_receipt's transaction, and
// whether the record has a revalidation job (:key_kind is the table's record kind):
// the save then neither removes a job that is not there nor inserts one that is.
// PostgreSQL locks the row: concurrent re-uploads of one proof then merge one after
// the other (no lost echo update), and the lock order record → job matches
// complete_job's. SQLite's BEGIN IMMEDIATE already serializes every writer.
inline constexpr std::string_view find_by_key_postgresql
  = "SELECT {columns}, CAST(EXISTS (SELECT 1 FROM validation_jobs j"
    " WHERE j.record_kind = :key_kind AND j.record_id = {table}.id) AS INTEGER)"
    " FROM {table} WHERE app_id = :key_app_id AND {proof} = :key_proof FOR UPDATE";
inline constexpr std::string_view find_by_key_sqlite
  = "SELECT {columns}, CAST(EXISTS (SELECT 1 FROM validation_jobs j"
    " WHERE j.record_kind = :key_kind AND j.record_id = {table}.id) AS INTEGER)"
    " FROM {table} WHERE app_id = :key_app_id AND {proof} = :key_proof";

// A concurrent first upload of the same proof may have inserted it since our lookup:
// then nothing is inserted (0 rows; PostgreSQL waits for the other transaction to end
// to know) and the caller merges with that record instead.
inline constexpr std::string_view insert
  = "INSERT INTO {table} ({columns}) VALUES ({parameters}) ON CONFLICT (app_id, {proof})"
    " DO NOTHING";

// PostgreSQL: the new records of a save batch at once, the rows as one JSON array
// (:rows) inserted in its order. A proof already stored, or listed twice (the first
// is inserted), is skipped; the ids of the rows inserted come back.
inline constexpr std::string_view insert_many
  = "INSERT INTO {table} ({columns}) SELECT {columns}"
    " FROM json_populate_recordset(CAST(NULL AS {table}), CAST(:rows AS json))"
    " ON CONFLICT (app_id, {proof}) DO NOTHING RETURNING id";

// PostgreSQL: new records of a save batch, each with the new purchase it starts
// (db::purchase_projection::first_of; no two with the same key), at once: one
// statement for the records, their purchases and the purchases' keys, committed
// together. :records, :purchases (rows as JSON arrays) and :keys (a JSON array of
// texts) are in the same order, item by item. An item whose key names a purchase
// already, or whose proof is stored, writes nothing; the ids of the records
// inserted come back (1), and of those whose proof was stored (0: re-uploads),
// and the caller saves all but the first the usual way. Records are written
// before keys, in proof order, as a lone save writes them, so that concurrent
// saves of the same proofs wait for each other instead of deadlocking; a key
// another transaction wrote since this statement began fails the statement (the
// caller then saves each the usual way). A key's row checks its purchase's at the
// statement's end, when both are written. Each array is parsed once (json
// operators would parse an item again for every field they read), and a proof or
// key is looked up by a subquery with LIMIT 1, one index lookup per item: the
// planner takes a JSON function for 100 rows and would otherwise join the whole
// table (as find_many_by_key says). What made the caller choose these items (the
// apps' terms and endpoints, db/app_settings.hpp) was read at auth revision
// :revision: if the revision moved since, nothing is written and one more row
// ('', 2) says so.
inline constexpr std::string_view insert_many_starting
  = "WITH ok AS MATERIALIZED (SELECT 1 FROM auth_revision WHERE id = 1"
    " AND revision = :revision),"
    " r0 AS MATERIALIZED (SELECT * FROM json_populate_recordset(CAST(NULL AS {table}),"
    " CAST(:records AS json)) WITH ORDINALITY),"
    " p0 AS MATERIALIZED (SELECT * FROM json_populate_recordset(CAST(NULL AS purchases),"
    " CAST(:purchases AS json)) WITH ORDINALITY),"
    " k0 AS MATERIALIZED (SELECT * FROM json_array_elements_text(CAST(:keys AS json))"
    " WITH ORDINALITY AS e(purchase_key, n)),"
    " free AS MATERIALIZED (SELECT p0.ordinality FROM p0 JOIN k0 ON k0.n = p0.ordinality"
    " WHERE EXISTS (SELECT 1 FROM ok) AND (SELECT pk.purchase_id FROM purchase_keys pk"
    " WHERE pk.app_id = p0.app_id"
    " AND pk.marketplace = p0.marketplace AND pk.environment = p0.environment"
    " AND pk.purchase_key = k0.purchase_key LIMIT 1) IS NULL),"
    " r AS (INSERT INTO {table} ({columns}) SELECT {columns} FROM r0"
    " WHERE ordinality IN (SELECT ordinality FROM free) ORDER BY app_id, {proof}, ordinality"
    " ON CONFLICT (app_id, {proof}) DO NOTHING RETURNING id),"
    " k AS (INSERT INTO purchase_keys (app_id, marketplace, environment, purchase_key, purchase_id)"
    " SELECT p0.app_id, p0.marketplace, p0.environment, k0.purchase_key, p0.id"
    " FROM p0 JOIN k0 ON k0.n = p0.ordinality JOIN r0 ON r0.ordinality = p0.ordinality"
    " WHERE r0.id IN (SELECT id FROM r)"
    " ORDER BY p0.app_id, p0.marketplace, p0.environment, k0.purchase_key"
    " RETURNING purchase_id),"
    " p AS (INSERT INTO purchases ({purchase_columns}) SELECT {purchase_columns} FROM p0"
    " WHERE id IN (SELECT purchase_id FROM k))"
    " SELECT id, 1 FROM r UNION ALL SELECT r0.id, 0 FROM r0"
    " WHERE (SELECT t.id FROM {table} t WHERE t.app_id = r0.app_id AND t.{proof} = r0.{proof}"
    " LIMIT 1) IS NOT NULL"
    " UNION ALL SELECT '', 2 WHERE NOT EXISTS (SELECT 1 FROM ok)";

inline constexpr std::string_view update = "UPDATE {table} SET {assignments} WHERE id = :key_id";

// PostgreSQL: a save batch's stored proofs at once (its re-uploads), as
// find_by_key_postgresql finds one: locked, with whether each has a job. :keys is
// a JSON array of {"key_app_id", "key_proof"}, locked in its order (the caller
// sorts it, so that concurrent batches sharing proofs wait for each other instead
// of deadlocking). One index lookup per key (LATERAL … LIMIT 1 is not flattened
// into a join): the planner, which takes a JSON function for 100 rows, chose a
// sequential scan of the table for `IN (SELECT … FROM json_to_recordset(…))`.
inline constexpr std::string_view find_many_by_key
  = "SELECT {columns}, CAST(EXISTS (SELECT 1 FROM validation_jobs j"
    " WHERE j.record_kind = :key_kind AND j.record_id = t.id) AS INTEGER)"
    " FROM json_to_recordset(CAST(:keys AS json)) AS k(key_app_id text, key_proof text),"
    " LATERAL (SELECT * FROM {table} WHERE app_id = k.key_app_id AND {proof} = k.key_proof"
    " LIMIT 1 FOR UPDATE) AS t";

// PostgreSQL: update's columns of several records at once, the rows (id and those
// columns) as one JSON array (:rows), one row per id.
inline constexpr std::string_view update_many
  = "UPDATE {table} SET {row_assignments}"
    " FROM json_populate_recordset(CAST(NULL AS {table}), CAST(:rows AS json)) AS r"
    " WHERE {table}.id = r.id";

// complete_job locks the record before it touches the job, as save_* does.
inline constexpr std::string_view lock_postgresql
  = "SELECT id FROM {table} WHERE id = :key_id FOR UPDATE";
inline constexpr std::string_view lock_sqlite = "SELECT id FROM {table} WHERE id = :key_id";

} // namespace records

namespace in_app_purchases {

inline constexpr std::string_view find_by_receipt
  = "SELECT {columns} FROM store_a_in_app_purchases"
    " WHERE receipt_id = :key_receipt_id ORDER BY ordinal";

inline constexpr std::string_view insert
  = "INSERT INTO store_a_in_app_purchases ({columns}) VALUES ({parameters})";

// A receipt's purchases are replaced as a whole.
inline constexpr std::string_view delete_by_receipt
  = "DELETE FROM store_a_in_app_purchases WHERE receipt_id = :key_receipt_id";

} // namespace in_app_purchases

} // namespace receiptd::db::sql

#pragma once
// Per-connection settings and transaction control.

namespace receiptd::db::sql::session {

// Readers never block the writer and vice versa; same durability class as the
// rollback journal (STACK.md: 5x faster). Answers the journal mode now in force.
inline constexpr const char* sqlite_wal = "PRAGMA journal_mode=WAL";
// FULL syncs the WAL at every commit: an answered upload survives power loss
// (NORMAL would only survive an application crash).
inline constexpr const char* sqlite_synchronous_full = "PRAGMA synchronous=FULL";
// Off by default in SQLite, per connection.
inline constexpr const char* sqlite_foreign_keys = "PRAGMA foreign_keys=ON";

// libpq prints server NOTICEs ("relation … already exists, skipping") straight to
// stderr, bypassing receiptd's logging; warnings and errors still come through.
inline constexpr const char* postgresql_quiet_notices = "SET client_min_messages TO WARNING";

// A query stuck behind a lock or a sick server becomes an error after 30 s
// instead of holding a persistence worker forever.
inline constexpr const char* postgresql_statement_timeout = "SET statement_timeout = '30s'";

// One save of a batch: its failure is rolled back alone (same SQL on both).
inline constexpr const char* savepoint = "SAVEPOINT batch_item";
inline constexpr const char* release_savepoint = "RELEASE SAVEPOINT batch_item";
inline constexpr const char* rollback_to_savepoint = "ROLLBACK TO SAVEPOINT batch_item";

inline constexpr const char* sqlite_begin_immediate = "BEGIN IMMEDIATE";
// A read-only transaction never needs the write lock.
inline constexpr const char* sqlite_begin_deferred = "BEGIN";
// READ COMMITTED takes a new snapshot per statement; several reads that must agree
// need one snapshot for the transaction.
inline constexpr const char* postgresql_begin_snapshot
  = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";
inline constexpr const char* commit = "COMMIT";
inline constexpr const char* rollback = "ROLLBACK";

} // namespace receiptd::db::sql::session

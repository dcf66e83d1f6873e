#pragma once
// One SOCI session, its per-connection settings and the transaction discipline every
// write follows. Throws soci::soci_error; db::database turns that into model::error.

#include <optional>
#include <string>

#include <soci/soci.h>

#include "db/database.hpp"

namespace receiptd::db {

class connection {
public:
  // Connects to a URL already given its defaults (db/url.hpp) and applies the
  // SQLite settings: WAL, synchronous=FULL, foreign_keys=ON.
  connection(dialect kind, const std::string& url);
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  dialect kind() const { return kind_; }
  soci::session& session() { return session_; }

  // Write transactions. SQLite: BEGIN IMMEDIATE takes the write lock up front and
  // waits for it under the busy timeout. A deferred BEGIN whose transaction writes
  // later must upgrade a read lock, and when two connections do that at once SQLite
  // answers SQLITE_BUSY at once, without waiting. PostgreSQL: BEGIN (READ COMMITTED);
  // the statements lock the rows they change.
  void begin_write();
  // Read transactions: one snapshot for several queries (a receipt and its in-app
  // purchases). SQLite: deferred BEGIN; PostgreSQL: REPEATABLE READ, READ ONLY.
  void begin_read();
  void commit();
  // Best effort (the session may be gone); never throws.
  void rollback() noexcept;

  // True while a COMMIT was sent but not acknowledged: its outcome is unknown, so the
  // failed call must not be retried blindly.
  bool commit_unacknowledged() const { return commit_sent_; }
  void forget_commit() { commit_sent_ = false; }

  // False when the session cannot serve the next call as it is: PostgreSQL's server
  // side is gone (restarted, backend terminated, network cut; costs a round trip),
  // or SQLite is still inside a transaction that a failed ROLLBACK left open.
  bool healthy() noexcept;

private:
  void apply_sqlite_settings();

  dialect kind_;
  soci::session session_;
  // SQLite only: the transaction statements, prepared once.
  std::optional<soci::statement> begin_write_;
  std::optional<soci::statement> begin_read_;
  std::optional<soci::statement> commit_;
  std::optional<soci::statement> rollback_;
  bool writing_ = false;     // the open transaction is a write transaction
  bool commit_sent_ = false; // a write COMMIT is in flight or failed
};

enum class access { read, write };

// A transaction rolled back unless committed (also during stack unwinding).
class transaction {
public:
  transaction(connection& c, access mode) : c_(c) {
    if (mode == access::write)
      c_.begin_write();
    else
      c_.begin_read();
  }
  ~transaction() {
    if (!done_)
      c_.rollback();
  }
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  void commit() {
    c_.commit();
    done_ = true;
  }

private:
  connection& c_;
  bool done_ = false;
};

} // namespace receiptd::db

#include "db/connection.hpp"

#include <soci/sqlite3/soci-sqlite3.h>

#include "db/sql_session.hpp"

namespace receiptd::db {

connection::connection(dialect kind, const std::string& url) : kind_(kind), session_(url) {
  if (kind_ == dialect::sqlite)
    apply_sqlite_settings();
  else {
    session_ << sql::session::postgresql_quiet_notices;
    session_ << sql::session::postgresql_statement_timeout;
  }
}

void connection::apply_sqlite_settings() {
  std::string journal_mode;
  session_ << sql::session::sqlite_wal, soci::into(journal_mode);
  // An in-memory database cannot use WAL and says "memory"; anything else is a
  // file that refused WAL, and we do not run on a weaker journal silently.
  if (journal_mode != "wal" && journal_mode != "memory")
    throw soci::soci_error("SQLite refused journal_mode=WAL (got " + journal_mode + ")");
  session_ << sql::session::sqlite_synchronous_full;
  session_ << sql::session::sqlite_foreign_keys;
  begin_write_.emplace(session_.prepare << sql::session::sqlite_begin_immediate);
  begin_read_.emplace(session_.prepare << sql::session::sqlite_begin_deferred);
  commit_.emplace(session_.prepare << sql::session::commit);
  rollback_.emplace(session_.prepare << sql::session::rollback);
}

void connection::begin_write() {
  writing_ = true;
  if (kind_ == dialect::sqlite)
    begin_write_->execute(true);
  else
    session_.begin();
}

void connection::begin_read() {
  writing_ = false;
  if (kind_ == dialect::sqlite)
    begin_read_->execute(true);
  else
    session_ << sql::session::postgresql_begin_snapshot;
}

void connection::commit() {
  commit_sent_ = writing_;
  if (kind_ == dialect::sqlite)
    commit_->execute(true);
  else
    session_.commit();
  commit_sent_ = false;
}

void connection::rollback() noexcept {
  try {
    if (kind_ == dialect::sqlite)
      rollback_->execute(true);
    else
      session_.rollback();
  } catch (...) {
    // Nothing to undo: SQLite already rolled back (it does on some errors) or the
    // PostgreSQL connection is gone, which ends its transaction server-side.
  }
}

bool connection::healthy() noexcept {
  try {
    if (kind_ == dialect::postgresql)
      return session_.is_connected();
    auto* backend = static_cast<soci::sqlite3_session_backend*>(session_.get_backend());
    return sqlite_api::sqlite3_get_autocommit(backend->conn_) != 0;
  } catch (...) {
    return false;
  }
}

} // namespace receiptd::db

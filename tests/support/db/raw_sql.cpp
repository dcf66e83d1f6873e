#include "tests/support/db/raw_sql.hpp"

#include <stdexcept>

#include <soci/soci.h>

#include "db/backends.hpp"

namespace receiptd::test {

void execute_sql(const std::string& url, const std::string& sql) {
  db::register_backends();
  try {
    soci::session s(url);
    s << sql;
  } catch (const std::exception& e) {
    throw std::runtime_error("execute_sql: " + std::string(e.what()));
  }
}

long long query_number(const std::string& url, const std::string& sql) {
  db::register_backends();
  try {
    soci::session s(url);
    long long n = 0;
    s << sql, soci::into(n);
    return n;
  } catch (const std::exception& e) {
    throw std::runtime_error("query_number: " + std::string(e.what()));
  }
}

held_transaction::held_transaction(const std::string& url, const std::string& sql) {
  db::register_backends();
  try {
    session_ = std::make_unique<soci::session>(url);
    session_->begin();
    *session_ << sql;
  } catch (const std::exception& e) {
    throw std::runtime_error("held_transaction: " + std::string(e.what()));
  }
}

held_transaction::~held_transaction() {
  release();
}

void held_transaction::release() {
  if (!session_)
    return;
  try {
    session_->rollback();
  } catch (const std::exception&) {
    // the session goes anyway, and its transaction with it
  }
  session_.reset();
}

} // namespace receiptd::test

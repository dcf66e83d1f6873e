#pragma once
// Shared by the integration tests: a fresh, migrated database of the dialect under
// test (RECEIPTD_TEST_DB), an app to own records, and record builders.

#include <memory>
#include <string>

#define CATCH_CONFIG_ENABLE_OPTIONAL_STRINGMAKER
#include <catch2/catch.hpp>

#include "db/database.hpp"
#include "tests/support/db/test_db.hpp"

// The value of a model::result, or a test failure showing its model::error.
#define REQUIRE_OK(expr)                                                                           \
  ([&]() {                                                                                         \
    auto out_ = (expr);                                                                            \
    INFO("error: " << (out_.ok() ? std::string("none") : out_.err().message()));                   \
    REQUIRE(out_.ok());                                                                            \
    return std::move(out_).value();                                                                \
  }())

namespace receiptd::test {

std::unique_ptr<db::database> open_database(const std::string& url);

struct database_fixture {
  database_fixture();

  // Another connection to the same database (a second persistence worker).
  std::unique_ptr<db::database> second_connection() const { return open_database(url); }

  db::dialect kind;
  std::string url;
  std::unique_ptr<db::database> db;
  model::app app; // created in db
};

model::app make_app(db::database& d, const std::string& name);

// Every optional set, awkward text (quotes, ';', UTF-8, newlines), extreme numbers.
model::purchase_order_record full_purchase_order(const std::string& app_id,
                                                 const std::string& token);
// Every optional absent.
model::purchase_order_record minimal_purchase_order(const std::string& app_id,
                                                    const std::string& token);
// The record as the store confirmed it (validation_state::validated).
model::purchase_order_record validated(model::purchase_order_record r);
model::receipt_record full_receipt(const std::string& app_id, const std::string& hash,
                                   int in_app_purchases);
model::receipt_record minimal_receipt(const std::string& app_id, const std::string& hash);
// A validated StoreKit 2 auto-renewable subscription transaction of the app's
// bundle (com.example.game), production, whose JWS verified: keyed by its
// transactionId.
// The record's jobs in validation_jobs (at most one, by the schema).
std::vector<model::validation_job> jobs_of(db::database& d, const std::string& record_id);
// Saves `batch` in one call and requires every save to succeed: the results, in
// batch order.
std::vector<db::batch_saved> save_all(db::database& d, const std::vector<db::batch_save>& batch);

model::transaction_record signed_transaction_record(const std::string& app_id,
                                                    const std::string& transaction_id,
                                                    const std::string& original_transaction_id);

// Field-by-field CHECKs (the model types have no operator==).
void check_same(const model::purchase_order_record& got, const model::purchase_order_record& want);
void check_same(const model::receipt_record& got, const model::receipt_record& want);
void check_same(const model::validation_job& got, const model::validation_job& want);

inline constexpr model::unix_ms t0 = 1'700'000'000'000; // a fixed "now"

} // namespace receiptd::test

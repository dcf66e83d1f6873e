// What db/ lets out of a failed call.
#include <catch2/catch.hpp>

#include <soci/soci.h>

#include "db/redact.hpp"

using namespace receiptd::db;

TEST_CASE("database errors lose their data", "[redaction]") {
  auto pg = "ERROR:  new row for relation \"store_b_purchase_orders\" violates check constraint "
            "\"probe\"\nDETAIL:  Failing row contains (id, app, secret-token, …).\n";
  CHECK(redacted_message(pg)
        == "ERROR:  new row for relation \"store_b_purchase_orders\" violates check constraint "
           "\"probe\"");
  CHECK(redacted_message("invalid input syntax for type bigint: \"Secret Value 42\"")
        == "invalid input syntax for type bigint: \"…\"");
  CHECK(redacted_message("probe while executing \"insert into apps …\" with :name=\"x\"")
        == "probe");
  CHECK(redacted_message("unterminated 'quote and then a secret") == "unterminated '…");
  soci::soci_error e("sqlite3_statement_backend::loadOne: probe");
  CHECK(safe_message(e) == "sqlite3_statement_backend::loadOne: probe");
  CHECK(redacted_url("postgresql://host=h port=1 dbname=d user=u password=hunter2").find("hunter2")
        == std::string::npos);
}

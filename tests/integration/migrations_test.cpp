// Schema migrations: embedded, idempotent, safe when processes start at once.
#include <thread>

#include "db/migrations.hpp"
#include "db/migrator.hpp"
#include "tests/integration/fixture.hpp"

namespace receiptd::test {

TEST_CASE("migrations apply once and then nothing", "[migrations]") {
  auto kind = dialect_under_test();
  auto url = fresh_database_url(kind);
  auto d = open_database(url);
  int embedded = static_cast<int>(db::embedded_migrations().size());
  REQUIRE(embedded >= 1);
  CHECK(REQUIRE_OK(d->migrate()) == embedded);
  CHECK(REQUIRE_OK(d->migrate()) == 0);
  CHECK(REQUIRE_OK(open_database(url)->migrate()) == 0);
  // The schema is usable right after migrating on the same connection.
  CHECK(REQUIRE_OK(d->list_apps()).empty());
}

TEST_CASE("processes starting at once apply the migrations once", "[migrations]") {
  auto kind = dialect_under_test();
  auto url = fresh_database_url(kind);
  auto a = open_database(url);
  auto b = open_database(url);
  model::result<int> applied_a = db::failure("not run");
  model::result<int> applied_b = db::failure("not run");
  std::thread ta([&] { applied_a = a->migrate(); });
  std::thread tb([&] { applied_b = b->migrate(); });
  ta.join();
  tb.join();
  int embedded = static_cast<int>(db::embedded_migrations().size());
  CHECK(REQUIRE_OK(applied_a) + REQUIRE_OK(applied_b) == embedded);
}

TEST_CASE("embedded migrations are numbered from 1 without gaps", "[migrations]") {
  int expected = 1;
  for (const auto& m : db::embedded_migrations()) {
    CHECK(m.version == expected++);
    CHECK(m.name.ends_with(".sql"));
    CHECK_FALSE(db::split_sql_statements(m.sql).empty());
  }
}

TEST_CASE("migration text splits at semicolons outside quotes and comments", "[migrations]") {
  auto parts = db::split_sql_statements("-- a comment; with a semicolon\n"
                                        "CREATE TABLE t (x TEXT DEFAULT 'a;b');\n"
                                        "/* block; comment */ INSERT INTO t VALUES ('it''s');\n"
                                        "  -- trailing comment only\n");
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].find("'a;b'") != std::string::npos);
  CHECK(parts[1].find("'it''s'") != std::string::npos);
}

} // namespace receiptd::test

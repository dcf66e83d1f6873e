// Relative paths of the configuration resolve against a base folder.
#include <catch2/catch.hpp>

#include "model/config_paths.hpp"

using namespace receiptd::model;

TEST_CASE("a relative path joins the base folder; absolute and empty ones stay", "[config-paths]") {
  CHECK(resolve_config_path("/etc/receiptd", "trust/apple-root-ca.pem")
        == "/etc/receiptd/trust/apple-root-ca.pem");
  CHECK(resolve_config_path("/etc/receiptd", "./trust/x.pem") == "/etc/receiptd/trust/x.pem");
  CHECK(resolve_config_path("/work/main/config", "../var/receiptd.db")
        == "/work/main/var/receiptd.db");
  CHECK(resolve_config_path("config", "../var/trace.jsonl") == "var/trace.jsonl");
  CHECK(resolve_config_path("/etc/receiptd", "/var/lib/receiptd/receiptd.db")
        == "/var/lib/receiptd/receiptd.db");
  CHECK(resolve_config_path("/etc/receiptd", "") == "");
  // No base (the command line): as given, relative to the working directory.
  CHECK(resolve_config_path("", "trust/x.pem") == "trust/x.pem");
}

TEST_CASE("SQLite URLs: the database file resolves, the other parameters stay", "[config-paths]") {
  CHECK(resolve_database_url("/srv/conf", "sqlite3://db=../var/receiptd.db timeout=10")
        == "sqlite3://db=/srv/var/receiptd.db timeout=10");
  CHECK(resolve_database_url("/srv/conf", "sqlite3://timeout=5 dbname=data/r.db")
        == "sqlite3://timeout=5 dbname=/srv/conf/data/r.db");
  CHECK(resolve_database_url("/srv/conf", "sqlite3://db=/abs/r.db timeout=10")
        == "sqlite3://db=/abs/r.db timeout=10");
  CHECK(resolve_database_url("/srv/conf", "sqlite3://db=:memory:") == "sqlite3://db=:memory:");
  CHECK(resolve_database_url("/srv/conf", "sqlite3://db=file:r.db?mode=ro")
        == "sqlite3://db=file:r.db?mode=ro");
  // Quoted (SOCI's SQLite backend: "…"), and a resolved path that needs quotes.
  CHECK(resolve_database_url("/srv/conf", "sqlite3://db=\"my data/r.db\" timeout=10")
        == "sqlite3://db=\"/srv/conf/my data/r.db\" timeout=10");
  CHECK(resolve_database_url("/srv/my conf", "sqlite3://db=r.db timeout=10")
        == "sqlite3://db=\"/srv/my conf/r.db\" timeout=10");
  CHECK(resolve_database_url("", "sqlite3://db=var/r.db") == "sqlite3://db=var/r.db");
  // "…" has no escapes: a path needing quotes that holds a '"' stays as written
  // (a URL SOCI could not read is never made of one it could).
  CHECK(resolve_database_url("/srv/my conf", "sqlite3://db=u\"x.db timeout=10")
        == "sqlite3://db=u\"x.db timeout=10");
}

TEST_CASE("PostgreSQL URLs: libpq's file parameters resolve, nothing else", "[config-paths]") {
  CHECK(resolve_database_url("/etc/receiptd",
                             "postgresql://host=db.internal dbname=receiptd user=r "
                             "sslmode=verify-full sslrootcert=pg/root.crt passfile=pgpass")
        == "postgresql://host=db.internal dbname=receiptd user=r sslmode=verify-full "
           "sslrootcert=/etc/receiptd/pg/root.crt passfile=/etc/receiptd/pgpass");
  CHECK(resolve_database_url("/etc/receiptd", "postgresql://dbname=receiptd sslrootcert=system")
        == "postgresql://dbname=receiptd sslrootcert=system");
  // A unix socket directory and the database name are not files of ours.
  CHECK(resolve_database_url("/etc/receiptd", "postgresql://host=/run/postgresql dbname=r.db")
        == "postgresql://host=/run/postgresql dbname=r.db");
  // libpq's quoting: '…' with backslash escapes, kept and re-escaped.
  CHECK(resolve_database_url("/etc/it's", "postgresql://dbname=r sslcert='my cert.pem'")
        == "postgresql://dbname=r sslcert='/etc/it\\'s/my cert.pem'");
  CHECK(resolve_database_url("/etc/receiptd", "postgresql://password='a b' sslkey=k.pem")
        == "postgresql://password='a b' sslkey=/etc/receiptd/k.pem");
  // A bare value may hold any blank libpq skips (a newline after a backslash):
  // resolved, it is quoted, so the parameters after it stay the same ones.
  CHECK(resolve_database_url("/etc/receiptd", "postgresql://sslcrldir=a\\\nb=c dbname=r")
        == "postgresql://sslcrldir='/etc/receiptd/a\nb=c' dbname=r");
}

TEST_CASE("URLs that do not parse, or of other databases, are left to the database to refuse",
          "[config-paths]") {
  CHECK(resolve_database_url("/x", "mysql://db=r.db") == "mysql://db=r.db");
  CHECK(resolve_database_url("/x", "sqlite3://r.db") == "sqlite3://r.db");
  CHECK(resolve_database_url("/x", "sqlite3://db=\"unclosed") == "sqlite3://db=\"unclosed");
  CHECK(resolve_database_url("/x", "postgresql://sslcert='unclosed")
        == "postgresql://sslcert='unclosed");
}

TEST_CASE("the file a SQLite URL opens", "[config-paths]") {
  CHECK(sqlite_database_file("sqlite3://db=var/receiptd.db timeout=10") == "var/receiptd.db");
  CHECK(sqlite_database_file("sqlite3://timeout=1 dbname=\"a b/r.db\"") == "a b/r.db");
  CHECK_FALSE(sqlite_database_file("sqlite3://db=:memory:"));
  CHECK_FALSE(sqlite_database_file("sqlite3://timeout=10"));
  CHECK_FALSE(sqlite_database_file("postgresql://dbname=r"));
}

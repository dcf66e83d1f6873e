// db.url: PostgreSQL URIs in SOCI's keyword form, libpq's parsing of that form,
// and URLs printed without their passwords.
#include <catch2/catch.hpp>

#include "model/database_url.hpp"

using namespace receiptd::model;

namespace {

std::string keywords(std::string_view url) {
  auto out = keyword_database_url(url);
  INFO(url);
  REQUIRE(out.ok());
  return *out;
}

std::string refusal(std::string_view url) {
  auto out = keyword_database_url(url);
  INFO(url);
  REQUIRE_FALSE(out.ok());
  return out.err().message();
}

} // namespace

TEST_CASE("a PostgreSQL URI becomes libpq's keywords", "[database-url]") {
  CHECK(keywords("postgresql://receiptd:secret@db.internal:5432/receiptd")
        == "postgresql://user=receiptd password=secret host=db.internal port=5432 "
           "dbname=receiptd");
  CHECK(keywords("postgres://receiptd:secret@db.internal/receiptd")
        == "postgresql://user=receiptd password=secret host=db.internal dbname=receiptd");
  // Query parameters in their order, after the rest; ssl=true as libpq reads it.
  CHECK(keywords("postgresql://r@h/d?sslmode=verify-full&sslrootcert=pg/root.crt"
                 "&application_name=receiptd")
        == "postgresql://user=r host=h dbname=d sslmode=verify-full sslrootcert=pg/root.crt "
           "application_name=receiptd");
  CHECK(keywords("postgresql://h/d?ssl=true") == "postgresql://host=h dbname=d sslmode=require");
  // Every part is optional.
  CHECK(keywords("postgresql://") == "postgresql://");
  CHECK(keywords("postgresql://localhost") == "postgresql://host=localhost");
  CHECK(keywords("postgresql://localhost:5433") == "postgresql://host=localhost port=5433");
  CHECK(keywords("postgresql:///receiptd") == "postgresql://dbname=receiptd");
  CHECK(keywords("postgresql://u@") == "postgresql://user=u");
  CHECK(keywords("postgresql://u:@h") == "postgresql://user=u host=h"); // empty password: none
  CHECK(keywords("postgresql://h/?connect_timeout=3") == "postgresql://host=h connect_timeout=3");
  // IPv6 hosts, and lists of hosts (libpq tries them in order): comma lists.
  CHECK(keywords("postgresql://[::1]:5432/d") == "postgresql://host=::1 port=5432 dbname=d");
  CHECK(keywords("postgresql://a:1,b,[2001:db8::2]:3/d")
        == "postgresql://host=a,b,2001:db8::2 port=1,,3 dbname=d");
  // A socket directory as the host, percent-encoded as libpq's documentation shows.
  CHECK(keywords("postgresql://%2Fvar%2Frun%2Fpostgresql/d")
        == "postgresql://host=/var/run/postgresql dbname=d");
}

TEST_CASE("a URI's parts are percent-decoded and quoted for libpq", "[database-url]") {
  CHECK(keywords("postgresql://us%40er:p%40ss%3Aw%2Fo%25rd@h/d")
        == "postgresql://user=us@er password=p@ss:w/o%rd host=h dbname=d");
  // Spaces, quotes and backslashes in a value: '…' with \' and \\ (libpq).
  CHECK(keywords("postgresql://u:a%20b'c%5Cd@h/my%20db")
        == "postgresql://user=u password='a b\\'c\\\\d' host=h dbname='my db'");
  // '+' is a plus sign, and '=' may stand in a password.
  CHECK(keywords("postgresql://u:a+b=c@h") == "postgresql://user=u password=a+b=c host=h");
  CHECK(keywords("postgresql://h?application_name=my%20app")
        == "postgresql://host=h application_name='my app'");
}

TEST_CASE("a URI libpq would refuse is refused without its text", "[database-url]") {
  for (const auto* url :
       {"postgresql://u:se%2cret%zz@h/d", "postgresql://u:secret%2@h/d",
        "postgresql://u:secret%00@h/d", "postgresql://u:secret@[::1/d",
        "postgresql://u:secret@[]/d", "postgresql://u:secret@[::1]x/d",
        "postgresql://u:secret@h/d?sslmode", "postgresql://u:secret@h/d?a=b=c",
        "postgresql://u:secret@h/d?ssl%20mode=x", "postgresql://u:secret@h/d?Sslmode=x"}) {
    auto why = refusal(url);
    INFO(url << " → " << why);
    CHECK(why.find("secret") == std::string::npos);
    CHECK(why.find("PostgreSQL URI") != std::string::npos);
  }
}

TEST_CASE("libpq's keyword form is kept, and must parse as libpq reads it", "[database-url]") {
  for (const auto* url : {"postgresql://host=127.0.0.1 port=5432 dbname=postgres user=receiptd",
                          "postgresql://password='a b' host=h", "postgresql://host = h  user= u",
                          "sqlite3://db=var/receiptd.db timeout=10", "sqlite3://db=\"a b.db\""})
    CHECK(keywords(url) == url);
  CHECK_FALSE(is_postgresql_uri("postgresql://host=h dbname=d"));
  CHECK(is_postgresql_uri("postgresql://u:p@h/d?sslmode=require"));
  CHECK(is_postgresql_uri("postgres://host=h")); // postgres:// is only ever a URI
  CHECK(is_postgresql_uri("postgresql://h"));
  // An unterminated quote: libpq's message would quote the rest (a password).
  auto why = refusal("postgresql://host=h password='secret");
  CHECK(why.find("secret") == std::string::npos);
  CHECK(why.find("key=value") != std::string::npos);
}

TEST_CASE("libpq's keyword form parses as libpq reads it", "[database-url]") {
  auto p = parse_connection_parameters(" host = h\tpassword='it\\'s a\\\\b' user=a\\ b x=", true);
  REQUIRE(p);
  REQUIRE(p->size() == 4);
  CHECK((*p)[0].key == "host");
  CHECK((*p)[0].value == "h");
  CHECK((*p)[1].key == "password");
  CHECK((*p)[1].value == "it's a\\b");
  CHECK((*p)[1].quote == '\'');
  CHECK((*p)[2].value == "a b");
  CHECK((*p)[3].key == "x");
  CHECK((*p)[3].value.empty());
  CHECK_FALSE(parse_connection_parameters("host", true));
  CHECK_FALSE(parse_connection_parameters("=h", true));
  CHECK_FALSE(parse_connection_parameters("password='x", true));
  // SOCI's SQLite form: a bare value ends at a space only (a NUL is a character).
  auto nul = parse_connection_parameters(std::string_view("db=a\0b.db timeout=5", 19), false);
  REQUIRE(nul);
  REQUIRE(nul->size() == 2);
  CHECK((*nul)[0].value == std::string("a\0b.db", 6));
  CHECK((*nul)[1].key == "timeout");
  CHECK(libpq_quoted("plain") == "plain");
  CHECK(libpq_quoted("") == "''");
  CHECK(libpq_quoted("it's") == "'it\\'s'");
}

TEST_CASE("a URL is printed with its passwords masked", "[database-url][redaction]") {
  CHECK(redacted_database_url("postgresql://host=h password=secret user=u")
        == "postgresql://host=h password=*** user=u");
  // Quoted, with blanks around '=', named twice, sslpassword (the client key's).
  CHECK(redacted_database_url("postgresql://password = 'my secret' sslpassword=keysecret")
        == "postgresql://password = *** sslpassword=***");
  CHECK(redacted_database_url("postgresql://password=a password=secret")
        == "postgresql://password=*** password=***");
  // libpq reads "password='secret'host=h" as two parameters: so is it printed.
  CHECK(redacted_database_url("postgresql://password='secret'host=h")
        == "postgresql://password=*** host=h");
  // A URI, in the keyword form receiptd connects with.
  CHECK(redacted_database_url("postgresql://receiptd:secret@db:5432/receiptd?sslmode=require")
        == "postgresql://user=receiptd password=*** host=db port=5432 dbname=receiptd "
           "sslmode=require");
  CHECK(redacted_database_url("postgres://u:p%40secret@h/d")
        == "postgresql://user=u password=*** host=h dbname=d");
  CHECK(redacted_database_url("postgresql://h/d?password=secret")
        == "postgresql://host=h dbname=d password=***");
  // What does not parse is not printed; nor is a URL of another scheme.
  CHECK(redacted_database_url("postgresql://host=h password='secret") == "postgresql://…");
  CHECK(redacted_database_url("postgresql://u:secret%zz@h") == "postgresql://…");
  CHECK(redacted_database_url("mysql://u:secret@h/d") == "mysql://…");
  CHECK(redacted_database_url("u:secret@h/d") == "…");
  // Only a scheme is printed before "://", never what merely precedes a later one.
  CHECK(redacted_database_url("u:secret@h/d?sslrootcert=file://x") == "…");
  CHECK(redacted_database_url("my sql://u:secret@h/d") == "…");
  CHECK(redacted_database_url("sqlite3://db=var/r.db timeout=10")
        == "sqlite3://db=var/r.db timeout=10");
}

// Database errors without the data, through the real binaries: with database calls failing, nothing an
// upload or an app carried (purchase token, user, IP, metadata, receipt bytes, a
// service account's private key, a shared secret) reaches a log or the trace file.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "tests/support/db/raw_sql.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

// Makes inserts of rows whose `column` starts with `prefix` fail inside the database.
struct failing_inserts {
  suite& s;
  std::string table, name;
  failing_inserts(suite& su, std::string tbl, const std::string& column, const std::string& prefix)
    : s(su), table(std::move(tbl)), name("redact_probe_" + table) {
    if (s.dialect == receiptd::db::dialect::postgresql)
      // PostgreSQL's DETAIL then lists the whole failing row.
      execute_sql(s.db_url,
                  "ALTER TABLE " + table + " ADD CONSTRAINT " + name + " CHECK (" + column
                    + " NOT LIKE '" + prefix + "%') NOT VALID");
    else
      execute_sql(s.db_url,
                  "CREATE TRIGGER " + name + " BEFORE INSERT ON " + table + " WHEN NEW." + column
                    + " LIKE '" + prefix + "%' BEGIN SELECT RAISE(ABORT, 'probe'); END");
  }
  ~failing_inserts() {
    try {
      if (s.dialect == receiptd::db::dialect::postgresql)
        execute_sql(s.db_url, "ALTER TABLE " + table + " DROP CONSTRAINT " + name);
      else
        execute_sql(s.db_url, "DROP TRIGGER " + name);
    } catch (...) {
    }
  }
};

void check_absent(const std::string& where, const std::string& text,
                  const std::vector<std::string>& secrets) {
  for (const auto& secret : secrets) {
    INFO(where << " must not contain " << secret);
    CHECK(text.find(secret) == std::string::npos);
  }
}

} // namespace

TEST_CASE("failed saves log no upload data", "[hostile][redaction]") {
  auto& s = the_suite();
  auto package = unique_package("redactprobe");
  auto app = create_store_b_app(s, package, test_licence_key());
  auto token = "SECRETTOKEN" + unique("t");
  register_purchase(s, package, "gold", token, "product");
  const std::string user = "SECRETUSER" + unique("u");
  const std::string meta = "SECRETMETA" + unique("m");
  const std::string ip = "203.0.113.177";
  const std::string request_id = "redact-" + unique("r");
  auto data = purchase_data_json(package, "gold", token);
  auto signature = sign_purchase(data);
  {
    failing_inserts probe(s, "store_b_purchase_orders", "package_name", "com.receiptd.redactprobe");
    auto extra = "\"user_identifier\":\"" + user + "\",\"ip_address\":\"" + ip
      + "\",\"metadata\":{\"k\":\"" + meta + "\"}";
    auto r = s.service.post("/client/store_b/purchase_orders", store_b_body(data, signature, extra),
                            app.token, {"X-Request-Id: " + request_id});
    INFO(r.body);
    REQUIRE(r.status == 503);
    CHECK(r.body.find("storage_unavailable") != std::string::npos);
    // The failure was logged (so the check below looks at the right lines).
    REQUIRE(eventually([&] { return s.service.log().find("failed") != std::string::npos; }));
  }
  REQUIRE(eventually(
    [&] { return read_text(s.service.trace_file()).find(request_id) != std::string::npos; }));
  std::vector<std::string> secrets{token, user, meta, ip, signature.substr(0, 40)};
  check_absent("receiptd's log", s.service.log(), secrets);
  check_absent("the trace file", read_text(s.service.trace_file()), secrets);
}

TEST_CASE("a failed app create prints no credential", "[hostile][redaction]") {
  auto& s = the_suite();
  auto account = make_service_account(s);
  auto key_json = json::parse(read_text(account.path));
  std::string pem(key_json.at("private_key").as_string());
  // A line from the middle of the private key's base64.
  auto first = pem.find('\n') + 1;
  auto key_line = pem.substr(first + 65, 40);
  const std::string secret = "SECRETSHARED" + unique("s");
  failing_inserts probe(s, "apps", "name", "redactprobe");
  auto r = s.ctl({"app", "create", "--name=redactprobe" + unique("a"), "--bundle-id=com.x",
                  "--package-name=com.x", "--license-key=" + test_licence_key(),
                  "--service-account-file=" + account.path, "--shared-secret=" + secret});
  CHECK(r.code != 0);
  INFO(r.err);
  CHECK_FALSE(r.err.empty());
  check_absent("receiptctl's output", r.err + r.out, {secret, key_line, "PRIVATE KEY"});
}

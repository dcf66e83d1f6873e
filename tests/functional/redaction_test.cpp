// Database errors without the data, through the real binaries: with database calls failing, nothing an
// upload or an app carried (purchase token, user, IP, metadata, receipt bytes, a
// service account's private key, a shared secret) reaches a log or the trace file;
// outbound URLs (a webhook endpoint's, a store's) reach them by their origin only,
// and receiptctl repeats no token. Database URLs: database_url_test.cpp.
#include <catch2/catch.hpp>

#include <sstream>

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

namespace {

// The spans of `trace_id` in a trace file, as JSON objects.
std::vector<json::object> spans_in(const std::string& trace_file, const std::string& trace_id) {
  std::vector<json::object> out;
  std::istringstream lines(read_text(trace_file));
  for (std::string line; std::getline(lines, line);) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (!ec && v.is_object() && str(v.at("trace_id")) == trace_id)
      out.push_back(v.get_object());
  }
  return out;
}

bool has_span_named(const std::string& trace_file, const std::string& trace_id,
                    const std::string& message) {
  for (const auto& span : spans_in(trace_file, trace_id))
    if (str(span.at("message")) == message)
      return true;
  return false;
}

// "http://127.0.0.1:PORT/path" → "http://USERINFO@127.0.0.1:PORT/path"
std::string with_userinfo(const std::string& url, const std::string& userinfo) {
  auto at = url.find("://") + 3;
  return url.substr(0, at) + userinfo + "@" + url.substr(at);
}

} // namespace

TEST_CASE("a webhook URL reaches the trace file and the log by its origin only",
          "[hostile][redaction][webhooks]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("origin"));
  // An endpoint whose URL carries a secret in its query, as some backends want.
  const std::string key = "SECRETKEY" + unique("k");
  hook_endpoint e;
  e.name = unique("hook");
  auto url = s.emulator.control_url("/webhooks/" + e.name) + "?key=" + key;
  auto added = s.ctl({"webhook", "add", app.id, "--url=" + url});
  INFO(added.err << added.out);
  REQUIRE(added.code == 0);
  upload_confirmed_transaction(s, app, fresh_transaction_id());
  REQUIRE(eventually([&] { return !received(s, e).empty(); }));
  auto event_id = str(json::parse(str(received(s, e).at(0).at("body"))).at("id"));

  auto origin = s.emulator.control_url("");
  REQUIRE(eventually([&] {
    return has_span_named(s.service.trace_file(), "webhook-" + event_id, "POST " + origin);
  }));
  check_absent("the trace file", read_text(s.service.trace_file()), {key, "/webhooks/" + e.name});
  check_absent("receiptd's log", s.service.log(), {key});
  auto deliveries = s.ctl({"webhook", "deliveries", app.id});
  check_absent("receiptctl webhook deliveries", deliveries.out + deliveries.err, {key});
}

TEST_CASE("a store URL reaches the trace file by its origin only",
          "[hostile][redaction][store_a]") {
  auto& s = the_suite();
  // verifyReceipt behind a proxy that wants credentials and a key, as an operator may set it.
  const std::string password = "SECRETPROXY" + unique("p"), key = "SECRETKEY" + unique("k");
  auto sandbox = s.emulator.store_a_sandbox_url(); // http://127.0.0.1:P/sandbox/verifyReceipt
  auto args = standard_service_args(s);
  for (auto& a : args)
    if (a.starts_with("--store-a.sandbox-url="))
      a = "--store-a.sandbox-url=" + with_userinfo(sandbox, "operator:" + password) + "?key=" + key;
  service_process own(make_temp_dir("receiptd-origin"), s.db_url, args);
  own.start();
  auto app = create_store_a_app(s, "com.revenuecat.sampleapp", "shared-secret-1");
  auto trace_id = unique("origin");
  auto receipt = receipt_vector("unified", "revenuecat-sample1-sandbox-ios");
  auto r = own.post("/client/store_a/receipts", json::serialize(json::object{{"receipt", receipt}}),
                    app.token, {"X-Request-Id: " + trace_id});
  INFO(r.body);
  REQUIRE(r.status == 200); // the emulator answered through that URL

  auto origin = sandbox.substr(0, sandbox.find('/', sandbox.find("://") + 3));
  CHECK(eventually([&] {
    return has_span_named(own.trace_file(), trace_id, "POST " + origin + " verify_receipt");
  }));
  CHECK(own.stop() == 0);
  check_absent("the trace file", read_text(own.trace_file()), {password, key, "operator:"});
  check_absent("receiptd's log", own.log(), {password, key});
}

TEST_CASE("receiptctl token revoke never repeats the token it was given",
          "[hostile][redaction][tokens]") {
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("revoke"), test_licence_key(), false);
  REQUIRE(s.ctl({"token", "revoke", app.token}).code == 0);
  // Revoked already, or mistyped: refused, without the token in the message.
  for (const auto& token : {app.token, app.token + "x"}) {
    auto r = s.ctl({"token", "revoke", token});
    CHECK(r.code != 0);
    CHECK_FALSE(r.err.empty());
    check_absent("receiptctl's output", r.out + r.err, {token});
  }
}

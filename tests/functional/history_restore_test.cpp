// The App Store Server API's Get Transaction History (v2) through the real
// binary and the emulator (paged, failing on demand), on the database under
// test: every purchase of a unified receipt confirmed by the customer's history
// (one contradicted), and POST /server/customers/{user}/restore rebuilding a
// customer's purchases from one transaction id or signed transaction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "harness.hpp"
#include "model/encoding.hpp"
#include "tests/support/crypto/test_ca.hpp"
#include "tests/support/crypto/test_jws.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr std::int64_t day = 86400000;

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string server_token(suite& s, const test_app& app) {
  auto r = s.ctl({"token", "issue", app.name, "--kind=server"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  return str(r.json.at("token"));
}

std::string code_of(const json::value& v) {
  return str(v.at("errors").at(0).at("code"));
}
std::string field_of(const json::value& v) {
  const auto* field = v.at("errors").at(0).as_object().if_contains("field");
  return field ? str(*field) : std::string();
}

// A Sandbox transaction of the app's customer `customer` (the emulator's
// history groups by bundle and customer); its JWS.
std::string bought(suite& s, const test_app& app, const std::string& id,
                   const std::string& product, const std::string& type,
                   const std::string& customer, json::object extra = {}) {
  const auto at = now_ms() - day;
  json::object f{{"transaction_id", id},
                 {"original_transaction_id", id},
                 {"bundle_id", app.bundle_id},
                 {"product_id", app.bundle_id + "." + product},
                 {"environment", "Sandbox"},
                 {"type", type},
                 {"purchase_date_ms", at},
                 {"customer", customer}};
  if (type == "Auto-Renewable Subscription")
    f["expires_date_ms"] = at + 30 * day;
  for (auto& [k, v] : extra)
    f[k] = v;
  return register_transaction(s, f);
}

// History requests the emulator saw for this transaction id at the sandbox
// host (the tests' transactions are Sandbox ones: a transaction id alone is
// asked at the production host first, which does not know it).
int history_calls(suite& s, const std::string& id) {
  int n = 0;
  const auto log = s.emulator.control("GET", "/control/requests");
  for (const auto& r : log.as_array())
    if (str(r.at("store")) == "store_a" && str(r.at("path")) == "/sandbox/inApps/v2/history/" + id)
      ++n;
  return n;
}

// Get Transaction Info calls the emulator logged after request `since` (its log
// keeps the last 200 requests: a count of all would drop old ones).
int transaction_info_calls(suite& s, std::uint64_t since) {
  int n = 0;
  const auto log = s.emulator.control("GET", "/control/requests");
  for (const auto& r : log.as_array())
    if (r.at("seq").to_number<std::uint64_t>() > since
        && str(r.at("path")).find("/inApps/v1/transactions/") != std::string::npos)
      ++n;
  return n;
}

// The last request the emulator logged (0: none yet).
std::uint64_t last_request(suite& s) {
  const auto log = s.emulator.control("GET", "/control/requests");
  const auto& all = log.as_array();
  return all.empty() ? 0 : all.back().at("seq").to_number<std::uint64_t>();
}

// The emulator's history pages (PROTOCOL.md): restored to Apple's 20 and no
// failure when the test ends.
struct history_pages {
  suite& s;
  explicit history_pages(suite& su, json::object setting) : s(su) {
    s.emulator.control("POST", "/control/store_a/history", setting);
  }
  ~history_pages() { s.emulator.control("POST", "/control/store_a/history", json::object{}); }
};

http_response restore(suite& s, const std::string& user, const std::string& body,
                      const std::string& token) {
  auto r = s.service.post("/server/customers/" + user + "/restore", body, token);
  INFO(r.status << " " << r.body);
  return r;
}

std::set<std::string> products_of(const json::value& customer_answer) {
  std::set<std::string> out;
  for (const auto& p : customer_answer.at("customer").at("in_app_purchases").as_array())
    out.insert(str(p.at("product_id")));
  return out;
}

// Every purchase of the customer (the answer above lists the active ones and
// those behind an entitlement), by product.
std::set<std::string> all_products(suite& s, const std::string& user, const std::string& token) {
  auto r = s.service.get("/server/customers/" + user + "/in_app_purchases?environment=sandbox",
                         token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  std::set<std::string> out;
  const auto listed = r.json();
  for (const auto& p : listed.at("in_app_purchases").as_array())
    out.insert(str(p.at("product_id")));
  return out;
}

json::value customer(suite& s, const std::string& user, const std::string& token) {
  auto r = s.service.get("/server/customers/" + user + "?environment=sandbox", token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

std::vector<json::value> events_named(suite& s, const hook_endpoint& e, const std::string& name,
                                      std::size_t count) {
  std::vector<json::value> out;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);;) {
    out.clear();
    for (const auto& d : received(s, e)) {
      auto body = json::parse(str(d.at("body")));
      if (auto* n = body.as_object().if_contains("name"); n && str(*n) == name)
        out.push_back(body);
    }
    if (out.size() >= count || std::chrono::steady_clock::now() > deadline)
      return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

} // namespace

TEST_CASE("a unified receipt confirmed through the Server API: each purchase by the history",
          "[history][unified]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("historyreceipt"));
  const auto server = server_token(s, app);
  const auto monthly = fresh_transaction_id(), lifetime = fresh_transaction_id(),
             coins = fresh_transaction_id();
  const auto customer_key = unique("buyer");
  bought(s, app, monthly, "monthly", "Auto-Renewable Subscription", customer_key,
         {{"expires_date_ms", 1893456000000}}); // what Apple knows now: renewed until 2030
  bought(s, app, lifetime, "lifetime", "Non-Consumable", customer_key,
         {{"revocation_date_ms", 1718000000000}, {"revocation_reason", 1}});
  // `coins` is in the receipt but not in Apple's history: contradicted.
  test_support::unified_receipt_params p;
  p.bundle_id = app.bundle_id;
  p.receipt_type = "ProductionSandbox";
  p.in_app.push_back(
    test_support::purchase(app.bundle_id + ".monthly", monthly, test_support::utc(2024, 6, 1)));
  p.in_app.push_back(
    test_support::purchase(app.bundle_id + ".lifetime", lifetime, test_support::utc(2024, 5, 1)));
  p.in_app.push_back(
    test_support::purchase(app.bundle_id + ".coins", coins, test_support::utc(2024, 4, 1)));
  auto receipt = model::base64_encode(
    test_support::make_unified_receipt(p, test_support::apple_like_signer(s.pki)));
  const auto user = unique("alice");
  const auto before = last_request(s);

  auto r = s.service.post(
    "/client/store_a/receipts",
    json::serialize(json::object{{"receipt", receipt}, {"user_identifier", user}}), app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  auto j = r.json();
  CHECK(str(j.at("validation_state")) == "validated");
  CHECK(history_calls(s, monthly) == 1); // from the newest purchase
  CHECK(transaction_info_calls(s, before) == 0);

  std::map<std::string, json::value> by_id;
  for (const auto& q : j.at("in_app_purchases").as_array())
    by_id[str(q.at("transaction_id"))] = q;
  REQUIRE(by_id.size() == 3);
  CHECK(by_id[monthly].at("expires_date").at("ms") == 1893456000000);
  CHECK(by_id[monthly].at("store_contradiction").is_null());
  CHECK(by_id[lifetime].at("cancellation_date").at("ms") == 1718000000000);
  CHECK(by_id[lifetime].at("store_contradiction").is_null());
  CHECK(str(by_id[coins].at("store_contradiction")).find("absent") != std::string::npos);

  // The contradicted purchase is no In-App Purchase of the customer's; the
  // confirmed ones are, from the receipt.
  CHECK(all_products(s, user, server)
        == std::set<std::string>{app.bundle_id + ".monthly", app.bundle_id + ".lifetime"});
  const auto c = customer(s, user, server);
  for (const auto& q : c.at("customer").at("in_app_purchases").as_array())
    CHECK(str(q.at("sources").at(0).at("id")) == str(j.at("id")));

  SECTION("a second look finds it in the history: the contradiction is lifted") {
    bought(s, app, coins, "coins", "Consumable", customer_key);
    auto again = s.service.post(
      "/client/store_a/receipts",
      json::serialize(json::object{{"receipt", receipt}, {"user_identifier", user}}), app.token);
    INFO(again.body);
    REQUIRE(again.status == 200);
    const auto stored = again.json();
    for (const auto& q : stored.at("in_app_purchases").as_array())
      CHECK(q.at("store_contradiction").is_null());
    CHECK(all_products(s, user, server).count(app.bundle_id + ".coins") == 1);
  }
}

TEST_CASE("restore a customer's purchases from a transaction id, across two pages",
          "[history][restore]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("restore"));
  REQUIRE(s.ctl({"entitlement", "set", app.name, "premium", "--offering=monthly",
                 "--pattern=\\.monthly$"})
            .code
          == 0);
  const auto server = server_token(s, app);
  auto hook = add_endpoint(s, app, "in_app_purchase,customer");
  const auto key = unique("family");
  const auto first = fresh_transaction_id();
  bought(s, app, first, "monthly", "Auto-Renewable Subscription", key);
  bought(s, app, fresh_transaction_id(), "lifetime", "Non-Consumable", key);
  bought(s, app, fresh_transaction_id(), "coins", "Consumable", key);
  bought(s, app, fresh_transaction_id(), "other", "Non-Consumable", unique("someone-else"));
  history_pages pages(s, {{"page_size", 2}});
  const auto user = unique("bob");

  auto r = restore(s, user, json::serialize(json::object{{"transaction_id", first}}), server);
  REQUIRE(r.status == 200);
  CHECK(history_calls(s, first) == 2);
  auto j = r.json();
  CHECK(str(j.at("customer").at("user_identifier")) == user);
  // The answer lists what is active (a consumable is not); all three are the customer's.
  CHECK(products_of(j)
        == std::set<std::string>{app.bundle_id + ".monthly", app.bundle_id + ".lifetime"});
  CHECK(all_products(s, user, server)
        == std::set<std::string>{app.bundle_id + ".monthly", app.bundle_id + ".lifetime",
                                 app.bundle_id + ".coins"});
  CHECK(j.at("customer").at("entitlements").at("premium").at("is_active") == true);
  // The shape of the customer lookup, and what it reads afterwards.
  auto looked_up = customer(s, user, server);
  CHECK(products_of(looked_up) == products_of(j));
  CHECK(looked_up.at("customer").at("entitlements") == j.at("customer").at("entitlements"));
  CHECK(events_named(s, hook, "in_app_purchase.created", 3).size() == 3);
  CHECK(events_named(s, hook, "customer.entitlements_changed", 1).size() == 1);

  SECTION("again: the same purchases, nothing new") {
    auto again = restore(s, user, json::serialize(json::object{{"transaction_id", first}}), server);
    REQUIRE(again.status == 200);
    CHECK(products_of(again.json()) == products_of(j));
    CHECK(all_products(s, user, server).size() == 3);
  }
  SECTION("for another user under a keep policy: 409, and nothing moves") {
    REQUIRE(s.ctl({"app", "update", app.name, "--transfer-policy=keep"}).code == 0);
    const auto other = unique("mallory");
    auto moved = restore(s, other, json::serialize(json::object{{"transaction_id", first}}), server);
    REQUIRE(moved.status == 409);
    CHECK(code_of(moved.json()) == "bound_to_other_user");
    CHECK(all_products(s, other, server).empty());
    CHECK(all_products(s, user, server).size() == 3);
  }
}

TEST_CASE("restore from a signed transaction: verified first", "[history][restore]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("restorejws"));
  const auto server = server_token(s, app);
  const auto key = unique("family");
  auto jws = bought(s, app, fresh_transaction_id(), "monthly", "Auto-Renewable Subscription", key);
  bought(s, app, fresh_transaction_id(), "lifetime", "Non-Consumable", key);
  const auto user = unique("carol");

  auto r = restore(s, user, json::serialize(json::object{{"signed_transaction", jws}}), server);
  REQUIRE(r.status == 200);
  CHECK(products_of(r.json())
        == std::set<std::string>{app.bundle_id + ".monthly", app.bundle_id + ".lifetime"});

  // The same transaction signed by a chain receiptd does not trust: refused
  // before Apple is asked.
  test_support::transaction_fields t;
  t.transaction_id = t.original_transaction_id = fresh_transaction_id();
  t.bundle_id = app.bundle_id;
  t.product_id = app.bundle_id + ".monthly";
  t.environment = "Sandbox";
  auto forged = test_support::make_storekit_jws(test_support::transaction_payload_json(t),
                                                s.rogue_jws_pki);
  auto bad = restore(s, unique("dave"),
                     json::serialize(json::object{{"signed_transaction", forged}}), server);
  REQUIRE(bad.status == 422);
  CHECK(field_of(bad.json()) == "signed_transaction");
  CHECK(history_calls(s, t.transaction_id) == 0);

  // Another app's transaction.
  auto stranger = create_storekit_app(s, unique_package("restorestranger"));
  auto theirs = bought(s, stranger, fresh_transaction_id(), "monthly",
                       "Auto-Renewable Subscription", key);
  auto foreign = restore(s, unique("erin"),
                         json::serialize(json::object{{"signed_transaction", theirs}}), server);
  REQUIRE(foreign.status == 422);
  CHECK(code_of(foreign.json()) == "bundle_id_mismatch");
}

TEST_CASE("restore: bad bodies are 422 with the field, a client token 401", "[history][restore]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("restorebad"));
  const auto server = server_token(s, app);
  const auto user = unique("frank");
  struct bad_body {
    std::string body, field, code;
  };
  const bad_body cases[] = {
    {"{}", "transaction_id", "missing"},
    {R"({"transaction_id":"1","signed_transaction":"a.b.c"})", "transaction_id", "missing"},
    {R"({"transaction_id":5})", "transaction_id", "invalid"},
    {R"({"transaction_id":""})", "transaction_id", "invalid"},
    {R"({"signed_transaction":"not a jws"})", "signed_transaction", "invalid_jws"},
    {"not json", "", "invalid_json"},
    {R"({"transaction_id":"9999999999999999"})", "transaction_id", "unknown_transaction"},
  };
  for (const auto& c : cases) {
    INFO(c.body);
    auto r = restore(s, user, c.body, server);
    REQUIRE(r.status == 422);
    CHECK(field_of(r.json()) == c.field);
    CHECK(code_of(r.json()) == c.code);
  }
  CHECK(restore(s, user, R"({"transaction_id":"1"})", app.token).status == 401);
  CHECK(all_products(s, user, server).empty());
}

TEST_CASE("restore: hostile bodies are 422, never a crash or a store call", "[history][restore]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("restorehostile"));
  const auto server = server_token(s, app);
  const auto user = unique("mallory");
  const std::string hostile[] = {
    std::string(100000, '['),                                                // nesting
    R"({"transaction_id":)" + std::string(50000, '[') + "}",                 // nested field
    "[]",                                                                    // not an object
    R"({"transaction_id":")" + std::string(200000, '7') + "\"}",           // 200 KB id
    R"({"signed_transaction":")" + std::string(300000, 'A') + "\"}",      // 300 KB "JWS"
    R"({"transaction_id":"1\u0000"})",                                      // NUL inside
  };
  for (const auto& body : hostile) {
    INFO(body.substr(0, 80));
    auto r = restore(s, user, body, server);
    CHECK(r.status == 422);
    CHECK(r.json().at("errors").as_array().size() >= 1);
  }
  CHECK(all_products(s, user, server).empty());
  CHECK(s.service.get("/healthz", "").status == 200);
}

TEST_CASE("restore during a store outage: 503 with Retry-After, nothing written",
          "[history][restore]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("restoreoutage"));
  const auto server = server_token(s, app);
  const auto key = unique("family");
  const auto first = fresh_transaction_id();
  bought(s, app, first, "monthly", "Auto-Renewable Subscription", key);
  bought(s, app, fresh_transaction_id(), "lifetime", "Non-Consumable", key);
  bought(s, app, fresh_transaction_id(), "coins", "Consumable", key);
  const auto user = unique("grace");
  const auto body = json::serialize(json::object{{"transaction_id", first}});

  SECTION("the second page fails: the first page's purchases are not written") {
    history_pages pages(s, {{"page_size", 2}, {"fail_page", 1}, {"fail_status", 503}});
    auto r = restore(s, user, body, server);
    REQUIRE(r.status == 503);
    CHECK(!r.header("retry-after").empty());
    CHECK(code_of(r.json()) == "store_unavailable");
    CHECK(history_calls(s, first) == 2);
  }
  SECTION("the App Store is down") {
    s.emulator.set_mode("store_a", "down");
    auto r = restore(s, user, body, server);
    s.emulator.set_mode("store_a", "up");
    REQUIRE(r.status == 503);
    CHECK(!r.header("retry-after").empty());
  }
  CHECK(all_products(s, user, server).empty());
  // Once the store answers again, the same call restores everything.
  auto r = restore(s, user, body, server);
  REQUIRE(r.status == 200);
  CHECK(all_products(s, user, server).size() == 3);
}

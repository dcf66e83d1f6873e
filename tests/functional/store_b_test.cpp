// Store B through the real binary: signed and legacy purchase orders, every row
// of the DESIGN.md §2 status table that applies to Play, on the database under test.
#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <thread>

#include "harness.hpp"
#include "model/encoding.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";
constexpr const char* legacy = "/client/store_b/purchase_orders/legacy";

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  return s;
}

struct real_vector {
  std::string data, signature, key, package, product, token;
  bool subscription;
};

real_vector load_vector(const std::string& name) {
  auto dir = "google-play/" + name + "/";
  real_vector v;
  v.data = data_file(dir + "signed_data.txt");
  v.signature = trimmed(data_file(dir + "signature.b64"));
  v.key = trimmed(data_file(dir + "public_key.b64"));
  auto d = json::parse(v.data).as_object();
  v.package = str(d.at("packageName"));
  v.product = str(d.at("productId"));
  v.token = str(d.at("purchaseToken"));
  v.subscription = d.contains("autoRenewing");
  return v;
}

// An app for the test key pair, with a package of its own.
struct keyed_app {
  test_app app;
  std::string package;
};

keyed_app fresh_app(suite& s) {
  auto package = "com.receiptd." + unique("pkg");
  for (auto& c : package)
    if (c == '-')
      c = '_';
  return {create_store_b_app(s, package, test_licence_key()), package};
}

json::value upload_signed(suite& s, const keyed_app& a, const std::string& token, long expect,
                          bool subscription = false, const std::string& extra = "",
                          std::vector<std::string> headers = {}) {
  auto data = purchase_data_json(a.package, "gold", token, subscription);
  auto r
    = s.service.post(orders, store_b_body(data, sign_purchase(data), extra), a.app.token, headers);
  INFO(r.body);
  REQUIRE(r.status == expect);
  return r.json();
}

} // namespace

TEST_CASE("200 for the real Play vectors validated by the Play Developer API", "[store_b][200]") {
  auto& s = the_suite();
  for (auto name : {"voltrue2-trivialdrive-subscription", "go-iap-playstore-fixed-key"}) {
    auto v = load_vector(name);
    auto app = create_store_b_app(s, v.package, v.key);
    register_purchase(s, v.package, v.product, v.token,
                      v.subscription ? "subscription" : "product");
    auto r = s.service.post(orders, store_b_body(v.data, v.signature, R"("user_identifier":"u-1")"),
                            app.token);
    INFO(name << ": " << r.body);
    REQUIRE(r.status == 200);
    auto po = r.json().as_object();
    CHECK(str(po.at("package_name")) == v.package);
    CHECK(str(po.at("purchase_token")) == v.token);
    CHECK(str(po.at("app_family_id")) == app.id);
    CHECK(po.at("is_fraud") == false);
    CHECK(po.at("fraud_reason").is_null());
    CHECK(po.at("is_legacy") == false);
    CHECK(str(po.at("environment")) == "production");
    CHECK(str(po.at("validation_state")) == "validated");
    CHECK(str(po.at("user_identifier")) == "u-1");
    CHECK(str(po.at("in_app_purchase").at("product_id")) == v.product);
    CHECK(str(po.at("in_app_purchase").at("type"))
          == (v.subscription ? "subscription" : "product"));
    CHECK(po.at("created_at").at("utc").as_string().ends_with(" UTC"));
    CHECK(str(po.at("ip_address")) == "127.0.0.1");
  }
}

TEST_CASE("products, subscriptions and test purchases", "[store_b][200]") {
  auto& s = the_suite();
  auto a = fresh_app(s);

  SECTION("a product") {
    auto token = unique("tok");
    register_purchase(s, a.package, "gold", token, "product");
    auto po = upload_signed(s, a, token, 200);
    CHECK(str(po.at("environment")) == "production");
    CHECK(str(po.at("in_app_purchase").at("purchase_state")) == "purchased");
    CHECK(po.at("in_app_purchase").at("acknowledged") == true);
  }
  SECTION("a subscription goes to subscriptionsv2") {
    auto token = unique("tok");
    register_purchase(s, a.package, "gold", token, "subscription");
    auto before = s.emulator.calls().at("store_b").at("subscriptionsv2").to_number<int>();
    auto po = upload_signed(s, a, token, 200, true);
    CHECK(str(po.at("in_app_purchase").at("type")) == "subscription");
    CHECK(po.at("in_app_purchase").at("expires_at").at("ms") == 1893456000000);
    CHECK(s.emulator.calls().at("store_b").at("subscriptionsv2").to_number<int>() == before + 1);
  }
  SECTION("a test purchase is sandbox") {
    auto token = unique("tok");
    register_purchase(s, a.package, "gold", token, "product", true);
    auto po = upload_signed(s, a, token, 200);
    CHECK(str(po.at("environment")) == "sandbox");
    CHECK(po.at("in_app_purchase").at("is_test") == true);
  }
  SECTION("a test subscription is sandbox") {
    auto token = unique("tok");
    register_purchase(s, a.package, "gold", token, "subscription", true);
    CHECK(str(upload_signed(s, a, token, 200, true).at("environment")) == "sandbox");
  }
  SECTION("410 gone (expired) is still genuine") {
    auto token = unique("tok");
    register_purchase(s, a.package, "gold", token, "product", false, 410);
    CHECK(str(upload_signed(s, a, token, 200).at("validation_state")) == "validated");
  }
}

TEST_CASE("legacy purchase orders", "[store_b][legacy]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto body = [&](const std::string& token, const std::string& product = "gold") {
    return json::serialize(json::object{{"package_name", a.package},
                                        {"purchase_token", token},
                                        {"product_id", product},
                                        {"order_id", "GPA.9"}});
  };
  SECTION("a known product: 200, is_legacy") {
    auto token = unique("tok");
    register_purchase(s, a.package, "gold", token, "product");
    auto r = s.service.post(legacy, body(token), a.app.token);
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(r.json().at("is_legacy") == true);
    CHECK(str(r.json().at("order_id")) == "GPA.9");
  }
  SECTION("a subscription is found after products.get does not know it") {
    auto token = unique("tok");
    register_purchase(s, a.package, "gold", token, "subscription");
    auto r = s.service.post(legacy, body(token), a.app.token);
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(str(r.json().at("in_app_purchase").at("type")) == "subscription");
  }
  SECTION("a token the store does not know: 402 store_rejected, stored") {
    auto r = s.service.post(legacy, body(unique("unknown")), a.app.token);
    INFO(r.body);
    REQUIRE(r.status == 402);
    auto j = r.json();
    CHECK(str(j.at("errors").at(0).at("code")) == "store_rejected");
    auto po = j.at("purchase_order");
    CHECK(po.at("is_fraud") == true);
    CHECK(str(po.at("fraud_reason")) == "store_rejected");
    auto got = s.service.get(std::string(orders) + "/" + str(po.at("id")), a.app.token);
    CHECK(got.status == 200);
    CHECK(got.json().at("is_fraud") == true);
  }
  SECTION("another app's package name: 402 package_name_mismatch") {
    auto r = s.service.post(legacy,
                            json::serialize(json::object{{"package_name", "com.other"},
                                                         {"purchase_token", unique("t")},
                                                         {"product_id", "gold"}}),
                            a.app.token);
    REQUIRE(r.status == 402);
    CHECK(str(r.json().at("errors").at(0).at("code")) == "package_name_mismatch");
  }
}

TEST_CASE("402: signatures that do not verify are stored as fraud", "[store_b][402]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto token = unique("tok");
  register_purchase(s, a.package, "gold", token, "product");
  auto data = purchase_data_json(a.package, "gold", token);
  auto sig = sign_purchase(data);
  auto expect_fraud = [&](const std::string& body, const std::string& reason) {
    auto r = s.service.post(orders, body, a.app.token);
    INFO(r.body);
    REQUIRE(r.status == 402);
    auto j = r.json();
    CHECK(str(j.at("errors").at(0).at("code")) == reason);
    CHECK(j.at("purchase_order").at("is_fraud") == true);
    CHECK(str(j.at("purchase_order").at("fraud_reason")) == reason);
    CHECK(str(j.at("purchase_order").at("validation_state")) == "rejected");
    return j;
  };
  SECTION("tampered purchase data") {
    auto tampered = data;
    tampered.replace(tampered.find("1700000000000"), 13, "1700000000001");
    expect_fraud(store_b_body(tampered, sig), "invalid_signature");
  }
  SECTION("tampered signature") {
    auto bytes = *receiptd::model::base64_decode(sig);
    bytes[10] ^= 0x55;
    expect_fraud(store_b_body(data, receiptd::model::base64_encode(bytes)), "invalid_signature");
  }
  SECTION("an empty signature (Play's unsigned static responses)") {
    expect_fraud(store_b_body(data, ""), "invalid_signature");
  }
  SECTION("signed with another app's key") {
    auto v = load_vector("voltrue2-trivialdrive-subscription");
    auto other = create_store_b_app(s, v.package, test_licence_key());
    auto r = s.service.post(orders, store_b_body(v.data, v.signature), other.token);
    REQUIRE(r.status == 402);
    CHECK(str(r.json().at("errors").at(0).at("code")) == "invalid_signature");
  }
  SECTION("a valid signature for another package") {
    auto foreign = purchase_data_json("com.someone.else", "gold", token);
    expect_fraud(store_b_body(foreign, sign_purchase(foreign)), "package_name_mismatch");
  }
  SECTION("no store call is made for a forged proof") {
    auto store_calls = [&] {
      auto b = s.emulator.calls().at("store_b");
      return b.at("products").to_number<int>() + b.at("productsv2").to_number<int>();
    };
    auto before = store_calls();
    auto tampered = data;
    tampered.back() = ' ';
    s.service.post(orders, store_b_body(tampered + "}", sig), a.app.token);
    CHECK(store_calls() == before);
  }
}

TEST_CASE("401: missing, malformed, unknown and revoked tokens", "[store_b][401]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto token = unique("tok");
  register_purchase(s, a.package, "gold", token, "product");
  auto data = purchase_data_json(a.package, "gold", token);
  auto body = store_b_body(data, sign_purchase(data));
  auto expect_401 = [&](const http_response& r) {
    INFO(r.body);
    REQUIRE(r.status == 401);
    CHECK(str(r.json().at("errors").at(0).at("code")) == "unauthorized");
    CHECK(r.header("www-authenticate").rfind("Bearer", 0) == 0);
  };
  expect_401(s.service.post(orders, body, ""));
  expect_401(http_call("POST", s.service.url(orders), body,
                       {"Authorization: Basic " + a.app.token, "Content-Type: application/json"}));
  expect_401(http_call("POST", s.service.url(orders), body, {"Authorization: Bearer"}));
  expect_401(s.service.post(orders, body, "rcpt_not_a_real_token"));
  // The token works, then is revoked through receiptctl, then it does not.
  REQUIRE(s.service.post(orders, body, a.app.token).status == 200);
  auto revoked = s.ctl({"token", "revoke", a.app.token});
  REQUIRE(revoked.code == 0);
  expect_401(s.service.post(orders, body, a.app.token));
  SECTION("a second token of the same app keeps working; revoke by id") {
    auto issued = s.ctl({"token", "issue", a.app.id});
    REQUIRE(issued.code == 0);
    auto second = str(issued.json.at("token"));
    CHECK(s.service.post(orders, body, second).status == 200);
    REQUIRE(s.ctl({"token", "revoke", str(issued.json.at("id"))}).code == 0);
    expect_401(s.service.post(orders, body, second));
  }
  SECTION("a bad token is refused before the body is looked at") {
    expect_401(s.service.post(orders, "not json", "rcpt_nope"));
  }
}

TEST_CASE("422: every field rule, never stored", "[store_b][422]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto token = unique("tok");
  auto data = purchase_data_json(a.package, "gold", token);
  auto sig = sign_purchase(data);
  auto expect_422 = [&](const std::string& path, const std::string& body, const std::string& field,
                        const std::string& code) {
    auto r = s.service.post(path, body, a.app.token);
    INFO(path << " " << body << " → " << r.body);
    REQUIRE(r.status == 422);
    bool found = false;
    auto answer = r.json();
    for (auto& e : answer.at("errors").as_array()) {
      auto f = e.as_object().contains("field") ? str(e.at("field")) : "";
      found = found || (f == field && str(e.at("code")) == code);
    }
    CHECK(found);
  };
  expect_422(orders, "not json", "", "invalid_json");
  expect_422(orders, "[1,2,3]", "", "not_an_object");
  expect_422(orders, "", "", "invalid_json");
  expect_422(orders, json::serialize(json::object{{"purchase_signature", sig}}), "purchase_data",
             "missing");
  expect_422(orders, json::serialize(json::object{{"purchase_data", data}}), "purchase_signature",
             "missing");
  expect_422(orders,
             json::serialize(json::object{{"purchase_data", 12}, {"purchase_signature", sig}}),
             "purchase_data", "wrong_type");
  expect_422(orders,
             json::serialize(json::object{{"purchase_data", data}, {"purchase_signature", true}}),
             "purchase_signature", "wrong_type");
  expect_422(orders,
             json::serialize(json::object{{"purchase_data", "nope"}, {"purchase_signature", sig}}),
             "purchase_data", "invalid_purchase_data");
  expect_422(orders,
             json::serialize(json::object{{"purchase_data", data}, {"purchase_signature", "%%%"}}),
             "purchase_signature", "invalid_base64");
  expect_422(orders, store_b_body(data, sig, R"("ip_address":"300.1.2.3")"), "ip_address",
             "invalid_ip_address");
  expect_422(orders, store_b_body(data, sig, R"("ip_address":42)"), "ip_address", "wrong_type");
  expect_422(orders, store_b_body(data, sig, R"("metadata":"campaign")"), "metadata", "wrong_type");
  expect_422(orders, store_b_body(data, sig, R"("metadata":[1])"), "metadata", "wrong_type");
  expect_422(orders, store_b_body(data, sig, R"("user_identifier":7)"), "user_identifier",
             "wrong_type");
  expect_422(legacy, "{}", "package_name", "missing");
  expect_422(legacy, "{}", "purchase_token", "missing");
  expect_422(legacy, "{}", "product_id", "missing");
  expect_422(legacy, R"({"package_name":1,"purchase_token":"t","product_id":"p"})", "package_name",
             "wrong_type");
  expect_422(legacy, R"({"package_name":"p","purchase_token":"","product_id":"p"})",
             "purchase_token", "blank");
  expect_422(legacy, "[]", "", "not_an_object");
  // Nothing was stored: the token uploads fresh afterwards.
  register_purchase(s, a.package, "gold", token, "product");
  auto ok = s.service.post(orders, store_b_body(data, sig), a.app.token);
  CHECK(ok.status == 200);
}

TEST_CASE("ip_address: omitted, null, IPv6; metadata echoed", "[store_b][echo]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto upload = [&](const std::string& extra) {
    auto token = unique("tok");
    register_purchase(s, a.package, "gold", token, "product");
    return upload_signed(s, a, token, 200, false, extra);
  };
  CHECK(str(upload("").at("ip_address")) == "127.0.0.1");
  CHECK(upload(R"("ip_address":null)").at("ip_address").is_null());
  CHECK(str(upload(R"("ip_address":"2001:0DB8::0001")").at("ip_address")) == "2001:db8::1");
  CHECK(str(upload(R"("ip_address":"203.0.113.7")").at("ip_address")) == "203.0.113.7");
  auto po = upload(R"("metadata":{"campaign":"spring","price":{"amount":4.99}})");
  CHECK(str(po.at("metadata").at("campaign")) == "spring");
  CHECK(po.at("metadata").at("price").at("amount").to_number<double>() == 4.99);
}

TEST_CASE("re-upload of the same purchase token returns the same record", "[store_b][idempotent]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto token = unique("tok");
  register_purchase(s, a.package, "gold", token, "product");
  auto first
    = upload_signed(s, a, token, 200, false, R"("user_identifier":"u1","metadata":{"v":1})");
  auto second = upload_signed(s, a, token, 200, false, R"("metadata":{"v":2})");
  CHECK(str(second.at("id")) == str(first.at("id")));
  CHECK(second.at("created_at") == first.at("created_at"));
  CHECK(second.at("updated_at").at("ms").to_number<std::int64_t>()
        >= first.at("updated_at").at("ms").to_number<std::int64_t>());
  CHECK(second.at("metadata").at("v") == 2);
  CHECK(str(second.at("user_identifier")) == "u1");
  auto got = s.service.get(std::string(orders) + "/" + str(first.at("id")), a.app.token);
  CHECK(got.json().at("metadata").at("v") == 2);
}

TEST_CASE("GET returns the owner's record and 404 to other apps", "[store_b][get]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto b = fresh_app(s);
  auto token = unique("tok");
  register_purchase(s, a.package, "gold", token, "product");
  auto po = upload_signed(s, a, token, 200);
  auto path = std::string(orders) + "/" + str(po.at("id"));
  auto mine = s.service.get(path, a.app.token);
  REQUIRE(mine.status == 200);
  CHECK(mine.json() == po);
  CHECK(s.service.get(path, b.app.token).status == 404);
  CHECK(s.service.get(std::string(orders) + "/no-such-id", a.app.token).status == 404);
  CHECK(s.service.get(path, "").status == 401);
  CHECK(s.service.get("/client/store_a/receipts/" + str(po.at("id")), a.app.token).status == 404);
}

TEST_CASE("206 while the store is down, validated after it returns", "[store_b][206]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto token = unique("tok");
  register_purchase(s, a.package, "gold", token, "product");
  std::string id;
  for (auto mode : {"down", "error", "html"}) {
    s.emulator.set_mode("store_b", mode);
    auto po = upload_signed(s, a, token, 206);
    CHECK(str(po.at("validation_state")) == "pending");
    CHECK(po.at("is_fraud") == false);
    if (id.empty())
      id = str(po.at("id"));
    CHECK(str(po.at("id")) == id);
  }
  s.emulator.set_mode("store_b", "up");
  auto path = std::string(orders) + "/" + id;
  bool validated = eventually([&] {
    auto r = s.service.get(path, a.app.token);
    return r.status == 200 && str(r.json().at("validation_state")) == "validated";
  });
  CHECK(validated);
}

TEST_CASE("a slow store past the deadline is a 206, not a wait", "[store_b][206]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto token = unique("tok");
  register_purchase(s, a.package, "gold", token, "product");
  s.emulator.set_mode("store_b", "slow", 5000);
  auto started = std::chrono::steady_clock::now();
  auto po = upload_signed(s, a, token, 206);
  auto took = std::chrono::steady_clock::now() - started;
  s.emulator.set_mode("store_b", "up");
  CHECK(took < std::chrono::seconds(5)); // the deadline is 2 s in this bench
  CHECK(str(po.at("validation_state")) == "pending");
}

TEST_CASE("100 concurrent uploads are all answered correctly", "[store_b][concurrency]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  constexpr int n = 100;
  std::vector<std::string> tokens;
  for (int i = 0; i < n; ++i) {
    tokens.push_back(unique("tok"));
    if (i % 4 != 3)
      register_purchase(s, a.package, "gold", tokens.back(), "product");
  }
  std::vector<long> status(n);
  std::vector<std::string> ids(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      auto data = purchase_data_json(a.package, "gold", tokens[i]);
      auto sig = i % 10 == 9 ? sign_purchase(data + " ") : sign_purchase(data);
      auto r = s.service.post(orders, store_b_body(data, sig), a.app.token);
      status[i] = r.status;
      if (r.status == 200)
        ids[i] = str(r.json().at("id"));
    });
  }
  for (auto& t : threads)
    t.join();
  for (int i = 0; i < n; ++i) {
    INFO("upload " << i);
    long expected = i % 10 == 9 ? 402 : i % 4 == 3 ? 402 : 200;
    CHECK(status[i] == expected);
  }
  std::set<std::string> distinct;
  int validated = 0;
  for (auto& id : ids)
    if (!id.empty())
      distinct.insert(id), ++validated;
  CHECK(static_cast<int>(distinct.size()) == validated);
}

TEST_CASE("X-Request-Id is echoed and the upload leaves spans", "[store_b][trace]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto token = unique("tok");
  register_purchase(s, a.package, "gold", token, "product");
  auto data = purchase_data_json(a.package, "gold", token);
  auto trace_id = unique("trace");
  auto r = s.service.post(orders, store_b_body(data, sign_purchase(data)), a.app.token,
                          {"X-Request-Id: " + trace_id});
  REQUIRE(r.status == 200);
  CHECK(r.header("x-request-id") == trace_id);
  CHECK_FALSE(s.service.post(orders, "{}", a.app.token).header("x-request-id").empty());
  // Spans reach the file about a second after the answer (the tracer writes in
  // batches): receiptctl trace waits for them, so one call right away has them all.
  auto t = run_program(
    {RECEIPTCTL_BINARY, "--json", "trace", trace_id, "--trace-file=" + s.service.trace_file()});
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  std::set<std::string> actors;
  auto trace = json::parse(t.out);
  for (auto& e : trace.at("traceEvents").as_array())
    if (str(e.at("ph")) == "X")
      actors.insert(str(e.at("name")).substr(0, str(e.at("name")).find(':')));
  CHECK(actors.size() == 4);
  CHECK(actors.count("supervisor"));
  CHECK(actors.count("validator"));
  CHECK(actors.count("store-b-client"));
  CHECK(actors.count("persistence"));
  // Without --json: a timeline, one line per span.
  auto timeline = run_program(
    {RECEIPTCTL_BINARY, "trace", trace_id, "--trace-file=" + s.service.trace_file(), "--wait=0s"});
  REQUIRE(timeline.exit_code == 0);
  CHECK(timeline.out.rfind("trace " + trace_id + ": ", 0) == 0);
  CHECK(timeline.out.find("store-b-client: ") != std::string::npos);
  // A trace nobody made: said so once the wait is over.
  auto none = run_program({RECEIPTCTL_BINARY, "trace", unique("no-such-trace"),
                           "--trace-file=" + s.service.trace_file(), "--wait=200ms"});
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("no spans of trace") != std::string::npos);
}

TEST_CASE("oversized bodies get 413, unknown paths 404", "[store_b][limits]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  std::string huge(1100 * 1024, 'x');
  auto r = s.service.post(orders, R"({"purchase_data":")" + huge + R"("})", a.app.token);
  CHECK(r.status == 413);
  CHECK(str(r.json().at("errors").at(0).at("code")) == "body_too_large");
  // Far past the limit Pistache refuses the request itself: still a 413.
  std::string enormous(3 * 1024 * 1024, 'x');
  CHECK(s.service.post(orders, enormous, a.app.token).status == 413);
  CHECK(s.service.post("/client/store_c/receipts", "{}", a.app.token).status == 404);
  CHECK(http_call("DELETE", s.service.url(orders)).status == 405);
}

TEST_CASE("a forged re-upload of a validated purchase is refused and changes nothing",
          "[store_b][402][idempotent]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  auto token = unique("tok");
  register_purchase(s, a.package, "gold", token, "product");
  auto data = purchase_data_json(a.package, "gold", token);
  auto genuine = s.service.post(
    orders, store_b_body(data, sign_purchase(data), R"("metadata":{"v":1})"), a.app.token);
  REQUIRE(genuine.status == 200);
  auto id = str(genuine.json().at("id"));
  auto forged = data;
  forged.replace(forged.find("\"quantity\":1"), 12, "\"quantity\":9");
  auto r = s.service.post(
    orders, store_b_body(forged, sign_purchase(data), R"("metadata":{"v":2})"), a.app.token);
  INFO(r.body);
  REQUIRE(r.status == 402);
  CHECK(str(r.json().at("errors").at(0).at("code")) == "invalid_signature");
  CHECK(str(r.json().at("purchase_order").at("id")) == id);
  auto got = s.service.get(std::string(orders) + "/" + id, a.app.token).json();
  CHECK(got.at("is_fraud") == false);
  CHECK(str(got.at("validation_state")) == "validated");
  CHECK(got.at("metadata").at("v") == 1);
  CHECK(got.at("in_app_purchase").at("quantity") == 1);
}

TEST_CASE("Play answers that are not a verdict: 206, never fraud", "[store_b][206]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  SECTION("429 and 403 from the Play Developer API") {
    for (int status : {429, 403, 500}) {
      INFO("HTTP " << status);
      auto token = unique("tok");
      register_purchase(s, a.package, "gold", token, "product");
      s.emulator.set_mode("store_b", "error", 0, status);
      auto po = upload_signed(s, a, token, 206);
      s.emulator.set_mode("store_b", "up");
      CHECK(po.at("is_fraud") == false);
      CHECK(str(po.at("validation_state")) == "pending");
    }
  }
  SECTION("a service account the token endpoint refuses (an operator problem)") {
    auto package = "com.receiptd." + unique("nosa");
    for (auto& c : package)
      if (c == '-')
        c = '_';
    // The account's key is registered with no one: the token endpoint says invalid_grant.
    auto sa = make_service_account(s);
    auto other = the_suite().dir + "/" + unique("unregistered") + ".json";
    auto text = read_text(sa.path);
    auto at = text.find(sa.email);
    text.replace(at, sa.email.size(), "stranger@receiptd-tests.iam.gserviceaccount.com");
    write_text(other, text);
    auto created
      = s.ctl({"app", "create", "--name=" + unique("app"), "--package-name=" + package,
               "--license-key=" + test_licence_key(), "--service-account-file=" + other});
    REQUIRE(created.code == 0);
    auto token = unique("tok");
    register_purchase(s, package, "gold", token, "product");
    auto data = purchase_data_json(package, "gold", token);
    auto r = s.service.post(orders, store_b_body(data, sign_purchase(data)),
                            str(created.json.at("token")));
    INFO(r.body);
    CHECK(r.status == 206);
    CHECK(r.json().at("is_fraud") == false);
  }
  SECTION("400 from the Play API (a token of another product) is the store's no") {
    auto token = unique("tok");
    register_purchase(s, a.package, "silver", token, "product");
    auto j = upload_signed(s, a, token, 402);
    CHECK(str(j.at("errors").at(0).at("code")) == "store_rejected");
  }
}

TEST_CASE("garbage bodies: always a 4xx with the error shape, the service stays up",
          "[store_b][422][robustness]") {
  auto& s = the_suite();
  auto a = fresh_app(s);
  std::mt19937 rng(42);
  std::vector<std::string> bodies{
    "",
    "{",
    "}",
    "null",
    "[]",
    "\"\"",
    "1e999",
    "{\"a\":",
    std::string(100, '{'),
    std::string(100, '[') + std::string(100, ']'),
    "{\"purchase_data\":\"\\ud800\"}",
    "\xff\xfe\x00\x01",
    R"({"purchase_data":"{\"packageName\":1}","purchase_signature":"AA=="})"};
  for (int i = 0; i < 60; ++i) {
    std::string b(rng() % 300, '\0');
    for (auto& c : b)
      c = static_cast<char>(rng() % 256);
    bodies.push_back(b);
  }
  for (const auto& path :
       {std::string(orders), std::string(legacy), std::string("/client/store_a/receipts")}) {
    for (const auto& b : bodies) {
      auto r = s.service.post(path, b, a.app.token);
      INFO(path << " ← " << json::serialize(json::value(b.substr(0, 40))) << " → " << r.status);
      CHECK((r.status == 422 || r.status == 413));
      CHECK(r.json().at("errors").as_array().size() >= 1);
    }
  }
  CHECK(http_call("GET", s.service.url("/healthz")).status == 200);
}

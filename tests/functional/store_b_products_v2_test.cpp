// Play one-time products v2 and the orders API through the real binary, on
// the database under test, against the emulator's Play Developer API over
// HTTP/2 and TLS (as Google answers, and where orders.batchGet's repeated
// orderIds are read whole): productsv2 purchases of two line items, pending
// and cancelled, products.get only where productsv2 answers 404, and orders
// filling the purchases' price and currency at upload or, after an orders
// outage, by the orders sweep — in one batchGet. Its own receiptd runs with
// the orders API on; the suite's has it off.
#include <catch2/catch.hpp>

#include <memory>

#include "harness.hpp"
#include "process.hpp"
#include "tests/support/db/test_db.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders_path = "/client/store_b/purchase_orders";

struct play_setup {
  std::string dir;
  std::string ca_file;
  std::string db_url;
  std::unique_ptr<service_process> service;

  // receiptctl --db.url=… --json ARGS, on this receiptd's database
  ctl_result ctl(std::vector<std::string> args) const {
    args.insert(args.begin(), {RECEIPTCTL_BINARY, "--db.url=" + db_url, "--json"});
    auto r = run_program(args);
    ctl_result out{r.exit_code, nullptr, r.out, r.err};
    boost::system::error_code ec;
    auto v = json::parse(r.out, ec);
    if (!ec)
      out.json = v;
    return out;
  }
};

// A receiptd on a database of its own (its orders sweep reads every purchase
// order there whose order is unread: none but this test's), with Store B at
// the emulator's HTTP/2 listener, the orders API on and its sweep every second.
play_setup orders_service(suite& s) {
  play_setup p;
  p.db_url = fresh_database_url(s.dialect);
  p.dir = make_temp_dir("receiptd-productsv2");
  p.ca_file = p.dir + "/emulator-ca.pem";
  write_text(p.ca_file, s.emulator.tls_certificate_pem());
  auto args = standard_service_args(s);
  std::erase_if(args, [](const std::string& a) {
    return a.rfind("--store-b.api-url=", 0) == 0 || a == "--store-b.orders=false";
  });
  args.push_back("--store-b.api-url=" + s.emulator.store_b_h2_url());
  args.push_back("--outbound.ca-file=" + p.ca_file);
  args.push_back("--store-b.orders-interval=1s");
  p.service = std::make_unique<service_process>(p.dir, p.db_url, args);
  p.service->start();
  return p;
}

// An app whose service account takes its tokens from the HTTP/2 listener too.
test_app play_app(suite& s, const play_setup& p, const std::string& package) {
  auto account = make_service_account(s);
  auto sa = json::parse(read_text(account.path)).as_object();
  sa["token_uri"] = s.emulator.store_b_h2_url() + "/token";
  write_text(account.path, json::serialize(sa));
  const auto name = unique("app");
  auto created
    = p.ctl({"app", "create", "--name=" + name, "--package-name=" + package,
             "--license-key=" + test_licence_key(), "--service-account-file=" + account.path});
  INFO(created.out << created.err);
  REQUIRE(created.code == 0);
  test_app app;
  app.name = name;
  app.id = str(created.json.at("id"));
  app.token = str(created.json.at("token"));
  app.package_name = package;
  auto rule = p.ctl({"entitlement", "set", name, "premium", "--offering=lifetime",
                     "--pattern=^premium$"});
  INFO(rule.out << rule.err);
  REQUIRE(rule.code == 0);
  auto server = p.ctl({"token", "issue", name, "--kind=server"});
  INFO(server.out << server.err);
  REQUIRE(server.code == 0);
  app.token_id = str(server.json.at("token")); // the server token: every purchase listed
  return app;
}

int calls(suite& s, const char* call) {
  return s.emulator.calls().at("store_b").at(call).to_number<int>();
}

// Signed purchase data of `product` under `token` for `user`, uploaded.
http_response upload(service_process& service, const test_app& app, const std::string& token,
                     const std::string& product, const std::string& order_id,
                     const std::string& user) {
  auto data = purchase_data_json(app.package_name, product, token, false, order_id);
  return service.post(orders_path,
                      store_b_body(data, sign_purchase(data), "\"user_identifier\":\"" + user + "\""),
                      app.token);
}

json::value customer(service_process& service, const test_app& app, const std::string& user) {
  auto r = service.get("/client/customers/" + user, app.token);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.json().at("customer");
}

// Every purchase of the customer, active or not (the server token's listing).
json::array purchases_of(service_process& service, const test_app& app, const std::string& user) {
  auto r = service.get("/server/customers/" + user + "/in_app_purchases", app.token_id);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.json().at("in_app_purchases").as_array();
}

// The customer's purchase of `product`.
json::value purchase_of(service_process& service, const test_app& app, const std::string& user,
                        const std::string& product) {
  for (const auto& p : purchases_of(service, app, user))
    if (str(p.at("product_id")) == product)
      return p;
  FAIL("no purchase of " << product);
  return nullptr;
}

void register_order(suite& s, const test_app& app, const std::string& order_id,
                    json::object fields) {
  fields["package_name"] = app.package_name;
  fields["order_id"] = order_id;
  s.emulator.control("POST", "/control/store_b/orders", fields);
}

} // namespace

TEST_CASE("productsv2: a purchase of two line items is two purchases, each priced by its order "
          "line",
          "[store_b][productsv2][orders]") {
  auto& s = the_suite();
  auto p = orders_service(s);
  auto package = unique_package("v2-lines");
  auto app = play_app(s, p, package);
  const auto token = unique("tok");
  const auto order_id = unique("GPA.3301");
  const auto user = unique("user");
  s.emulator.control(
    "POST", "/control/store_b/purchases",
    json::object{
      {"package_name", package},
      {"product_id", "premium"},
      {"token", token},
      {"order_id", order_id},
      {"region_code", "DE"},
      {"product_line_items",
       json::array{
         json::object{{"productId", "premium"},
                      {"productOfferDetails",
                       json::object{{"quantity", 1},
                                    {"purchaseOptionId", "buy"},
                                    {"offerId", "launch"},
                                    {"consumptionState", "CONSUMPTION_STATE_YET_TO_BE_CONSUMED"}}}},
         json::object{{"productId", "gems_100"},
                      {"productOfferDetails",
                       json::object{{"quantity", 3},
                                    {"purchaseOptionId", "pack"},
                                    {"consumptionState", "CONSUMPTION_STATE_CONSUMED"}}}}}}});
  register_order(s, app, order_id,
                 json::object{{"purchase_token", token},
                              {"currency_code", "EUR"},
                              {"total", "5.97"},
                              {"tax", "0.95"},
                              {"line_items", json::array{json::object{{"product_id", "premium"},
                                                                      {"total", "1.99"},
                                                                      {"tax", "0.32"}},
                                                         json::object{{"product_id", "gems_100"},
                                                                      {"total", "3.98"},
                                                                      {"tax", "0.63"}}}}});
  const auto v2 = calls(s, "productsv2"), v1 = calls(s, "products"), read = calls(s, "orders");
  auto r = upload(*p.service, app, token, "premium", order_id, user);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(str(r.json().at("validation_state")) == "validated");
  auto embedded = r.json().at("in_app_purchase");
  CHECK(str(embedded.at("purchase_state")) == "purchased");
  CHECK(embedded.at("quantity") == 1);
  CHECK(embedded.at("price") == 1990);
  CHECK(str(embedded.at("currency_code")) == "EUR");
  CHECK(calls(s, "productsv2") == v2 + 1);
  CHECK(calls(s, "products") == v1);
  CHECK(calls(s, "orders") == read + 1);

  auto premium = purchase_of(*p.service, app, user, "premium");
  CHECK(premium.at("quantity") == 1);
  CHECK(premium.at("price") == 1990);
  CHECK(str(premium.at("country_code")) == "DE");
  CHECK(premium.at("is_active") == true);
  auto gems = purchase_of(*p.service, app, user, "gems_100");
  CHECK(gems.at("quantity") == 3);
  CHECK(gems.at("price") == 3980);
  CHECK(str(gems.at("currency_code")) == "EUR");
  CHECK(str(gems.at("type")) == "consumable");
  CHECK(str(gems.at("sources").at(0).at("id")) == str(r.json().at("id")));
  CHECK(purchases_of(*p.service, app, user).size() == 2);
  CHECK(customer(*p.service, app, user).at("entitlements").at("premium").at("is_active") == true);

  CHECK(p.service->stop() == 0);
}

TEST_CASE("productsv2 404: products.get answers instead; pending and cancelled grant nothing",
          "[store_b][productsv2]") {
  auto& s = the_suite();
  auto p = orders_service(s);
  auto package = unique_package("v2-states");
  auto app = play_app(s, p, package);
  const auto user = unique("user");

  SECTION("a purchase productsv2 does not know: products.get, once") {
    const auto token = unique("tok");
    s.emulator.control("POST", "/control/store_b/purchases",
                       json::object{{"package_name", package},
                                    {"product_id", "premium"},
                                    {"token", token},
                                    {"quantity", 2},
                                    {"productsv2", false}});
    const auto v2 = calls(s, "productsv2"), v1 = calls(s, "products");
    auto r = upload(*p.service, app, token, "premium", unique("GPA.1"), user);
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(r.json().at("in_app_purchase").at("quantity") == 2);
    CHECK(calls(s, "productsv2") == v2 + 1);
    CHECK(calls(s, "products") == v1 + 1);
    CHECK(purchase_of(*p.service, app, user, "premium").at("is_active") == true);

    // The next purchase of that product goes to products.get first: no 404 per upload.
    const auto again = unique("tok");
    s.emulator.control("POST", "/control/store_b/purchases",
                       json::object{{"package_name", package},
                                    {"product_id", "premium"},
                                    {"token", again},
                                    {"productsv2", false}});
    auto second = upload(*p.service, app, again, "premium", unique("GPA.1b"), unique("user"));
    INFO(second.body);
    REQUIRE(second.status == 200);
    CHECK(calls(s, "productsv2") == v2 + 1);
    CHECK(calls(s, "products") == v1 + 2);

    // A purchase of it that only productsv2 knows is still found there.
    const auto only_v2 = unique("tok");
    s.emulator.control("POST", "/control/store_b/purchases",
                       json::object{{"package_name", package},
                                    {"product_id", "premium"},
                                    {"token", only_v2},
                                    {"products", false}});
    auto third = upload(*p.service, app, only_v2, "premium", unique("GPA.1c"), unique("user"));
    INFO(third.body);
    CHECK(third.status == 200);
    CHECK(calls(s, "productsv2") == v2 + 2);
    CHECK(calls(s, "products") == v1 + 3);
  }
  SECTION("pending: stored as Play says, not active") {
    const auto token = unique("tok");
    s.emulator.control("POST", "/control/store_b/purchases",
                       json::object{{"package_name", package},
                                    {"product_id", "premium"},
                                    {"token", token},
                                    {"purchase_state", 2},
                                    {"acknowledged", false}});
    auto r = upload(*p.service, app, token, "premium", unique("GPA.2"), user);
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(str(r.json().at("in_app_purchase").at("purchase_state")) == "pending");
    auto bought = purchase_of(*p.service, app, user, "premium");
    CHECK(bought.at("is_pending") == true);
    CHECK(bought.at("is_active") == false);
    CHECK(customer(*p.service, app, user).at("entitlements").at("premium").at("is_active")
          == false);
  }
  SECTION("cancelled: revoked, not active") {
    const auto token = unique("tok");
    s.emulator.control("POST", "/control/store_b/purchases",
                       json::object{{"package_name", package},
                                    {"product_id", "premium"},
                                    {"token", token},
                                    {"purchase_state", 1}});
    auto r = upload(*p.service, app, token, "premium", unique("GPA.3"), user);
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(str(r.json().at("in_app_purchase").at("purchase_state")) == "cancelled");
    auto bought = purchase_of(*p.service, app, user, "premium");
    CHECK(bought.at("is_active") == false);
    CHECK_FALSE(bought.at("revoked_at").is_null());
    CHECK(customer(*p.service, app, user).at("entitlements").at("premium").at("is_active")
          == false);
  }
  CHECK(p.service->stop() == 0);
}

TEST_CASE("an orders outage never fails the upload; the sweep reads the orders later, in one "
          "batch",
          "[store_b][orders]") {
  auto& s = the_suite();
  auto p = orders_service(s);
  auto package = unique_package("orders-sweep");
  auto app = play_app(s, p, package);
  const auto user = unique("user");
  std::vector<std::string> tokens{unique("tok"), unique("tok")};
  std::vector<std::string> order_ids{unique("GPA.4"), unique("GPA.5")};
  const char* totals[] = {"0.99", "12.50"};
  for (int i = 0; i < 2; ++i) {
    s.emulator.control("POST", "/control/store_b/purchases",
                       json::object{{"package_name", package},
                                    {"product_id", i == 0 ? "premium" : "gems_100"},
                                    {"token", tokens[i]},
                                    {"order_id", order_ids[i]}});
    register_order(s, app, order_ids[i],
                   json::object{{"currency_code", "JPY"}, {"total", totals[i]}});
  }
  // Every orders call fails while they are uploaded, and until the test lets them through.
  s.emulator.control("POST", "/control/store_b/orders_failures",
                     json::object{{"count", 1000000}, {"status", 503}});
  for (int i = 0; i < 2; ++i) {
    auto r = upload(*p.service, app, tokens[i], i == 0 ? "premium" : "gems_100", order_ids[i],
                    user);
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(str(r.json().at("validation_state")) == "validated");
    CHECK(r.json().at("in_app_purchase").at("price").is_null());
    CHECK(r.json().at("in_app_purchase").at("currency_code").is_null());
  }
  CHECK(purchase_of(*p.service, app, user, "premium").at("price").is_null());
  CHECK(purchase_of(*p.service, app, user, "premium").at("is_active") == true);
  // The outage ends: the next sweep reads both orders of the app in one call.
  s.emulator.control("POST", "/control/store_b/orders_failures", json::object{{"count", 0}});
  const auto before = calls(s, "orders");
  CHECK(eventually([&] {
    return purchase_of(*p.service, app, user, "premium").at("price") == 990
      && purchase_of(*p.service, app, user, "gems_100").at("price") == 12500;
  }));
  CHECK(str(purchase_of(*p.service, app, user, "gems_100").at("currency_code")) == "JPY");
  // The uploads' own orders.get (failed), then batchGets. (A sweep that ran between the
  // two uploads found one order due and read it singly: a third get, also failed.)
  auto logged = s.emulator.control("GET", "/control/requests");
  int batch_gets = 0, gets = 0;
  for (const auto& req : logged.as_array()) {
    auto path = str(req.at("path"));
    if (path.find("/applications/" + package + "/orders:batchGet") != std::string::npos)
      ++batch_gets;
    for (const auto& id : order_ids)
      if (path.find("/applications/" + package + "/orders/" + id) != std::string::npos)
        ++gets;
  }
  CHECK(batch_gets >= 1);
  CHECK((gets >= 2 && gets <= 3));
  auto made = calls(s, "orders") - before;
  CHECK((made >= 1 && made <= 2)); // one batch (a second when a sweep overlapped its apply)
  CHECK(p.service->stop() == 0);
}

TEST_CASE("a package whose orders orders.get refused at an upload leaves its next orders to the "
          "sweep",
          "[store_b][orders]") {
  auto& s = the_suite();
  auto p = orders_service(s);
  auto package = unique_package("orders-refused");
  auto app = play_app(s, p, package);
  const auto user = unique("user");
  std::vector<std::string> tokens{unique("tok"), unique("tok")};
  std::vector<std::string> order_ids{unique("GPA.6"), unique("GPA.7")};
  for (int i = 0; i < 2; ++i) {
    s.emulator.control("POST", "/control/store_b/purchases",
                       json::object{{"package_name", package},
                                    {"product_id", i == 0 ? "premium" : "gems_100"},
                                    {"token", tokens[i]},
                                    {"order_id", order_ids[i]}});
    register_order(s, app, order_ids[i], json::object{{"currency_code", "EUR"}, {"total", "2.00"}});
  }
  // The first upload's orders.get is refused (a service account that may not see
  // the app's financial data).
  s.emulator.control("POST", "/control/store_b/orders_failures",
                     json::object{{"count", 1}, {"status", 403}});
  auto first = upload(*p.service, app, tokens[0], "premium", order_ids[0], user);
  INFO(first.body);
  REQUIRE(first.status == 200);
  CHECK(first.json().at("in_app_purchase").at("price").is_null());
  // The next upload does not ask at all (its answer has no price although the
  // order is there to be read); the sweep reads both.
  auto second = upload(*p.service, app, tokens[1], "gems_100", order_ids[1], user);
  INFO(second.body);
  REQUIRE(second.status == 200);
  CHECK(second.json().at("in_app_purchase").at("price").is_null());
  CHECK(eventually([&] {
    return purchase_of(*p.service, app, user, "premium").at("price") == 2000
      && purchase_of(*p.service, app, user, "gems_100").at("price") == 2000;
  }));
  CHECK(p.service->stop() == 0);
}

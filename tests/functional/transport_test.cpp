// Issue 6 §10 through the real binaries: a store's verdict only over https (or
// plain http to a loopback host, as the emulator is reached here).
#include <catch2/catch.hpp>

#include "harness.hpp"

using namespace receiptd::test;
namespace json = boost::json;

TEST_CASE("store URLs off loopback must be https unless outbound.allow-http",
          "[hostile][transport][config]") {
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), RECEIPTD_BINARY);
    return run_program(args, std::chrono::seconds(60), RECEIPTD_SOURCE_DIR);
  };
  for (auto option : {"store-a.production-url", "store-a.sandbox-url", "store-b.api-url"}) {
    auto r = run({std::string("--") + option + "=http://store.example.com/x"});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(option) != std::string::npos);
    CHECK(r.err.find("https") != std::string::npos);
  }
}

TEST_CASE("a service account whose token_uri is plain http off loopback is not used",
          "[hostile][transport]") {
  auto& s = the_suite();
  auto package = unique_package("plain");
  auto account = make_service_account(s);
  auto sa = json::parse(read_text(account.path)).as_object();
  sa["token_uri"] = "http://oauth.example.com/token";
  write_text(account.path, json::serialize(sa));
  auto created
    = s.ctl({"app", "create", "--name=" + unique("plain"), "--package-name=" + package,
             "--license-key=" + test_licence_key(), "--service-account-file=" + account.path});
  INFO(created.err);
  REQUIRE(created.code == 0);
  std::string token(created.json.at("token").as_string());
  auto order_token = unique("tok");
  register_purchase(s, package, "gold", order_token, "product");
  auto data = purchase_data_json(package, "gold", order_token);
  auto r = s.service.post("/client/store_b/purchase_orders",
                          store_b_body(data, sign_purchase(data)), token);
  INFO(r.body);
  // An operator problem: stored, revalidated later, never fraud.
  CHECK(r.status == 206);
  CHECK(eventually(
    [&] { return s.service.log().find("token_uri that is not https") != std::string::npos; }));
}

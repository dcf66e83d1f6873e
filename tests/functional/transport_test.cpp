// Outbound transport rules through the real binaries: a store's verdict only over https (or
// plain http to a loopback host, as the emulator is reached here).
#include <catch2/catch.hpp>

#include <thread>

#include "harness.hpp"
#include "model/encoding.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

// A Store B app (package, test licence key) whose service account fetches its
// access tokens from `token_uri`; its upload token.
std::string create_app_with_token_uri(suite& s, const std::string& package,
                                      const std::string& token_uri) {
  auto account = make_service_account(s);
  auto sa = json::parse(read_text(account.path)).as_object();
  sa["token_uri"] = token_uri;
  write_text(account.path, json::serialize(sa));
  auto created
    = s.ctl({"app", "create", "--name=" + unique("app"), "--package-name=" + package,
             "--license-key=" + test_licence_key(), "--service-account-file=" + account.path});
  INFO(created.err);
  REQUIRE(created.code == 0);
  return std::string(created.json.at("token").as_string());
}

} // namespace

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

TEST_CASE("outbound.store-http-version is 'auto' or '1.1'", "[transport][config]") {
  for (auto value : {"2", "h2c"}) {
    auto r = run_program({RECEIPTD_BINARY, std::string("--outbound.store-http-version=") + value},
                         std::chrono::seconds(60), RECEIPTD_SOURCE_DIR);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("outbound.store-http-version") != std::string::npos);
  }
}

TEST_CASE("a service account whose token_uri is plain http off loopback is not used",
          "[hostile][transport]") {
  auto& s = the_suite();
  auto package = unique_package("plain");
  auto token = create_app_with_token_uri(s, package, "http://oauth.example.com/token");
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

TEST_CASE("store calls over TLS negotiate HTTP/2 and share a connection; HTTP/1.1 and an "
          "untrusted certificate get no verdict",
          "[transport][http2]") {
  auto& s = the_suite();
  auto dir = make_temp_dir("receiptd-h2");
  const auto ca_file = dir + "/emulator-ca.pem";
  write_text(ca_file, s.emulator.tls_certificate_pem());
  // The app's access tokens come from the HTTP/2 listener too.
  auto package = unique_package("h2");
  auto token = create_app_with_token_uri(s, package, s.emulator.store_b_h2_url() + "/token");
  auto connections = [&] {
    return s.emulator.control("GET", "/control/stores")
      .at("store_b")
      .at("h2_connections")
      .to_number<std::int64_t>();
  };
  // The suite's options with Store B at its HTTP/2 listener, plus `extra`.
  auto run_with = [&](std::vector<std::string> extra) {
    auto args = standard_service_args(s);
    std::erase_if(args, [](const std::string& a) { return a.rfind("--store-b.api-url=", 0) == 0; });
    args.push_back("--store-b.api-url=" + s.emulator.store_b_h2_url());
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<service_process>(dir, s.db_url, args);
  };
  auto upload = [&](service_process& service) {
    auto order_token = unique("h2tok");
    register_purchase(s, package, "gold", order_token, "product");
    auto data = purchase_data_json(package, "gold", order_token);
    return service.post("/client/store_b/purchase_orders", store_b_body(data, sign_purchase(data)),
                        token);
  };

  SECTION("trusting the store's certificate: validated over one HTTP/2 connection") {
    auto service = run_with({"--outbound.ca-file=" + ca_file});
    service->start();
    auto before = connections();
    for (int i = 0; i < 4; ++i) {
      auto r = upload(*service);
      INFO(r.body);
      CHECK(r.status == 200);
      CHECK(str(r.json().at("validation_state")) == "validated");
    }
    // The token fetch and the four purchase calls: one connection, which only
    // speaks HTTP/2 (ALPN "h2" or no handshake).
    CHECK(connections() == before + 1);
    CHECK(service->stop() == 0);
  }
  SECTION("outbound.store-http-version=1.1 asks for HTTP/1.1, which this store refuses") {
    auto service = run_with({"--outbound.ca-file=" + ca_file, "--outbound.store-http-version=1.1"});
    service->start();
    auto r = upload(*service);
    INFO(r.body);
    CHECK(r.status == 206);
    CHECK(eventually([&] {
      return read_text(service->trace_file()).find("no application protocol") != std::string::npos;
    }));
    CHECK(service->stop() == 0);
  }
  SECTION("a certificate the service does not trust gets no verdict") {
    auto service = run_with({}); // the system's CAs only
    service->start();
    auto r = upload(*service);
    INFO(r.body);
    CHECK(r.status == 206);
    CHECK(str(r.json().at("validation_state")) == "pending");
    // The store client's span says why (PROTOCOL.md: the certificate is self-signed).
    CHECK(eventually([&] {
      return read_text(service->trace_file()).find("SSL certificate problem") != std::string::npos;
    }));
    CHECK(service->stop() == 0);
  }
}

TEST_CASE("verifyReceipt answers of many KB over HTTP/2 arrive whole, uploads in parallel",
          "[transport][http2][store_a]") {
  // Each answer here is larger than one read of curl's receive buffer: its
  // in_app list and latest_receipt. Over HTTP/2 with a receive buffer smaller than
  // curl's default, curl 7.88 wrote past the buffer (some answers read as garbage,
  // "Received HTTP/0.9", the uploads held with 206, then a corrupted heap).
  auto& s = the_suite();
  auto dir = make_temp_dir("receiptd-h2-receipts");
  const auto ca_file = dir + "/emulator-ca.pem";
  write_text(ca_file, s.emulator.tls_certificate_pem());
  auto args = standard_service_args(s);
  std::erase_if(args, [](const std::string& a) {
    return a.rfind("--store-a.production-url=", 0) == 0
      || a.rfind("--store-a.sandbox-url=", 0) == 0;
  });
  args.push_back("--store-a.production-url=" + s.emulator.store_a_h2_url() + "/verifyReceipt");
  args.push_back("--store-a.sandbox-url=" + s.emulator.store_a_h2_url() + "/sandbox/verifyReceipt");
  args.push_back("--outbound.ca-file=" + ca_file);
  service_process service(dir, s.db_url, args);
  service.start();
  const std::string bundle = unique_package("h2receipts");
  auto app = create_store_a_app(s, bundle);
  constexpr int clients = 4, each = 10;
  std::vector<std::string> bodies;
  for (int i = 0; i < clients * each; ++i) {
    test_support::unified_receipt_params p;
    p.bundle_id = bundle;
    p.receipt_type = "ProductionSandbox";
    for (int k = 0; k < 12; ++k)
      p.in_app.push_back(test_support::purchase(bundle + ".pro." + std::to_string(k),
                                                unique("100000"), test_support::utc(2024, 5, 1)));
    auto receipt = model::base64_encode(
      test_support::make_unified_receipt(p, test_support::apple_like_signer(s.pki)));
    bodies.push_back(json::serialize(json::object{{"receipt", receipt}}));
  }
  std::vector<std::vector<int>> statuses(clients);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      for (int i = 0; i < each; ++i)
        statuses[c].push_back(
          service.post("/client/store_a/receipts", bodies[c * each + i], app.token).status);
    });
  for (auto& t : threads)
    t.join();
  int ok = 0;
  for (const auto& per_client : statuses)
    for (int status : per_client)
      ok += status == 200;
  CHECK(ok == clients * each);
  CHECK(service.running());
  CHECK(service.stop() == 0);
  CHECK(service.log().find("HTTP/0.9") == std::string::npos);
}

// What an operator relies on: accepted uploads survive kill -9, overload is
// refused politely, shutdown is clean, bad configuration stops the start.
#include <catch2/catch.hpp>

#include <signal.h>

#include <thread>

#include "harness.hpp"

using namespace receiptd::test;
namespace json = boost::json;

TEST_CASE("SIGKILL with pending jobs: completed after the restart", "[resilience][kill]") {
  auto& s = the_suite();
  auto package = unique_package("kill");
  auto app = create_store_b_app(s, package, test_licence_key());
  s.emulator.set_mode("store_b", "down");
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    auto token = unique("tok");
    register_purchase(s, package, "gold", token, "product");
    auto data = purchase_data_json(package, "gold", token);
    auto r = s.service.post("/client/store_b/purchase_orders",
                            store_b_body(data, sign_purchase(data)), app.token);
    INFO(r.body);
    REQUIRE(r.status == 206);
    ids.push_back(str(r.json().at("id")));
  }
  s.service.kill9();
  s.emulator.set_mode("store_b", "up");
  s.service.start();
  for (const auto& id : ids) {
    INFO("record " << id);
    bool validated = eventually(
      [&] {
        auto r = s.service.get("/client/store_b/purchase_orders/" + id, app.token);
        return r.status == 200 && str(r.json().at("validation_state")) == "validated";
      },
      std::chrono::seconds(30));
    CHECK(validated);
  }
}

TEST_CASE("beyond max-in-flight: 503 with Retry-After", "[resilience][overload]") {
  auto& s = the_suite();
  auto package = unique_package("busy");
  auto app = create_store_b_app(s, package, test_licence_key());
  service_process busy(s.dir, s.db_url,
                       {"--store-b.api-url=" + s.emulator.store_b_url(),
                        "--validator.max-in-flight=1", "--validator.store-deadline=6s",
                        "--retry.lease=10s"});
  busy.start();
  s.emulator.set_mode("store_b", "slow", 1500);
  auto token = unique("tok");
  register_purchase(s, package, "gold", token, "product");
  auto data = purchase_data_json(package, "gold", token);
  auto body = store_b_body(data, sign_purchase(data));
  // Five at once: the one admitted holds the only slot for the slow store call.
  std::vector<http_response> answers(5);
  std::vector<std::thread> threads;
  for (auto& a : answers)
    threads.emplace_back(
      [&] { a = busy.post("/client/store_b/purchase_orders", body, app.token); });
  for (auto& t : threads)
    t.join();
  s.emulator.set_mode("store_b", "up");
  int ok = 0, refused = 0;
  for (auto& a : answers) {
    if (a.status == 200)
      ++ok;
    if (a.status == 503) {
      ++refused;
      CHECK(a.header("retry-after") == "1");
      CHECK(str(a.json().at("errors").at(0).at("code")) == "overloaded");
    }
  }
  std::string seen;
  for (auto& a : answers)
    seen += std::to_string(a.status) + " " + a.body + "\n";
  INFO(seen);
  CHECK(ok == 1);
  CHECK(refused == 4);
  CHECK(busy.stop() == 0);
}

TEST_CASE("bad configuration stops the start with a message naming the option",
          "[resilience][config]") {
  auto& s = the_suite();
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), RECEIPTD_BINARY);
    return run_program(args, std::chrono::seconds(60), RECEIPTD_SOURCE_DIR);
  };
  auto r = run({"--http.port=notaport"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("http.port") != std::string::npos);
  r = run({"--retry.multiplier=0.5"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("retry.multiplier") != std::string::npos);
  r = run({"--no.such-option=1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no.such-option") != std::string::npos);
  auto ini = s.dir + "/bad.ini";
  write_text(ini, "[db]\npool-size=\"four\"\n");
  r = run({"--config-file=" + ini});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("db.pool-size") != std::string::npos);
  r = run({"--db.url=postgresql://host=127.0.0.1 port=1 dbname=x user=x", "--http.port=0"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("database") != std::string::npos);
  r = run({"--store-a.trust-roots=[\"/no/such/root.pem\"]"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("store-a.trust-roots") != std::string::npos);
  r = run({"--help"});
  CHECK(r.exit_code == 0);
  for (auto option : {"http.port", "db.url", "validator.max-in-flight", "store-b.api-url",
                      "retry.initial", "scheduler.max-threads"})
    CHECK(r.out.find(option) != std::string::npos);
}

TEST_CASE("SIGTERM drains and exits 0", "[resilience][shutdown]") {
  auto& s = the_suite();
  service_process other(s.dir, s.db_url, {"--store-b.api-url=" + s.emulator.store_b_url()});
  other.start();
  CHECK(other.stop() == 0);
  CHECK(other.log().find("stopped") != std::string::npos);
}

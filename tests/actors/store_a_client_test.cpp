// The Store A client on the deterministic scheduler, against a transport the test
// answers: the one 21007/21008 environment flip, and a waiting call whose
// deadline passes before a slot frees.
#include <catch2/catch.hpp>

#include "actors/store_a_client.hpp"
#include "fixture.hpp"
#include "model/store_a/verify_receipt_api.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

constexpr const char* production_url = "https://buy.example.test/verifyReceipt";
constexpr const char* sandbox_url = "https://sandbox.example.test/verifyReceipt";

struct store_a_bench : actor_fixture {
  fake_transport transport;
  config::store_a_settings settings;
  store_a_client_actor client;

  store_a_bench() {
    settings.production_url = production_url;
    settings.sandbox_url = sandbox_url;
  }

  void start() {
    client = keep(spawn_store_a_client(*sys, settings, transport, tracer::off(), clock));
  }

  auto check(bool sandbox_first, store_deadline deadline = std::nullopt) {
    store_a_check c;
    c.trace = {"t1", 0};
    c.app_id = "app-1";
    c.receipt_data = std::make_shared<const std::string>("cmVjZWlwdA==");
    c.password = "secret";
    c.sandbox_first = sandbox_first;
    c.deadline = deadline;
    auto answer = ask<store_a_answer>(client, std::move(c));
    run();
    return answer;
  }

  void answer(std::size_t i, const std::string& body) {
    transport.answer(i, 200, body);
    run();
  }
};

// What every verifyReceipt call of these checks sends (Apple: requestBody).
const std::string expected_body
  = model::store_a::verify_receipt_body("cmVjZWlwdA==", "secret", true);

} // namespace

TEST_CASE("21007 from production: one retry at the sandbox URL decides", "[actors][store_a]") {
  store_a_bench b;
  b.start();
  auto answer = b.check(false);
  REQUIRE(b.transport.size() == 1);
  CHECK(b.transport[0].url == production_url);
  CHECK(b.transport[0].method == "POST");
  CHECK(b.transport[0].body == expected_body);
  b.answer(0, R"({"status":21007})");
  CHECK_FALSE(answer->has_value());
  REQUIRE(b.transport.size() == 2);
  CHECK(b.transport[1].url == sandbox_url);
  CHECK(b.transport[1].body == expected_body);
  b.answer(1, R"({"status":0})"); // no "environment": the endpoint that answered says
  REQUIRE(answer->has_value());
  CHECK((*answer)->verdict.outcome == model::store_outcome::confirmed);
  CHECK((*answer)->verdict.env == model::environment::sandbox);
  CHECK((*answer)->verdict.detail == "status 0");
  CHECK(b.transport.size() == 2);
}

TEST_CASE("21008 from sandbox: one retry at production decides", "[actors][store_a]") {
  store_a_bench b;
  b.start();
  auto answer = b.check(true);
  REQUIRE(b.transport.size() == 1);
  CHECK(b.transport[0].url == sandbox_url);
  b.answer(0, R"({"status":21008})");
  REQUIRE(b.transport.size() == 2);
  CHECK(b.transport[1].url == production_url);
  b.answer(1, R"({"status":0})");
  REQUIRE(answer->has_value());
  CHECK((*answer)->verdict.outcome == model::store_outcome::confirmed);
  CHECK((*answer)->verdict.env == model::environment::production);
  CHECK(b.transport.size() == 2);
}

TEST_CASE("a second 21007 does not flip again", "[actors][store_a]") {
  store_a_bench b;
  b.start();
  auto answer = b.check(false);
  b.answer(0, R"({"status":21007})");
  REQUIRE(b.transport.size() == 2);
  b.answer(1, R"({"status":21007})");
  REQUIRE(answer->has_value());
  CHECK(b.transport.size() == 2);
  CHECK((*answer)->verdict.outcome == model::store_outcome::unreachable);
  CHECK((*answer)->verdict.detail == "status 21007 (sandbox receipt at production)");
}

TEST_CASE("a silent store: calls sent and calls waiting for a slot are answered at their "
          "deadline",
          "[actors][store_a][deadline]") {
  store_a_bench b;
  b.settings.max_concurrent = 1;
  b.start();
  auto later = [&](std::chrono::milliseconds d) { // both clocks, as real time moves them
    b.clock.advance(d);
    b.sched->advance_time(d);
    b.run();
  };
  auto sent = b.check(false, b.clock.steady_now() + std::chrono::seconds(5));
  later(std::chrono::seconds(1));
  auto waiting = b.check(false, b.clock.steady_now() + std::chrono::seconds(5));
  REQUIRE(b.transport.size() == 1); // the second waits for the only slot; the store is silent
  later(std::chrono::milliseconds(3900));
  CHECK_FALSE(sent->has_value());
  later(std::chrono::milliseconds(200));
  REQUIRE(sent->has_value()); // its deadline: 5 s
  CHECK_FALSE(waiting->has_value());
  CHECK((*sent)->verdict.outcome == model::store_outcome::unreachable);
  CHECK((*sent)->verdict.detail.find("store deadline passed") != std::string::npos);
  later(std::chrono::seconds(1));
  REQUIRE(waiting->has_value()); // its deadline: 6 s, the slot still taken
  CHECK((*waiting)->verdict.outcome == model::store_outcome::unreachable);
  CHECK((*waiting)->verdict.detail
        == "store unreachable: deadline passed while waiting for the store; not sent");
  b.answer(0, R"({"status":0})"); // the first call's late answer: let go, nothing sent after it
  CHECK(b.transport.size() == 1);
  CHECK((*sent)->verdict.outcome == model::store_outcome::unreachable);
}

TEST_CASE("a call waiting for a slot is dropped, never sent, once its deadline passes",
          "[actors][store_a]") {
  store_a_bench b;
  b.settings.max_concurrent = 1;
  b.start();
  auto first = b.check(false);
  auto second = b.check(false, b.clock.steady_now() + std::chrono::seconds(5));
  REQUIRE(b.transport.size() == 1); // the second waits for the only slot
  SECTION("the deadline passes before the slot frees: not sent, unreachable") {
    b.clock.advance(std::chrono::seconds(5));
    b.answer(0, R"({"status":0})");
    REQUIRE(first->has_value());
    CHECK((*first)->verdict.outcome == model::store_outcome::confirmed);
    REQUIRE(second->has_value());
    CHECK(b.transport.size() == 1);
    CHECK((*second)->verdict.outcome == model::store_outcome::unreachable);
    CHECK((*second)->verdict.detail
          == "store unreachable: deadline passed while waiting for the store; not sent");
  }
  SECTION("the slot frees 1 ms before the deadline: sent") {
    b.clock.advance(std::chrono::milliseconds(4999));
    b.answer(0, R"({"status":0})");
    CHECK_FALSE(second->has_value());
    REQUIRE(b.transport.size() == 2);
    b.answer(1, R"({"status":0})");
    REQUIRE(second->has_value());
    CHECK((*second)->verdict.outcome == model::store_outcome::confirmed);
  }
}

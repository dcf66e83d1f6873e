// The validator's paths on the deterministic scheduler: the store deadline turns
// a silent store into a 206 with a job; answers map onto 200/402/422.
#include <catch2/catch.hpp>

#include "actors/app_context.hpp"
#include "actors/validator_steps.hpp"
#include "fixture.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

struct validator_bench : actor_fixture {
  std::shared_ptr<persistence_log> log = std::make_shared<persistence_log>();
  std::shared_ptr<recording_sink> sink = std::make_shared<recording_sink>();
  validator_deps_ptr deps;
  store_b_client_actor store;

  explicit validator_bench(std::optional<model::store_verdict> answer) {
    store = keep(sys->spawn(fake_store_b, answer, &clock));
    auto d = std::make_shared<validator_deps>();
    d->persistence = keep(sys->spawn(fake_persistence, log));
    d->store_b = store;
    d->settings.store_deadline = std::chrono::seconds(5);
    d->settings.retry = {.initial_ms = 1000, .max_ms = 60000, .multiplier = 2.0, .max_attempts = 5};
    d->clock = &clock;
    d->random = &random;
    deps = d;
  }

  void upload_legacy(const std::string& package = "com.example") {
    model::app a;
    a.id = "app-1";
    a.package_name = "com.example";
    inbound in{http::inbound_request(http::route::store_b_legacy_upload), nullptr};
    in.request.body
      = R"({"package_name":")" + package + R"(","purchase_token":"tok","product_id":"gold"})";
    in.request.peer_ip = "10.0.0.1";
    in.request.trace_id = "t1";
    in.reply = sink;
    sys->spawn(validate_upload, std::move(in), make_app_context(a), deps);
  }
};

} // namespace

TEST_CASE("a silent store: at the deadline the upload is stored pending, 206",
          "[actors][validator]") {
  validator_bench b(std::nullopt);
  b.upload_legacy();
  b.run();
  CHECK(b.sink->replies.empty()); // waiting on the store
  CHECK(b.log->saved.empty());
  b.sched->advance_time(std::chrono::milliseconds(4900));
  b.run();
  CHECK(b.sink->replies.empty()); // not yet
  b.sched->advance_time(std::chrono::milliseconds(200));
  b.run();
  REQUIRE(b.sink->replies.size() == 1);
  CHECK(b.sink->replies[0].status == 206);
  REQUIRE(b.log->saved.size() == 1);
  CHECK(b.log->saved[0].state == model::validation_state::pending);
  CHECK(b.log->saved[0].store_detail == "store deadline passed");
  CHECK(b.log->saved[0].is_legacy);
  CHECK(b.log->saved[0].echo.ip_address == std::string("10.0.0.1"));
}

TEST_CASE("the first retry is due within the initial backoff", "[actors][validator]") {
  validator_bench b(verdict(model::store_outcome::unreachable, "HTTP 503"));
  b.random.set(0.75);
  b.upload_legacy();
  b.run();
  REQUIRE(b.sink->replies.size() == 1);
  CHECK(b.sink->replies[0].status == 206);
  REQUIRE(b.log->first_attempts.size() == 1);
  // Full jitter under the initial 1000 ms: a draw of 0.75 is 750 ms after now.
  CHECK(b.log->first_attempts[0] == manual_time::start_ms + 750);
  CHECK(b.log->saved[0].created_at == manual_time::start_ms);
}

TEST_CASE("a store's Retry-After delays the first retry, and the 206 says so",
          "[actors][validator]") {
  auto limited = verdict(model::store_outcome::unreachable, "HTTP 429");
  limited.retry_not_before = manual_time::start_ms + 90'500; // Retry-After of 90.5 s
  validator_bench b(limited);
  b.random.set(0.75);
  b.upload_legacy();
  b.run();
  REQUIRE(b.sink->replies.size() == 1);
  CHECK(b.sink->replies[0].status == 206);
  REQUIRE(b.log->first_attempts.size() == 1);
  CHECK(b.log->first_attempts[0] == manual_time::start_ms + 90'500);
  CHECK(b.sink->replies[0].retry_after_seconds == 91); // whole seconds, rounded up
}

TEST_CASE("store answers map onto 200 and 402", "[actors][validator]") {
  SECTION("confirmed → 200 validated") {
    validator_bench b(verdict(model::store_outcome::confirmed, "HTTP 200"));
    b.upload_legacy();
    b.run();
    REQUIRE(b.sink->replies.size() == 1);
    CHECK(b.sink->replies[0].status == 200);
    CHECK(b.log->saved[0].state == model::validation_state::validated);
  }
  SECTION("rejected → 402 store_rejected, stored") {
    validator_bench b(verdict(model::store_outcome::rejected, "HTTP 404"));
    b.upload_legacy();
    b.run();
    REQUIRE(b.sink->replies.size() == 1);
    CHECK(b.sink->replies[0].status == 402);
    CHECK(b.log->saved[0].fraud == model::fraud_reason::store_rejected);
  }
  SECTION("package of another app → 402 without asking the store") {
    validator_bench b(verdict(model::store_outcome::confirmed));
    b.upload_legacy("com.other");
    b.run();
    REQUIRE(b.sink->replies.size() == 1);
    CHECK(b.sink->replies[0].status == 402);
    CHECK(b.log->saved[0].fraud == model::fraud_reason::package_name_mismatch);
  }
}

TEST_CASE("bad input is a 422 and nothing is stored", "[actors][validator]") {
  validator_bench b(verdict(model::store_outcome::confirmed));
  model::app a;
  a.id = "app-1";
  a.package_name = "com.example";
  inbound in{http::inbound_request(http::route::store_b_legacy_upload), nullptr};
  in.request.body = "[]";
  in.reply = b.sink;
  b.sys->spawn(validate_upload, std::move(in), make_app_context(a), b.deps);
  b.run();
  REQUIRE(b.sink->replies.size() == 1);
  CHECK(b.sink->replies[0].status == 422);
  CHECK(b.log->saved.empty());
}

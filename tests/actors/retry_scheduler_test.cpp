// The retry scheduler's claim cadence and the backoff of revalidation jobs, on
// the deterministic scheduler.
#include <catch2/catch.hpp>

#include "actors/retry_scheduler.hpp"
#include "actors/validator_steps.hpp"
#include "fixture.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

struct scheduler_bench : actor_fixture {
  std::shared_ptr<persistence_log> log = std::make_shared<persistence_log>();
  validator_deps_ptr deps;
  config::retry_settings settings;

  explicit scheduler_bench(std::optional<model::store_verdict> answer) {
    auto d = std::make_shared<validator_deps>();
    d->persistence = keep(sys->spawn(fake_persistence, log));
    d->store_b = keep(sys->spawn(fake_store_b, answer, &clock));
    d->settings.store_deadline = std::chrono::seconds(5);
    d->settings.retry = {.initial_ms = 1000, .max_ms = 8000, .multiplier = 2.0, .max_attempts = 4};
    d->clock = &clock;
    d->random = &random;
    deps = d;
    settings.poll_interval = std::chrono::seconds(1);
    settings.batch = 10;
  }

  void add_job(int attempts) {
    claimed_job c;
    c.job.id = "job-" + std::to_string(log->to_claim.size() + 1);
    c.job.record_id = "po-1";
    c.job.app_id = "app-1";
    c.job.attempts = attempts;
    c.job.version = 7;
    model::purchase_order_record r;
    r.id = "po-1";
    r.app_id = "app-1";
    r.is_legacy = true;
    r.package_name = "com.example";
    r.purchase_token = "tok";
    r.purchase.product_id = "gold";
    c.record = r;
    model::app a;
    a.id = "app-1";
    a.package_name = "com.example";
    c.app = a;
    log->to_claim.push_back(c);
  }
};

} // namespace

TEST_CASE("a tick while a claim is out (work noticed) claims again once it is answered",
          "[actors][retry][work_notice]") {
  scheduler_bench b(verdict(model::store_outcome::confirmed));
  auto scheduler = b.keep(spawn_retry_scheduler(*b.sys, b.settings, {}, "test", b.deps));
  b.run();
  CHECK(b.log->claims == 1);
  // Both arrive before the first claim's answer: the second is not lost.
  caf::anon_send(scheduler, tick_atom_v);
  caf::anon_send(scheduler, tick_atom_v);
  b.run();
  CHECK(b.log->claims == 3);
  // The poll keeps its cadence.
  b.sched->advance_time(std::chrono::milliseconds(1000));
  b.run();
  CHECK(b.log->claims == 4);
}

TEST_CASE("claims at start, then once per poll interval", "[actors][retry]") {
  scheduler_bench b(verdict(model::store_outcome::confirmed));
  b.keep(spawn_retry_scheduler(*b.sys, b.settings, {}, "test", b.deps));
  b.run();
  CHECK(b.log->claims == 1);
  b.run();
  CHECK(b.log->claims == 1);
  b.sched->advance_time(std::chrono::milliseconds(999));
  b.run();
  CHECK(b.log->claims == 1);
  b.sched->advance_time(std::chrono::milliseconds(1));
  b.run();
  CHECK(b.log->claims == 2);
}

TEST_CASE("a job the store confirms is completed as validated", "[actors][retry]") {
  scheduler_bench b(verdict(model::store_outcome::confirmed, "HTTP 200"));
  b.add_job(2);
  b.keep(spawn_retry_scheduler(*b.sys, b.settings, {}, "test", b.deps));
  b.run();
  REQUIRE(b.log->completed.size() == 1);
  CHECK(b.log->completed[0].first.version == 7); // fenced by the claimed version
  CHECK(b.log->completed[0].second.state == model::validation_state::validated);
  CHECK(b.log->rescheduled.empty());
}

TEST_CASE("a store still down: rescheduled with exponential backoff and full jitter",
          "[actors][retry]") {
  scheduler_bench b(verdict(model::store_outcome::unreachable, "HTTP 503"));
  b.add_job(2);
  b.random.set(0.25);
  b.keep(spawn_retry_scheduler(*b.sys, b.settings, {}, "test", b.deps));
  b.run();
  REQUIRE(b.log->rescheduled.size() == 1);
  auto& job = b.log->rescheduled[0];
  CHECK(job.attempts == 3);
  CHECK(job.last_error == "HTTP 503");
  // Attempt 3 draws its delay from [0, 1000·2³ capped at 8000] ms: a draw of
  // 0.25 is 2000 ms after now.
  CHECK(job.next_attempt_at == manual_time::start_ms + 2000);
  CHECK(b.log->completed.empty());
}

TEST_CASE("a store's Retry-After: rescheduled no earlier than it asked", "[actors][retry]") {
  SECTION("later than the backoff: the store's instant") {
    auto limited = verdict(model::store_outcome::unreachable, "HTTP 429");
    limited.retry_not_before = manual_time::start_ms + 3'600'000; // Retry-After: 3600
    scheduler_bench b(limited);
    b.add_job(2);
    b.random.set(0.25);
    b.keep(spawn_retry_scheduler(*b.sys, b.settings, {}, "test", b.deps));
    b.run();
    REQUIRE(b.log->rescheduled.size() == 1);
    CHECK(b.log->rescheduled[0].attempts == 3);
    CHECK(b.log->rescheduled[0].next_attempt_at == manual_time::start_ms + 3'600'000);
  }
  SECTION("sooner than the backoff: the backoff") {
    auto limited = verdict(model::store_outcome::unreachable, "HTTP 429");
    limited.retry_not_before = manual_time::start_ms + 500;
    scheduler_bench b(limited);
    b.add_job(2);
    b.random.set(0.25);
    b.keep(spawn_retry_scheduler(*b.sys, b.settings, {}, "test", b.deps));
    b.run();
    REQUIRE(b.log->rescheduled.size() == 1);
    CHECK(b.log->rescheduled[0].next_attempt_at == manual_time::start_ms + 2000);
  }
}

TEST_CASE("a job out of attempts marks its record failed", "[actors][retry]") {
  scheduler_bench b(verdict(model::store_outcome::unreachable, "timeout"));
  b.add_job(3); // the fourth attempt is the last
  b.keep(spawn_retry_scheduler(*b.sys, b.settings, {}, "test", b.deps));
  b.run();
  CHECK(b.log->rescheduled.empty());
  REQUIRE(b.log->completed.size() == 1);
  CHECK(b.log->completed[0].second.state == model::validation_state::failed);
}

TEST_CASE("a silent store: the revalidation deadline reschedules the job", "[actors][retry]") {
  scheduler_bench b(std::nullopt);
  b.add_job(0);
  b.keep(spawn_retry_scheduler(*b.sys, b.settings, {}, "test", b.deps));
  b.run();
  CHECK(b.log->rescheduled.empty());
  b.sched->advance_time(std::chrono::seconds(5));
  b.run();
  REQUIRE(b.log->rescheduled.size() == 1);
  CHECK(b.log->rescheduled[0].last_error == "store deadline passed");
}

TEST_CASE("a revalidation that dies without reporting does not stop the polling",
          "[actors][retry]") {
  scheduler_bench b(std::nullopt);
  auto callers = std::make_shared<std::vector<caf::strong_actor_ptr>>();
  auto d = std::make_shared<validator_deps>(*b.deps);
  d->store_b = b.keep(b.sys->spawn(holding_store, callers, &b.clock));
  b.deps = d;
  b.settings.batch = 1;
  b.add_job(0);
  b.keep(spawn_retry_scheduler(*b.sys, b.settings, {}, "test", b.deps));
  b.run();
  REQUIRE(b.log->claims == 1);
  REQUIRE(callers->size() == 1);
  // A poll while the batch is full claims nothing...
  b.sched->advance_time(std::chrono::seconds(1));
  b.run();
  CHECK(b.log->claims == 1);
  // ...then the revalidation is killed before it could report.
  caf::anon_send_exit(caf::actor_cast<caf::actor>(callers->front()), caf::exit_reason::kill);
  b.run();
  b.log->to_claim.clear();
  b.sched->advance_time(std::chrono::seconds(1));
  b.run();
  CHECK(b.log->claims == 2);
  b.sched->advance_time(std::chrono::seconds(1));
  b.run();
  CHECK(b.log->claims == 3);
}

TEST_CASE("revalidations start no faster than their store's retry rate", "[actors][retry]") {
  scheduler_bench b(verdict(model::store_outcome::confirmed));
  for (int i = 0; i < 5; ++i)
    b.add_job(1);
  // Store B: 20 per second, in bursts of 2 (a tenth of a second's worth); Store A
  // unlimited.
  b.keep(spawn_retry_scheduler(*b.sys, b.settings, {.store_a = 0, .store_b = 20}, "test", b.deps));
  b.run();
  CHECK(b.log->claims == 1);
  CHECK(b.log->completed.size() == 2); // the burst
  auto advance = [&](std::chrono::milliseconds d) {
    b.clock.advance(d);       // the buckets' time
    b.sched->advance_time(d); // CAF's: the pacing tick
    b.run();
  };
  advance(std::chrono::milliseconds(49));
  CHECK(b.log->completed.size() == 2);
  advance(std::chrono::milliseconds(1));
  CHECK(b.log->completed.size() == 3); // one token every 50 ms
  advance(std::chrono::milliseconds(50));
  CHECK(b.log->completed.size() == 4);
  advance(std::chrono::milliseconds(50));
  CHECK(b.log->completed.size() == 5);
}

TEST_CASE("a scheduler claims no more than its slowest store starts within half a lease",
          "[actors][retry]") {
  scheduler_bench b(verdict(model::store_outcome::confirmed));
  b.settings.batch = 100;
  b.settings.lease = std::chrono::seconds(4);
  for (int i = 0; i < 3; ++i)
    b.add_job(1);
  // Store A: 2 per second: 2 s (half the lease) start 4, plus the one now.
  b.keep(spawn_retry_scheduler(*b.sys, b.settings, {.store_a = 2, .store_b = 0}, "test", b.deps));
  b.run();
  REQUIRE(!b.log->claim_limits.empty()); // then again, once the three are done
  CHECK(b.log->claim_limits[0] == 5);
  // Unlimited stores: the batch.
  scheduler_bench u(verdict(model::store_outcome::confirmed));
  u.settings.batch = 100;
  u.keep(spawn_retry_scheduler(*u.sys, u.settings, {}, "test", u.deps));
  u.run();
  REQUIRE(!u.log->claim_limits.empty());
  CHECK(u.log->claim_limits[0] == 100);
}

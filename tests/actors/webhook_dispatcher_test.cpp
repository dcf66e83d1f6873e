// The webhook dispatcher on the deterministic scheduler: what it sends,
// how many at once per endpoint, and what each outcome records.
#include <catch2/catch.hpp>

#include "actors/webhook_dispatcher.hpp"
#include "fixture.hpp"
#include "model/webhooks.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

struct dispatcher_bench : actor_fixture {
  std::shared_ptr<persistence_log> log = std::make_shared<persistence_log>();
  fake_transport transport;
  config::webhook_settings settings;
  webhook_dispatcher_actor dispatcher;

  dispatcher_bench() {
    settings.poll_interval = std::chrono::seconds(1);
    settings.batch = 10;
    settings.max_concurrent_per_endpoint = 1;
    settings.initial_backoff = std::chrono::seconds(10);
    settings.max_backoff = std::chrono::seconds(80);
    settings.max_attempts = 3;
    settings.timeout = std::chrono::seconds(5);
  }

  void add(const std::string& event, const std::string& endpoint, int attempts = 0) {
    model::webhook_delivery d;
    d.event_id = event;
    d.endpoint_id = endpoint;
    d.app_id = "app-1";
    d.record_id = "rec-" + event;
    d.url = "https://hooks.example.com/" + endpoint;
    d.secret = "whsec_" + endpoint;
    d.body = R"({"id":")" + event + R"(","type":"receipt.created"})";
    d.attempts = attempts;
    d.version = 3;
    log->deliveries_to_claim.push_back(d);
  }

  void start() {
    webhook_dispatcher_deps deps{keep(sys->spawn(fake_persistence, log)), &transport,
                                 &tracer::off(), &clock, &random};
    dispatcher = keep(spawn_webhook_dispatcher(*sys, settings, "instance-1", deps));
    run();
  }

  const model::webhook_delivery& finished(const std::string& event) {
    for (const auto& d : log->finished)
      if (d.event_id == event)
        return d;
    FAIL("no finished delivery for " << event);
    throw std::logic_error("unreachable");
  }
};

} // namespace

TEST_CASE("a delivery is the event's exact body, signed with the endpoint's secret",
          "[actors][webhooks]") {
  dispatcher_bench b;
  b.add("evt_1", "ep-a");
  b.start();
  REQUIRE(b.log->delivery_claims == 1);
  REQUIRE(b.transport.size() == 1);
  const auto& req = b.transport[0];
  CHECK(req.method == "POST");
  CHECK(req.url == "https://hooks.example.com/ep-a");
  CHECK(req.body == R"({"id":"evt_1","type":"receipt.created"})");
  CHECK(req.timeout == std::chrono::seconds(5));
  auto t = b.clock.now_ms() / 1000;
  CHECK(req.headers == model::delivery_headers("whsec_ep-a", req.body, "evt_1", t));
  CHECK(has_header(req, "X-SHA256-Digest: " + model::hmac_sha256_hex("whsec_ep-a", req.body)));
  CHECK(has_header(req, "Receiptd-Event-Id: evt_1"));

  b.transport.answer(0, 204);
  b.run();
  auto& done = b.finished("evt_1");
  CHECK(done.state == model::delivery_state::delivered);
  CHECK(done.attempts == 1);
  CHECK(done.delivered_at == b.clock.now_ms());
  CHECK(done.version == 3); // the fencing token of the claim, untouched
}

TEST_CASE("one endpoint gets at most max-concurrent-per-endpoint at once", "[actors][webhooks]") {
  dispatcher_bench b;
  b.add("evt_1", "ep-a");
  b.add("evt_2", "ep-a");
  b.add("evt_3", "ep-b");
  b.start();
  REQUIRE(b.transport.size() == 2); // evt_1 to ep-a, evt_3 to ep-b; evt_2 waits
  CHECK(b.transport[0].url.ends_with("/ep-a"));
  CHECK(b.transport[1].url.ends_with("/ep-b"));
  b.transport.answer(0, 200);
  b.run();
  REQUIRE(b.transport.size() == 3);
  CHECK(b.transport[2].body.find("evt_2") != std::string::npos);
}

TEST_CASE("a failed delivery is retried after backoff, then dead", "[actors][webhooks]") {
  dispatcher_bench b;
  b.add("evt_1", "ep-a");
  b.add("evt_2", "ep-b", 2); // its third attempt: the last one
  b.start();
  REQUIRE(b.transport.size() == 2);
  b.transport.answer(0, 500);
  b.transport.calls[1].done({}); // no HTTP answer at all (connection refused)
  b.run();
  auto& retried = b.finished("evt_1");
  CHECK(retried.state == model::delivery_state::pending);
  CHECK(retried.attempts == 1);
  CHECK(retried.last_error == "HTTP 500");
  model::retry_policy policy{10000, 80000, 2.0, 3};
  // The first retry waits at most the initial backoff, as revalidation jobs do.
  CHECK(retried.next_attempt_at
        == b.clock.now_ms() + model::backoff_delay_ms(policy, 0, b.random.unit()));
  CHECK(retried.next_attempt_at == b.clock.now_ms() + 5000); // half of 10 s: random 0.5
  auto& dead = b.finished("evt_2");
  CHECK(dead.state == model::delivery_state::dead);
  CHECK(dead.attempts == 3);
}

TEST_CASE("a tick between polls (work noticed) claims at once and leaves the polls' cadence",
          "[actors][webhooks][work_notice]") {
  dispatcher_bench b;
  b.start();
  CHECK(b.log->delivery_claims == 1);
  b.sched->advance_time(std::chrono::milliseconds(500));
  b.run();
  b.add("evt_1", "ep-a");
  caf::anon_send(b.dispatcher, tick_atom_v);
  b.run();
  CHECK(b.log->delivery_claims == 2);
  CHECK(b.transport.size() == 1);
  b.sched->advance_time(std::chrono::milliseconds(500)); // the poll, at 1 s
  b.run();
  CHECK(b.log->delivery_claims == 3);
  b.sched->advance_time(std::chrono::milliseconds(500)); // no second poll in between
  b.run();
  CHECK(b.log->delivery_claims == 3);
  b.sched->advance_time(std::chrono::milliseconds(500)); // the next one, at 2 s
  b.run();
  CHECK(b.log->delivery_claims == 4);
}

TEST_CASE("the dispatcher claims at start, then once per poll interval", "[actors][webhooks]") {
  dispatcher_bench b;
  b.start();
  CHECK(b.log->delivery_claims == 1);
  b.sched->advance_time(std::chrono::milliseconds(999));
  b.run();
  CHECK(b.log->delivery_claims == 1);
  b.sched->advance_time(std::chrono::milliseconds(1));
  b.run();
  CHECK(b.log->delivery_claims == 2);
  b.add("evt_9", "ep-a");
  b.sched->advance_time(std::chrono::seconds(1));
  b.run();
  CHECK(b.transport.size() == 1);
}

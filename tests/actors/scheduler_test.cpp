// receiptd's work-sharing scheduler (actors/scheduler.hpp) on real threads: it runs
// what CAF's runs (messages from other threads, timeouts, delayed messages), and an
// actor that ends without having set a timeout leaves CAF's clock thread asleep.
// Waits are bounded by receive timeouts, never by sleeps; one case waits out a
// cancelled timeout to see that nothing arrives.
#include <catch2/catch.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "actors/scheduler.hpp"
#include "tests/support/threads/thread_stats.hpp"

using namespace std::chrono_literals;
using receiptd::actors::use_sharing_scheduler;
using receiptd::test::wake_ups;

namespace {

caf::behavior echo() {
  return {[](int x) { return x; }};
}

// Asks `server` once, with no timeout, then ends: what a validator does per upload.
caf::behavior ask_once(caf::event_based_actor* self, caf::actor server, caf::actor report) {
  self->request(server, caf::infinite, 1).then([=](int x) {
    self->send(report, x);
    self->quit();
  });
  return {};
}

// The clock thread's wake-ups while `rounds` actors ask once and end, one after another.
long clock_wake_ups_for_short_lived_actors(caf::actor_system& sys, int rounds) {
  caf::scoped_actor self{sys};
  auto server = sys.spawn(echo);
  auto before = wake_ups("caf.clock");
  for (int i = 0; i < rounds; ++i) {
    auto asker = sys.spawn(ask_once, server, caf::actor{self});
    self->receive([](int) {}, caf::after(10s) >> [] { FAIL("an actor did not answer"); });
    // Its end (cleanup) runs after the reply is sent: wait for it.
    self->wait_for(asker);
  }
  auto after = wake_ups("caf.clock");
  self->send_exit(server, caf::exit_reason::user_shutdown);
  return after - before;
}

caf::actor_system_config& sharing(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", 1);
  return cfg;
}

} // namespace

TEST_CASE("an actor that ends without a timeout leaves the clock thread asleep",
          "[actors][scheduler]") {
  constexpr int rounds = 1000;
  SECTION("receiptd's scheduler") {
    caf::actor_system_config cfg;
    use_sharing_scheduler(sharing(cfg));
    caf::actor_system sys{cfg};
    CHECK(clock_wake_ups_for_short_lived_actors(sys, rounds) < 10);
  }
  SECTION("CAF's own work sharing wakes it as they end (what the test measures is there)") {
    // One wake-up per ending actor on a quiet machine; on a busy one the clock
    // thread runs late and takes several at once (40 of 200 with the whole suite
    // running beside it): the bound only shows that the wake-ups are counted.
    caf::actor_system_config cfg;
    caf::actor_system sys{sharing(cfg)};
    CHECK(clock_wake_ups_for_short_lived_actors(sys, rounds) >= rounds / 50);
  }
}

TEST_CASE("receiptd's scheduler runs timeouts and delayed messages", "[actors][scheduler]") {
  caf::actor_system_config cfg;
  use_sharing_scheduler(sharing(cfg));
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};

  SECTION("a request nobody answers times out") {
    auto silent = sys.spawn([]() -> caf::behavior { return {[](int) { return caf::skip(); }}; });
    caf::error failure;
    self->request(silent, 50ms, 1)
      .receive([](int) { FAIL("answered"); }, [&](caf::error& e) { failure = e; });
    CHECK(failure == caf::sec::request_timeout);
    self->send_exit(silent, caf::exit_reason::user_shutdown);
  }

  SECTION("a request answered in time does not time out later") {
    auto server = sys.spawn(echo);
    int answer = 0;
    self->request(server, 50ms, 7)
      .receive([&](int x) { answer = x; }, [](caf::error&) { FAIL("timed out"); });
    CHECK(answer == 7);
    // Its timeout was cancelled: nothing else arrives once it would have passed.
    bool late = false;
    self->receive([&](caf::error&) { late = true; }, caf::after(150ms) >> [] {});
    CHECK_FALSE(late);
    self->send_exit(server, caf::exit_reason::user_shutdown);
  }

  SECTION("a delayed message arrives, after its delay") {
    auto start = std::chrono::steady_clock::now();
    self->delayed_send(self, 30ms, 42);
    int got = 0;
    self->receive([&](int x) { got = x; }, caf::after(10s) >> [] { FAIL("not delivered"); });
    CHECK(got == 42);
    CHECK(std::chrono::steady_clock::now() - start >= 30ms);
  }

  SECTION("an actor with a receive timeout gets it, and an ended one's is dropped") {
    auto report = caf::actor{self};
    auto waiting = sys.spawn([report](caf::event_based_actor* a) -> caf::behavior {
      return {[](int) {},
              caf::after(20ms) >>
                [a, report] {
                  a->send(report, std::string("timeout"));
                  a->quit();
                }};
    });
    std::string got;
    self->receive([&](std::string& s) { got = s; },
                  caf::after(10s) >> [] { FAIL("no receive timeout"); });
    CHECK(got == "timeout");
    self->wait_for(waiting);
  }
}

TEST_CASE("receiptd's scheduler loses no message sent from other threads", "[actors][scheduler]") {
  caf::actor_system_config cfg;
  use_sharing_scheduler(sharing(cfg));
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  constexpr int senders = 4;
  constexpr int each = 5000;
  auto report = caf::actor{self};
  auto counter = sys.spawn([report](caf::event_based_actor* a) -> caf::behavior {
    auto seen = std::make_shared<int>(0);
    return {[a, report, seen](int) {
      if (++*seen == senders * each) {
        a->send(report, *seen);
        a->quit();
      }
    }};
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < senders; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < each; ++i)
        caf::anon_send(counter, i);
    });
  for (auto& t : threads)
    t.join();
  int total = 0;
  self->receive([&](int n) { total = n; }, caf::after(30s) >> [] { FAIL("messages lost"); });
  CHECK(total == senders * each);
}

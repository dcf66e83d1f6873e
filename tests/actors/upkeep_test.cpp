// The Play upkeep actor on the deterministic scheduler: the voided
// purchases poll read page by page, its failures and take-overs, and the
// subscription refresh sweep's cadence.
#include <catch2/catch.hpp>

#include <algorithm>

#include "actors/upkeep.hpp"
#include "fixture.hpp"
#include "model/store_b/voided.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

namespace store_b = model::store_b;

constexpr std::chrono::milliseconds lease = std::chrono::seconds(60);

store_b::voided_purchase voided(const std::string& token, model::unix_ms at) {
  store_b::voided_purchase v;
  v.purchase_token = token;
  v.voided_time = at;
  v.voided_reason = 7;
  v.voided_source = 2;
  return v;
}

store_b::voided_page page_of(std::vector<store_b::voided_purchase> purchases, std::string next) {
  store_b::voided_page p;
  p.purchases = std::move(purchases);
  p.next_page_token = std::move(next);
  return p;
}

struct upkeep_bench : actor_fixture {
  std::shared_ptr<persistence_log> log = std::make_shared<persistence_log>();
  persistence_actor persistence;
  store_b_client_actor store;
  config::store_b_settings settings;
  config::store_a_settings store_a; // its refresh sweep off unless a test turns it on

  upkeep_bench() {
    store_a.refresh_interval = std::chrono::milliseconds(0);
    persistence = keep(sys->spawn(fake_persistence, log));
    store = keep(sys->spawn(fake_store_b, std::nullopt, &clock));
    settings.voided_purchases = true;
    settings.voided_purchases_interval = std::chrono::minutes(15);
    settings.voided_purchases_page_size = 500;
    settings.refresh_interval = std::chrono::hours(1);
    settings.refresh_batch = 100;
  }

  store_b_fake_state& store_state() {
    auto* ptr = caf::actor_cast<caf::abstract_actor*>(store);
    auto* fake = dynamic_cast<store_b_client_actor::stateful_base<store_b_fake_state>*>(ptr);
    REQUIRE(fake != nullptr);
    return fake->state;
  }

  // The app's poll as the database hands it out, first window from now.
  store_b::claimed_voided_poll claimable(const std::string& app_id) {
    store_b::claimed_voided_poll c;
    c.poll.app_id = app_id;
    c.poll.cursor = store_b::first_voided_cursor(clock.now_ms());
    c.poll.version = 4;
    c.poll.next_poll_at = clock.now_ms();
    c.app.id = app_id;
    c.app.name = "app " + app_id;
    c.app.package_name = "com.example.game";
    c.app.store_b_service_account = R"({"client_email":"x@y.iam.gserviceaccount.com"})";
    return c;
  }

  upkeep_actor start() {
    return keep(
      spawn_upkeep(*sys, store_a, settings, lease, "upkeep-test", {persistence, store, &clock}));
  }

  // Runs one message at a time; after each, `step` may change the world.
  template <class F>
  void run_stepping(F step) {
    while (sched->try_run_once())
      step();
  }
};

void check_cursor(const store_b::voided_cursor& got, const store_b::voided_cursor& want) {
  CHECK(got.window_start == want.window_start);
  CHECK(got.page_token == want.page_token);
  CHECK(got.high_water == want.high_water);
}

} // namespace

TEST_CASE("a claimed voided purchases poll reads every page, its lease kept until the last",
          "[actors][upkeep]") {
  upkeep_bench b;
  b.settings.refresh_interval = std::chrono::milliseconds(0);
  const auto claimed_at = b.clock.now_ms();
  auto claimed = b.claimable("app-1");
  b.log->voided_to_claim = {claimed};
  auto& pages = b.store_state().voided_pages;
  const auto t = claimed_at;
  pages = {page_of({voided("a", t - 3000), voided("b", t - 5000)}, "p2"),
           page_of({voided("c", t - 2000)}, "p3"), page_of({voided("d", t - 4000)}, "")};
  const auto sent = pages;
  b.start();
  // The clock moves on while the pages are read (a second per query).
  std::size_t queries_seen = 0;
  b.run_stepping([&] {
    auto& queries = b.store_state().voided_queries;
    if (queries.size() > queries_seen) {
      queries_seen = queries.size();
      b.clock.advance(std::chrono::seconds(1));
    }
  });

  const auto& queries = b.store_state().voided_queries;
  REQUIRE(queries.size() == 3);
  REQUIRE(b.log->voided_pages.size() == 3);
  // The cursors as each page leaves them.
  std::vector<store_b::voided_cursor> cursors{claimed.poll.cursor};
  for (const auto& p : sent)
    cursors.push_back(store_b::advance_voided_cursor(cursors.back(), p, claimed_at));
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("page " << i);
    const auto& q = queries[i];
    const auto asked_at = claimed_at + static_cast<model::unix_ms>(i) * 1000;
    CHECK(q.app->app.id == "app-1");
    CHECK(q.page_token == cursors[i].page_token);
    CHECK(q.start_time == store_b::voided_start_time(cursors[i], asked_at));
    CHECK(q.end_time == claimed_at); // one window: the same end on every page
    CHECK(q.max_results == 500);

    const auto& applied = b.log->voided_pages[i];
    CHECK(applied.poll.app_id == "app-1");
    CHECK(applied.poll.version == claimed.poll.version); // the claim's fencing token
    check_cursor(applied.poll.cursor, cursors[i + 1]);
    CHECK(applied.poll.last_error.empty());
    CHECK(applied.poll.next_poll_at == asked_at + 1000 + 15 * 60'000);
    REQUIRE(applied.page.size() == sent[i].purchases.size());
    for (std::size_t k = 0; k < applied.page.size(); ++k)
      CHECK(applied.page[k].purchase_token == sent[i].purchases[k].purchase_token);
    if (i < 2)
      CHECK(applied.keep_lease_ms == lease.count());
    else
      CHECK_FALSE(applied.keep_lease_ms.has_value()); // the last page ends the lease
  }
  // The next window starts at the latest voided time seen, and reads from its first page.
  CHECK(cursors[3].page_token.empty());
  CHECK(cursors[3].window_start == t - 2000);
}

TEST_CASE("a voided purchases page that fails stores the poll once, with its error",
          "[actors][upkeep]") {
  upkeep_bench b;
  b.settings.refresh_interval = std::chrono::milliseconds(0);
  auto claimed = b.claimable("app-1");
  const auto t = b.clock.now_ms();
  b.log->voided_to_claim = {claimed};
  b.store_state().voided_error = "Play voided purchases list: HTTP 503";
  store_b::voided_cursor failed_from = claimed.poll.cursor;

  SECTION("on its first page") {}
  SECTION("after a page that was applied") {
    auto first = page_of({voided("a", t - 3000)}, "p2");
    b.store_state().voided_pages = {first};
    failed_from = store_b::advance_voided_cursor(claimed.poll.cursor, first, t);
  }
  const bool after_a_page = !failed_from.page_token.empty();
  b.start();
  b.run();

  const auto& queries = b.store_state().voided_queries;
  REQUIRE(queries.size() == (after_a_page ? 2 : 1));
  CHECK(queries.back().page_token == failed_from.page_token);
  REQUIRE(b.log->voided_pages.size() == (after_a_page ? 2 : 1));
  const auto& stored = b.log->voided_pages.back();
  CHECK(stored.page.empty());
  CHECK_FALSE(stored.keep_lease_ms.has_value()); // the lease ends
  CHECK(stored.poll.app_id == "app-1");
  CHECK(stored.poll.version == claimed.poll.version);
  CHECK(stored.poll.last_error.find("HTTP 503") != std::string::npos);
  // The window is read again from its first page at the next poll.
  CHECK(stored.poll.cursor.page_token.empty());
  CHECK(stored.poll.cursor.window_start == failed_from.window_start);
  CHECK(stored.poll.cursor.high_water == failed_from.high_water);
  CHECK(stored.poll.next_poll_at == t + 15 * 60'000);
  if (after_a_page)
    CHECK(b.log->voided_pages.front().poll.last_error.empty());

  // Nothing more happens until the next claim.
  b.sched->advance_time(std::chrono::seconds(59));
  b.run();
  CHECK(queries.size() == (after_a_page ? 2 : 1));
  CHECK(b.log->voided_pages.size() == (after_a_page ? 2 : 1));
}

TEST_CASE("a voided purchases poll taken over stops reading", "[actors][upkeep]") {
  upkeep_bench b;
  b.settings.refresh_interval = std::chrono::milliseconds(0);
  const auto t = b.clock.now_ms();
  b.log->voided_to_claim = {b.claimable("app-1")};
  b.store_state().voided_pages
    = {page_of({voided("a", t - 3000)}, "p2"), page_of({voided("b", t - 2000)}, "p3"),
       page_of({voided("c", t - 1000)}, "")};
  b.start();
  // The first page lands; another instance takes the poll over before the second.
  b.run_stepping([&] {
    if (b.log->voided_pages.size() == 1)
      b.log->apply_voided_overtaken = true;
  });
  CHECK(b.store_state().voided_queries.size() == 2); // no third page asked
  CHECK(b.log->voided_pages.size() == 1);
  CHECK(b.store_state().voided_pages.size() == 1);

  // The upkeep goes on: the next claim's poll is read.
  b.log->apply_voided_overtaken = false;
  b.store_state().voided_pages.clear();
  b.log->voided_to_claim = {b.claimable("app-2")};
  b.sched->advance_time(std::chrono::minutes(1));
  b.run();
  REQUIRE(b.store_state().voided_queries.size() == 3);
  CHECK(b.store_state().voided_queries.back().app->app.id == "app-2");
  REQUIRE(b.log->voided_pages.size() == 2);
  CHECK(b.log->voided_pages.back().poll.app_id == "app-2");
  CHECK_FALSE(b.log->voided_pages.back().keep_lease_ms.has_value());
}

TEST_CASE("the refresh sweep runs at start and every refresh interval, or never",
          "[actors][upkeep]") {
  upkeep_bench b;
  b.settings.voided_purchases = false;
  SECTION("every hour") {
    b.start();
    b.run();
    CHECK(b.log->refresh_sweeps == 1);
    b.sched->advance_time(std::chrono::minutes(59));
    b.run();
    CHECK(b.log->refresh_sweeps == 1);
    b.sched->advance_time(std::chrono::minutes(1));
    b.run();
    CHECK(b.log->refresh_sweeps == 2);
    CHECK(b.log->refresh_kinds
          == std::vector<model::record_kind>(2, model::record_kind::store_b_purchase_order));
  }
  SECTION("each store at its own interval") {
    b.store_a.refresh_interval = std::chrono::minutes(20);
    b.start();
    b.run();
    CHECK(b.log->refresh_sweeps == 2); // both at start
    b.sched->advance_time(std::chrono::minutes(20));
    b.run();
    b.sched->advance_time(std::chrono::minutes(20));
    b.run();
    CHECK(b.log->refresh_sweeps == 4);
    b.sched->advance_time(std::chrono::minutes(20));
    b.run();
    using model::record_kind;
    CHECK(std::count(b.log->refresh_kinds.begin(), b.log->refresh_kinds.end(),
                     record_kind::store_a_transaction)
          == 4);
    CHECK(std::count(b.log->refresh_kinds.begin(), b.log->refresh_kinds.end(),
                     record_kind::store_b_purchase_order)
          == 2);
  }
  SECTION("0: never") {
    b.settings.refresh_interval = std::chrono::milliseconds(0);
    b.settings.voided_purchases = true; // the upkeep runs for its polls only
    b.start();
    b.run();
    for (int i = 0; i < 3; ++i) {
      b.sched->advance_time(std::chrono::hours(1));
      b.run();
    }
    CHECK(b.log->refresh_sweeps == 0);
    CHECK(b.store_state().voided_queries.empty()); // nothing claimed, nothing asked
  }
  SECTION("no voided purchases polls when they are off") {
    b.log->voided_to_claim = {b.claimable("app-1")};
    b.start();
    b.run();
    b.sched->advance_time(std::chrono::hours(1));
    b.run();
    CHECK(b.store_state().voided_queries.empty());
    CHECK(b.log->voided_to_claim.size() == 1); // never claimed
  }
}

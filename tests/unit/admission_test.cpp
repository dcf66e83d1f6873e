// The HTTP layer's body budget and its view of credentials (http/admission.hpp).
#include <catch2/catch.hpp>

#include "http/admission.hpp"
#include "model/access_token.hpp"
#include "tests/support/time/manual_time.hpp"

using namespace receiptd;
using namespace receiptd::http;
using namespace std::chrono_literals;

TEST_CASE("the body budget bounds all bytes, and unverified bytes within them", "[admission]") {
  body_budget b(100, 40);
  CHECK(b.take(30, true));
  CHECK_FALSE(b.take(11, true)); // 41 unverified
  CHECK(b.take(10, true));
  CHECK(b.take(60, false)); // 100 in all
  CHECK_FALSE(b.take(1, false));
  CHECK(b.held() == 100);
  CHECK(b.held_unverified() == 40);
  b.verified(30);
  CHECK(b.held_unverified() == 10);
  CHECK_FALSE(b.take(1, true)); // the whole is still full
  b.give_back(60, false);
  CHECK(b.take(30, true));
  CHECK(b.held_unverified() == 40);
}

TEST_CASE("a ticket gives its share back once, grows, and leaves the unverified share",
          "[admission]") {
  body_budget b(100, 50);
  {
    auto t = body_ticket::take(b, 20, true);
    REQUIRE(t);
    CHECK_FALSE(body_ticket::take(b, 31, true));
    CHECK(t->grow_to(50));
    CHECK_FALSE(t->grow_to(51));
    CHECK(t->bytes() == 50);
    t->verified();
    CHECK(b.held_unverified() == 0);
    CHECK(b.held() == 50);
    t->verified(); // once only
    t->release();
    CHECK(b.held() == 0);
    t->release(); // nothing more
  }
  CHECK(b.held() == 0);
  {
    auto t = body_ticket::take(b, 70, false);
    REQUIRE(t);
    CHECK(b.held() == 70);
  } // given back when the last holder lets go
  CHECK(b.held() == 0);
  CHECK(b.held_unverified() == 0);
}

TEST_CASE("credential keys: a token's hash, a notification URL's app (and secret)", "[admission]") {
  CHECK(credential_key(route::store_b_upload, "rcpt_x", "")
        == "t:" + model::access_token_hash("rcpt_x"));
  CHECK(credential_key(route::store_a_get, "rcpt_x", "id")
        == credential_key(route::store_a_upload, "rcpt_x", ""));
  CHECK(credential_key(route::store_a_notification, "", "app-1") == "a:app-1");
  CHECK(credential_key(route::store_b_notification, "s1", "app-1")
        != credential_key(route::store_b_notification, "s2", "app-1"));
  CHECK(credential_key(route::metrics, "t", "").empty());
}

TEST_CASE("the credential view: good until forgotten, refused for a while, bounded",
          "[admission]") {
  test::manual_time clock;
  credential_view v(clock, 3);
  CHECK(v.look("k").kind == credential_view::state::unknown);
  v.good("k");
  CHECK(v.look("k").kind == credential_view::state::good);
  v.forget("k");
  CHECK(v.look("k").kind == credential_view::state::unknown);

  v.refuse("bad", {model::errc::unauthorized, "unknown"}, 1s);
  auto seen = v.look("bad");
  CHECK(seen.kind == credential_view::state::refused);
  REQUIRE(seen.why);
  CHECK(seen.why->code() == model::errc::unauthorized);
  clock.advance(1s);
  CHECK(v.look("bad").kind == credential_view::state::unknown);

  // At most three refusals: the oldest go first; a key refused again is young again.
  for (auto key : {"r1", "r2", "r3"})
    v.refuse(key, {model::errc::not_found, "no such app"}, 10s);
  v.refuse("r1", {model::errc::not_found, "no such app"}, 10s);
  v.refuse("r4", {model::errc::not_found, "no such app"}, 10s);
  CHECK(v.refused_count() == 3);
  CHECK(v.look("r2").kind == credential_view::state::unknown);
  CHECK(v.look("r1").kind == credential_view::state::refused);
  CHECK(v.look("r4").kind == credential_view::state::refused);
  for (int i = 0; i < 1000; ++i)
    v.refuse("again", {model::errc::unauthorized, "unknown"}, 10s);
  CHECK(v.refused_count() == 3);
  // A good credential is never refused by an older refusal.
  v.good("r4");
  CHECK(v.look("r4").kind == credential_view::state::good);
}

TEST_CASE("client rates: per network, from the headers, with the Retry-After the bucket needs",
          "[admission][limits]") {
  test::manual_time clock;
  client_rates rates(0.5, 2, clock);
  CHECK(rates.take("203.0.113.1", 100) == 0s);
  CHECK(rates.take("203.0.113.1", 100) == 0s);
  auto wait = rates.take("203.0.113.1", 100);
  CHECK(wait == 2s); // one upload every 2 s
  auto refusal = rate_limited(wait, "client network");
  CHECK(refusal.code() == model::errc::rate_limited);
  CHECK(refusal.retry_after() == 2);
  CHECK(rate_limited(1ms, "app").retry_after() == 1); // whole seconds, at least one
  // An IPv6 client is its /64.
  CHECK(rates.take("2001:db8::1", 0) == 0s);
  CHECK(rates.take("2001:db8::2", 0) == 0s);
  CHECK(rates.take("2001:db8::3", 0) > 0s);
  CHECK(rates.take("2001:db8:0:1::3", 0) == 0s);
  // A 1 MiB body costs 17: more than the burst, it waits for a full bucket.
  CHECK(rates.take("198.51.100.7", 1024 * 1024) == 0s);
  CHECK(rates.take("198.51.100.7", 0) == 2s);
  clock.advance(2s);
  CHECK(rates.take("203.0.113.1", 100) == 0s);
  client_rates off(0, 1, clock);
  for (int i = 0; i < 1000; ++i)
    REQUIRE(off.take("203.0.113.1", 1024 * 1024) == 0s);
}

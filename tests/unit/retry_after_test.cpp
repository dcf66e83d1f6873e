// A store's Retry-After (RFC 9110 §10.2.3) and what it does to a job's next
// attempt: model/retry_after.hpp, model/retry_policy.hpp next_attempt_at.
#include <catch2/catch.hpp>

#include "model/records.hpp"
#include "model/retry_after.hpp"
#include "model/retry_policy.hpp"

using namespace receiptd::model;

namespace {
constexpr unix_ms oct_21_2015_0726 = 1445412360000; // 2015-10-21T07:26:00Z
} // namespace

TEST_CASE("Retry-After: delta-seconds or any of the three HTTP-date forms", "[retry_after]") {
  const auto now = oct_21_2015_0726;
  CHECK(parse_retry_after("120", now) == 120'000);
  CHECK(parse_retry_after(" \t0 ", now) == 0);
  CHECK(parse_retry_after("9999999999", now) == 9'999'999'999'000); // 10 digits at most
  // 90 s after now, in each form a recipient must accept (RFC 9110 §5.6.7).
  CHECK(parse_retry_after("Wed, 21 Oct 2015 07:27:30 GMT", now) == 90'000);
  CHECK(parse_retry_after("Wednesday, 21-Oct-15 07:27:30 GMT", now) == 90'000);
  CHECK(parse_retry_after("Wed Oct 21 07:27:30 2015", now) == 90'000);
  CHECK(parse_retry_after("Wed Oct  1 07:27:30 2015", now) == 0); // asctime's padded day, past
  CHECK(parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now) == 0); // already past
  CHECK(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == 784111777000);
  for (const auto* bad : {"", "soon", "-5", "+5", "1.5", "99999999999", "0x10",
                          "Wed, 32 Oct 2015 07:28:00 GMT", "Wed, 21 Foo 2015 07:28:00 GMT",
                          "Wed, 21 Oct 2015 25:28:00 GMT", "Wed, 21 Oct 2015 07:28:00 UTC",
                          "Wed, 29 Feb 2015 07:28:00 GMT", "2015-10-21T07:28:00Z"}) {
    INFO("Retry-After: " << bad);
    CHECK_FALSE(parse_retry_after(bad, now));
  }
}

TEST_CASE("a 429 or 503 Retry-After is an instant no attempt may come before, at most a day "
          "ahead",
          "[retry_after]") {
  const auto now = oct_21_2015_0726;
  CHECK(retry_not_before(429, "30", now) == now + 30'000);
  CHECK(retry_not_before(503, "Wed, 21 Oct 2015 07:27:00 GMT", now) == now + 60'000);
  CHECK(retry_not_before(429, "Wed, 21 Oct 2015 07:00:00 GMT", now) == now); // past: now
  CHECK(retry_not_before(429, "864000", now) == now + max_retry_after_ms);   // ten days: one
  CHECK_FALSE(retry_not_before(500, "30", now)); // only where RFC 9110 gives it a meaning
  CHECK_FALSE(retry_not_before(200, "30", now));
  CHECK_FALSE(retry_not_before(429, "", now));
  CHECK_FALSE(retry_not_before(429, "later", now));

  store_verdict v = unreachable_verdict("HTTP 429");
  honour_retry_after(v, 429, "30", now);
  CHECK(v.retry_not_before == now + 30'000);
  store_verdict confirmed;
  confirmed.outcome = store_outcome::confirmed;
  honour_retry_after(confirmed, 429, "30", now); // an answer about the proof delays nothing
  CHECK_FALSE(confirmed.retry_not_before);
}

TEST_CASE("the next attempt is the backoff's, never before the store's Retry-After",
          "[retry_after][retry]") {
  retry_policy p{1000, 60000, 2.0, 5};
  const unix_ms now = 1'000'000;
  // Attempt 3 draws under 8000 ms: 0.5 is 4000 ms.
  CHECK(next_attempt_at(p, 3, 0.5, now) == now + 4000);
  CHECK(next_attempt_at(p, 3, 0.5, now, now + 3'600'000) == now + 3'600'000);
  CHECK(next_attempt_at(p, 3, 0.5, now, now + 1000) == now + 4000); // backoff is later
  CHECK(next_attempt_at(p, 0, 0.0, now, now - 5) == now);

  // The verdict's instant travels on the record to its job, and only while the
  // record is still unreachable: the next verdict replaces it.
  purchase_order_record r;
  auto limited = unreachable_verdict("HTTP 429");
  limited.retry_not_before = now + 60'000;
  apply_store_verdict(r, limited);
  CHECK(r.retry_not_before == now + 60'000);
  apply_store_verdict(r, unreachable_verdict("HTTP 500"));
  CHECK_FALSE(r.retry_not_before);
  apply_store_verdict(r, limited);
  store_verdict confirmed;
  confirmed.outcome = store_outcome::confirmed;
  confirmed.retry_not_before = now + 60'000; // ignored: nothing is retried
  apply_store_verdict(r, confirmed);
  CHECK_FALSE(r.retry_not_before);
}

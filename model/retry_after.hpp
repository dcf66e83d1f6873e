#pragma once
// A store's Retry-After (RFC 9110 §10.2.3): how long it asks not to be called
// again after a 429 (or a 503). Both stores send one: the App Store Server API
// with 429 RateLimitExceededError, the Play Developer API with its quota errors.
// A job whose store said it is not asked again before then, whatever its
// backoff says (model/retry_policy.hpp next_attempt_at). Pure.

#include <cstdint>
#include <optional>
#include <string_view>

#include "model/timestamp.hpp"
#include "model/verdict.hpp"

namespace receiptd::model {

// The longest wait a Retry-After is taken at: a store asking for more (or a
// header gone wrong) is asked again after a day anyway, not never.
inline constexpr std::int64_t max_retry_after_ms = 24LL * 3600 * 1000;

// An HTTP-date (RFC 9110 §5.6.7): IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT",
// and the obsolete forms a recipient must still accept, RFC 850
// "Sunday, 06-Nov-94 08:49:37 GMT" and asctime "Sun Nov  6 08:49:37 1994".
// nullopt for anything else (a day or time out of range included).
std::optional<unix_ms> parse_http_date(std::string_view text);

// Retry-After: delta-seconds or an HTTP-date, as ms from `now` (surrounding
// spaces and tabs ignored); a date already past is 0. At most 10 digits of
// seconds; anything else (a sign, a fraction, a bad date, empty): nullopt.
std::optional<std::int64_t> parse_retry_after(std::string_view header, unix_ms now);

// Whether an HTTP status carries a Retry-After worth honouring: 429 Too Many
// Requests and 503 Service Unavailable (RFC 9110 §10.2.3, RFC 6585 §4).
constexpr bool honours_retry_after(int http_status) {
  return http_status == 429 || http_status == 503;
}

// The instant before which the store asked not to be called again: `now` +
// the Retry-After of a 429 or 503 answer, at most max_retry_after_ms ahead;
// nullopt for any other status or a header that does not parse.
std::optional<unix_ms> retry_not_before(int http_status, std::string_view header, unix_ms now);

// Sets v.retry_not_before from the answer (only for an unreachable verdict:
// a store that answered the proof has nothing to delay).
void honour_retry_after(store_verdict& v, int http_status, std::string_view header, unix_ms now);

} // namespace receiptd::model

#include "model/error_codes.hpp"

#include <iterator>

namespace receiptd::model {

const error_kind& kind_of(errc code) {
  // Retry-After 1: the conditions behind a 503 pass in moments (a burst, a
  // database failover, a restart), and clients back off on their own beyond it.
  // A store outage lasts longer: 30 s (the store's own retries back off further).
  static const error_kind table[] = {
    {"invalid_request", 422, std::nullopt},
    {"bad_request", 400, std::nullopt},
    {"app_not_configured", 422, std::nullopt},
    {"unauthorized", 401, std::nullopt},
    {"not_found", 404, std::nullopt},
    {"method_not_allowed", 405, std::nullopt},
    {"body_too_large", 413, std::nullopt},
    {"conflict", 409, std::nullopt},
    // A rate limit says how long its bucket needs (model::error::retry_after); 1 s
    // is what a refusal without that figure would say.
    {"rate_limited", 429, 1},
    {"overloaded", 503, 1},
    {"too_many_connections", 503, 1},
    {"shutting_down", 503, 1},
    {"storage_unavailable", 503, 1},
    {"store_unavailable", 503, 30},
    // Readiness: a load balancer asks again on its own schedule; a client told to
    // wait waits a few seconds.
    {"not_ready", 503, 5},
    // The request could not be read as HTTP/1.1 (http/request_framing.hpp): the
    // connection ends after the answer.
    {"malformed_request", 400, std::nullopt},
    {"headers_too_large", 431, std::nullopt},
    // A request that did not arrive within http.header-timeout or http.body-timeout,
    // or was not answered within http.header-timeout: the connection ends after it.
    {"request_timeout", 408, std::nullopt},
    {"forbidden", 403, std::nullopt},
    {"internal_error", 500, std::nullopt},
  };
  static_assert(std::size(table) == static_cast<std::size_t>(errc::internal_error) + 1);
  return table[static_cast<std::size_t>(code)];
}

} // namespace receiptd::model

#pragma once
// The one table of error codes: what each means for the client (HTTP status,
// whether to retry and after how long). Nothing else writes an error status:
// code and message are chosen where the error happens, the status here, and the
// HTTP layer renders both (http/reply.hpp `error_reply`). Answers that carry a
// record (200, 206, 402) are decided from the record (model/resource_json.hpp).

#include <cstddef>
#include <optional>
#include <string_view>

namespace receiptd::model {

enum class errc {
  invalid_request,      // 422: the body's fields (each with its own code)
  bad_request,          // 400: a store notification's body is not the store's shape
  app_not_configured,   // 422: the app lacks what this upload needs
  unauthorized,         // 401: token missing, malformed, unknown or revoked
  not_found,            // 404
  method_not_allowed,   // 405
  body_too_large,       // 413
  conflict,             // 409: a re-upload refused (product_id_mismatch, bound_to_other_user)
  rate_limited,         // 429: the app's or the client's upload rate (limits.*)
  overloaded,           // 503: too many uploads or bytes in flight
  too_many_connections, // 503: beyond http.max-connections
  shutting_down,        // 503: draining
  storage_unavailable,  // 503: the database did not answer or failed
  store_unavailable,    // 503: a store did not answer what a notification needs
  not_ready,            // 503: GET /readyz: the database, its schema or the trust material
  malformed_request,    // 400: not HTTP/1.1 (request line, header line, framing); then closed
  headers_too_large,    // 431: request line and headers over 64 KiB; then closed
  request_timeout,      // 408: a request or its answer past http.*-timeout; then closed
  forbidden,            // 403: the token is good but the app does not allow this to it
  internal_error,       // 500: our failure, never the client's
};

struct error_kind {
  std::string_view name;          // the code's name in the error body
  int status;                     // HTTP status
  std::optional<int> retry_after; // seconds, sent as Retry-After (unless the error says)
};

const error_kind& kind_of(errc code);

inline std::string_view name_of(errc code) {
  return kind_of(code).name;
}

} // namespace receiptd::model

#pragma once
// What the HTTP layer hands to the actors with each request, and the one-shot
// reply channel they answer through (from whichever thread holds it).

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

#include "http/routes.hpp"
#include "model/result.hpp"

namespace receiptd::http {

class body_ticket;

struct inbound_request {
  explicit inbound_request(route r) : target(r) {}

  route target;          // matched by the HTTP layer (http/routes.hpp)
  std::string record_id; // GET routes
  std::vector<std::string> params; // a templated route's path segments, as sent
  // The query's parameters, as sent (undecoded; a repeated key's first value).
  std::vector<std::pair<std::string, std::string>> query;
  // The caller's secret: on bearer routes the bearer token (syntax already
  // checked); on a route whose secret is in the URL (route_info::token_in_query:
  // Store B pushes) the ?token= value, percent-decoded, empty when absent;
  // otherwise empty.
  std::string token;
  // On a token_in_query route: the Authorization header's bearer token (a
  // Pub/Sub push's OIDC token), empty when absent or malformed.
  std::string push_bearer;
  std::string body;
  std::string peer_ip;
  std::string trace_id; // X-Request-Id, or one made up
  // The body's share of the HTTP layer's body budget (http/admission.hpp), taken
  // as unverified until the request's credential is known to be good; given back
  // when the answer is written. Null when the request held none.
  std::shared_ptr<body_ticket> body_share;

  // The credential turned out good (the app's token, a notification URL's app and
  // secret): the body no longer counts against the unverified share.
  void credential_verified() const;
};

struct reply {
  int status = 200;
  std::string body; // JSON, unless content_type says otherwise
  std::optional<int> retry_after_seconds = std::nullopt;
  std::string_view content_type = "application/json";
  // Location (a 206's record: the path that reads it), empty: none.
  std::string location = {};
  // Allow, on a 405: the methods the path has.
  std::string_view allow = {};
};

// The answer for an error: status and Retry-After from the one table
// (model/error_codes.hpp), body in the error shape of README "The API".
reply error_reply(const model::error& e);

// What the response says about the connection (RFC 9112 §9.3): nothing (HTTP/1.1
// stays open), "keep-alive" (an HTTP/1.0 client asked for it), or "close".
enum class connection_option { none, keep_alive, close };

// The whole HTTP/1.1 response for `r`, as written to the socket: status line,
// Content-Type (r.content_type), Content-Length, Connection, X-Request-Id (when given: a
// checked, visible-ASCII id), Retry-After, Location, Allow, WWW-Authenticate on a 401,
// then the body; to a HEAD request the same without the body (RFC 9110 §9.3.2).
std::string response_text(const reply& r, const std::string& trace_id, connection_option connection,
                          bool head = false);

// Sends the response exactly once: later calls are ignored. Thread-safe.
class reply_sink {
public:
  virtual ~reply_sink() = default;
  // true when this call sent the response, false when one was sent before.
  virtual bool send(reply r) = 0;
  virtual bool sent() const = 0;
};

using reply_sink_ptr = std::shared_ptr<reply_sink>;

} // namespace receiptd::http

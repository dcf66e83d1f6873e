#pragma once
// What the HTTP layer decides from a request's line and headers alone: the route,
// the bearer token's syntax, the trace id, and the answers it gives by itself
// (before a request reaches the actors, or before its body has arrived). Internal
// to http/.

#include <pistache/http.h>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "http/reply.hpp"
#include "model/client_address.hpp"

namespace Pistache::Tcp {
class Peer;
}

namespace receiptd::http {

// X-Request-Id from the client when it is sane (1–128 visible ASCII), else new.
std::string trace_id_of(const Pistache::Http::Request& req);

std::string peer_ip_of(const Pistache::Http::Request& req);
// The same from the connection (a request still arriving has no address yet).
std::string peer_ip_of(const Pistache::Tcp::Peer& peer);

// The client's address: the peer's, or, when the peer is a trusted proxy, the one
// its Forwarded / X-Forwarded-For header names (model/client_address.hpp).
std::string client_ip_of(const Pistache::Http::Request& req, const model::trusted_proxies& proxies);
// The same for a request still arriving, from its connection's peer address.
std::string client_ip_of(const Pistache::Http::Request& req, const model::trusted_proxies& proxies,
                         std::string peer_ip);

// "Bearer <token>" (scheme case-insensitive, RFC 6750 §2.1; the token visible
// ASCII, at most `max_bytes`), or an unauthorized error saying whether it is
// absent or malformed.
inline constexpr std::size_t max_bearer_bytes = 512;            // an app's token
inline constexpr std::size_t max_push_bearer_bytes = 16 * 1024; // a Pub/Sub OIDC token
model::result<std::string> bearer_token(const Pistache::Http::Request& req,
                                        std::size_t max_bytes = max_bearer_bytes);

// The URL's ?token= value, percent-decoded (RFC 3986 §2.1); empty when absent or
// not a sane secret (over 512 bytes, or an escape that is not two hex digits).
// Pistache 0.0.5 splits the query off the path (Request::resource() has none)
// and keeps its values as sent, undecoded; of a repeated key the first counts.
std::string query_token(const Pistache::Http::Request& req);

// GET /healthz's answer: {"status":"ok","version":"<receiptd's version>"}.
const std::string& health_body();

struct matched {
  std::optional<route> target; // the route whose path this is (none: 404)
  bool method_ok = false;      // … with this method (else 405)
  std::string id;              // routes that take one
  std::vector<std::string> params; // a templated route's segments, as sent
};

// Looks the path up in the routing table (http/routes.hpp). A query string
// ("?…") is not part of the path: it never decides the route.
matched match(Pistache::Http::Method method, std::string_view path);

// The answer the HTTP layer gives by itself, if any: 404, 405 (with Allow), the health check,
// 503 while draining, 401 for a missing or malformed token, 413 for a body over the
// limit. `body_bytes` is the body's size (or, before it has arrived, its
// Content-Length). When there is none, the request's secret
// (inbound_request::token): its bearer token, or on a token_in_query route its
// query_token (checked by the actors), else empty.
std::variant<reply, std::string> own_answer(const Pistache::Http::Request& req, const matched& m,
                                            std::size_t body_bytes, std::size_t max_body_bytes,
                                            bool draining);

// Writes a whole response straight to the peer's socket (non-blocking, best
// effort), announcing that the connection closes: for requests and connections
// refused before Pistache has a complete request to answer through a ResponseWriter.
void write_raw(const Pistache::Tcp::Peer& peer, const reply& r, const std::string& trace_id);

} // namespace receiptd::http

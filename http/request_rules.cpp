// What the HTTP layer decides from a request's line and headers alone.
#include "http/request_rules.hpp"

#include <pistache/peer.h>

#include <sys/socket.h>

#include "http/openapi_document.hpp"
#include "model/version.hpp"
#include "model/encoding.hpp"
#include "model/resource_json.hpp"

namespace receiptd::http {

namespace ph = Pistache::Http;

// X-Request-Id from the client when it is sane (1–128 visible ASCII), else new.
std::string trace_id_of(const ph::Request& req) {
  if (auto raw = req.headers().tryGetRaw("X-Request-Id")) {
    const auto& v = raw->value();
    bool ok = !v.empty() && v.size() <= 128;
    for (char c : v)
      ok = ok && c > 0x20 && c < 0x7F;
    if (ok)
      return v;
  }
  return model::hex_encode(model::random_bytes(8));
}

namespace {

std::string without_brackets(std::string host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return host;
}

} // namespace

std::string peer_ip_of(const ph::Request& req) {
  return without_brackets(req.address().host());
}

std::string peer_ip_of(const Pistache::Tcp::Peer& peer) {
  return without_brackets(peer.address().host());
}

std::string client_ip_of(const ph::Request& req, const model::trusted_proxies& proxies) {
  return client_ip_of(req, proxies, peer_ip_of(req));
}

std::string client_ip_of(const ph::Request& req, const model::trusted_proxies& proxies,
                         std::string peer_ip) {
  if (proxies.empty())
    return peer_ip;
  // Raw headers and their values come back by value: kept here while read.
  auto value_of = [&](const char* name) -> std::optional<std::string> {
    if (auto raw = req.headers().tryGetRaw(name))
      return raw->value();
    return std::nullopt;
  };
  auto forwarded = value_of("Forwarded");
  auto x_forwarded_for = value_of("X-Forwarded-For");
  auto view = [](const std::optional<std::string>& v) -> std::optional<std::string_view> {
    if (v)
      return std::string_view(*v);
    return std::nullopt;
  };
  return proxies.client_address(peer_ip, view(forwarded), view(x_forwarded_for));
}

// "Bearer <token>" (scheme case-insensitive, RFC 6750 §2.1).
model::result<std::string> bearer_token(const ph::Request& req, std::size_t max_bytes) {
  auto refused = [](const char* why) { return model::error(model::errc::unauthorized, why); };
  // Pistache parses Authorization into its own header class; others stay raw.
  std::string value;
  if (auto typed = req.headers().tryGet<ph::Header::Authorization>())
    value = typed->value();
  else if (auto raw = req.headers().tryGetRaw("Authorization"))
    value = raw->value();
  else
    return refused("the Authorization header is missing");
  std::string_view v = value;
  constexpr std::string_view scheme = "bearer ";
  bool scheme_ok = v.size() > scheme.size();
  for (size_t i = 0; scheme_ok && i < scheme.size(); ++i)
    scheme_ok = (v[i] | 0x20) == scheme[i];
  if (!scheme_ok)
    return refused("the Authorization header must be \"Bearer <token>\"");
  v.remove_prefix(scheme.size());
  while (!v.empty() && v.front() == ' ')
    v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ')
    v.remove_suffix(1);
  bool token_ok = !v.empty() && v.size() <= max_bytes;
  for (char c : v)
    token_ok = token_ok && c > 0x20 && c < 0x7F;
  if (!token_ok)
    return refused("the bearer token is malformed");
  // The token is cut out of the copy Pistache gave: no second copy.
  const auto from = static_cast<std::size_t>(v.data() - value.data()), size = v.size();
  value.erase(0, from);
  value.resize(size);
  return value;
}

std::string query_token(const ph::Request& req) {
  auto raw = req.query().get("token");
  if (!raw || raw->size() > 3 * 512)
    return {};
  std::string out;
  for (std::size_t i = 0; i < raw->size(); ++i) {
    char c = (*raw)[i];
    if (c != '%') {
      out += c;
      continue;
    }
    int hi = i + 2 < raw->size() ? model::hex_digit_value((*raw)[i + 1]) : -1;
    int lo = i + 2 < raw->size() ? model::hex_digit_value((*raw)[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      return {};
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out.size() <= 512 ? out : std::string();
}

const std::string& health_body() {
  static const std::string body
    = std::string(R"({"status":"ok","version":")") + std::string(model::version) + "\"}";
  return body;
}

namespace {

ph::Method method_of(const route_info& r) {
  return r.deletes ? ph::Method::Delete
         : r.puts  ? ph::Method::Put
         : r.post  ? ph::Method::Post
                   : ph::Method::Get;
}

// HEAD is allowed wherever GET is (RFC 9110 §9.3.2).
bool method_fits(ph::Method method, const route_info& r) {
  return method == method_of(r) || (method == ph::Method::Head && method_of(r) == ph::Method::Get);
}

// A templated route's path ("/a/{}/b"): each {} one non-empty segment.
bool match_template(std::string_view pattern, std::string_view path,
                    std::vector<std::string>& params) {
  params.clear();
  while (!pattern.empty()) {
    auto hole = pattern.find("{}");
    if (hole == std::string_view::npos)
      return path == pattern;
    if (path.substr(0, hole) != pattern.substr(0, hole))
      return false;
    path.remove_prefix(hole);
    pattern.remove_prefix(hole + 2);
    auto end = path.find('/');
    auto segment = path.substr(0, end);
    if (segment.empty())
      return false;
    params.emplace_back(segment);
    path.remove_prefix(segment.size());
  }
  return path.empty();
}

} // namespace

matched match(ph::Method method, std::string_view path) {
  // Pistache hands the path without its query already; a caller holding a whole
  // request target gets the same route.
  if (auto q = path.find('?'); q != std::string_view::npos)
    path = path.substr(0, q);
  if (path.size() > 1 && path.back() == '/')
    path.remove_suffix(1);
  matched m;
  // Templated routes, then exact paths, then those that take an id:
  // ".../purchase_orders/legacy" is an upload, not a lookup of the record "legacy".
  for (const auto& r : routes()) {
    if (!r.templated || !match_template(r.path, path, m.params))
      continue;
    m.target = r.id;
    m.method_ok = method_fits(method, r);
    return m;
  }
  m.params.clear();
  for (bool with_id : {false, true}) {
    for (const auto& r : routes()) {
      if (r.takes_id != with_id || r.templated)
        continue;
      for (auto prefix : {r.path, r.alias}) {
        if (prefix.empty())
          continue;
        std::string_view id;
        if (with_id) {
          if (path.size() <= prefix.size() + 1 || !path.starts_with(prefix)
              || path[prefix.size()] != '/')
            continue;
          id = path.substr(prefix.size() + 1);
          if (id.find('/') != std::string_view::npos)
            continue;
        } else if (path != prefix) {
          continue;
        }
        m.target = r.id;
        m.method_ok = method_fits(method, r);
        m.id = std::string(id);
        return m;
      }
    }
  }
  return m;
}

// The answers the HTTP layer gives by itself, from the request line and headers;
// `body_bytes` is the body's size (or, before it has arrived, its Content-Length).
// The request is handed on only when the answer is its secret: the bearer token,
// a token_in_query route's ?token=, or empty for a route whose body authenticates
// itself.
std::variant<reply, std::string> own_answer(const ph::Request& req, const matched& m,
                                            std::size_t body_bytes, std::size_t max_body_bytes,
                                            bool draining) {
  using model::errc;
  if (!m.target)
    return error_reply({errc::not_found, "no such resource"});
  if (!m.method_ok) {
    auto r = error_reply({errc::method_not_allowed, "method not allowed here"});
    r.allow = allowed_methods(info(*m.target));
    return r;
  }
  if (*m.target == route::health)
    return reply{200, health_body()};
  if (draining)
    return error_reply({errc::shutting_down, "the service is shutting down"});
  // Public documentation: no token, the text embedded at build time.
  if (*m.target == route::openapi)
    return reply{
      .status = 200, .body = std::string(openapi_document()), .content_type = "application/yaml"};
  std::string token;
  if (info(*m.target).bearer) {
    auto bearer = bearer_token(req);
    if (!bearer)
      return error_reply(bearer.err());
    token = std::move(bearer).value();
  } else if (info(*m.target).token_in_query) {
    token = query_token(req); // absent or wrong: the actors answer 401
  } else if (*m.target == route::metrics) {
    // Checked by the actors against metrics.token, which may be unset.
    if (auto bearer = bearer_token(req))
      token = std::move(bearer).value();
  }
  if (body_bytes > max_body_bytes)
    return error_reply(
      {errc::body_too_large,
       "the request body is larger than " + std::to_string(max_body_bytes) + " bytes"});
  return token;
}

// A response written straight to the socket, for requests and connections refused
// before Pistache has a request to answer (it builds a ResponseWriter only for a
// complete request). The client is told the connection closes.
void write_raw(const Pistache::Tcp::Peer& peer, const reply& r, const std::string& trace_id) {
  auto text = response_text(r, trace_id, connection_option::close);
  // A few hundred bytes into a fresh socket's buffer: it fits, or the client, which
  // reads nothing, gets less of a refusal.
  [[maybe_unused]] auto n
    = ::send(peer.fd(), text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

} // namespace receiptd::http

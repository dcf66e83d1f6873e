// What the HTTP layer decides from a request's line and headers alone.
#include "http/request_rules.hpp"

#include <pistache/peer.h>

#include <sys/socket.h>

#include "model/encoding.hpp"
#include "model/resource_json.hpp"

namespace receiptd::http {

namespace ph = Pistache::Http;

std::string error_json(const char* code, const std::string& message, const char* field) {
  model::field_error e{field ? field : "", code, message};
  return model::error_body({e});
}

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

std::string peer_ip_of(const ph::Request& req) {
  auto host = req.address().host();
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return host;
}

// "Bearer <token>" (scheme case-insensitive, RFC 6750 §2.1). Empty when absent
// or malformed.
std::string bearer_token(const ph::Request& req, std::string& problem) {
  // Pistache parses Authorization into its own header class; others stay raw.
  std::string value;
  if (auto typed = req.headers().tryGet<ph::Header::Authorization>())
    value = typed->value();
  else if (auto raw = req.headers().tryGetRaw("Authorization"))
    value = raw->value();
  else {
    problem = "the Authorization header is missing";
    return {};
  }
  std::string_view v = value;
  constexpr std::string_view scheme = "bearer ";
  bool scheme_ok = v.size() > scheme.size();
  for (size_t i = 0; scheme_ok && i < scheme.size(); ++i)
    scheme_ok = (v[i] | 0x20) == scheme[i];
  if (!scheme_ok) {
    problem = "the Authorization header must be \"Bearer <token>\"";
    return {};
  }
  v.remove_prefix(scheme.size());
  while (!v.empty() && v.front() == ' ')
    v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ')
    v.remove_suffix(1);
  bool token_ok = !v.empty() && v.size() <= 512;
  for (char c : v)
    token_ok = token_ok && c > 0x20 && c < 0x7F;
  if (!token_ok) {
    problem = "the bearer token is malformed";
    return {};
  }
  return std::string(v);
}

matched match(ph::Method method, std::string_view path) {
  if (path.size() > 1 && path.back() == '/')
    path.remove_suffix(1);
  matched m;
  auto post = [&](route r) {
    m.found = true;
    m.method_ok = method == ph::Method::Post;
    m.target = r;
  };
  auto get = [&](route r, std::string_view id) {
    m.found = !id.empty() && id.find('/') == std::string_view::npos;
    m.method_ok = method == ph::Method::Get;
    m.target = r;
    m.id = std::string(id);
  };
  constexpr std::string_view a = "/client/store_a/receipts";
  constexpr std::string_view b = "/client/store_b/purchase_orders";
  if (path == a)
    post(route::store_a_upload);
  else if (path == b)
    post(route::store_b_upload);
  else if (path == std::string(b) + "/legacy")
    post(route::store_b_legacy_upload);
  else if (path.rfind(std::string(a) + "/", 0) == 0)
    get(route::store_a_get, path.substr(a.size() + 1));
  else if (path.rfind(std::string(b) + "/", 0) == 0)
    get(route::store_b_get, path.substr(b.size() + 1));
  else if (path == "/healthz") {
    m.found = true;
    m.method_ok = method == ph::Method::Get;
    m.health = true;
  }
  return m;
}

// The answers the HTTP layer gives by itself, from the request line and headers;
// `body_bytes` is the body's size (or, before it has arrived, its Content-Length).
// On none of them is the request handed on; `token` is set when it is.
std::optional<reply> own_answer(const ph::Request& req, const matched& m,
                                std::size_t body_bytes, std::size_t max_body_bytes,
                                bool draining, std::string& token) {
  if (!m.found)
    return reply{404, error_json("not_found", "no such resource")};
  if (!m.method_ok)
    return reply{405, error_json("method_not_allowed", "method not allowed here")};
  if (m.health)
    return reply{200, R"({"status":"ok"})"};
  if (draining)
    return reply{503, error_json("shutting_down", "the service is shutting down"), 1};
  std::string problem;
  token = bearer_token(req, problem);
  if (token.empty())
    return reply{401, error_json("unauthorized", problem)};
  if (body_bytes > max_body_bytes)
    return reply{413, error_json("body_too_large", "the request body is larger than "
                                                     + std::to_string(max_body_bytes) + " bytes")};
  return std::nullopt;
}

// A response written straight to the socket, for requests and connections refused
// before Pistache has a request to answer (it builds a ResponseWriter only for a
// complete request). The client is told the connection closes.
void write_raw(const Pistache::Tcp::Peer& peer, const reply& r, const std::string& trace_id) {
  auto code = static_cast<ph::Code>(r.status);
  std::string text = "HTTP/1.1 " + std::to_string(r.status) + " " + ph::codeString(code)
                     + "\r\nContent-Type: application/json\r\nContent-Length: "
                     + std::to_string(r.body.size()) + "\r\nConnection: close\r\n";
  if (!trace_id.empty())
    text += "X-Request-Id: " + trace_id + "\r\n"; // checked: visible ASCII only
  if (r.retry_after_seconds)
    text += "Retry-After: " + std::to_string(*r.retry_after_seconds) + "\r\n";
  if (r.status == 401)
    text += "WWW-Authenticate: Bearer realm=\"receiptd\"\r\n";
  text += "\r\n" + r.body;
  // A few hundred bytes into a fresh socket's buffer: it fits, or the client, which
  // reads nothing, gets less of a refusal.
  [[maybe_unused]] auto n = ::send(peer.fd(), text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

} // namespace receiptd::http

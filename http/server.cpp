#include "http/server.hpp"

#include <pistache/endpoint.h>
#include <pistache/http.h>

#include <string_view>

#include "http/headers.hpp"
#include "model/encoding.hpp"
#include "model/resource_json.hpp"

namespace receiptd::http {

namespace ph = Pistache::Http;

const char* to_string(route r) {
  switch (r) {
    case route::store_a_upload:
      return "store_a_upload";
    case route::store_b_upload:
      return "store_b_upload";
    case route::store_b_legacy_upload:
      return "store_b_legacy_upload";
    case route::store_a_get:
      return "store_a_get";
    case route::store_b_get:
      return "store_b_get";
  }
  return "?";
}

struct server::shared_state {
  config::http_settings settings;
  dispatch_fn dispatch;
  std::atomic<bool> draining{false};
  std::atomic<std::size_t> in_flight{0};
};

namespace {

std::string error_json(const char* code, const std::string& message,
                       const char* field = nullptr) {
  model::field_error e{field ? field : "", code, message};
  return model::error_body({e});
}

// Answers exactly once. Dropped unanswered (a bug), it still answers: 500.
class pistache_reply final : public reply_sink {
public:
  pistache_reply(ph::ResponseWriter writer, std::string trace_id,
                 std::shared_ptr<server::shared_state> state)
    : writer_(std::move(writer)), trace_id_(std::move(trace_id)), state_(std::move(state)) {
    ++state_->in_flight;
  }

  ~pistache_reply() override {
    if (!sent_)
      send({500, error_json("internal_error", "the upload could not be processed")});
  }

  bool send(reply r) override {
    if (sent_.exchange(true))
      return false;
    write(writer_, r, trace_id_);
    --state_->in_flight;
    return true;
  }

  bool sent() const override { return sent_; }

  static void write(ph::ResponseWriter& w, const reply& r, const std::string& trace_id) {
    w.headers().add<request_id_header>(trace_id);
    if (r.retry_after_seconds)
      w.headers().add<retry_after_header>(std::to_string(*r.retry_after_seconds));
    if (r.status == 401)
      w.headers().add<www_authenticate_header>("Bearer realm=\"receiptd\"");
    w.send(static_cast<ph::Code>(r.status), r.body, MIME(Application, Json));
  }

private:
  ph::ResponseWriter writer_;
  std::string trace_id_;
  std::shared_ptr<server::shared_state> state_;
  std::atomic<bool> sent_{false};
};

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

struct matched {
  bool found = false;      // path known
  bool method_ok = false;  // … with this method
  route target = route::store_b_upload;
  std::string id;
  bool health = false;
};

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

class api_handler : public ph::Handler {
public:
  HTTP_PROTOTYPE(api_handler)

  explicit api_handler(std::shared_ptr<server::shared_state> state)
    : state_(std::move(state)) {}

  void onRequest(const ph::Request& req, ph::ResponseWriter writer) override {
    auto trace_id = trace_id_of(req);
    auto answer = [&](reply r) { pistache_reply::write(writer, r, trace_id); };
    auto m = match(req.method(), req.resource());
    if (!m.found)
      return answer({404, error_json("not_found", "no such resource")});
    if (!m.method_ok)
      return answer({405, error_json("method_not_allowed", "method not allowed here")});
    if (m.health)
      return answer({200, R"({"status":"ok"})"});
    if (state_->draining)
      return answer({503, error_json("shutting_down", "the service is shutting down"), 1});
    std::string problem;
    auto token = bearer_token(req, problem);
    if (token.empty())
      return answer({401, error_json("unauthorized", problem)});
    if (req.body().size() > state_->settings.max_body_bytes)
      return answer({413, error_json("body_too_large",
                                     "the request body is larger than "
                                       + std::to_string(state_->settings.max_body_bytes)
                                       + " bytes")});
    inbound_request in;
    in.target = m.target;
    in.record_id = std::move(m.id);
    in.token = std::move(token);
    in.body = req.body();
    in.peer_ip = peer_ip_of(req);
    in.trace_id = trace_id;
    auto sink = std::make_shared<pistache_reply>(std::move(writer), std::move(trace_id), state_);
    state_->dispatch(std::move(in), std::move(sink));
  }

private:
  std::shared_ptr<server::shared_state> state_;
};

} // namespace

struct server::endpoint_holder {
  std::unique_ptr<Pistache::Http::Endpoint> endpoint;
};

server::server(config::http_settings settings, dispatch_fn dispatch)
  : state_(std::make_shared<shared_state>()), endpoint_(std::make_unique<endpoint_holder>()) {
  state_->settings = std::move(settings);
  state_->dispatch = std::move(dispatch);
}

server::~server() {
  stop();
}

std::uint16_t server::start() {
  const auto& s = state_->settings;
  Pistache::Address addr(s.address, Pistache::Port(s.port));
  endpoint_->endpoint = std::make_unique<Pistache::Http::Endpoint>(addr);
  // Pistache buffers whole requests and answers 413 itself (plain text, then
  // closes) past its own limit. Up to twice our body limit the request reaches
  // the handler, which answers 413 with the JSON error shape.
  auto opts = Pistache::Http::Endpoint::options()
                .threads(static_cast<int>(s.threads))
                .flags(Pistache::Tcp::Options::ReuseAddr)
                .backlog(4096)
                .maxRequestSize(2 * s.max_body_bytes + 64 * 1024)
                .maxResponseSize(8 * 1024 * 1024);
  endpoint_->endpoint->init(opts);
  endpoint_->endpoint->setHandler(Pistache::Http::make_handler<api_handler>(state_));
  endpoint_->endpoint->serveThreaded();
  return static_cast<std::uint16_t>(endpoint_->endpoint->getPort());
}

void server::begin_draining() {
  state_->draining = true;
}

std::size_t server::in_flight() const {
  return state_->in_flight;
}

void server::stop() {
  if (endpoint_ && endpoint_->endpoint) {
    endpoint_->endpoint->shutdown();
    endpoint_->endpoint.reset();
  }
}

} // namespace receiptd::http

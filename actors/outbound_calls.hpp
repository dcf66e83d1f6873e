#pragma once
// The outbound HTTP calls of one store-client actor: at most `max_concurrent`
// in flight (the rest wait in order), each completion delivered back to the
// actor as an http_done message and dispatched to its continuation there, on
// the actor's own thread of control.

#include <caf/send.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>

#include "actors/tracing.hpp"
#include "actors/type_ids.hpp"
#include "http/outbound_client.hpp"

namespace receiptd::actors {

class outbound_calls {
public:
  using continuation = std::function<void(http::outbound_response&)>;

  outbound_calls() = default;
  outbound_calls(http::outbound_client* client, std::size_t max_concurrent, tracer* trace)
    : client_(client), max_concurrent_(max_concurrent), trace_(trace) {}

  // `self`: a strong handle of the owning actor, to which completions are sent.
  template <class Handle>
  void submit(const Handle& self, const trace_context& ctx, const char* actor,
              http::outbound_request req, continuation k) {
    auto name = req_name(req);
    pending p{std::move(req), std::move(k), span(trace_, ctx, actor, std::move(name))};
    if (in_flight_ >= max_concurrent_) {
      waiting_.push_back(std::move(p));
      return;
    }
    start(self, std::move(p));
  }

  template <class Handle>
  void on_done(const Handle& self, http_done& done) {
    auto it = running_.find(done.call_id);
    if (it == running_.end())
      return;
    auto p = std::move(it->second);
    running_.erase(it);
    --in_flight_;
    auto& r = done.response;
    p.s.outcome(r.status ? "HTTP " + std::to_string(r.status) : "error: " + r.error);
    p.s.end();
    p.k(r);
    while (in_flight_ < max_concurrent_ && !waiting_.empty()) {
      auto next = std::move(waiting_.front());
      waiting_.pop_front();
      start(self, std::move(next));
    }
  }

  std::size_t in_flight() const { return in_flight_; }

private:
  struct pending {
    http::outbound_request req;
    continuation k;
    span s;
  };

  static std::string req_name(const http::outbound_request& r) {
    auto path_start = r.url.find('/', r.url.find("//") + 2);
    auto path = path_start == std::string::npos ? std::string("/") : r.url.substr(path_start);
    if (auto q = path.find("/tokens/"); q != std::string::npos)
      path = path.substr(0, q) + "/tokens/…"; // purchase tokens stay out of traces
    return r.method + " " + path;
  }

  template <class Handle>
  void start(const Handle& self, pending p) {
    auto id = ++last_id_;
    ++in_flight_;
    auto req = std::move(p.req); // only the span and continuation are needed later
    running_.emplace(id, std::move(p));
    client_->submit(std::move(req), [self, id](http::outbound_response r) {
      caf::anon_send(self, http_done_atom_v, http_done{id, std::move(r)});
    });
  }

  http::outbound_client* client_ = nullptr;
  std::size_t max_concurrent_ = 1;
  tracer* trace_ = nullptr;
  std::uint64_t last_id_ = 0;
  std::size_t in_flight_ = 0;
  std::unordered_map<std::uint64_t, pending> running_;
  std::deque<pending> waiting_;
};

} // namespace receiptd::actors

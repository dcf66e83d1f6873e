#pragma once
// The outbound HTTP calls of one store-client actor: at most `max_concurrent`
// in flight, at most `max_waiting` more waiting in order for a free slot, each
// completion delivered back to the actor as an http_done message and dispatched
// to its continuation there, on the actor's own thread of control.
//
// A call is never sent once nobody waits for its answer: one whose deadline (the
// validator's) has passed while it waited is dropped, and a call beyond the
// waiting bound is refused at once. Either way its continuation runs with a
// response that has no status (status 0: the store counts as unreachable, the
// upload is stored pending and revalidated later).
//
// The deadline is kept here, so that whoever asks a store client waits without
// a timeout of its own: at a call's deadline its continuation runs with no
// status ("store deadline passed"), sent or not; the store's late answer is let
// go. One timer per client does it (the owner sends itself tick_atom), armed
// for the earliest deadline only: a CAF request timeout per upload woke CAF's
// clock thread twice per upload (set and cancel).

#include <caf/send.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "actors/log.hpp"
#include "actors/metrics.hpp"
#include "actors/tracing.hpp"
#include "actors/type_ids.hpp"
#include "http/outbound_client.hpp"
#include "model/clock.hpp"
#include "model/url_policy.hpp"

namespace receiptd::actors {

// Store calls that failed, in the operator's log: the first of each store and
// kind (no answer, unavailable, bad answer) at once, then at most one line a
// minute with the count of those left out (log_limiter). Which upload or job
// a call was for is in its span (the line carries the trace id).
class store_failure_log {
public:
  explicit store_failure_log(const model::time_source& clock) : lines_(clock) {}
  void note(const store_call& call, const http::outbound_response& r);

private:
  log_limiter lines_;
};

class outbound_calls {
public:
  using continuation = std::function<void(http::outbound_response&)>;
  using deadline = std::optional<model::time_source::steady_time>;

  outbound_calls() = default;
  outbound_calls(http::outbound_transport& client, std::size_t max_concurrent, tracer& trace,
                 const model::time_source& clock,
                 std::size_t max_waiting = std::numeric_limits<std::size_t>::max())
    : client_(&client),
      max_concurrent_(max_concurrent),
      max_waiting_(max_waiting),
      trace_(&trace),
      clock_(&clock),
      failures_(std::make_shared<store_failure_log>(clock)) {}

  // `self`: a strong handle of the owning actor, to which completions are sent.
  // `until`: when the caller stops waiting for the answer (none: it always waits).
  template <class Handle>
  void submit(const Handle& self, const trace_context& ctx, const char* actor,
              http::outbound_request req, continuation k, deadline until = std::nullopt) {
    auto name = req_name(req);
    pending p{std::move(req), std::move(k), span(*trace_, ctx, actor, std::move(name)), until};
    if (expired(p))
      return drop(std::move(p), "deadline passed before the call was sent");
    if (in_flight_ < max_concurrent_)
      return start(self, std::move(p));
    drop_expired_waiting();
    if (waiting_.size() >= max_waiting_)
      return drop(std::move(p), "too many store calls waiting; not sent");
    watch(self, p.until);
    waiting_.push_back(std::move(p));
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
    p.s.outcome((r.status ? "HTTP " + std::to_string(r.status) : "error: " + r.error)
                + (p.k ? "" : " (after the caller's deadline)"));
    p.s.end();
    if (p.k) // not answered at its deadline already
      p.k(r);
    while (in_flight_ < max_concurrent_ && !waiting_.empty()) {
      auto next = std::move(waiting_.front());
      waiting_.pop_front();
      if (expired(next))
        drop(std::move(next), "deadline passed while waiting for the store; not sent");
      else
        start(self, std::move(next));
    }
  }

  // The owner's tick_atom: the calls whose deadline has come are answered, those
  // waiting for a slot dropped, those sent let go (their slot stays taken until
  // the store answers or curl's timeout ends them).
  template <class Handle>
  void on_tick(const Handle& self) {
    if (ticks_.empty())
      return;
    auto due = *ticks_.begin(); // ticks come in the order of their times
    ticks_.erase(ticks_.begin());
    auto past = [due](const deadline& until) { return until && *until <= due; };
    std::vector<pending> dropped;
    for (auto it = waiting_.begin(); it != waiting_.end();)
      if (past(it->until)) {
        dropped.push_back(std::move(*it));
        it = waiting_.erase(it);
      } else {
        ++it;
      }
    std::vector<continuation> late;
    for (auto& [id, p] : running_)
      if (p.k && past(p.until)) {
        late.push_back(std::move(p.k));
        p.k = nullptr;
      }
    for (auto& p : dropped)
      drop(std::move(p), "deadline passed while waiting for the store; not sent");
    for (auto& k : late) {
      http::outbound_response r;
      r.error = "store deadline passed";
      k(r); // may submit further calls
    }
    deadline next;
    for (const auto& p : waiting_)
      if (p.until && (!next || *p.until < *next))
        next = p.until;
    for (const auto& [id, p] : running_)
      if (p.k && p.until && (!next || *p.until < *next))
        next = p.until;
    watch(self, next);
  }

  std::size_t in_flight() const { return in_flight_; }
  std::size_t waiting() const { return waiting_.size(); }

  // `k`, once the answer is counted in `call`: its HTTP outcome, and the time
  // from now (submission: the wait for a free slot included) to the answer. A
  // failure (no answer, 5xx or 429, an HTML page) is logged too: one line per
  // store and kind of failure a minute, saying how many more there were
  // (store_failure_log).
  continuation counted(const store_call& call, continuation k) const {
    return [clock = clock_, &call, start = clock_->steady_now(), failures = failures_,
            k = std::move(k)](http::outbound_response& r) {
      call.record(r, clock->steady_now() - start);
      failures->note(call, r);
      k(r);
    };
  }

  // The client's gauges: calls in flight and waiting, and its mailbox's size.
  void publish(const metrics::store_client_gauges& g, std::size_t mailbox) const {
    g.in_flight.set(static_cast<double>(in_flight()));
    g.waiting.set(static_cast<double>(waiting()));
    g.mailbox.set(static_cast<double>(mailbox));
  }

private:
  struct pending {
    http::outbound_request req;
    continuation k;
    span s;
    deadline until;
  };

  bool expired(const pending& p) const { return p.until && *p.until <= clock_->steady_now(); }

  // The continuation learns that no answer will come; the request is never sent.
  static void drop(pending p, const std::string& why) {
    p.req = http::outbound_request{}; // a shared body goes back to its owner first
    p.s.outcome("not sent: " + why);
    p.s.end();
    http::outbound_response r;
    r.error = why;
    p.k(r);
  }

  // Deadlines come in roughly in order (one deadline length for every upload), so
  // the expired ones are at the front.
  void drop_expired_waiting() {
    while (!waiting_.empty() && expired(waiting_.front())) {
      auto p = std::move(waiting_.front());
      waiting_.pop_front();
      drop(std::move(p), "deadline passed while waiting for the store; not sent");
    }
  }

  // "GET https://androidpublisher.googleapis.com products": the URL's origin only.
  // Its path and query may hold a secret (a webhook endpoint's ?key=, a purchase
  // token, a proxy's key an operator put in a store URL).
  static std::string req_name(const http::outbound_request& r) {
    return r.method + " " + model::url_origin(r.url) + (r.label.empty() ? "" : " " + r.label);
  }

  // Arms the client's timer for `until` unless one fires at or before it.
  template <class Handle>
  void watch(const Handle& self, const deadline& until) {
    if (!until || (!ticks_.empty() && *ticks_.begin() <= *until))
      return;
    ticks_.insert(*until);
    auto in = std::max(*until - clock_->steady_now(), model::time_source::steady_time::duration{});
    caf::delayed_anon_send(self, in, tick_atom_v);
  }

  template <class Handle>
  void start(const Handle& self, pending p) {
    watch(self, p.until);
    auto id = ++last_id_;
    ++in_flight_;
    auto req = std::move(p.req); // only the span and continuation are needed later
    running_.emplace(id, std::move(p));
    client_->submit(std::move(req), [self, id](http::outbound_response r) {
      caf::anon_send(self, http_done_atom_v, http_done{id, std::move(r)});
    });
  }

  // Never null once constructed with a client (the default-constructed object is
  // only a placeholder in an actor's state until its behaviour sets it).
  http::outbound_transport* client_ = nullptr;
  std::size_t max_concurrent_ = 1;
  std::size_t max_waiting_ = std::numeric_limits<std::size_t>::max();
  tracer* trace_ = &tracer::off();
  const model::time_source* clock_ = &model::system_time();
  std::uint64_t last_id_ = 0;
  std::size_t in_flight_ = 0;
  std::unordered_map<std::uint64_t, pending> running_;
  std::deque<pending> waiting_;
  std::multiset<model::time_source::steady_time> ticks_; // when the armed timers fire
  std::shared_ptr<store_failure_log> failures_ = std::make_shared<store_failure_log>(*clock_);
};

} // namespace receiptd::actors

#include "actors/webhook_dispatcher.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "actors/log.hpp"
#include "actors/outbound_calls.hpp"
#include "model/webhooks.hpp"

namespace receiptd::actors {

namespace {

using model::webhook_delivery;

// One endpoint's deliveries held by this instance: sending, and waiting for a slot.
struct endpoint_queue {
  std::size_t sending = 0;
  std::deque<webhook_delivery> waiting;
};

struct state {
  config::webhook_settings settings;
  std::string owner;
  webhook_dispatcher_deps deps;
  outbound_calls calls;
  std::unordered_map<std::string, endpoint_queue> endpoints;
  // "<event id> <endpoint id>" of every delivery held (sending or waiting): a
  // claim that returns one of them again (its lease ran out) is not sent twice.
  std::unordered_set<std::string> held;
  bool claiming = false;
  bool claim_again = false; // asked for while a claim was out
  // When the poll tick on its way arrives (CAF's clock). Ticks also come from
  // the work notice (actors/work_notice.hpp) when deliveries this instance
  // recorded fall due; they leave the poll's in place.
  std::optional<caf::actor_clock::time_point> poll_at;
  log_limiter errors; // failed claims: a line at most every 10 s
  static inline const char* name = "webhook-dispatcher";

  model::retry_policy policy() const {
    model::retry_policy p;
    p.initial_ms = settings.initial_backoff.count();
    p.max_ms = settings.max_backoff.count();
    p.max_attempts = static_cast<int>(settings.max_attempts);
    return p;
  }
};

using pointer = webhook_dispatcher_actor::stateful_pointer<state>;

std::string key_of(const webhook_delivery& d) {
  return d.event_id + " " + d.endpoint_id;
}

void schedule_tick(pointer self) {
  auto& st = self->state;
  if (st.poll_at)
    return;
  st.poll_at = self->clock().now() + st.settings.poll_interval;
  self->delayed_send(self, st.settings.poll_interval, tick_atom_v);
}

void send(pointer self, webhook_delivery d);
void claim(pointer self);

// The outcome of one send goes to the database; the endpoint's next waits no longer.
void settle(pointer self, webhook_delivery d, const http::outbound_response& r) {
  auto& st = self->state;
  auto endpoint = d.endpoint_id;
  model::settle_delivery(d, r.status, r.error, st.deps.clock->now_ms(), st.policy(),
                         st.deps.random->unit());
  if (d.state == model::delivery_state::dead)
    log_warn("webhook event " + d.event_id + " to endpoint " + d.endpoint_id + " is dead after "
             + std::to_string(d.attempts) + " attempts (" + d.last_error
             + "); receiptctl webhook redeliver sends it again");
  auto key = key_of(d);
  // Once recorded, the delivery no longer holds a place of its endpoint: the next
  // due one is claimed at once, not at the next poll (an endpoint takes no more
  // than its max-concurrent-per-endpoint a claim, so a busy one would otherwise
  // get that many per poll interval).
  self->request(st.deps.persistence, caf::infinite, finish_atom_v, std::move(d))
    .then(
      [=](bool) {
        self->state.held.erase(key);
        claim(self);
      },
      [=](caf::error& e) {
        self->state.held.erase(key); // the lease runs out; it is claimed and sent again
        log_error("recording a webhook delivery failed: " + caf::to_string(e));
      });
  auto& q = st.endpoints[endpoint];
  --q.sending;
  while (q.sending < st.settings.max_concurrent_per_endpoint && !q.waiting.empty()) {
    auto next = std::move(q.waiting.front());
    q.waiting.pop_front();
    send(self, std::move(next));
  }
  if (q.sending == 0 && q.waiting.empty())
    st.endpoints.erase(endpoint);
}

void send(pointer self, webhook_delivery d) {
  auto& st = self->state;
  ++st.endpoints[d.endpoint_id].sending;
  http::outbound_request req;
  req.method = "POST";
  req.url = d.url;
  req.headers
    = model::delivery_headers(d.secret, d.body, d.event_id, st.deps.clock->now_ms() / 1000);
  req.body = d.body;
  req.timeout = st.settings.timeout;
  auto handle = caf::actor_cast<webhook_dispatcher_actor>(self);
  trace_context ctx{"webhook-" + d.event_id, 0};
  st.calls.submit(handle, ctx, "webhook-dispatcher", std::move(req),
                  [self, d = std::move(d)](http::outbound_response& r) mutable {
                    settle(self, std::move(d), r);
                  });
}

// Holds a claimed delivery: sent now when its endpoint has a free slot (a claim
// takes no more than the endpoint's room, so it has one unless an earlier
// delivery's lease ran out while it was still out), else in line behind the
// endpoint's others.
void take(pointer self, webhook_delivery d) {
  auto& st = self->state;
  if (!st.held.insert(key_of(d)).second)
    return; // still ours from an earlier claim
  auto& q = st.endpoints[d.endpoint_id];
  if (q.sending < st.settings.max_concurrent_per_endpoint)
    send(self, std::move(d));
  else
    q.waiting.push_back(std::move(d));
}

// Claims due deliveries, at most webhooks.batch held at once, and per endpoint at
// most max-concurrent-per-endpoint (the database counts what this instance holds
// of each endpoint): an endpoint that hangs holds its own places and no one
// else's. One claim at a time; one asked for meanwhile follows it.
void claim(pointer self) {
  auto& st = self->state;
  if (st.claiming) {
    st.claim_again = true;
    return;
  }
  st.claim_again = false;
  if (st.held.size() >= st.settings.batch)
    return schedule_tick(self);
  st.claiming = true;
  auto room = static_cast<std::int32_t>(st.settings.batch - st.held.size());
  auto per_endpoint = static_cast<std::int32_t>(st.settings.max_concurrent_per_endpoint);
  self
    ->request(st.deps.persistence, st.settings.lease / 2, claim_deliveries_atom_v, st.owner,
              static_cast<std::int64_t>(st.settings.lease.count()), room, per_endpoint)
    .then(
      [=](webhook_deliveries& claimed) {
        self->state.claiming = false;
        for (auto& d : claimed)
          take(self, std::move(d));
        if (self->state.claim_again)
          return claim(self);
        schedule_tick(self);
      },
      [=](caf::error& e) {
        self->state.claiming = false;
        self->state.claim_again = false;
        self->state.errors.log(log_level::error, "claim",
                               "claiming webhook deliveries failed: " + caf::to_string(e));
        schedule_tick(self);
      });
}

webhook_dispatcher_actor::behavior_type dispatcher(pointer self, config::webhook_settings settings,
                                                   std::string owner,
                                                   webhook_dispatcher_deps deps) {
  auto& st = self->state;
  st.settings = std::move(settings);
  st.owner = std::move(owner);
  st.deps = std::move(deps);
  // Bounded by `held` (at most webhooks.batch), not here.
  st.calls = outbound_calls(*st.deps.transport, st.settings.batch, *st.deps.trace, *st.deps.clock);
  st.errors = log_limiter(*st.deps.clock, std::chrono::seconds(10));
  claim(self); // at start: deliveries a crash or restart left behind
  return {
    [=](tick_atom) {
      auto& st = self->state;
      if (st.poll_at && self->clock().now() >= *st.poll_at)
        st.poll_at.reset();
      claim(self);
    },
    [=](http_done_atom, http_done& done) {
      auto handle = caf::actor_cast<webhook_dispatcher_actor>(self);
      self->state.calls.on_done(handle, done);
    },
  };
}

} // namespace

webhook_dispatcher_actor spawn_webhook_dispatcher(caf::actor_system& sys,
                                                  const config::webhook_settings& settings,
                                                  std::string owner, webhook_dispatcher_deps deps) {
  return sys.spawn(dispatcher, settings, std::move(owner), std::move(deps));
}

} // namespace receiptd::actors

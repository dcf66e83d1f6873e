#include "actors/refund_answerer.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <optional>
#include <unordered_set>

#include <boost/json/serialize.hpp>

#include "actors/app_context.hpp"
#include "actors/log.hpp"

namespace receiptd::actors {

namespace {

namespace mp = model::purchases;

struct state {
  refund_answerer_settings settings;
  std::string owner;
  refund_answerer_deps deps;
  std::unordered_set<std::string> held; // request ids claimed and not finished
  bool claiming = false;
  bool claim_again = false; // a tick came while a claim was out
  // When the poll tick on its way arrives (CAF's clock). Ticks also come from
  // the work notice (actors/work_notice.hpp) when requests this instance
  // recorded fall due; they leave the poll's in place.
  std::optional<caf::actor_clock::time_point> poll_at;
  static inline const char* name = "refund-answerer";
};

using pointer = refund_answerer_actor::stateful_pointer<state>;

void schedule_tick(pointer self) {
  auto& st = self->state;
  if (st.poll_at)
    return;
  st.poll_at = self->clock().now() + st.settings.poll_interval;
  self->delayed_send(self, st.settings.poll_interval, tick_atom_v);
}

void count(pointer self, const mp::refund_request& r, std::string_view outcome) {
  self->state.deps.instruments->refund_requests(r.marketplace, outcome).add();
}

// The outcome recorded; its purchase shows it (and announces the change).
void finish(pointer self, mp::refund_request r) {
  auto id = r.id;
  self->request(self->state.deps.persistence, caf::infinite, finish_atom_v, std::move(r))
    .then([=](bool) { self->state.held.erase(id); },
          [=](caf::error& e) {
            self->state.held.erase(id); // its lease runs out; it is claimed again
            log_error("recording refund request " + id + " failed: " + caf::to_string(e));
          });
}

bool accepted(const mp::refund_request& r, int status) {
  // Apple answers 202 Accepted; Play an empty 200.
  return r.marketplace == "store_a" ? status == 202 || status == 200
                                    : status >= 200 && status < 300;
}

bool retryable(int status) {
  // No answer, the store down or busy, or credentials the operator may fix.
  return status == 0 || status == 401 || status == 429 || status >= 500;
}

void missed(pointer self, mp::refund_request r) {
  r.state = "expired";
  r.next_attempt_at.reset();
  if (r.last_error.empty())
    r.last_error = "the store's deadline passed unanswered";
  count(self, r, "missed");
  log_warn("refund request " + r.id + " of purchase " + r.purchase_id + " (" + r.marketplace
             + ", app " + r.app_id + ") missed the store's deadline unanswered after "
             + std::to_string(r.attempts) + " attempts",
           log_context{}
             .with("refund_request", r.id)
             .with("purchase", r.purchase_id)
             .with("store", r.marketplace)
             .with("app", r.app_id));
  finish(self, std::move(r));
}

void answer(pointer self, db::refund_work w) {
  auto& st = self->state;
  auto r = std::move(w.request);
  const auto now = st.deps.clock->now_ms();
  if (now >= r.deadline_at)
    return missed(self, std::move(r));
  auto built = r.marketplace == "store_a"
    ? mp::store_a_consumption_body(w.settings, w.facts, w.report)
    : mp::store_b_review_body(w.settings, w.facts, w.report, r.refund_token.value_or(""));
  if (!built.body) {
    r.state = "skipped";
    r.last_error = built.skipped;
    r.next_attempt_at.reset();
    count(self, r, "skipped");
    return finish(self, std::move(r));
  }
  auto body = boost::json::serialize(*built.body);
  store_refund_answer call;
  call.trace = trace_context{"refund-" + r.id, 0};
  call.app = make_app_context(w.app);
  call.key = r.store_key;
  call.package_name = r.package_name.value_or(w.app.package_name);
  call.sandbox = r.environment != "production";
  call.body = body;
  call.deadline = st.deps.clock->steady_now() + st.settings.call_deadline;
  auto deliver = [=](store_refund_reply& reply) mutable {
    auto& st = self->state;
    const auto at = st.deps.clock->now_ms();
    ++r.attempts;
    r.store_status = reply.status == 0 ? std::nullopt : std::optional<int>(reply.status);
    if (accepted(r, reply.status)) {
      r.state = "answered";
      r.answered_at = at;
      r.sent = body;
      r.last_error.clear();
      r.next_attempt_at.reset();
      count(self, r, "answered");
    } else if (retryable(reply.status)) {
      r.last_error = reply.detail;
      // Never later than the deadline: a request still unanswered then is missed.
      r.next_attempt_at = std::min(
        model::next_attempt_at(st.settings.retry, r.attempts, st.deps.random->unit(), at,
                               reply.not_before),
        r.deadline_at);
      count(self, r, "retried");
    } else {
      r.state = "failed";
      r.sent = body;
      r.last_error = reply.detail;
      r.next_attempt_at.reset();
      count(self, r, "failed");
      log_warn("refund request " + r.id + " of purchase " + r.purchase_id + ": the store refused "
               + "the answer (" + reply.detail + ")");
    }
    finish(self, std::move(r));
  };
  auto failed = [=](caf::error& e) mutable {
    store_refund_reply reply{0, caf::to_string(e), std::nullopt};
    deliver(reply);
  };
  if (r.marketplace == "store_a")
    self->request(st.deps.store_a, caf::infinite, refund_atom_v, std::move(call))
      .then(deliver, failed);
  else
    self->request(st.deps.store_b, caf::infinite, refund_atom_v, std::move(call))
      .then(deliver, failed);
}

void claim(pointer self) {
  auto& st = self->state;
  if (st.claiming) {
    st.claim_again = true;
    return;
  }
  st.claim_again = false;
  st.claiming = true;
  self
    ->request(st.deps.persistence, st.settings.lease / 2, claim_refunds_atom_v, st.owner,
              static_cast<std::int64_t>(st.settings.lease.count()), st.settings.batch)
    .then(
      [=](refund_works& claimed) {
        self->state.claiming = false;
        for (auto& w : claimed)
          if (self->state.held.insert(w.request.id).second)
            answer(self, std::move(w));
        if (self->state.claim_again)
          return claim(self);
        schedule_tick(self);
      },
      [=](caf::error& e) {
        self->state.claiming = false;
        self->state.claim_again = false;
        log_error("claiming refund requests failed: " + caf::to_string(e));
        schedule_tick(self);
      });
}

refund_answerer_actor::behavior_type answerer(pointer self, refund_answerer_settings settings,
                                              std::string owner, refund_answerer_deps deps) {
  self->state.settings = std::move(settings);
  self->state.owner = std::move(owner);
  self->state.deps = std::move(deps);
  claim(self); // at start: requests a crash or restart left behind
  return {
    [=](tick_atom) {
      auto& st = self->state;
      if (st.poll_at && self->clock().now() >= *st.poll_at)
        st.poll_at.reset();
      claim(self);
    },
  };
}

} // namespace

refund_answerer_actor spawn_refund_answerer(caf::actor_system& sys,
                                            const refund_answerer_settings& settings,
                                            std::string owner, refund_answerer_deps deps) {
  return sys.spawn(answerer, settings, std::move(owner), std::move(deps));
}

} // namespace receiptd::actors

#include "actors/retry_scheduler.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "actors/log.hpp"
#include "model/rate_limit.hpp"

namespace receiptd::actors {

namespace {

// Revalidations are paced per store: [0] Store A, [1] Store B.
constexpr std::size_t stores = 2;
std::size_t store_index(model::record_kind kind) {
  return kind == model::record_kind::store_b_purchase_order ? 1 : 0;
}

struct state {
  config::retry_settings settings;
  std::string owner;
  validator_deps_ptr deps;
  std::unordered_set<std::string> running;                     // job ids with a validator out
  std::unordered_map<caf::actor_addr, std::string> validators; // → job id
  // Claimed jobs waiting for their store's rate (store-*.retry-rate), oldest first,
  // and the buckets that pace them (bursts of at most a tenth of a second's worth, so no second
  // sees more than the rate and a tenth).
  std::deque<claimed_job> waiting[stores];
  std::vector<model::token_bucket> buckets;
  bool claiming = false;
  bool claim_again = false; // a tick came while a claim was out (work noticed meanwhile)
  // When the earliest poll tick already on its way arrives (CAF's clock). Ticks
  // also come from the work notice (actors/work_notice.hpp) when jobs this
  // instance wrote fall due.
  std::optional<caf::actor_clock::time_point> tick_at;
  log_limiter errors; // failed claims: a line at most every 10 s
  static inline const char* name = "retry-scheduler";

  std::size_t waiting_jobs() const { return waiting[0].size() + waiting[1].size(); }
};

using pointer = retry_scheduler_actor::stateful_pointer<state>;

// Revalidations running here, and the scheduler's own mailbox (read by itself).
void publish(pointer self) {
  const auto& m = *self->state.deps->instruments;
  m.jobs_running.set(static_cast<double>(self->state.running.size()));
  m.retry_scheduler_mailbox.set(static_cast<double>(self->mailbox().size()));
}

// A tick after `delay` (the poll interval by default), unless one comes sooner.
void schedule_tick(pointer self, caf::timespan delay) {
  auto& st = self->state;
  auto at = self->clock().now() + delay;
  if (st.tick_at && *st.tick_at <= at)
    return;
  st.tick_at = at;
  self->delayed_send(self, delay, tick_atom_v);
}
void schedule_tick(pointer self) {
  schedule_tick(self, self->state.settings.poll_interval);
}

// Starts the waiting jobs each store's rate allows now; for the others, a tick
// when the next token is due.
void start_ready(pointer self) {
  auto& st = self->state;
  auto handle = caf::actor_cast<retry_scheduler_actor>(self);
  const auto now = st.deps->clock->steady_now();
  std::optional<model::token_bucket::duration> next;
  for (std::size_t i = 0; i < stores; ++i) {
    auto& queue = st.waiting[i];
    while (!queue.empty() && st.buckets[i].take(now)) {
      auto id = queue.front().job.id;
      auto v = self->spawn<caf::monitored>(revalidate, std::move(queue.front()), st.deps, handle);
      queue.pop_front();
      st.validators.emplace(v.address(), std::move(id));
    }
    if (!queue.empty()) {
      auto wait = st.buckets[i].wait(now);
      next = next ? std::min(*next, wait) : wait;
    }
  }
  if (next)
    schedule_tick(self, std::max<caf::timespan>(*next, std::chrono::milliseconds(1)));
}

// How many more jobs to claim: what the batch has room for, and no more than the
// slowest store's rate starts within half a lease (a job that waits longer here
// could lose its lease to another instance; fencing would keep that safe, but
// the work would be done twice).
std::int32_t claim_room(const state& st) {
  std::size_t held = st.running.size();
  std::size_t room = held >= st.settings.batch ? 0 : st.settings.batch - held;
  for (const auto& bucket : st.buckets) {
    if (bucket.unlimited())
      continue;
    const double half_lease = std::chrono::duration<double>(st.settings.lease).count() / 2;
    const auto startable = static_cast<std::size_t>(bucket.rate() * half_lease) + 1;
    room = std::min(room, startable > st.waiting_jobs() ? startable - st.waiting_jobs() : 0);
  }
  return static_cast<std::int32_t>(room);
}

void claim(pointer self) {
  auto& st = self->state;
  if (st.claiming) {
    st.claim_again = true; // what it missed is claimed once it is answered
    return;
  }
  st.claim_again = false;
  auto room = claim_room(st);
  if (room <= 0) {
    // Full: a finishing revalidation claims again; the tick is the safety net that
    // keeps polling even when none reports.
    schedule_tick(self);
    return;
  }
  st.claiming = true;
  self
    ->request(st.deps->persistence, st.settings.claim_timeout, claim_atom_v, st.owner,
              static_cast<std::int64_t>(st.settings.lease.count()), room)
    .then(
      [=](claimed_jobs& jobs) {
        auto& st = self->state;
        st.claiming = false;
        for (auto& job : jobs) {
          if (!st.running.insert(job.job.id).second)
            continue; // still running (or waiting) from an earlier claim
          st.waiting[store_index(job.job.kind)].push_back(std::move(job));
          st.deps->instruments->jobs_claimed.add();
        }
        start_ready(self);
        publish(self);
        if (st.claim_again)
          return claim(self);
        schedule_tick(self);
      },
      [=](caf::error& e) {
        self->state.claiming = false;
        self->state.claim_again = false;
        self->state.errors.log(log_level::error, "claim",
                               "claiming revalidation jobs failed: " + caf::to_string(e));
        schedule_tick(self);
      });
}

retry_scheduler_actor::behavior_type retry_scheduler(pointer self, config::retry_settings settings,
                                                     retry_rates rates, std::string owner,
                                                     validator_deps_ptr deps) {
  self->state.settings = std::move(settings);
  self->state.owner = std::move(owner);
  self->state.deps = std::move(deps);
  self->state.errors = log_limiter(*self->state.deps->clock, std::chrono::seconds(10));
  for (double rate : {rates.store_a, rates.store_b})
    self->state.buckets.emplace_back(rate, rate / 10); // a burst of at least one
  // A validator that died without reporting must not hold its slot forever;
  // its job keeps its lease and is claimed again when the lease runs out.
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    auto it = st.validators.find(dm.source);
    if (it == st.validators.end())
      return;
    // Still running means it never reported done: say so, whatever the exit reason.
    if (st.running.erase(it->second) > 0)
      log_error("revalidation of job " + it->second + " ended without finishing: "
                + (dm.reason ? caf::to_string(dm.reason) : std::string("no report")));
    st.validators.erase(it);
    publish(self);
    schedule_tick(self);
  });
  claim(self); // at start: jobs a crash or restart left behind
  return {
    [=](tick_atom) {
      auto& st = self->state;
      if (st.tick_at && self->clock().now() >= *st.tick_at)
        st.tick_at.reset();
      start_ready(self);
      claim(self);
    },
    [=](done_atom, const std::string& job_id) {
      self->state.running.erase(job_id);
      publish(self);
      // A drained batch means more may be due: claim again without waiting.
      if (self->state.running.empty())
        claim(self);
      else
        schedule_tick(self);
    },
  };
}

} // namespace

retry_scheduler_actor spawn_retry_scheduler(caf::actor_system& sys,
                                            const config::retry_settings& settings,
                                            retry_rates rates, std::string owner,
                                            validator_deps_ptr deps) {
  return sys.spawn(retry_scheduler, settings, rates, std::move(owner), std::move(deps));
}

} // namespace receiptd::actors

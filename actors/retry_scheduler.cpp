#include "actors/retry_scheduler.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <unordered_map>
#include <unordered_set>

#include "actors/log.hpp"

namespace receiptd::actors {

namespace {

struct state {
  config::retry_settings settings;
  std::string owner;
  validator_deps_ptr deps;
  std::unordered_set<std::string> running;                     // job ids with a validator out
  std::unordered_map<caf::actor_addr, std::string> validators; // → job id
  bool claiming = false;
  bool tick_scheduled = false;
  static inline const char* name = "retry-scheduler";
};

using pointer = retry_scheduler_actor::stateful_pointer<state>;

void schedule_tick(pointer self) {
  if (self->state.tick_scheduled)
    return;
  self->state.tick_scheduled = true;
  self->delayed_send(self, self->state.settings.poll_interval, tick_atom_v);
}

void claim(pointer self) {
  auto& st = self->state;
  if (st.claiming)
    return; // its answer schedules the next tick
  if (st.running.size() >= st.settings.batch) {
    // Full: a finishing revalidation claims again; the tick is the safety net that
    // keeps polling even when none reports (issue 6 §10).
    schedule_tick(self);
    return;
  }
  st.claiming = true;
  auto room = static_cast<std::int32_t>(st.settings.batch - st.running.size());
  self
    ->request(st.deps->persistence, st.settings.claim_timeout, claim_atom_v, st.owner,
              static_cast<std::int64_t>(st.settings.lease.count()), room)
    .then(
      [=](claimed_jobs& jobs) {
        auto& st = self->state;
        st.claiming = false;
        auto handle = caf::actor_cast<retry_scheduler_actor>(self);
        for (auto& job : jobs) {
          if (!st.running.insert(job.job.id).second)
            continue; // still running from an earlier claim
          auto id = job.job.id;
          auto v = self->spawn<caf::monitored>(revalidate, std::move(job), st.deps, handle);
          st.validators.emplace(v.address(), std::move(id));
        }
        schedule_tick(self);
      },
      [=](caf::error& e) {
        self->state.claiming = false;
        log_error("claiming revalidation jobs failed: " + caf::to_string(e));
        schedule_tick(self);
      });
}

retry_scheduler_actor::behavior_type retry_scheduler(pointer self, config::retry_settings settings,
                                                     std::string owner, validator_deps_ptr deps) {
  self->state.settings = std::move(settings);
  self->state.owner = std::move(owner);
  self->state.deps = std::move(deps);
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
    schedule_tick(self);
  });
  claim(self); // at start: jobs a crash or restart left behind
  return {
    [=](tick_atom) {
      self->state.tick_scheduled = false;
      claim(self);
    },
    [=](done_atom, const std::string& job_id) {
      self->state.running.erase(job_id);
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
                                            std::string owner, validator_deps_ptr deps) {
  return sys.spawn(retry_scheduler, settings, std::move(owner), std::move(deps));
}

} // namespace receiptd::actors

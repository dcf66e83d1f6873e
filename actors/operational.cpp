#include "actors/operational.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "actors/log.hpp"

namespace receiptd::actors {

namespace {

using steady_time = model::time_source::steady_time;

struct state {
  operational_settings settings;
  operational_deps deps;
  // The queue figures: when they were last asked for (answered or not), whether
  // that read is out, and the scrapes waiting for it.
  std::optional<steady_time> queue_asked;
  bool reading = false;
  std::vector<caf::typed_response_promise<std::string>> scrapes;
  // The text last rendered, and when.
  std::string text;
  std::optional<steady_time> rendered_at;
  // Readiness: when the last check was asked, its answer (the migrations missing,
  // or why the database did not answer), whether it is out, the probes waiting.
  std::optional<steady_time> ready_asked;
  std::int32_t missing = 0;
  caf::error unready;
  bool checking = false;
  std::vector<caf::typed_response_promise<std::int32_t>> probes;
  static inline const char* name = "operational";

  bool due(const std::optional<steady_time>& asked, std::chrono::milliseconds interval) const {
    return !asked || deps.clock->steady_now() >= *asked + interval;
  }
};

using pointer = operational_actor::stateful_pointer<state>;

const std::string& render(pointer self) {
  auto& st = self->state;
  const auto& d = st.deps;
  st.text = d.instruments->exposition({.spans_dropped = d.trace->dropped()});
  st.rendered_at = d.clock->steady_now();
  return st.text;
}

// The text last rendered, unless it is older than render_interval.
const std::string& recent_text(pointer self) {
  auto& st = self->state;
  if (st.due(st.rendered_at, st.settings.render_interval))
    return render(self);
  return st.text;
}

// Every scrape that waited for the read gets the one text rendered after it.
void answer_scrapes(pointer self) {
  auto& st = self->state;
  st.reading = false;
  if (st.scrapes.empty())
    return;
  const auto& text = render(self); // with the figures just read
  for (auto& rp : std::exchange(st.scrapes, {}))
    rp.deliver(text);
}

void read_queue(pointer self) {
  auto& st = self->state;
  st.reading = true;
  st.queue_asked = st.deps.clock->steady_now();
  self->request(st.deps.db, operational_deadline, queue_figures_atom_v)
    .then(
      [=](db::job_queue_figures& q) {
        const auto& d = self->state.deps;
        const auto& m = *d.instruments;
        m.queue_due.set(static_cast<double>(q.due));
        m.queue_leased.set(static_cast<double>(q.leased));
        m.queue_scheduled.set(static_cast<double>(q.scheduled));
        auto waited = q.oldest_due_at ? d.clock->now_ms() - *q.oldest_due_at : 0;
        m.queue_oldest_due_age.set(static_cast<double>(std::max<model::unix_ms>(waited, 0))
                                   / 1000.0);
        m.webhook_pending.set(static_cast<double>(q.webhook_pending));
        auto lag = q.webhook_oldest_pending_at ? d.clock->now_ms() - *q.webhook_oldest_pending_at
                                               : 0;
        m.webhook_oldest_pending_age.set(static_cast<double>(std::max<model::unix_ms>(lag, 0))
                                         / 1000.0);
        answer_scrapes(self);
      },
      [=](caf::error& e) {
        self->state.deps.instruments->queue_read_errors.add();
        log_warn("metrics: the revalidation queue figures could not be read: " + failure_text(e));
        answer_scrapes(self);
      });
}

void answer_probes(pointer self) {
  auto& st = self->state;
  st.checking = false;
  for (auto& rp : std::exchange(st.probes, {})) {
    if (st.unready)
      rp.deliver(st.unready);
    else
      rp.deliver(st.missing);
  }
}

void check_ready(pointer self) {
  auto& st = self->state;
  st.checking = true;
  st.ready_asked = st.deps.clock->steady_now();
  self->request(st.deps.db, operational_deadline, ready_atom_v)
    .then(
      [=](std::int32_t missing) {
        self->state.missing = missing;
        self->state.unready = caf::error{};
        answer_probes(self);
      },
      [=](caf::error& e) {
        self->state.unready = std::move(e);
        answer_probes(self);
      });
}

operational_actor::behavior_type operational(pointer self, operational_settings settings,
                                             operational_deps deps) {
  self->state.settings = settings;
  self->state.deps = std::move(deps);
  // Its session ends with it.
  self->link_to(self->state.deps.db);
  return {
    [=](scrape_atom) -> caf::result<std::string> {
      auto& st = self->state;
      if (!st.reading && st.due(st.queue_asked, st.settings.queue_interval))
        read_queue(self);
      if (!st.reading)
        return recent_text(self);
      auto rp = self->make_response_promise<std::string>();
      st.scrapes.push_back(rp);
      return rp;
    },
    [=](ready_atom) -> caf::result<std::int32_t> {
      auto& st = self->state;
      if (!st.checking && st.due(st.ready_asked, st.settings.ready_interval))
        check_ready(self);
      if (!st.checking) {
        if (st.unready)
          return st.unready;
        return st.missing;
      }
      auto rp = self->make_response_promise<std::int32_t>();
      st.probes.push_back(rp);
      return rp;
    },
  };
}

} // namespace

operational_actor spawn_operational(caf::actor_system& sys, const operational_settings& settings,
                                    operational_deps deps, bool own_thread) {
  if (own_thread)
    return sys.spawn<caf::detached>(operational, settings, std::move(deps));
  return sys.spawn(operational, settings, std::move(deps));
}

std::string failure_text(const caf::error& e) {
  if (e == caf::sec::request_timeout)
    return "no answer within " + std::to_string(operational_deadline.count()) + " s";
  const auto& context = e.context();
  if (!context.match_elements<std::string>())
    return caf::to_string(e);
  std::string_view text = context.get_as<std::string>(0);
  constexpr std::string_view prefix = "database: "; // db_failure's; the caller says so
  if (text.starts_with(prefix))
    text.remove_prefix(prefix.size());
  return std::string(text);
}

} // namespace receiptd::actors

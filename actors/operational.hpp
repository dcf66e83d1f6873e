#pragma once
// What GET /metrics and GET /readyz read, kept off the request path.
// One long-lived actor on a thread of its own renders every scrape (the text of
// the registry is CPU the scheduler's threads, which run the uploads, never
// spend), and asks the database through a session of its own (a persistence
// worker outside the pool: actors/persistence.hpp), so that no scrape or probe
// ever holds a worker an upload needs. Whatever the number of scrapes and probes:
// - the revalidation queue figures, a scan of validation_jobs (65 ms at 300,000
//   jobs), are read at most once per metrics.queue-interval; scrapes meanwhile
//   show the figures last read, and those that arrive during a read share it;
// - the database's readiness is checked at most once per ready_interval; probes
//   that arrive during a check share it;
// - the text is rendered at most once per render_interval; scrapes meanwhile get
//   the text last rendered.
// A read or check that does not answer within operational_deadline has failed: a
// scrape then shows the figures last read (receiptd_revalidation_queue_read_errors_total
// counts it), a probe is told why.

#include <caf/fwd.hpp>

#include <chrono>
#include <string>

#include "actors/fwd.hpp"
#include "actors/metrics.hpp"
#include "actors/tracing.hpp"
#include "model/clock.hpp"

namespace receiptd::actors {

// How long the database may take to answer a scrape's queue figures or a
// readiness check.
inline constexpr std::chrono::seconds operational_deadline{2};

struct operational_settings {
  std::chrono::milliseconds queue_interval{10000}; // metrics.queue-interval
  std::chrono::milliseconds ready_interval{1000};
  // A scrape within this of the last rendering gets that text: however many
  // scrape, the registry is rendered (and /proc read) at most ten times a second.
  std::chrono::milliseconds render_interval{100};
};

struct operational_deps {
  operational_db_actor db; // a session of its own; stopped with the actor
  metrics* instruments = &metrics::off();
  tracer* trace = &tracer::off();
  const model::time_source* clock = &model::system_time();
};

// `own_thread`: false only on the deterministic test scheduler.
operational_actor spawn_operational(caf::actor_system& sys, const operational_settings& settings,
                                    operational_deps deps, bool own_thread = true);

// What a failed database call says (db_failure's message without its prefix), or
// that it did not answer in time.
std::string failure_text(const caf::error& e);

} // namespace receiptd::actors

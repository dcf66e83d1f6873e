#pragma once
// The persistence pool (DESIGN.md §1): detached workers, one database session
// each (SOCI blocks, so never on a scheduler thread), behind a master that hands
// each worker one request at a time, the token path first and saves next (the
// top of actors/persistence.cpp), and refuses work past a queue bound.

#include <string>

#include "actors/fwd.hpp"
#include "actors/metrics.hpp"
#include "actors/tracing.hpp"
#include "http/turn_hook.hpp"
#include "model/clock.hpp"

namespace receiptd::actors {

class work_notice;
class customer_changes;

struct persistence_settings {
  std::string db_url;
  std::size_t workers = 4;
  std::size_t max_queued = 100000; // requests waiting in the pool before it refuses
  // The workers hand their answers on in turns of their threads (actors/scheduler.hpp);
  // null: as CAF does. Must outlive the pool.
  http::turn_hook* turns = nullptr;
  // Told of the work the pool's calls write for the background actors
  // (actors/work_notice.hpp); null: they find it at their next poll. Must outlive the pool.
  work_notice* notice = nullptr;
  // Counts the calls that may change a customer's answer (actors/customer_answers.hpp);
  // null: nobody keeps answers. Must outlive the pool.
  customer_changes* changes = nullptr;
};

// Spawns the workers and their master; the master is the pool's handle. Its
// figures go to `instruments`: queued and in-flight requests, save batch sizes and
// commit times, database errors, and how jobs end (completed, given up,
// rescheduled, overtaken).
persistence_actor spawn_persistence_pool(caf::actor_system& sys,
                                         const persistence_settings& settings, tracer& trace,
                                         const model::time_source& clock,
                                         metrics& instruments = metrics::off());

// A database session of its own for the operational endpoints (one more worker,
// outside the pool: actors/operational.hpp), on the pool's database.
operational_db_actor spawn_operational_session(caf::actor_system& sys,
                                               const persistence_settings& settings, tracer& trace,
                                               const model::time_source& clock,
                                               metrics& instruments = metrics::off());

} // namespace receiptd::actors

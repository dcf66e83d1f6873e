#pragma once
// The persistence pool's workers (internal to actors/persistence*.cpp): the
// pool's interface plus the batched calls the pool master uses for group commit.

#include <caf/actor_system.hpp>

#include <string>
#include <utility>
#include <vector>

#include "actors/fwd.hpp"
#include "actors/metrics.hpp"
#include "actors/tracing.hpp"
#include "model/clock.hpp"
#include "db/database.hpp"
#include "http/turn_hook.hpp"

namespace receiptd::actors {

class work_notice;
class customer_changes;

struct batched_save {
  trace_context trace;
  db::batch_save save;
};
using save_batch = std::vector<batched_save>;
using save_batch_result = std::vector<db::batch_saved>;                // in batch order
using auth_batch = std::vector<std::pair<trace_context, std::string>>; // token hashes
using auth_batch_result = std::vector<authenticated>;                  // in batch order

} // namespace receiptd::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::save_batch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::save_batch_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::auth_batch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::auth_batch_result)

namespace receiptd::actors {

// What the pool master sends a worker: saves and token lookups only in batches
// (group commit), everything else one call at a time, as the pool received it.
// A worker of its own answers the operational endpoints' reads (operational.hpp).
using persistence_worker_actor = persistence_calls::extend_with<operational_db_actor>::extend<
  caf::replies_to<save_atom, save_batch>::with<save_batch_result>,
  caf::replies_to<authenticate_atom, auth_batch>::with<auth_batch_result>>;

// One worker: its own thread and database session (opened on first use and
// reopened after a failure).
// `instruments`: save batch sizes and commit times, database errors.
// `turns`: its answers are handed on in a turn of its thread (actors/scheduler.hpp).
// `notice`: told of the work each call wrote for the background actors
// (actors/work_notice.hpp); null: they find it at their next poll.
// `changes`: counts each call that may change a customer's answer
// (actors/customer_answers.hpp); null: nobody keeps answers.
persistence_worker_actor spawn_persistence_worker(caf::actor_system& sys, const std::string& url,
                                                  tracer& trace, const model::time_source& clock,
                                                  metrics& instruments,
                                                  http::turn_hook* turns = nullptr,
                                                  work_notice* notice = nullptr,
                                                  customer_changes* changes = nullptr);

inline caf::error db_failure(const std::string& what) {
  return caf::make_error(caf::sec::runtime_error, "database: " + what);
}

} // namespace receiptd::actors

#pragma once
// The retry scheduler (DESIGN.md §1): when jobs this instance wrote fall due
// (actors/work_notice.hpp), and every poll interval for jobs written elsewhere,
// it claims due revalidation jobs (leased to this instance, fenced by version), runs a
// validator in revalidate mode for each, and claims again once they report back.
// It claims at start, so jobs left by a crash or restart are picked up. Each
// store's revalidations are paced (retry_rates).

#include <chrono>
#include <string>

#include "actors/fwd.hpp"
#include "actors/validator.hpp"

namespace receiptd::actors {

// Revalidations started per second against each store (store-*.retry-rate; 0:
// unlimited), in bursts of at most a tenth of a second's worth: after an outage the queue
// drains at this pace instead of stampeding the store. Claimed jobs wait in the
// scheduler for their store's turn, within half their lease.
struct retry_rates {
  double store_a = 0;
  double store_b = 0;
};

// Reads retry.poll-interval, retry.batch, retry.lease and retry.claim-timeout;
// `owner` is this instance's lease owner id.
retry_scheduler_actor spawn_retry_scheduler(caf::actor_system& sys,
                                            const config::retry_settings& settings,
                                            retry_rates rates, std::string owner,
                                            validator_deps_ptr deps);

} // namespace receiptd::actors

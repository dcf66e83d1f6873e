#pragma once
// The retry scheduler (DESIGN.md §1): every poll interval it claims due
// revalidation jobs (leased to this instance, fenced by version), runs a
// validator in revalidate mode for each, and claims again once they report back.
// It claims at start, so jobs left by a crash or restart are picked up.

#include <chrono>
#include <string>

#include "actors/fwd.hpp"
#include "actors/validator.hpp"

namespace receiptd::actors {

// Reads retry.poll-interval, retry.batch, retry.lease and retry.claim-timeout;
// `owner` is this instance's lease owner id.
retry_scheduler_actor spawn_retry_scheduler(caf::actor_system& sys,
                                            const config::retry_settings& settings,
                                            std::string owner, validator_deps_ptr deps);

} // namespace receiptd::actors

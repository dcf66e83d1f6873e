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

struct retry_scheduler_settings {
  std::chrono::milliseconds poll_interval{1000};
  std::size_t batch = 100;
  std::chrono::milliseconds lease{60000};
  std::chrono::milliseconds claim_timeout{30000};
  std::string owner; // this instance's lease owner id
};

retry_scheduler_actor spawn_retry_scheduler(caf::actor_system& sys,
                                            retry_scheduler_settings settings,
                                            validator_deps_ptr deps);

} // namespace receiptd::actors

#pragma once
// The supervisor (DESIGN.md §1): resolves the bearer token to an app, applies
// admission control (503 + Retry-After beyond max-in-flight uploads or
// max-in-flight-bytes of request bodies), answers record lookups, and spawns one
// monitored validator per upload — answering for it if it dies without having
// answered.
//
// The token is checked before admission: requests with unknown tokens never take
// a validator's place. While their token is being looked up, requests are held
// within a budget of their own (the same two limits), so neither stage can hold
// more than the configured count and bytes.

#include <chrono>

#include "actors/fwd.hpp"
#include "actors/validator.hpp"

namespace receiptd::actors {

struct supervisor_settings {
  std::size_t max_in_flight = 10000;
  std::chrono::milliseconds token_cache_ttl{0};
  std::size_t max_in_flight_bytes = 256 * 1024 * 1024;
};

supervisor_actor spawn_supervisor(caf::actor_system& sys, supervisor_settings settings,
                                  validator_deps_ptr deps);

} // namespace receiptd::actors

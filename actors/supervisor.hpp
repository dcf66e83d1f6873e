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

#include "actors/fwd.hpp"
#include "actors/validator.hpp"
#include "config/settings.hpp"

namespace receiptd::actors {

// Reads validator.max-in-flight, validator.max-in-flight-bytes and
// auth.token-cache-ttl; its clock is the validators' (deps->clock).
supervisor_actor spawn_supervisor(caf::actor_system& sys,
                                  const config::validator_settings& admission,
                                  const config::auth_settings& auth, validator_deps_ptr deps);

} // namespace receiptd::actors

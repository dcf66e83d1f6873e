#pragma once
// The operational endpoints the actors answer: GET /metrics and GET
// /readyz, one short-lived actor per request, spawned (monitored) by the supervisor
// outside the uploads' admission. (GET /healthz, liveness, is answered by the HTTP
// layer alone.)

#include <caf/fwd.hpp>

#include "actors/validator.hpp"

namespace receiptd::actors {

// GET /metrics: 401 unless the bearer token is metrics.token (when one is set);
// else everything, as the operational actor renders it (actors/operational.hpp),
// in the Prometheus text format (version 0.0.4).
//
// GET /readyz: 200 {"status":"ready"} when the trust material is loaded and the
// database answered a trivial query (on the operational actor's session, at most
// a second ago) within operational_deadline with every migration of this build
// applied; else 503 not_ready (Retry-After) saying which.
void handle_operational(caf::event_based_actor* self, inbound in, validator_deps_ptr deps);

} // namespace receiptd::actors

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
//
// Upload rates: an upload beyond its app's rate (limits.app-rate; its client
// network's is the HTTP layer's, from the headers) is 429 with the Retry-After its
// bucket needs; an upload counts once per started 64 KiB of body
// (model::upload_cost).
//
// Credentials judged while a body arrives (vet_atom, http/admission.hpp): a token
// is looked up as an upload's would be (sharing its lookup), a notification URL's
// app (and a Play push's secret) likewise; the verdict goes back to the HTTP
// layer, which refuses the body at once when it is no good. What is known is
// published in the HTTP layer's credential view: the cached tokens as good, and,
// while tokens are cached, what was refused, for one auth.revocation-check.
//
// Token cache (auth.token-cache-ttl > 0): a found token is kept for the TTL, tagged
// with the auth revision its lookup was read at (a counter the database bumps, by
// trigger, on every change to apps or tokens). While tokens are cached, the
// supervisor asks for the revision every auth.revocation-check and drops what was
// read before a newer one, so a revocation takes effect within that interval
// whoever made it. While those checks fail, an entry is trusted for one interval
// after it was last known current. On PostgreSQL the revision's notices are heard
// too (actors/auth_notices.hpp): a notice sends every cached token to the database
// again at once and asks for the revision, and while notices are heard the check
// runs every 10 s (or auth.revocation-check, when longer) as a safety net.

#include "actors/auth_notices.hpp"
#include "actors/customer_answers.hpp"
#include "actors/fwd.hpp"
#include "actors/validator.hpp"
#include "config/settings.hpp"

namespace receiptd::actors {

struct supervisor_options {
  // Upload rates (of them, the app's); none unless given (config/receiptd.ini has
  // the service's).
  config::limits_settings limits{.client_rate = 0, .app_rate = 0};
  // Where what it learns of credentials is published for the HTTP layer; null:
  // nowhere (it still answers checks).
  http::credential_view* credentials = nullptr;
  // Customer answers given again (actors/customer_answers.hpp): what may have
  // changed them, and how many bytes of them to keep (0: none). Null: none kept.
  customer_changes* changes = nullptr;
  std::size_t answer_cache_bytes = 0;
  // The auth revision's notices, when the database sends them (PostgreSQL). Null:
  // the revocation check alone.
  auth_notices* notices = nullptr;
};

// Reads validator.max-in-flight, validator.max-in-flight-bytes,
// auth.token-cache-ttl and auth.revocation-check; its clock is the validators'
// (deps->clock).
supervisor_actor spawn_supervisor(caf::actor_system& sys,
                                  const config::validator_settings& admission,
                                  const config::auth_settings& auth, validator_deps_ptr deps,
                                  const supervisor_options& options = {});

} // namespace receiptd::actors

#pragma once
// Store A (App Store) client actor: verifyReceipt with the app's shared secret,
// at the receipt's own environment first, flipping once on 21007/21008, and
// answering with a verdict and the in-app purchases the answer enriched.

#include <chrono>
#include <string>

#include "actors/fwd.hpp"
#include "actors/metrics.hpp"
#include "actors/tracing.hpp"
#include "config/settings.hpp"
#include "model/clock.hpp"
#include "http/outbound_client.hpp"

namespace receiptd::actors {

// Reads the [store-a] settings: URLs, timeout, max-concurrent, max-queued,
// exclude-old-transactions. Its calls are counted and timed in `instruments`
// (receiptd_store_requests_total{store="store_a"}, …).
store_a_client_actor spawn_store_a_client(caf::actor_system& sys,
                                          const config::store_a_settings& settings,
                                          http::outbound_transport& client, tracer& trace,
                                          const model::time_source& clock,
                                          metrics& instruments = metrics::off());

} // namespace receiptd::actors

#pragma once
// Store B (Google Play) client actor: trades each app's service account for an
// OAuth access token (cached, refreshed before expiry, shared by concurrent
// callers), asks the Play Developer API about a purchase and answers with a
// verdict (DESIGN.md §2, §4). All HTTP is asynchronous through the outbound client.

#include <chrono>
#include <string>

#include "actors/fwd.hpp"
#include "actors/metrics.hpp"
#include "actors/tracing.hpp"
#include "config/settings.hpp"
#include "model/clock.hpp"
#include "http/outbound_client.hpp"

namespace receiptd::actors {

// Reads the [store-b] settings (api-url, timeout, max-concurrent, max-queued,
// token-refresh-margin) and outbound.allow-http (a service account's token_uri:
// see model/url_policy.hpp). Its calls are counted and timed in `instruments`
// (receiptd_store_requests_total{store="store_b"}, …).
store_b_client_actor spawn_store_b_client(caf::actor_system& sys,
                                          const config::store_b_settings& settings,
                                          const config::outbound_settings& outbound,
                                          http::outbound_transport& client, tracer& trace,
                                          const model::time_source& clock,
                                          metrics& instruments = metrics::off());

} // namespace receiptd::actors

#pragma once
// Store B (Google Play) client actor: trades each app's service account for an
// OAuth access token (cached, refreshed before expiry, shared by concurrent
// callers), asks the Play Developer API about a purchase and answers with a
// verdict (DESIGN.md §2, §4). All HTTP is asynchronous through the outbound client.

#include <chrono>
#include <string>

#include "actors/fwd.hpp"
#include "actors/tracing.hpp"
#include "http/outbound_client.hpp"

namespace receiptd::actors {

struct store_b_client_settings {
  std::string api_url = "https://androidpublisher.googleapis.com";
  std::chrono::milliseconds timeout{4000};
  std::size_t max_concurrent = 4096;
  std::chrono::milliseconds token_refresh_margin{5 * 60 * 1000};
  bool allow_http = false; // a service account's token_uri: see model/url_policy.hpp
  std::size_t max_queued = 4096; // calls waiting for a free slot; beyond: not sent (206)
};

store_b_client_actor spawn_store_b_client(caf::actor_system& sys,
                                          store_b_client_settings settings,
                                          http::outbound_client* client, tracer* trace);

} // namespace receiptd::actors

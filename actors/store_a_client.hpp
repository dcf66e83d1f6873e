#pragma once
// Store A (App Store) client actor: verifyReceipt with the app's shared secret,
// at the receipt's own environment first, flipping once on 21007/21008, and
// answering with a verdict and the in-app purchases the answer enriched.

#include <chrono>
#include <string>

#include "actors/fwd.hpp"
#include "actors/tracing.hpp"
#include "http/outbound_client.hpp"

namespace receiptd::actors {

struct store_a_client_settings {
  std::string production_url = "https://buy.itunes.apple.com/verifyReceipt";
  std::string sandbox_url = "https://sandbox.itunes.apple.com/verifyReceipt";
  std::chrono::milliseconds timeout{4000};
  std::size_t max_concurrent = 4096;
  bool exclude_old_transactions = true;
  std::size_t max_queued = 4096; // calls waiting for a free slot; beyond: not sent (206)
};

store_a_client_actor spawn_store_a_client(caf::actor_system& sys,
                                          store_a_client_settings settings,
                                          http::outbound_client* client, tracer* trace);

} // namespace receiptd::actors

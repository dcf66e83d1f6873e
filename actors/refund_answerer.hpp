#pragma once
// The refund answerer: the stores' refund requests answered
// (model/purchases/refund_request.hpp). Every poll interval it claims due
// requests (leased to this instance, fenced by version, like revalidation
// jobs), builds each answer from what the claim read (the app's settings, the
// app's backend's consumption report, receiptd's records), and has the store
// client send it: Apple's Send Consumption Information, Play's
// orders.reviewrefund. A store that does not answer, answers 5xx or 429 is
// asked again after exponential backoff with full jitter, never before its
// Retry-After and never after the store's deadline; a request still
// unanswered at its deadline is missed (a log line and
// receiptd_refund_requests_total{outcome="missed"}).

#include <chrono>
#include <string>

#include "actors/fwd.hpp"
#include "actors/metrics.hpp"
#include "model/clock.hpp"
#include "model/retry_policy.hpp"

namespace receiptd::actors {

struct refund_answerer_settings {
  std::chrono::milliseconds poll_interval = std::chrono::seconds(1);
  std::chrono::milliseconds lease = std::chrono::seconds(60);
  std::chrono::milliseconds call_deadline = std::chrono::seconds(30); // one store call
  std::int32_t batch = 20;
  model::retry_policy retry;
};

struct refund_answerer_deps {
  persistence_actor persistence;
  store_a_client_actor store_a;
  store_b_client_actor store_b;
  const model::time_source* clock = &model::system_time();
  model::random_source* random = &model::system_random();
  metrics* instruments = &metrics::off();
};

// `owner`: this instance's lease owner id.
refund_answerer_actor spawn_refund_answerer(caf::actor_system& sys,
                                            const refund_answerer_settings& settings,
                                            std::string owner, refund_answerer_deps deps);

} // namespace receiptd::actors

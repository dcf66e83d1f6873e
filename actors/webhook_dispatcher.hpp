#pragma once
// The webhook dispatcher: the outbox's sender. Every poll interval, and
// whenever a delivery is recorded, it claims due deliveries (leased to this
// instance, fenced by version: the database hands out only the first undelivered
// event per endpoint and record, so a record's events arrive in order, and per
// endpoint no more than max-concurrent-per-endpoint less what this instance holds
// there, the endpoints taking turns, so one that hangs delays no other), POSTs
// each event's exact body to its endpoint with the signatures of
// model/webhooks.hpp, and reports each outcome:
// delivered on a 2xx, else retried after exponential backoff with full jitter,
// dead after max-attempts. Delivery is at least once: an instance killed
// mid-send leaves the lease to expire and the event is sent again (receivers
// deduplicate by Receiptd-Event-Id).

#include <string>

#include "actors/fwd.hpp"
#include "actors/tracing.hpp"
#include "config/settings.hpp"
#include "http/outbound_client.hpp"
#include "model/clock.hpp"

namespace receiptd::actors {

struct webhook_dispatcher_deps {
  persistence_actor persistence;
  http::outbound_transport* transport = nullptr; // never null; outlives the actor
  tracer* trace = &tracer::off();
  const model::time_source* clock = &model::system_time();
  model::random_source* random = &model::system_random();
};

// Reads every webhooks.* option but allow-http; `owner` is this instance's lease
// owner id.
webhook_dispatcher_actor spawn_webhook_dispatcher(caf::actor_system& sys,
                                                  const config::webhook_settings& settings,
                                                  std::string owner, webhook_dispatcher_deps deps);

} // namespace receiptd::actors

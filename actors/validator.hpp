#pragma once
// The validator (DESIGN.md §1): one actor per upload, and one per due
// revalidation job. It parses and checks locally (model/), asks the store client
// under one overall deadline, has the record saved, and answers exactly once,
// after the commit.

#include <caf/fwd.hpp>

#include <chrono>
#include <memory>

#include "actors/fwd.hpp"
#include "actors/log.hpp"
#include "actors/metrics.hpp"
#include "actors/tracing.hpp"
#include "model/clock.hpp"
#include "model/retry_policy.hpp"
#include "model/store_a/receipt.hpp"
#include "model/store_a/server_api.hpp"
#include "model/store_b/pubsub_oidc.hpp"

namespace receiptd::actors {

// Only the store call has a deadline here: database calls are bounded where they
// block, by the database itself (SQLite's busy timeout, PostgreSQL's
// connect_timeout and statement_timeout), and come back as error values.
struct validation_settings {
  std::chrono::milliseconds store_deadline{5000}; // validator.store-deadline
  model::retry_policy retry;                      // from [retry]
  // How Store A receipts are checked locally: max_in_app_purchases is
  // store-a.max-in-app-purchases, clock is main's; `at` and the test seam stay unset.
  model::store_a::verify_options store_a_verify;
  // store-a.confirm-with: unified receipts through verifyReceipt or the App Store
  // Server API.
  model::store_a::confirmation confirm_with = model::store_a::confirmation::automatic;
  // notifications.max-age: an older store notification is recorded, not applied.
  std::chrono::milliseconds notification_max_age{240LL * 3600 * 1000};
};

struct validator_deps {
  persistence_actor persistence;
  operational_actor operational; // GET /metrics and /readyz (actors/operational.hpp)
  store_a_client_actor store_a;
  store_b_client_actor store_b;
  std::shared_ptr<const model::store_a::trust_anchors> trust; // Store A chains
  // Pub/Sub push authentication (store-b.rtdn-oidc-*): keys set when it is on.
  std::shared_ptr<const model::store_b::oidc_keys> rtdn_oidc_keys;
  model::store_b::oidc_expectation rtdn_oidc;
  validation_settings settings;
  // Never null: the real ones unless a test hands its own.
  tracer* trace = &tracer::off();
  metrics* instruments = &metrics::off(); // GET /metrics
  const model::time_source* clock = &model::system_time();
  model::random_source* random = &model::system_random();
  // Lines about store notifications, whoever sent them: a line per app and kind
  // at most once a minute (actors/notification_handler.cpp).
  std::shared_ptr<shared_log_limiter> notification_log = std::make_shared<shared_log_limiter>();
};
using validator_deps_ptr = std::shared_ptr<const validator_deps>;

// An upload from the HTTP layer, its app already authenticated.
void validate_upload(caf::event_based_actor* self, inbound in, app_context_ptr app,
                     validator_deps_ptr deps);

// A claimed revalidation job: ask the store again, then complete or reschedule
// the job (backoff with full jitter), and tell the scheduler it is done.
void revalidate(caf::event_based_actor* self, claimed_job job, validator_deps_ptr deps,
                retry_scheduler_actor scheduler);

} // namespace receiptd::actors

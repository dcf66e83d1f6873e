#pragma once
// The upkeep: the periodic work that keeps purchases true after
// their upload.
//  - Every store-b.refresh-interval (Play purchase orders) and every
//    store-a.refresh-interval (StoreKit 2 transactions) it has the database
//    give a job to the validated subscriptions whose expiry has passed while
//    their state says they are live (db::database::enqueue_refreshes); the
//    retry scheduler claims them like any job and the validator refreshes them.
//  - With store-b.voided-purchases, it claims the apps' voided purchases polls
//    that are due (each app every store-b.voided-purchases-interval, leased to
//    this instance as jobs are, so two instances never read the same app at
//    once) and reads each app's list page by page, every page applied and its
//    cursor stored in one transaction: a restart goes on where it stopped.

#include <string>

#include "actors/fwd.hpp"
#include "config/settings.hpp"
#include "model/clock.hpp"

namespace receiptd::actors {

struct upkeep_deps {
  persistence_actor persistence;
  store_b_client_actor store_b;
  const model::time_source* clock = &model::system_time();
};

// Reads the store-a.refresh-*, store-b.voided-purchases*, store-b.refresh-*
// options and retry.lease (a poll's lease, renewed with every page); `owner` is
// this instance's lease owner id.
upkeep_actor spawn_upkeep(caf::actor_system& sys, const config::store_a_settings& store_a,
                          const config::store_b_settings& store_b, std::chrono::milliseconds lease,
                          std::string owner, upkeep_deps deps);

} // namespace receiptd::actors

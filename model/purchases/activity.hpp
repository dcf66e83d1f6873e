#pragma once
// Whether a purchase grants what it unlocks at a given time: the one rule the
// customer answers, the events and the period-end timers share.
//
// Active:
//  - a subscription before its current period's end, or in its grace period
//    (before the grace period's end); a subscription the store has not confirmed
//    yet and whose period end no source has said (a Play upload answered 206)
//    for at most provisional_grant after its purchase;
//  - a non-renewing subscription until its end when the store gives one, else
//    like a non-consumable;
//  - a non-consumable, or a purchase whose type no store said, until revoked.
// Never: a purchase nothing proves (every source forged or store-rejected), a
// revoked or refunded one (revoked_whole: a prorated refund of a share only
// leaves it as the rest says, revoked_at telling when all the same), a pending
// one (Play purchaseState pending), one on account hold or paused, one
// superseded by an upgrade (the new purchase grants instead), an expired one,
// one in billing retry past its period without grace, and a consumable (it
// grants nothing lasting).

#include <chrono>
#include <cstdint>
#include <optional>

#include "model/purchases/purchase.hpp"

namespace receiptd::model::purchases {

inline constexpr unix_ms provisional_grant = 72LL * 3600 * 1000;

struct activity {
  bool active = false;
  // When it stops being active by time passing alone (period end, grace end);
  // none while active: only the store can end it (revoked, …).
  std::optional<unix_ms> until;
  // The end the customer answer shows as expires_at (a subscription's period
  // end, a non-renewing subscription's end), whether active or not.
  std::optional<unix_ms> expires_at;
  bool will_renew = false;
};

activity activity_at(const purchase& p, unix_ms now);

// The next time the purchase's activity changes by time passing alone, after
// `now`: what the period-end timer waits for. None: nothing but the store
// changes it.
std::optional<unix_ms> next_change(const purchase& p, unix_ms now);

// Until revoked: active_until's answer for a purchase no time ends.
inline constexpr unix_ms active_forever = INT64_MAX;

// When the purchase stops being active as time passes, as the facts it holds
// stand: it is active at `now` exactly when now < active_until(p), since time
// passing only ever ends an activity (a period, then its grace period). None:
// active at no time; active_forever: until the store says otherwise. What the
// customer lookup reads from an indexed column (db/migrations/013_customer_lookup.sql).
std::optional<unix_ms> active_until(const purchase& p);

} // namespace receiptd::model::purchases

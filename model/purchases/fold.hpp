#pragma once
// A purchase is the fold of what its sources said, ordered by the store's own
// time (model/store_time.hpp), whatever order they arrive in:
//  - facts of a period (product, type, price, period dates, trial and offer,
//    upgrade, pending, ownership, revocation) belong to the purchase's unit: the
//    newest transaction (Apple) or token (Play) known. A source about an older
//    unit changes none of them; a newer unit replaces them as it states them.
//    Within one unit a fact moves only to a value said at the same time or later.
//  - facts of the subscription as a whole (auto-renewal, billing retry, grace,
//    account hold, pause, cancellation) move by store time alone, from sources
//    about the current unit or about no unit.
//  - a revocation is undone only by a reversal (Apple's REFUND_REVERSED) said
//    after the revocation's date; a source that merely does not mention one
//    leaves it. A newer unit (a renewal after a refunded period) starts clean.
//  - sources: a record that proves the purchase is added (at most max_sources,
//    the newest kept); one that no longer does (store-rejected) is removed. A
//    record that proves nothing states nothing.
//  - the customer: an observation that binds a user moves the purchase to it,
//    the previous one remembered (the caller has checked the transfer policy:
//    ownership.hpp); the metadata is the last upload's.

#include <string>

#include "model/purchases/observation.hpp"
#include "model/purchases/purchase.hpp"

namespace receiptd::model::purchases {

// A new purchase from its first observation: what the observation states, no
// versions yet (the caller stores it as version 1 when it proves the purchase).
purchase start(const observation& o, std::string id, unix_ms now);

// Folds one observation into `p`. Returns whether `p` changed (a fact, its
// time, a source, the customer); the caller bumps versions and updated_at
// when the resource changed.
bool fold(purchase& p, const observation& o);

// Whether an observation may create a purchase: it proves it (a record that
// does, or a verified store notification).
bool may_start(const observation& o);

} // namespace receiptd::model::purchases

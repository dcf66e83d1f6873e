#pragma once
// Store time: every source of truth about a purchase (an upload's signed proof,
// a store answer, a notification, a refresh, Play's voided list, an RTDN) says
// its facts at a time the store signed or said them. A fact only moves to the
// value of a source that spoke at the same time or later; an older source
// arriving late (a delayed or replayed notification, a slow answer) changes
// nothing it contradicts. This is the one rule, used by records
// (model/store_a/notification.cpp, model/records.cpp) and purchases
// (model/purchases/fold.cpp).

#include <optional>

#include "model/timestamp.hpp"

namespace receiptd::model {

// Whether a source that spoke at `at` may overwrite what was said at `known`
// (nullopt: nothing said yet, or said at an unknown time).
inline bool not_older(std::optional<unix_ms> at, std::optional<unix_ms> known) {
  if (!known)
    return true;
  return at && *at >= *known;
}

// A fact with the store time it was said at.
template <class T>
struct said {
  T value{};
  std::optional<unix_ms> at; // nullopt: never said

  bool operator==(const said&) const = default;
};

// `fact` takes `value`, said at `at`, unless it holds something said later.
// Returns whether its value changed (its time may move alone).
template <class T>
bool hear(said<T>& fact, const T& value, unix_ms at) {
  if (fact.at && *fact.at > at)
    return false;
  fact.at = at;
  if (fact.value == value)
    return false;
  fact.value = value;
  return true;
}

} // namespace receiptd::model

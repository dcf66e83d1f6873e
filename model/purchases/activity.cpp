#include "model/purchases/activity.hpp"

namespace receiptd::model::purchases {

namespace {

bool flag(const said<std::optional<bool>>& f) {
  return f.value.value_or(false);
}

bool barred(const purchase& p) {
  return !proven(p) || revoked_whole(p) || flag(p.is_pending) || flag(p.is_on_hold)
    || flag(p.is_paused) || flag(p.is_upgraded);
}

// Active until `end` (exclusive); its expiry either way.
activity until_end(std::optional<unix_ms> end, unix_ms now) {
  activity a;
  a.expires_at = end;
  a.active = end && now < *end;
  if (a.active)
    a.until = end;
  return a;
}

activity subscription_activity(const purchase& p, unix_ms now) {
  const auto& end = p.current_period_end_at.value;
  if (!end) {
    // No source has said when the period ends: the store has not answered yet.
    if (validated(p) || !p.purchased_at)
      return {};
    // Saturated: a purchase time is whatever int64 the store signed.
    const auto bought = *p.purchased_at;
    return until_end(bought > active_forever - provisional_grant ? active_forever
                                                                 : bought + provisional_grant,
                     now);
  }
  auto a = until_end(end, now);
  if (!a.active && flag(p.in_grace_period)) {
    // Apple's billing grace period, Play's IN_GRACE_PERIOD: access continues
    // while the store retries the payment, until the grace period ends.
    const auto& grace = p.grace_period_end_at.value;
    if (!grace || now < *grace) {
      a.active = true;
      a.until = grace;
    }
  }
  a.will_renew = a.active && flag(p.is_auto_renewing);
  return a;
}

} // namespace

activity activity_at(const purchase& p, unix_ms now) {
  const auto type = p.type.value;
  activity a;
  if (type == purchase_type::subscription)
    a = subscription_activity(p, now);
  else if (type == purchase_type::non_renewing_subscription && p.current_period_end_at.value)
    a = until_end(p.current_period_end_at.value, now);
  else if (type != purchase_type::consumable)
    a.active = true; // a non-consumable, or a type no store said: until revoked
  if (barred(p)) {
    a.active = false;
    a.until.reset();
    a.will_renew = false;
  }
  return a;
}

std::optional<unix_ms> next_change(const purchase& p, unix_ms now) {
  auto a = activity_at(p, now);
  if (!a.active || !a.until || *a.until <= now)
    return std::nullopt;
  return a.until;
}

std::optional<unix_ms> active_until(const purchase& p) {
  // From the earliest time on, follow activity_at's own changes (a period end,
  // then a grace period's end) to the first time it is inactive.
  auto a = activity_at(p, INT64_MIN);
  if (!a.active)
    return std::nullopt;
  while (a.until) {
    const auto end = *a.until;
    a = activity_at(p, end);
    if (!a.active)
      return end;
  }
  return active_forever;
}

} // namespace receiptd::model::purchases

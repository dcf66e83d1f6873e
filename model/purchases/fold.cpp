#include "model/purchases/fold.hpp"

#include <algorithm>

namespace receiptd::model::purchases {

namespace {

// A fact of the unit or of the subscription takes a stated value.
template <class T>
bool take(said<T>& fact, const statement<T>& stated, unix_ms at) {
  if (!stated)
    return false;
  bool moved_time = fact.at != at && (!fact.at || *fact.at <= at);
  return hear(fact, *stated, at) || moved_time;
}

// A newer unit: what the older one said of its period is no longer current
// (each fact keeps its value until the new unit states it).
void forget_unit_times(purchase& p) {
  for (auto* at : {&p.product_id.at, &p.quantity.at, &p.type.at, &p.price.at, &p.currency_code.at,
                   &p.in_trial_period.at, &p.in_intro_period.at, &p.is_upgraded.at,
                   &p.is_pending.at, &p.owned_as.at, &p.current_period_start_at.at,
                   &p.current_period_end_at.at, &p.revoked_at.at, &p.offer_type.at,
                   &p.offer_discount_type.at, &p.offer_period.at, &p.billing_plan_type.at,
                   &p.commitment.at, &p.app_transaction_id.at})
    at->reset();
}

bool add_key(purchase& p, const std::string& key, bool older) {
  if (key.empty() || std::find(p.keys.begin(), p.keys.end(), key) != p.keys.end())
    return false;
  if (older)
    p.keys.insert(p.keys.begin(), key);
  else
    p.keys.push_back(key);
  return true;
}

bool take_source(purchase& p, const observation& o) {
  if (!o.from)
    return false;
  auto same = [&](const source& s) { return s.kind == o.from->kind && s.id == o.from->id; };
  auto it = std::find_if(p.sources.begin(), p.sources.end(), same);
  if (!o.proves) {
    if (it == p.sources.end())
      return false;
    p.sources.erase(it);
    return true;
  }
  if (it != p.sources.end()) {
    if (it->validated == o.from->validated)
      return false;
    it->validated = o.from->validated;
    return true;
  }
  p.sources.push_back(*o.from);
  if (p.sources.size() > max_sources)
    p.sources.erase(p.sources.begin());
  return true;
}

bool take_revocation(purchase& p, const observation& o) {
  switch (o.revocation) {
    case revocation_said::nothing:
      return false;
    case revocation_said::revoked: {
      if (!o.revoked_at)
        return false;
      const bool same_revocation = p.revoked_at.value == o.revoked_at;
      const bool not_older = !p.revoked_at.at || *p.revoked_at.at <= o.at;
      bool changed = hear(p.revoked_at, o.revoked_at, o.at);
      if (p.revoked_at.value != o.revoked_at)
        return changed; // an older word of another revocation
      if (p.revocation_reason != o.revocation_reason) {
        p.revocation_reason = o.revocation_reason;
        changed = true;
      }
      // Its type and share, from a source no older that tells them; a source
      // that does not (a receipt) leaves what a StoreKit 2 source said of the
      // same revocation.
      if (not_older && (o.revocation_type || !same_revocation)
          && (p.revocation_type != o.revocation_type
              || p.revocation_percentage != o.revocation_percentage)) {
        p.revocation_type = o.revocation_type;
        p.revocation_percentage = o.revocation_percentage;
        changed = true;
      }
      return changed;
    }
    case revocation_said::reversed:
      // Only a reversal said after the refund it undoes, and after the store said it.
      if (!p.revoked_at.value || o.at <= *p.revoked_at.value
          || (p.revoked_at.at && o.at <= *p.revoked_at.at))
        return false;
      p.revoked_at = {std::nullopt, o.at};
      p.revocation_reason.reset();
      p.revocation_type.reset();
      p.revocation_percentage.reset();
      return true;
  }
  return false;
}

bool take_cancellation(purchase& p, const observation& o) {
  if (!o.canceled)
    return false;
  if (p.canceled_at.at && *p.canceled_at.at > o.at)
    return false;
  if (*o.canceled) {
    if (p.canceled_at.value)
      return false;
    p.canceled_at = {o.canceled_at.value_or(o.at), o.at};
    return true;
  }
  if (!p.canceled_at.value)
    return false;
  p.canceled_at = {std::nullopt, o.at};
  return true;
}

// Facts of the subscription as a whole.
bool take_subscription(purchase& p, const observation& o) {
  bool changed = false;
  changed |= take(p.is_auto_renewing, o.is_auto_renewing, o.at);
  changed |= take(p.in_grace_period, o.in_grace_period, o.at);
  changed |= take(p.in_billing_retry, o.in_billing_retry, o.at);
  changed |= take(p.is_on_hold, o.is_on_hold, o.at);
  changed |= take(p.is_paused, o.is_paused, o.at);
  changed |= take(p.grace_period_end_at, o.grace_period_end_at, o.at);
  changed |= take(p.country_code, o.country_code, o.at);
  changed |= take_cancellation(p, o);
  return changed;
}

// Facts of the current unit.
bool take_unit(purchase& p, const observation& o) {
  bool changed = false;
  changed |= take(p.product_id, o.product_id, o.at);
  changed |= take(p.quantity, o.quantity, o.at);
  changed |= take(p.type, o.type, o.at);
  changed |= take(p.currency_code, o.currency_code, o.at);
  changed |= take(p.price, o.price, o.at);
  changed |= take(p.in_trial_period, o.in_trial_period, o.at);
  changed |= take(p.in_intro_period, o.in_intro_period, o.at);
  changed |= take(p.is_upgraded, o.is_upgraded, o.at);
  changed |= take(p.is_pending, o.is_pending, o.at);
  changed |= take(p.owned_as, o.owned_as, o.at);
  changed |= take(p.current_period_start_at, o.current_period_start_at, o.at);
  changed |= take(p.current_period_end_at, o.current_period_end_at, o.at);
  changed |= take(p.offer_type, o.offer_type, o.at);
  changed |= take(p.offer_discount_type, o.offer_discount_type, o.at);
  changed |= take(p.offer_period, o.offer_period, o.at);
  changed |= take(p.billing_plan_type, o.billing_plan_type, o.at);
  changed |= take(p.commitment, o.commitment, o.at);
  changed |= take(p.app_transaction_id, o.app_transaction_id, o.at);
  changed |= take_revocation(p, o);
  return changed;
}

} // namespace

bool may_start(const observation& o) {
  return (o.from && o.proves) || o.store_signed;
}

purchase start(const observation& o, std::string id, unix_ms now) {
  purchase p;
  p.id = std::move(id);
  p.app_id = o.app_id;
  p.market = o.market;
  p.env = o.env;
  p.app_identifier = o.app_identifier;
  p.created_at = p.updated_at = now;
  if (o.linked_key)
    p.keys.push_back(*o.linked_key);
  p.keys.push_back(o.key);
  fold(p, o);
  return p;
}

bool fold(purchase& p, const observation& o) {
  bool changed = take_source(p, o);
  if (o.from && !o.proves)
    return changed; // a record that proves nothing states nothing
  if (o.store_signed && !p.notified) {
    p.notified = true;
    changed = true;
  }
  if (o.linked_key)
    changed |= add_key(p, *o.linked_key, true);
  changed |= add_key(p, o.key, false);
  if (o.binds_user && o.user_identifier && o.user_identifier != p.user_identifier) {
    if (p.user_identifier)
      p.previous_users.push_back(*p.user_identifier);
    p.user_identifier = o.user_identifier;
    changed = true;
  }
  if (o.sets_metadata && o.metadata != p.metadata) {
    p.metadata = o.metadata;
    changed = true;
  }
  if (o.original_purchase_date && (!p.purchased_at || *o.original_purchase_date < *p.purchased_at)) {
    p.purchased_at = o.original_purchase_date;
    changed = true;
  }
  if (!p.last_synced_at || *p.last_synced_at < o.at) {
    if (o.store_signed || (o.from && o.from->validated)) {
      p.last_synced_at = o.at;
      changed = true;
    }
  }
  if (o.unit.empty())
    return take_subscription(p, o) || changed;
  if (o.unit != p.unit) {
    if (!p.unit.empty() && o.unit_time < p.unit_time)
      return changed; // an earlier period: nothing it says is current
    p.unit = o.unit;
    p.unit_time = o.unit_time;
    forget_unit_times(p);
    if (p.revoked_at.value || p.is_upgraded.value) {
      p.revoked_at = {};
      p.revocation_reason.reset();
      p.revocation_type.reset();
      p.revocation_percentage.reset();
      p.is_upgraded = {};
    }
    changed = true;
  }
  changed |= take_unit(p, o);
  changed |= take_subscription(p, o);
  return changed;
}

} // namespace receiptd::model::purchases

#include "db/purchase_projection.hpp"

#include <algorithm>

#include "model/identifiers.hpp"
#include "model/purchases/activity.hpp"
#include "model/purchases/customer.hpp"
#include "model/purchases/events.hpp"
#include "model/purchases/fold.hpp"
#include "model/purchases/resource_json.hpp"

namespace receiptd::db {

namespace mp = model::purchases;

purchase_projection::purchase_projection(std::function<purchase_repository&()> purchases,
                                         std::function<customer_repository&()> customers,
                                         outbox& box,
                                         std::function<purchase_terms(const std::string&)> terms,
                                         model::unix_ms now)
  : purchases_(std::move(purchases)), customers_(std::move(customers)), box_(box),
    read_terms_(std::move(terms)), now_(now) {}

const purchase_terms& purchase_projection::terms_of(const std::string& app_id) {
  auto it = terms_.find(app_id);
  if (it == terms_.end())
    it = terms_.emplace(app_id, read_terms_(app_id)).first;
  return it->second;
}

std::vector<std::string> purchase_projection::entitlements_of(const mp::purchase& p) {
  return terms_of(p.app_id).rules->tags(p.product_id.value);
}

std::optional<mp::purchase> purchase_projection::find(const mp::observation& o) {
  auto& repo = purchases_();
  if (auto p = repo.find_by_key(o.app_id, o.market, o.env, o.key))
    return p;
  if (o.linked_key)
    return repo.find_by_key(o.app_id, o.market, o.env, *o.linked_key);
  return std::nullopt;
}

// Stores a folded purchase that was stored before: versions and updated_at move
// when its resource changed (then its event is written), its timer is set, and
// its customers are noted for the entitlement comparison.
void purchase_projection::write(mp::purchase& p, const boost::json::object& before) {
  auto after = mp::purchase_json(p, entitlements_of(p), now_);
  const bool changed = mp::resource_changed(before, after);
  if (changed) {
    ++p.versions;
    p.updated_at = now_;
    mp::restamp(after, p);
  }
  purchases_().update(p, mp::next_change(p, now_));
  if (changed)
    announce(p, &before, std::move(after));
}

// The purchase's event, when the app wants it: its resource is made only then.
void purchase_projection::announce(const mp::purchase& p, const boost::json::object* before,
                                   std::optional<boost::json::object> after) {
  if (!box_.wanted(p.app_id, before ? model::event_type::in_app_purchase_updated
                                    : model::event_type::in_app_purchase_created))
    return;
  if (!after)
    after = mp::purchase_json(p, entitlements_of(p), now_);
  if (auto e = mp::purchase_event(before, *after, p, now_))
    box_.announce_event(*e);
}

std::optional<mp::purchase> purchase_projection::fold_in(const mp::observation& o) {
  auto& repo = purchases_();
  auto p = find(o);
  if (!p) {
    if (!mp::may_start(o))
      return std::nullopt;
    // Stored as it stays: its first version, with its timer (one row written).
    auto fresh = mp::start(o, model::make_uuid(), now_);
    fresh.versions = 1;
    repo.insert(fresh, mp::next_change(fresh, now_));
    if (!repo.add_key(fresh, o.key)) {
      // A concurrent transaction made this purchase first (PostgreSQL waited for
      // it to commit): fold into that one instead.
      repo.remove(fresh.id);
      return fold_in(o);
    }
    for (const auto& key : fresh.keys)
      if (key != o.key)
        repo.add_key(fresh, key); // a linked token another purchase holds stays with it
    announce(fresh, nullptr, std::nullopt);
    touch_customer(fresh.app_id, fresh.env, fresh.user_identifier);
    return fresh;
  }
  const auto previous_user = p->user_identifier;
  const auto keys_before = p->keys;
  auto before = mp::purchase_json(*p, entitlements_of(*p), now_);
  if (!mp::fold(*p, o))
    return p;
  for (const auto& key : p->keys)
    if (std::find(keys_before.begin(), keys_before.end(), key) == keys_before.end())
      repo.add_key(*p, key); // a key another purchase holds stays with it
  write(*p, before);
  touch_customer(p->app_id, p->env, previous_user);
  if (p->user_identifier != previous_user)
    touch_customer(p->app_id, p->env, p->user_identifier);
  return p;
}

// As fold_in makes a purchase no key names yet, for the one purchase a record
// names: announce and touch_customer would write nothing.
std::optional<purchase_projection::first_purchase>
purchase_projection::first_of(const std::vector<mp::observation>& seen) {
  if (seen.size() != 1)
    return std::nullopt;
  const auto& o = seen.front();
  if (!mp::may_start(o) || o.linked_key)
    return std::nullopt;
  if (box_.wanted(o.app_id, model::event_type::in_app_purchase_created)
      || box_.wanted(o.app_id, model::event_type::customer_entitlements_changed))
    return std::nullopt;
  auto fresh = mp::start(o, model::make_uuid(), now_);
  fresh.versions = 1;
  auto next = mp::next_change(fresh, now_);
  return first_purchase{std::move(fresh), o.key, next};
}

std::shared_ptr<const mp::purchase_set> purchase_projection::started(mp::purchase p) {
  auto set = std::make_shared<mp::purchase_set>();
  set->at = now_;
  set->entitlements.push_back(entitlements_of(p));
  set->items.push_back(std::move(p));
  return set;
}

std::optional<mp::purchase>
purchase_projection::project(const std::string& app_id,
                             const model::store_a::verified_notification& v) {
  std::optional<mp::purchase> folded;
  if (auto o = mp::observe(app_id, v, terms_of(app_id).observe))
    folded = fold_in(*o);
  announce_customers();
  return folded;
}

bool purchase_projection::note_refund_request(const std::string& purchase_id, std::string text) {
  auto p = purchases_().find(purchase_id);
  if (!p)
    return false;
  auto before = mp::purchase_json(*p, entitlements_of(*p), now_);
  p->refund_request = std::move(text);
  write(*p, before);
  return true;
}

void purchase_projection::expire(mp::purchase p, model::unix_ms due) {
  // Its resource as it was just before the change came due, and now.
  auto before = mp::purchase_json(p, entitlements_of(p), due - 1);
  write(p, before);
  touch_customer(p.app_id, p.env, p.user_identifier);
  announce_customers();
}

void purchase_projection::touch(const std::string& app_id, model::environment env,
                                const std::string& user) {
  touch_customer(app_id, env, user);
  announce_customers();
}

void purchase_projection::touch_customer(const std::string& app_id, model::environment env,
                                         const std::optional<std::string>& user) {
  if (!user || user->empty())
    return;
  customer_key key{app_id, env, *user};
  if (std::find(touched_.begin(), touched_.end(), key) == touched_.end())
    touched_.push_back(std::move(key));
}

void purchase_projection::announce_customers() {
  auto touched = std::exchange(touched_, {});
  for (const auto& c : touched) {
    if (!box_.wanted(c.app_id, model::event_type::customer_entitlements_changed))
      continue;
    auto& customers = customers_();
    auto announced = customers.lock(c.app_id, c.env, c.user, now_);
    auto found = purchases_().for_answer(c.app_id, c.user, c.env, now_);
    const auto& purchases = found.purchases;
    std::vector<mp::grant> grants;
    if (found.grants_possible)
      grants = customers.grants(c.app_id, c.user, c.env);
    auto active = mp::active_entitlements(purchases, grants, *terms_of(c.app_id).rules, now_);
    if (active == announced)
      continue;
    customers.store(c.app_id, c.env, c.user, active, now_);
    box_.announce_event(mp::entitlements_event(c.app_id, c.env, c.user, announced, active, now_));
  }
}

} // namespace receiptd::db

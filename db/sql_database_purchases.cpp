// sql_database: the purchase layer's reads, grants and period-end timers.
#include "db/sql_database.hpp"

#include "db/purchase_terms.hpp"
#include "model/purchases/observation.hpp"

namespace receiptd::db {

namespace mp = model::purchases;

std::int64_t sql_database::kept_revision() {
  if (!kept_.revision())
    kept_.at(apps().revision());
  return *kept_.revision();
}

bool sql_database::use_kept() {
  switch (kept_use_) {
  case kept_reads::unused:
    return false;
  case kept_reads::check_first:
    kept_.at(apps().revision());
    kept_use_ = kept_reads::trusted;
    return true;
  case kept_reads::trusted:
    return true;
  }
  return false;
}

purchase_terms sql_database::terms_of(const std::string& app_id) {
  if (use_kept())
    return kept_.terms(app_id, [&] { return read_terms(app_id); });
  return read_terms(app_id);
}

std::vector<model::webhook_endpoint> sql_database::endpoints_of(const std::string& app_id) {
  if (use_kept())
    return kept_.endpoints(app_id, [&] { return webhooks().endpoints(app_id); });
  return webhooks().endpoints(app_id);
}

purchase_terms sql_database::read_terms(const std::string& app_id) {
  auto app = apps().find_by_id(app_id);
  if (!app)
    return {};
  const auto text = rules_text(*app);
  auto it = terms_.find(app_id);
  if (it == terms_.end() || it->second.first != text)
    it = terms_.insert_or_assign(app_id, std::make_pair(text, compile_terms(*app))).first;
  auto terms = it->second.second;
  terms.observe = observe_options(*app); // cheap: read with every row
  return terms;
}

namespace {

// The purchase keys a record names, with the purchase's store and environment.
template <class Record>
std::vector<mp::observation> named(const Record& r) {
  return mp::observe(r, {});
}

} // namespace

model::result<std::shared_ptr<const mp::purchase_set>>
sql_database::purchases_of(const any_record& r, model::unix_ms now) {
  return guarded<std::shared_ptr<const mp::purchase_set>>("purchases_of", [&] {
    auto set = std::make_shared<mp::purchase_set>();
    set->at = now;
    auto& repo = purchases();
    std::visit(
      [&](const auto& record) {
        if (record.app_id.empty())
          return;
        auto rules = terms_of(record.app_id).rules;
        for (const auto& o : named(record)) {
          auto p = repo.find_by_key(o.app_id, o.market, o.env, o.key);
          if (!p)
            continue;
          set->entitlements.push_back(rules->tags(p->product_id.value));
          set->items.push_back(std::move(*p));
        }
      },
      r);
    return std::shared_ptr<const mp::purchase_set>(std::move(set));
  });
}

model::result<std::optional<mp::purchase_set>> sql_database::find_purchase(const std::string& id,
                                                                           model::unix_ms now) {
  return guarded<std::optional<mp::purchase_set>>(
    "find_purchase", [&]() -> std::optional<mp::purchase_set> {
      auto p = purchases().find(id);
      if (!p)
        return std::nullopt;
      mp::purchase_set set;
      set.at = now;
      set.entitlements.push_back(terms_of(p->app_id).rules->tags(p->product_id.value));
      set.items.push_back(std::move(*p));
      return set;
    });
}

model::result<customer_view> sql_database::find_customer(const std::string& app_id,
                                                         const std::string& user_identifier,
                                                         model::environment env,
                                                         const purchase_cursor& cursor,
                                                         int limit) {
  return guarded<customer_view>("find_customer", [&] {
    customer_view out;
    transaction tx(conn(), access::read); // purchases and grants from one snapshot
    out.purchases = purchases().by_customer(app_id, user_identifier, env, cursor, limit);
    out.grants = customers().grants(app_id, user_identifier, env);
    tx.commit();
    out.rules = terms_of(app_id).rules;
    return out;
  });
}

// A lookup's cost is mostly its round trips to the database: one statement for
// the purchases, which also says whether the customer has any grant, and a
// second for the grants only then (or when no purchase was found); no
// transaction around them (BEGIN and COMMIT would be two more). Each sees its
// own snapshot: purchases as the first found them, grants as the second did. No
// transaction writes both, so no change is seen half made; one made between the
// two statements shows in the next lookup.
model::result<customer_answer_view>
sql_database::find_customer_answer(const std::string& app_id, const std::string& user_identifier,
                                   model::environment env, model::unix_ms now) {
  return guarded<customer_answer_view>("find_customer_answer", [&] {
    customer_answer_view out;
    auto found = purchases().for_answer(app_id, user_identifier, env, now);
    out.purchases = std::move(found.purchases);
    if (found.grants_possible)
      out.grants = customers().grants(app_id, user_identifier, env);
    return out;
  });
}

model::result<mp::grant> sql_database::add_grant(const mp::grant& g, model::unix_ms now) {
  return guarded<mp::grant>("add_grant", [&] {
    transaction tx(conn(), access::write);
    auto box = make_outbox();
    auto projection = make_projection(box, now);
    customers().insert_grant(g);
    projection.touch(g.app_id, g.env, g.user_identifier);
    tx.commit();
    return g;
  });
}

model::result<bool> sql_database::remove_grant(const std::string& app_id, model::environment env,
                                               const std::string& user_identifier,
                                               const std::string& entitlement,
                                               const std::string& id, model::unix_ms now) {
  return guarded<bool>("remove_grant", [&] {
    transaction tx(conn(), access::write);
    auto box = make_outbox();
    auto projection = make_projection(box, now);
    bool removed = customers().remove_grant(app_id, user_identifier, entitlement, id);
    if (removed)
      projection.touch(app_id, env, user_identifier);
    tx.commit();
    return removed;
  });
}

model::result<int> sql_database::expire_due(model::unix_ms now, int limit) {
  return guarded<int>("expire_due", [&] {
    transaction tx(conn(), access::write);
    auto box = make_outbox();
    auto projection = make_projection(box, now);
    int handled = 0;
    for (auto& [p, due] : purchases().due(now, limit)) {
      projection.expire(std::move(p), due);
      ++handled;
    }
    for (const auto& g : customers().ended_grants(now, limit)) {
      customers().mark_announced(g.id);
      projection.touch(g.app_id, g.env, g.user_identifier);
      ++handled;
    }
    tx.commit();
    return handled;
  });
}

} // namespace receiptd::db

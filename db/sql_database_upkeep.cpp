// sql_database: the upkeep: the subscription refresh sweeps (Play and
// StoreKit 2) and the Play voided purchases polls.
#include "db/sql_database.hpp"
#include "model/resource_json.hpp"
#include "model/store_b/orders.hpp"
#include "model/store_b/voided.hpp"

#include <map>

namespace receiptd::db {

model::result<int> sql_database::enqueue_refreshes(model::record_kind kind, model::unix_ms now,
                                                   model::unix_ms stale_before, int limit) {
  return guarded<int>("enqueue_refreshes", [&] {
    if (limit <= 0 || kind == model::record_kind::store_a_receipt)
      return 0;
    auto& repo = upkeep();
    auto& queue = jobs();
    transaction tx(conn(), access::write);
    auto due = repo.refresh_candidates(kind, now, stale_before, limit);
    for (const auto& [record_id, app_id] : due)
      queue.ensure(kind, record_id, app_id, now);
    tx.commit();
    return static_cast<int>(due.size());
  });
}

model::result<std::vector<model::store_b::claimed_voided_poll>>
sql_database::claim_voided_polls(const std::string& owner, model::unix_ms now,
                                 model::unix_ms lease_until, int limit) {
  return guarded<std::vector<model::store_b::claimed_voided_poll>>("claim_voided_polls", [&] {
    std::vector<model::store_b::claimed_voided_poll> out;
    if (limit <= 0)
      return out;
    auto& repo = upkeep();
    auto& app_rows = apps();
    transaction tx(conn(), access::write);
    repo.add_missing_polls(now, model::store_b::first_voided_cursor(now).window_start);
    for (auto& poll : repo.claim(owner, now, lease_until, limit)) {
      auto app = app_rows.find_by_id(poll.app_id);
      if (!app)
        continue; // apps are never deleted; its lease runs out
      out.push_back({std::move(poll), std::move(*app)});
    }
    tx.commit();
    return out;
  });
}

// The poll's row is written first: a claim that was overtaken stops there,
// before any purchase order is touched.
model::result<std::optional<int>>
sql_database::apply_voided_page(const std::string& owner, const model::store_b::voided_poll& poll,
                                const std::vector<model::store_b::voided_purchase>& page,
                                model::unix_ms now,
                                std::optional<model::unix_ms> keep_lease_until) {
  return guarded<std::optional<int>>("apply_voided_page", [&] {
    auto& repo = upkeep();
    auto& orders = purchase_orders();
    int count = 0;
    transaction tx(conn(), access::write);
    if (!repo.store(owner, poll, now, keep_lease_until))
      return std::optional<int>(); // the transaction rolls back
    auto box = make_outbox();
    auto projection = make_projection(box, now);
    for (const auto& voided : page) {
      model::purchase_order_record key;
      key.app_id = poll.app_id;
      key.purchase_token = voided.purchase_token;
      auto stored = orders.find_for_update(key);
      if (!stored)
        continue; // a purchase nobody uploaded here
      auto updated = *stored;
      if (!model::store_b::apply_voided(updated, voided))
        continue;
      updated.updated_at = now;
      updated.said_at = now; // Play's list said it now
      orders.update_verdict(updated);
      ++count;
      if (box.wanted(poll.app_id, model::event_type::purchase_order_updated))
        box.announce(model::resource_json(*stored), model::resource_json(updated),
                     model::record_kind::store_b_purchase_order, poll.app_id, updated.id, now);
      projection.project(updated);
    }
    tx.commit();
    return std::optional<int>(count);
  });
}

model::result<std::vector<model::store_b::orders_due>> sql_database::orders_due(int limit) {
  return guarded<std::vector<model::store_b::orders_due>>("orders_due", [&] {
    std::vector<model::store_b::orders_due> out;
    if (limit <= 0)
      return out;
    auto& app_rows = apps();
    transaction tx(conn(), access::read);
    std::map<std::string, std::size_t> group; // app id → its place in out
    for (auto& due : upkeep().orders_due(limit)) {
      auto [it, fresh] = group.emplace(due.app_id, out.size());
      if (fresh) {
        auto app = app_rows.find_by_id(due.app_id);
        if (!app) {
          group.erase(it);
          continue;
        }
        out.push_back({std::move(*app), {}});
      }
      out[it->second].orders.push_back({std::move(due.purchase_token), std::move(due.order_id)});
    }
    tx.commit();
    return out;
  });
}

model::result<int> sql_database::apply_orders(const std::string& app_id,
                                              const std::vector<model::store_b::order_read>& reads,
                                              model::unix_ms now) {
  return guarded<int>("apply_orders", [&] {
    auto& orders = purchase_orders();
    int count = 0;
    transaction tx(conn(), access::write);
    auto box = make_outbox();
    auto projection = make_projection(box, now);
    for (const auto& read : reads) {
      model::purchase_order_record key;
      key.app_id = app_id;
      key.purchase_token = read.purchase_token;
      auto stored = orders.find_for_update(key);
      if (!stored)
        continue;
      auto updated = *stored;
      bool changed = false;
      if (read.order)
        changed = model::store_b::apply_order(updated.purchase, *read.order, now);
      else
        updated.purchase.order_read_at = now;
      if (changed)
        updated.updated_at = now;
      orders.update_verdict(updated);
      if (!changed)
        continue;
      ++count;
      if (box.wanted(app_id, model::event_type::purchase_order_updated))
        box.announce(model::resource_json(*stored), model::resource_json(updated),
                     model::record_kind::store_b_purchase_order, app_id, updated.id, now);
      projection.project(updated);
    }
    tx.commit();
    return count;
  });
}

} // namespace receiptd::db

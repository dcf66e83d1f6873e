// sql_database: store notifications in, webhook endpoints and deliveries out.
#include "db/sql_database.hpp"
#include "model/identifiers.hpp"
#include "model/resource_json.hpp"
#include "model/store_b/rtdn.hpp"

namespace receiptd::db {

// ---- store notifications ------------------------------------------------------

// One transaction: the notification row first (its unique key makes a duplicate
// stop here, and a concurrent twin wait for this one), then the records it is
// about, locked in id order (the transactions, then the receipts), each
// updated and announced when the notification changed it.
model::result<notification_applied> sql_database::apply_store_a_notification(
  const std::string& app_id, const model::store_a::verified_notification& v, model::unix_ms now) {
  return guarded<notification_applied>("apply_store_a_notification", [&] {
    auto& notes = notifications();
    auto& transaction_records = transactions();
    auto& receipt_records = receipts();
    transaction tx(conn(), access::write);
    notification_applied out;
    if (!notes.insert_store_a(app_id, v.n, now)) {
      out.duplicate = true;
      tx.commit();
      return out;
    }
    std::string transaction_id;
    std::string original_transaction_id;
    if (v.transaction) {
      transaction_id = v.transaction->transaction_id;
      original_transaction_id = v.transaction->original_transaction_id;
    } else if (v.renewal) {
      original_transaction_id = v.renewal->original_transaction_id;
    }
    auto box = make_outbox();
    if (v.record_only) { // older than notifications.max-age: recorded, not applied
      tx.commit();
      return out;
    }
    for (const auto& stored : notes.transactions(app_id, transaction_id, original_transaction_id)) {
      auto changed = stored;
      if (!model::store_a::apply_notification(changed, v))
        continue;
      changed.updated_at = now;
      transaction_records.update_verdict(changed);
      ++out.records_changed;
      if (box.wanted(app_id, model::event_type::transaction_updated))
        out.events
          += box.announce(model::resource_json(stored), model::resource_json(changed),
                          model::record_kind::store_a_transaction, app_id, changed.id, now);
    }
    for (const auto& id : notes.receipts(app_id, transaction_id)) {
      if (!receipt_records.lock(id))
        continue;
      auto stored = receipt_records.find(id);
      if (!stored)
        continue;
      auto changed = *stored;
      if (!model::store_a::apply_notification(changed, v))
        continue;
      changed.updated_at = now;
      receipt_records.update_verdict(changed);
      ++out.records_changed;
      if (box.wanted(app_id, model::event_type::receipt_updated))
        out.events += box.announce(model::resource_json(*stored), model::resource_json(changed),
                                   model::record_kind::store_a_receipt, app_id, changed.id, now);
    }
    // The notification is a source of its own about its purchase (a purchase
    // no upload has named yet included: Apple signed it).
    auto projection = make_projection(box, now);
    auto purchase = projection.project(app_id, v);
    // Apple asks for consumption data of the transaction: a refund request to
    // answer (model/purchases/refund_request.hpp).
    if (v.n.type == "CONSUMPTION_REQUEST" && purchase && v.transaction) {
      auto r = model::purchases::new_refund_request(
        model::make_uuid(), app_id, purchase->id, "store_a",
        std::string(model::to_string(purchase->env)), v.transaction->transaction_id, now,
        v.n.signed_date);
      r.reason = v.n.consumption_request_reason;
      open_refund_request(projection, std::move(r));
    }
    tx.commit();
    return out;
  });
}

// The stored record by its proof key. find_for_update's statement: on
// PostgreSQL, outside a transaction, its row lock ends with the statement.
model::result<std::optional<model::purchase_order_record>>
sql_database::find_purchase_order_by_token(const std::string& app_id,
                                           const std::string& purchase_token) {
  return guarded<std::optional<model::purchase_order_record>>(
    "find_purchase_order_by_token", [&]() -> std::optional<model::purchase_order_record> {
      if (purchase_token.empty())
        return std::nullopt;
      model::purchase_order_record key;
      key.app_id = app_id;
      key.purchase_token = purchase_token;
      return purchase_orders().find_for_update(key);
    });
}

// One transaction, as apply_store_a_notification: the notification row first
// (a duplicate stops there), then the purchase order, locked and read again:
// `updated` was read before the Play Developer API was asked, and the voided
// purchases poll or an acknowledgement may have written the record since. Only
// what the API's answer owns is taken from it (model::store_b::land_rtdn_answer),
// and only when that changes the record. Its environment is recorded with the
// notification (production when there is no record: a test notification).
// The record must be the app's: another app's id changes nothing.
model::result<notification_applied>
sql_database::apply_store_b_notification(const std::string& app_id, const model::store_b::rtdn& n,
                                         const std::optional<model::purchase_order_record>& updated,
                                         model::unix_ms now) {
  return guarded<notification_applied>("apply_store_b_notification", [&] {
    auto& notes = notifications();
    auto& orders = purchase_orders();
    transaction tx(conn(), access::write);
    notification_applied out;
    const auto env = updated ? updated->env : model::environment::production;
    if (!notes.insert_store_b(app_id, n, env, now)) {
      out.duplicate = true;
      tx.commit();
      return out;
    }
    if (updated && orders.lock(updated->id)) {
      auto stored = orders.find(updated->id);
      auto changed = stored;
      if (stored && stored->app_id == app_id
          && model::store_b::land_rtdn_answer(*changed, *updated)) {
        changed->updated_at = now;
        orders.update_verdict(*changed);
        ++out.records_changed;
        auto box = make_outbox();
        if (box.wanted(app_id, model::event_type::purchase_order_updated))
          if (auto after = orders.find(changed->id))
            out.events
              += box.announce(model::resource_json(*stored), model::resource_json(*after),
                              model::record_kind::store_b_purchase_order, app_id, changed->id, now);
        if (auto after = orders.find(changed->id))
          make_projection(box, now).project(*after);
      }
    }
    // Play asks for a review of a refund of one of the app's orders: a refund
    // request to answer (model/purchases/refund_request.hpp).
    if (n.kind == model::store_b::rtdn_kind::pending_refund_review && n.order_id && n.refund_token)
      if (auto found = refunds().purchase_of_order(app_id, *n.order_id)) {
        auto r = model::purchases::new_refund_request(
          model::make_uuid(), app_id, found->first, "store_b", found->second, *n.order_id, now,
          n.event_time);
        r.package_name = n.package_name;
        r.refund_token = n.refund_token;
        auto box = make_outbox();
        auto projection = make_projection(box, now);
        open_refund_request(projection, std::move(r));
      }
    tx.commit();
    return out;
  });
}

// ---- webhook endpoints ----------------------------------------------------------

model::result<model::webhook_endpoint>
sql_database::add_webhook_endpoint(model::webhook_endpoint e) {
  return guarded<model::webhook_endpoint>("add_webhook_endpoint", [&] {
    auto& app_rows = apps();
    auto& repo = webhooks();
    if (!app_rows.find_by_id(e.app_id))
      throw std::invalid_argument("no app with id " + e.app_id);
    if (e.id.empty())
      e.id = model::make_uuid();
    if (e.secret.empty())
      e.secret = model::make_webhook_secret();
    repo.insert_endpoint(e);
    return e;
  });
}

model::result<std::vector<model::webhook_endpoint>>
sql_database::list_webhook_endpoints(const std::string& app_id) {
  return guarded<std::vector<model::webhook_endpoint>>(
    "list_webhook_endpoints", [&] { return webhooks().endpoints(app_id); });
}

model::result<bool> sql_database::remove_webhook_endpoint(const std::string& id) {
  return guarded<bool>("remove_webhook_endpoint", [&] {
    auto& repo = webhooks();
    transaction tx(conn(), access::write);
    bool removed = repo.remove_endpoint(id);
    tx.commit();
    return removed;
  });
}

// ---- events and deliveries ----------------------------------------------------

model::result<bool> sql_database::redeliver_event(const std::string& event_id, model::unix_ms now) {
  return guarded<bool>("redeliver_event", [&] {
    auto& repo = webhooks();
    transaction tx(conn(), access::write);
    auto event = repo.find_event(event_id);
    if (!event)
      return false;
    repo.redeliver(event_id, now);
    for (const auto& endpoint : repo.endpoints(event->app_id))
      if (model::wants(endpoint, event->type))
        repo.add_delivery(event_id, endpoint.id, now); // nothing when it has one
    tx.commit();
    return true;
  });
}

model::result<std::optional<model::webhook_event>>
sql_database::find_webhook_event(const std::string& event_id) {
  return guarded<std::optional<model::webhook_event>>(
    "find_webhook_event", [&] { return webhooks().find_event(event_id); });
}

model::result<std::vector<model::webhook_delivery>>
sql_database::list_deliveries(const std::string& app_id, int limit) {
  return guarded<std::vector<model::webhook_delivery>>(
    "list_deliveries", [&] { return webhooks().deliveries(app_id, limit); });
}

model::result<std::vector<model::webhook_delivery>>
sql_database::claim_deliveries(const std::string& owner, model::unix_ms now,
                               model::unix_ms lease_until, int limit, int per_endpoint) {
  return guarded<std::vector<model::webhook_delivery>>("claim_deliveries", [&] {
    if (limit <= 0 || per_endpoint <= 0)
      return std::vector<model::webhook_delivery>{};
    auto& repo = webhooks();
    transaction tx(conn(), access::write);
    auto claimed = repo.claim(owner, now, lease_until, limit, per_endpoint);
    tx.commit();
    return claimed;
  });
}

model::result<bool> sql_database::finish_delivery(const model::webhook_delivery& d) {
  return guarded<bool>("finish_delivery", [&] {
    auto& repo = webhooks();
    transaction tx(conn(), access::write);
    bool done = repo.finish(d);
    tx.commit();
    return done;
  });
}

} // namespace receiptd::db

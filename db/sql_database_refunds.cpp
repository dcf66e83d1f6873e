// sql_database: the stores' refund requests (model/purchases/refund_request.hpp).
#include "db/sql_database.hpp"

#include "model/identifiers.hpp"
#include "model/purchases/activity.hpp"

namespace receiptd::db {

namespace mp = model::purchases;

namespace {

mp::refund_facts facts_of(const mp::purchase& p) {
  mp::refund_facts f;
  f.delivered = mp::validated(p) && !mp::revoked_whole(p);
  f.auto_renewable = p.type.value == mp::purchase_type::subscription;
  return f;
}

} // namespace

// In the transaction that recorded the store's request: the purchase shows it
// pending at once.
void sql_database::open_refund_request(purchase_projection& projection,
                                       mp::refund_request r) {
  refunds().insert(r);
  projection.note_refund_request(r.purchase_id, mp::refund_request_text(r));
}

model::result<std::vector<refund_work>>
sql_database::claim_refund_requests(const std::string& owner, model::unix_ms now,
                                    model::unix_ms lease_until, int limit) {
  return guarded<std::vector<refund_work>>("claim_refund_requests", [&] {
    transaction tx(conn(), access::write);
    std::vector<refund_work> out;
    for (auto& r : refunds().claim(owner, now, lease_until, limit)) {
      refund_work w;
      auto app = apps().find_by_id(r.app_id);
      auto p = purchases().find(r.purchase_id);
      if (app)
        w.app = std::move(*app);
      if (p)
        w.facts = facts_of(*p);
      w.settings = refunds().settings(r.app_id);
      w.report = refunds().consumption(r.purchase_id);
      w.request = std::move(r);
      out.push_back(std::move(w));
    }
    tx.commit();
    return out;
  });
}

model::result<bool> sql_database::finish_refund_request(const mp::refund_request& r,
                                                        model::unix_ms now) {
  return guarded<bool>("finish_refund_request", [&] {
    transaction tx(conn(), access::write);
    if (!refunds().finish(r)) {
      tx.commit();
      return false;
    }
    refunds().lock_purchase(r.purchase_id);
    auto box = make_outbox();
    auto projection = make_projection(box, now);
    projection.note_refund_request(r.purchase_id, mp::refund_request_text(r));
    tx.commit();
    return true;
  });
}

model::result<bool> sql_database::set_consumption(const std::string& app_id,
                                                  const std::string& purchase_id,
                                                  const mp::consumption_report& r,
                                                  model::unix_ms now) {
  return guarded<bool>("set_consumption", [&] {
    transaction tx(conn(), access::write);
    auto p = purchases().find(purchase_id);
    if (!p || p->app_id != app_id) {
      tx.commit();
      return false;
    }
    refunds().set_consumption(purchase_id, r, now);
    tx.commit();
    return true;
  });
}

model::result<mp::refund_settings> sql_database::refund_settings_of(const std::string& app_id) {
  return guarded<mp::refund_settings>("refund_settings_of",
                                      [&] { return refunds().settings(app_id); });
}

model::result<bool> sql_database::set_refund_settings(const std::string& app_id,
                                                      const mp::refund_settings& s) {
  return guarded<bool>("set_refund_settings", [&] {
    transaction tx(conn(), access::write);
    if (!apps().find_by_id(app_id)) {
      tx.commit();
      return false;
    }
    refunds().set_settings(app_id, s);
    tx.commit();
    return true;
  });
}

} // namespace receiptd::db

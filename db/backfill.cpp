// sql_database: the passes over existing records that a schema change needs
// model code for (migrations are SQL), run once by migrate() and marked done.
//  - "purchases": every record folds into its purchases, as if it had just
//    been saved (db/purchase_projection.hpp), and every unified or iOS 6 receipt
//    is keyed by what its signature covers (model/store_a/receipt.hpp) unless
//    another receipt of the app holds that key already (then it keeps its own).
//  - "purchase_lookup_columns": every purchase stored before
//    013_customer_lookup.sql gets the customer answer's columns (the
//    "purchases" pass writes them itself, so it marks this one done too).
#include "db/sql_backfill.hpp"
#include "db/sql_database.hpp"

#include "model/encoding.hpp"
#include "model/store_a/receipt.hpp"

namespace receiptd::db {

namespace {

constexpr const char* purchases_pass = "purchases";
constexpr const char* lookup_columns_pass = "purchase_lookup_columns";

std::vector<std::string> page_of(connection& c, std::string_view table, const std::string& after) {
  std::string sql(sql::backfill::page);
  sql.replace(sql.find("{table}"), 7, table);
  std::vector<std::string> ids(200);
  std::string from = after;
  c.session() << sql, soci::use(from, "after"), soci::into(ids);
  return ids;
}

// The receipt's key under the signed-content rule, when its bytes decode.
std::optional<std::string> signed_key(const model::receipt_record& r) {
  auto bytes = model::base64_decode(r.receipt_data);
  if (!bytes)
    return std::nullopt;
  auto decoded = model::store_a::decode_receipt(*bytes);
  if (!decoded || decoded->signed_content_hash.empty())
    return std::nullopt;
  return decoded->signed_content_hash;
}

} // namespace

void sql_database::backfill() {
  auto& c = conn();
  auto done = [&](const char* pass) {
    std::string name = pass;
    int count = 0;
    c.session() << std::string(sql::backfill::done), soci::use(name, "name"), soci::into(count);
    return count > 0;
  };
  auto now = model::system_time().now_ms();
  auto mark = [&](const char* pass) {
    std::string name = pass;
    c.session() << std::string(sql::backfill::mark), soci::use(name, "name"), soci::use(now, "now");
  };
  if (!done(purchases_pass)) {
    backfill_purchases(now);
    mark(purchases_pass);
    mark(lookup_columns_pass);
  }
  if (!done(lookup_columns_pass)) {
    std::string after;
    while (true) {
      transaction tx(c, access::write);
      auto ids = page_of(c, "purchases", after);
      for (const auto& id : ids)
        if (auto p = purchases().find(id))
          purchases().set_lookup_columns(*p);
      tx.commit();
      if (ids.empty())
        break;
      after = ids.back();
    }
    mark(lookup_columns_pass);
  }
}

void sql_database::backfill_purchases(model::unix_ms now) {
  auto& c = conn();
  auto pass = [&](std::string_view table, auto&& each) {
    std::string after;
    while (true) {
      transaction tx(c, access::write);
      auto ids = page_of(c, table, after);
      if (ids.empty()) {
        tx.commit();
        return;
      }
      auto box = make_outbox();
      auto projection = make_projection(box, now);
      for (const auto& id : ids)
        each(id, projection);
      tx.commit();
      after = ids.back();
    }
  };
  pass("store_a_receipts", [&](const std::string& id, purchase_projection& projection) {
    auto r = receipts().find(id);
    if (!r)
      return;
    if (auto key = signed_key(*r); key && *key != r->receipt_hash) {
      std::string hash = *key, rid = r->id, app = r->app_id;
      c.session() << std::string(sql::backfill::rekey_receipt), soci::use(hash, "hash"),
        soci::use(rid, "id"), soci::use(app, "app_id");
    }
    projection.project(*r);
  });
  pass("store_a_transactions", [&](const std::string& id, purchase_projection& projection) {
    if (auto r = transactions().find(id))
      projection.project(*r);
  });
  pass("store_b_purchase_orders", [&](const std::string& id, purchase_projection& projection) {
    if (auto r = purchase_orders().find(id))
      projection.project(*r);
  });
}

} // namespace receiptd::db

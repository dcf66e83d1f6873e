// sql_database: the passes over existing records that a schema change needs
// model code for (migrations are SQL), run once by migrate() and marked done.
//  - "purchases": every record folds into its purchases, as if it had just
//    been saved (db/purchase_projection.hpp), and every unified or iOS 6 receipt
//    is keyed by what its signature covers (model/store_a/receipt.hpp) unless
//    another receipt of the app holds that key already (then it keeps its own).
#include "db/sql_backfill.hpp"
#include "db/sql_database.hpp"

#include "model/encoding.hpp"
#include "model/store_a/receipt.hpp"

namespace receiptd::db {

namespace {

constexpr const char* purchases_pass = "purchases";

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
  std::string name = purchases_pass;
  int done = 0;
  c.session() << std::string(sql::backfill::done), soci::use(name, "name"), soci::into(done);
  if (done > 0)
    return;
  auto now = model::system_time().now_ms();
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
  c.session() << std::string(sql::backfill::mark), soci::use(name, "name"), soci::use(now, "now");
}

} // namespace receiptd::db

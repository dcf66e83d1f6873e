// PostgreSQL's statements for a save batch's re-uploads (db/record_table.hpp), called
// directly: save_batch falls back to saving one by one when a statement fails, so
// its results alone would not show that these statements work.
#include <soci/soci.h>

#include <map>
#include <stdexcept>

#include "db/connection.hpp"
#include "db/purchase_order_repository.hpp"
#include "db/url.hpp"
#include "model/identifiers.hpp"
#include "tests/integration/fixture.hpp"

namespace receiptd::test {

TEST_CASE("PostgreSQL finds a batch's stored proofs at once, locked, and updates them at once",
          "[.][postgresql][batch]") {
  INFO("this case needs RECEIPTD_TEST_DB=postgresql");
  REQUIRE(dialect_under_test() == db::dialect::postgresql);
  database_fixture f;
  auto& d = *f.db;
  auto one
    = REQUIRE_OK(d.save_purchase_order(validated(full_purchase_order(f.app.id, "k-1")), t0)).record;
  auto two = REQUIRE_OK(d.save_purchase_order(minimal_purchase_order(f.app.id, "k-2"), t0)).record;
  auto three
    = REQUIRE_OK(d.save_purchase_order(validated(minimal_purchase_order(f.app.id, "k-3")), t0))
        .record;

  db::connection c(db::dialect::postgresql, db::with_connection_defaults(f.url));
  db::purchase_order_repository table(c);
  c.begin_write();
  auto absent = minimal_purchase_order(f.app.id, "k-absent");
  auto elsewhere = minimal_purchase_order(model::make_uuid(), "k-1"); // another app's proof
  std::vector<const model::purchase_order_record*> keys{&three, &absent, &one, &elsewhere, &two};
  std::map<std::string, std::pair<model::purchase_order_record, bool>> found; // by token
  table.find_many_for_update(keys, [&](model::purchase_order_record r, bool has_job) {
    auto token = r.purchase_token;
    found.emplace(token, std::make_pair(std::move(r), has_job));
  });
  REQUIRE(found.size() == 3);
  check_same(found.at("k-1").first, one);
  check_same(found.at("k-2").first, two);
  check_same(found.at("k-3").first, three);
  CHECK_FALSE(found.at("k-1").second);
  CHECK(found.at("k-2").second); // pending: it has its job
  CHECK_FALSE(found.at("k-3").second);

  // Locked until this transaction ends.
  db::connection other(db::dialect::postgresql, db::with_connection_defaults(f.url));
  CHECK_THROWS(other.session() << "SELECT id FROM store_b_purchase_orders WHERE id = '" + one.id
                 + "' FOR UPDATE NOWAIT");

  auto changed_one = one;
  changed_one.echo.metadata = R"({"again":1})";
  changed_one.updated_at = t0 + 10;
  auto changed_three = three;
  changed_three.state = model::validation_state::failed;
  changed_three.updated_at = t0 + 30;
  table.update_many({changed_one, changed_three});
  auto gone = two;
  gone.id = model::make_uuid();
  CHECK_THROWS_AS(table.update_many({changed_one, gone}), std::runtime_error);
  c.rollback();

  // The same again, committed this time.
  c.begin_write();
  table.find_many_for_update(keys, [](const model::purchase_order_record&, bool) {});
  table.update_many({changed_one, changed_three});
  c.commit();
  check_same(REQUIRE_OK(d.find_purchase_order(one.id)).value(), changed_one);
  check_same(REQUIRE_OK(d.find_purchase_order(three.id)).value(), changed_three);
  check_same(REQUIRE_OK(d.find_purchase_order(two.id)).value(), two);
}

} // namespace receiptd::test

// Saving and finding records: every field round-trips; re-uploads follow DESIGN.md §2;
// a pending record has exactly one job.
#include "model/identifiers.hpp"
#include "model/resource_json.hpp"
#include "tests/integration/fixture.hpp"

namespace receiptd::test {

namespace {

// The purchase order save `i` of a batch stored.
model::purchase_order_record order_at(const std::vector<db::batch_saved>& results, std::size_t i) {
  return std::get<model::purchase_order_record>(results[i].value());
}

} // namespace

TEST_CASE("purchase orders round-trip every field", "[records]") {
  database_fixture f;
  auto& d = *f.db;
  for (auto incoming : {full_purchase_order(f.app.id, "token-full"),
                        minimal_purchase_order(f.app.id, "token-minimal")}) {
    INFO("purchase token " << incoming.purchase_token);
    auto saved = REQUIRE_OK(d.save_purchase_order(incoming, t0 + 100));
    CHECK(saved.created);
    REQUIRE(model::is_uuid(saved.record.id));
    incoming.id = saved.record.id;
    check_same(saved.record, incoming);
    auto found = REQUIRE_OK(d.find_purchase_order(saved.record.id));
    REQUIRE(found.has_value());
    check_same(*found, incoming);
  }
  CHECK_FALSE(REQUIRE_OK(d.find_purchase_order(model::make_uuid())).has_value());
}

TEST_CASE("receipts round-trip every field and their in-app purchases in order", "[records]") {
  database_fixture f;
  auto& d = *f.db;
  for (auto incoming : {full_receipt(f.app.id, std::string(64, '1'), 60),
                        full_receipt(f.app.id, std::string(64, '2'), 0),
                        minimal_receipt(f.app.id, std::string(64, '3'))}) {
    INFO("receipt hash " << incoming.receipt_hash);
    incoming.id = model::make_uuid(); // a given id is kept
    auto saved = REQUIRE_OK(d.save_receipt(incoming, t0 + 100));
    CHECK(saved.created);
    check_same(saved.record, incoming);
    auto found = REQUIRE_OK(d.find_receipt(incoming.id));
    REQUIRE(found.has_value());
    check_same(*found, incoming);
  }
  CHECK_FALSE(REQUIRE_OK(d.find_receipt(model::make_uuid())).has_value());
}

TEST_CASE("a re-uploaded purchase order keeps its id and merges", "[records][reupload]") {
  database_fixture f;
  auto& d = *f.db;
  auto first = minimal_purchase_order(f.app.id, "token");
  first.echo.user_identifier = "alice";
  first.echo.metadata = R"({"v":1})";
  first.echo.ip_address = "192.0.2.1";
  auto stored = REQUIRE_OK(d.save_purchase_order(first, t0 + 100)).record;
  REQUIRE(jobs_of(d, stored.id).size() == 1); // pending → one job

  SECTION("pending → validated: verdict and echo updated, job removed") {
    auto again = full_purchase_order(f.app.id, "token");
    again.state = model::validation_state::validated;
    again.fraud = model::fraud_reason::none;
    again.echo.user_identifier = std::nullopt; // not sent: kept
    again.echo.metadata = R"({"v":2})";
    again.echo.ip_address = std::nullopt; // always replaced
    again.created_at = t0 + 50;
    again.updated_at = t0 + 60;
    auto result = REQUIRE_OK(d.save_purchase_order(again, t0 + 100));
    CHECK_FALSE(result.created);
    auto expected = model::merge_reupload(stored, again);
    CHECK(result.record.id == stored.id);
    CHECK(result.record.created_at == t0);
    CHECK(result.record.updated_at == t0 + 60);
    CHECK(result.record.echo.user_identifier == "alice");
    CHECK(result.record.echo.metadata == R"({"v":2})");
    CHECK_FALSE(result.record.echo.ip_address.has_value());
    check_same(result.record, expected);
    check_same(REQUIRE_OK(d.find_purchase_order(stored.id)).value(), expected);
    CHECK(jobs_of(d, stored.id).empty());

    SECTION("validated is not downgraded by a pending re-upload") {
      auto pending = minimal_purchase_order(f.app.id, "token");
      pending.echo.user_identifier = "bob";
      pending.updated_at = t0 + 70;
      auto later = REQUIRE_OK(d.save_purchase_order(pending, t0 + 100)).record;
      CHECK(later.state == model::validation_state::validated);
      CHECK(later.purchase.subscription_state == "SUBSCRIPTION_STATE_ACTIVE");
      CHECK(later.echo.user_identifier == "bob");
      CHECK(later.updated_at == t0 + 70);
      check_same(REQUIRE_OK(d.find_purchase_order(stored.id)).value(),
                 model::merge_reupload(expected, pending));
      CHECK(jobs_of(d, stored.id).empty());
    }
  }
  SECTION("pending again: the existing job is kept as it is") {
    auto claimed = REQUIRE_OK(d.claim_due_jobs("worker", t0 + 100, t0 + 10'000, 10));
    REQUIRE(claimed.size() == 1);
    auto again = minimal_purchase_order(f.app.id, "token");
    REQUIRE_OK(d.save_purchase_order(again, t0 + 999'999));
    auto jobs = jobs_of(d, stored.id);
    REQUIRE(jobs.size() == 1);
    check_same(jobs[0], claimed[0]); // same id, version, schedule
  }
  SECTION("rejected locally: the pending record and its job stay") {
    auto again = full_purchase_order(f.app.id, "token"); // package_name_mismatch
    auto kept = REQUIRE_OK(d.save_purchase_order(again, t0 + 100)).record;
    CHECK(kept.state == model::validation_state::pending);
    CHECK_FALSE(kept.is_fraud());
    CHECK(jobs_of(d, stored.id).size() == 1);
  }
  SECTION("rejected by the store: no job") {
    auto again = minimal_purchase_order(f.app.id, "token");
    again.state = model::validation_state::rejected;
    again.fraud = model::fraud_reason::store_rejected;
    REQUIRE_OK(d.save_purchase_order(again, t0 + 100));
    CHECK(jobs_of(d, stored.id).empty());
  }
}

TEST_CASE("a re-uploaded receipt keeps its id and replaces its in-app purchases",
          "[records][reupload]") {
  database_fixture f;
  auto& d = *f.db;
  auto hash = std::string(64, 'e');
  auto first = minimal_receipt(f.app.id, hash);
  first.country_code = "FR";
  auto stored = REQUIRE_OK(d.save_receipt(first, t0 + 100)).record;
  REQUIRE(jobs_of(d, stored.id).size() == 1);
  CHECK(jobs_of(d, stored.id)[0].kind == model::record_kind::store_a_receipt);

  auto again = full_receipt(f.app.id, hash, 5);
  again.state = model::validation_state::validated;
  again.fraud = model::fraud_reason::none;
  again.country_code = std::nullopt; // not sent: kept
  again.updated_at = t0 + 80;
  auto result = REQUIRE_OK(d.save_receipt(again, t0 + 100));
  CHECK_FALSE(result.created);
  auto expected = model::merge_reupload(stored, again);
  CHECK(expected.country_code == "FR");
  check_same(result.record, expected);
  check_same(REQUIRE_OK(d.find_receipt(stored.id)).value(), expected);
  CHECK(jobs_of(d, stored.id).empty());

  auto pending = minimal_receipt(f.app.id, hash);
  auto later = REQUIRE_OK(d.save_receipt(pending, t0 + 100)).record;
  CHECK(later.state == model::validation_state::validated);
  CHECK(later.in_app_purchases.size() == 5); // the validated verdict's purchases stay
  check_same(REQUIRE_OK(d.find_receipt(stored.id)).value(), later);
}

TEST_CASE("the same proof from another app is another record", "[records]") {
  database_fixture f;
  auto other = make_app(*f.db, "other app");
  auto a = REQUIRE_OK(f.db->save_purchase_order(minimal_purchase_order(f.app.id, "t"), t0));
  auto b = REQUIRE_OK(f.db->save_purchase_order(minimal_purchase_order(other.id, "t"), t0));
  CHECK(b.created);
  CHECK(a.record.id != b.record.id);
}

TEST_CASE("saving a record for an unknown app is an error value", "[records]") {
  database_fixture f;
  auto orphan = minimal_purchase_order("00000000-0000-4000-8000-00000000ffff", "t");
  auto result = f.db->save_purchase_order(orphan, t0);
  REQUIRE_FALSE(result.ok());
  CHECK(result.err().message().find("save_purchase_order") == 0);
  CHECK(REQUIRE_OK(f.db->list_jobs()).empty()); // rolled back entirely
  // The database object stays usable.
  CHECK(REQUIRE_OK(f.db->save_purchase_order(minimal_purchase_order(f.app.id, "t"), t0)).created);
}

TEST_CASE("a batch of saves commits once; a refused save fails alone", "[records][batch]") {
  database_fixture f;
  auto& d = *f.db;
  auto first = full_purchase_order(f.app.id, "batch-1");
  auto again = minimal_purchase_order(f.app.id, "batch-1"); // a re-upload inside the batch
  again.echo.user_identifier = "bob";
  auto orphan = minimal_purchase_order("00000000-0000-4000-8000-00000000ffff", "batch-x");
  auto receipt = full_receipt(f.app.id, std::string(64, 'b'), 3);
  auto pending = minimal_purchase_order(f.app.id, "batch-2");
  pending.state = model::validation_state::pending;
  std::vector<db::batch_save> batch{
    {first, t0}, {again, t0}, {orphan, t0}, {receipt, t0}, {pending, t0 + 5}};
  auto results = REQUIRE_OK(d.save_batch(batch));
  REQUIRE(results.size() == 5);
  CHECK(results[0].ok());
  CHECK(results[1].ok());
  CHECK_FALSE(results[2].ok()); // no such app: this save alone failed
  CHECK(results[3].ok());
  CHECK(results[4].ok());
  auto& a = std::get<model::purchase_order_record>(results[0].value());
  auto& b = std::get<model::purchase_order_record>(results[1].value());
  CHECK(a.id == b.id); // merged, same record
  CHECK(b.echo.user_identifier == std::string("bob"));
  auto stored = REQUIRE_OK(d.find_purchase_order(a.id));
  REQUIRE(stored);
  CHECK(stored->echo.user_identifier == std::string("bob"));
  auto& r = std::get<model::receipt_record>(results[3].value());
  auto found = REQUIRE_OK(d.find_receipt(r.id));
  REQUIRE(found);
  CHECK(found->in_app_purchases.size() == 3);
  auto& p = std::get<model::purchase_order_record>(results[4].value());
  auto jobs = jobs_of(d, p.id);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].next_attempt_at == t0 + 5);
  // Visible from another connection: committed.
  auto other = f.second_connection();
  CHECK(REQUIRE_OK(other->find_purchase_order(p.id)).has_value());
  CHECK(REQUIRE_OK(d.save_batch({})).empty());
}

TEST_CASE("a batch's new settled records are stored together, byte for byte", "[records][batch]") {
  database_fixture f;
  auto& d = *f.db;
  auto earlier
    = REQUIRE_OK(d.save_purchase_order(validated(minimal_purchase_order(f.app.id, "m-0")), t0));
  auto full = full_purchase_order(f.app.id, "m-2");
  full.purchase_data += "\t\x01\x1f\\u0000 \xf0\x9f\x98\x80 \\\"";
  full.purchase.purchase_time = 9'007'199'254'740'993; // 2^53 + 1: not a double
  auto twice = validated(minimal_purchase_order(f.app.id, "m-3"));
  twice.echo.user_identifier = "the second";
  auto transaction = signed_transaction_record(f.app.id, "3000000001", "3000000000");
  std::vector<db::batch_save> batch{{validated(minimal_purchase_order(f.app.id, "m-3")), t0},
                                    {full, t0},
                                    {transaction, t0},
                                    {validated(minimal_purchase_order(f.app.id, "m-0")), t0},
                                    {twice, t0},
                                    {validated(minimal_purchase_order(f.app.id, "m-1")), t0}};
  auto results = save_all(d, batch);
  auto order = [&](std::size_t i) { return order_at(results, i); };
  // In batch order, each as stored.
  CHECK(order(0).purchase_token == "m-3");
  CHECK(order(5).purchase_token == "m-1");
  for (std::size_t i : {1, 3, 4, 5}) { // the first of m-3 was merged into the second
    INFO("item " << i);
    auto stored = REQUIRE_OK(d.find_purchase_order(order(i).id));
    REQUIRE(stored);
    check_same(*stored, order(i));
  }
  auto inserted = order(1);
  auto want = full;
  want.id = inserted.id;
  check_same(inserted, want);
  check_same(REQUIRE_OK(d.find_purchase_order(inserted.id)).value(), want);
  // A proof already stored, or listed twice, is merged into its record.
  CHECK(order(3).id == earlier.record.id);
  CHECK(order(4).id == order(0).id);
  CHECK(order(4).echo.user_identifier == std::string("the second"));
  auto stored_transaction = std::get<model::transaction_record>(results[2].value());
  auto found = REQUIRE_OK(d.find_transaction(stored_transaction.id));
  REQUIRE(found);
  transaction.id = stored_transaction.id;
  CHECK(model::resource_json(*found) == model::resource_json(transaction));
  CHECK(found->signed_transaction == transaction.signed_transaction);
  CHECK(REQUIRE_OK(d.list_jobs()).empty());
  // Visible from another connection: committed.
  auto other = f.second_connection();
  CHECK(REQUIRE_OK(other->find_purchase_order(order(5).id)).has_value());
}

TEST_CASE("several token hashes at once, each with its kind", "[apps][batch]") {
  database_fixture f;
  auto& d = *f.db;
  REQUIRE_OK(d.add_token(f.app.id, std::string(64, 'a'), t0));
  REQUIRE_OK(d.add_token(f.app.id, std::string(64, 'b'), t0, model::token_kind::server));
  auto found = REQUIRE_OK(d.apps_by_token_hashes(
    {std::string(64, 'a'), std::string(64, 'z'), std::string(64, 'b')}));
  auto& owners = found.owners;
  REQUIRE(owners.size() == 3);
  REQUIRE(owners[0]);
  CHECK(owners[0]->app.id == f.app.id);
  CHECK(owners[0]->kind == model::token_kind::client);
  CHECK_FALSE(owners[1]);
  REQUIRE(owners[2]);
  CHECK(owners[2]->app == owners[0]->app);
  CHECK(owners[2]->kind == model::token_kind::server);
  CHECK(found.revision == REQUIRE_OK(d.auth_revision()));
}

TEST_CASE("a batch's re-uploads merge into their records, jobs as each merge asks",
          "[records][batch][reupload]") {
  database_fixture f;
  auto& d = *f.db;
  auto settled
    = REQUIRE_OK(d.save_purchase_order(validated(full_purchase_order(f.app.id, "r-1")), t0)).record;
  auto pending
    = REQUIRE_OK(d.save_purchase_order(minimal_purchase_order(f.app.id, "r-2"), t0)).record;
  REQUIRE(jobs_of(d, pending.id).size() == 1);
  auto other
    = REQUIRE_OK(d.save_purchase_order(validated(minimal_purchase_order(f.app.id, "r-3")), t0))
        .record;

  // The app sends them again (r-3 twice), and the store now confirms r-2.
  auto again = [&](const std::string& token, const std::string& metadata, model::unix_ms at) {
    auto r = validated(minimal_purchase_order(f.app.id, token));
    r.echo.metadata = metadata;
    r.updated_at = at;
    return r;
  };
  std::vector<db::batch_save> batch{{again("r-3", R"({"n":1})", t0 + 10), t0},
                                    {again("r-1", R"({"n":2})", t0 + 20), t0},
                                    {again("r-2", R"({"n":3})", t0 + 30), t0},
                                    {again("r-3", R"({"n":4})", t0 + 40), t0}};
  auto results = save_all(d, batch);
  auto order = [&](std::size_t i) { return order_at(results, i); };
  CHECK(order(0).id == other.id);
  CHECK(order(1).id == settled.id);
  CHECK(order(2).id == pending.id);
  CHECK(order(3).id == other.id);
  // Each answer is its merge; a proof listed twice merges into the first's result.
  CHECK(order(0).echo.metadata == std::optional<std::string>(R"({"n":1})"));
  CHECK(order(3).echo.metadata == std::optional<std::string>(R"({"n":4})"));
  CHECK(order(3).updated_at == t0 + 40);
  // The stored records are the last merges, every other column kept.
  for (std::size_t i : {1, 2, 3}) {
    INFO("item " << i);
    auto stored = REQUIRE_OK(d.find_purchase_order(order(i).id));
    REQUIRE(stored);
    check_same(*stored, order(i));
  }
  check_same(
    order(1),
    model::merge_reupload(settled, std::get<model::purchase_order_record>(batch[1].record)));
  CHECK(order(1).purchase_data == settled.purchase_data); // a signed upload's proof stays
  CHECK(order(2).state == model::validation_state::validated);
  // The confirmed record's job is gone; none was made for the others.
  CHECK(REQUIRE_OK(d.list_jobs()).empty());
  // Committed: visible from another connection.
  auto second = f.second_connection();
  CHECK(REQUIRE_OK(second->find_purchase_order(other.id)).value().echo.metadata
        == std::optional<std::string>(R"({"n":4})"));
}

} // namespace receiptd::test

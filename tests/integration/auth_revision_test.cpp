// The auth revision (db/migrations/003_auth_revision.sql): the database's triggers
// bump it on every change to apps or access tokens, whichever connection makes it,
// so the supervisor's token cache sees revocations made by anyone.
#include <atomic>
#include <chrono>
#include <thread>

#include "db/change_listener.hpp"
#include "tests/integration/fixture.hpp"
#include "tests/support/db/raw_sql.hpp"

namespace receiptd::test {

namespace {

const std::string hash_a(64, 'a');
const std::string hash_b(64, 'b');

// Whether `done` holds within 10 s.
template <class F>
bool within_10s(F done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

} // namespace

TEST_CASE("issuing, revoking a token and changing an app each bump the auth revision",
          "[apps][auth_revision]") {
  database_fixture f; // its app was created: the revision is past its seed
  auto& d = *f.db;
  auto other = f.second_connection(); // another instance, or receiptctl
  auto revision = [&] { return REQUIRE_OK(other->auth_revision()); };

  auto start = revision();
  CHECK(start > 0);
  CHECK(REQUIRE_OK(d.auth_revision()) == start);

  auto token = REQUIRE_OK(d.add_token(f.app.id, hash_a, t0));
  auto issued = revision();
  CHECK(issued > start);

  CHECK(REQUIRE_OK(d.revoke_token(token.id, t0 + 1)));
  auto revoked = revision();
  CHECK(revoked > issued);

  auto changed = f.app;
  changed.store_a_shared_secret = "a new secret";
  CHECK(REQUIRE_OK(d.update_app(changed)));
  auto updated = revision();
  CHECK(updated > revoked);

  make_app(d, "another app");
  auto created = revision();
  CHECK(created > updated);

  // Records are not about authentication: saving one leaves the revision alone, or
  // every upload would empty the token cache.
  REQUIRE_OK(d.save_purchase_order(minimal_purchase_order(f.app.id, "tok"), t0));
  REQUIRE_OK(d.save_receipt(minimal_receipt(f.app.id, "hash"), t0));
  CHECK(revision() == created);
}

TEST_CASE("token lookups carry the auth revision they were read at", "[apps][auth_revision]") {
  database_fixture f;
  auto& d = *f.db;
  auto token = REQUIRE_OK(d.add_token(f.app.id, hash_a, t0));
  REQUIRE_OK(d.add_token(f.app.id, hash_b, t0));
  auto reader = f.second_connection(); // as a persistence worker

  auto before = REQUIRE_OK(reader->apps_by_token_hashes({hash_a, hash_b}));
  CHECK(before.revision == REQUIRE_OK(d.auth_revision()));
  REQUIRE(before.owners.size() == 2);
  CHECK(before.owners[0].has_value());
  CHECK(before.owners[1].has_value());

  REQUIRE(REQUIRE_OK(d.revoke_token(token.id, t0 + 1)));
  auto after = REQUIRE_OK(reader->apps_by_token_hashes({hash_a, hash_b}));
  CHECK(after.revision > before.revision); // a cache holding `before` learns it is stale
  CHECK(after.revision == REQUIRE_OK(d.auth_revision()));
  CHECK_FALSE(after.owners[0].has_value());
  CHECK(after.owners[1].has_value());
}

TEST_CASE("the auth revision survives migrating again", "[apps][auth_revision][migrations]") {
  database_fixture f;
  REQUIRE_OK(f.db->add_token(f.app.id, hash_a, t0));
  auto revision = REQUIRE_OK(f.db->auth_revision());
  auto again = open_database(f.url);
  CHECK(REQUIRE_OK(again->migrate()) == 0);
  CHECK(REQUIRE_OK(again->auth_revision()) == revision);
  // and its triggers are still in place, once each: one change, one step on SQLite
  // (row triggers) as on PostgreSQL (statement triggers)
  REQUIRE_OK(again->add_token(f.app.id, hash_b, t0));
  CHECK(REQUIRE_OK(f.db->auth_revision()) == revision + 1);
}

// PostgreSQL: each bump is also a notice on receiptd_auth, which the token cache
// hears (actors/auth_notices.hpp); a database whose function an earlier version
// installed (it bumped without notifying) gets the notifying one at the next start.
TEST_CASE("each change to apps or tokens is heard on PostgreSQL, after an upgrade too",
          "[apps][auth_revision][postgresql]") {
  if (dialect_under_test() != db::dialect::postgresql)
    return; // SQLite has no notices
  database_fixture f;
  execute_sql(f.url, "CREATE OR REPLACE FUNCTION auth_revision_bump() RETURNS trigger"
                     " LANGUAGE plpgsql AS $$ BEGIN UPDATE auth_revision"
                     " SET revision = revision + 1 WHERE id = 1; RETURN NULL; END $$");
  std::atomic<int> heard{0};
  std::atomic<bool> listening{false};
  db::change_listener listener(f.url, db::change_listener::channel::auth,
                               {.noticed = [&] { ++heard; },
                                .hearing = [&](bool up) { listening = up; },
                                .wanted = [] { return true; }});
  listener.wake();
  REQUIRE(within_10s([&] { return listening.load(); }));

  REQUIRE_OK(f.db->add_token(f.app.id, hash_a, t0));
  auto again = open_database(f.url); // a start: migrations and triggers
  REQUIRE_OK(again->migrate());
  CHECK(heard == 0); // the old function notified nobody

  REQUIRE_OK(again->add_token(f.app.id, hash_b, t0));
  CHECK(within_10s([&] { return heard >= 1; }));
  auto changed = f.app;
  changed.store_a_shared_secret = "a new secret";
  const int before = heard;
  REQUIRE(REQUIRE_OK(f.db->update_app(changed)));
  CHECK(within_10s([&] { return heard > before; }));
}

} // namespace receiptd::test

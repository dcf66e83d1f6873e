// Apps and access tokens (receiptctl, the supervisor's token lookup).
#include "tests/integration/fixture.hpp"

namespace receiptd::test {

namespace {

const std::string hash_a(64, 'a');
const std::string hash_b(64, 'b');

void check_same(const model::app& got, const model::app& want) {
  CHECK(got.id == want.id);
  CHECK(got.name == want.name);
  CHECK(got.bundle_id == want.bundle_id);
  CHECK(got.package_name == want.package_name);
  CHECK(got.store_a_shared_secret == want.store_a_shared_secret);
  CHECK(got.store_b_public_key == want.store_b_public_key);
  CHECK(got.store_b_service_account == want.store_b_service_account);
}

} // namespace

TEST_CASE("apps are created, found, listed and updated", "[apps]") {
  database_fixture f;
  auto& d = *f.db;

  CHECK(f.app.id.size() == 36); // generated UUID
  check_same(REQUIRE_OK(d.find_app(f.app.id)).value(), f.app);
  check_same(REQUIRE_OK(d.find_app(f.app.name)).value(), f.app);
  CHECK_FALSE(REQUIRE_OK(d.find_app("no such app")).has_value());

  model::app given;
  given.id = "00000000-0000-4000-8000-000000000001";
  given.name = "a first";
  auto created = REQUIRE_OK(d.create_app(given));
  CHECK(created.id == given.id); // a given id is kept

  auto all = REQUIRE_OK(d.list_apps());
  REQUIRE(all.size() == 2);
  CHECK(all[0].name == "a first"); // by name
  check_same(all[1], f.app);

  auto changed = f.app;
  changed.name = "renamed";
  changed.store_a_shared_secret = "";
  changed.store_b_service_account = "{\"new\":true}";
  CHECK(REQUIRE_OK(d.update_app(changed)));
  check_same(REQUIRE_OK(d.find_app(f.app.id)).value(), changed);

  auto unknown = changed;
  unknown.id = "00000000-0000-4000-8000-00000000ffff";
  CHECK_FALSE(REQUIRE_OK(d.update_app(unknown)));
}

TEST_CASE("a duplicate app name is an error value", "[apps]") {
  database_fixture f;
  model::app twin;
  twin.name = f.app.name;
  auto result = f.db->create_app(twin);
  REQUIRE_FALSE(result.ok());
  CHECK(result.err().message().find("create_app") == 0);
}

TEST_CASE("tokens resolve to their app until revoked", "[apps][tokens]") {
  database_fixture f;
  auto& d = *f.db;

  auto t1 = REQUIRE_OK(d.add_token(f.app.id, hash_a, t0));
  auto t2 = REQUIRE_OK(d.add_token(f.app.id, hash_b, t0 + 1));
  CHECK(t1.app_id == f.app.id);
  CHECK(t1.token_hash == hash_a);
  CHECK(t1.created_at == t0);
  CHECK_FALSE(t1.revoked_at.has_value());

  CHECK(REQUIRE_OK(d.app_by_token_hash(hash_a)).value().id == f.app.id);
  CHECK_FALSE(REQUIRE_OK(d.app_by_token_hash(std::string(64, 'c'))).has_value());

  auto tokens = REQUIRE_OK(d.list_tokens(f.app.id));
  REQUIRE(tokens.size() == 2);
  CHECK(tokens[0].id == t1.id);
  CHECK(tokens[1].id == t2.id);

  SECTION("revoked by id") {
    CHECK(REQUIRE_OK(d.revoke_token(t1.id, t0 + 10)));
    CHECK_FALSE(REQUIRE_OK(d.app_by_token_hash(hash_a)).has_value());
    CHECK(REQUIRE_OK(d.app_by_token_hash(hash_b)).has_value()); // the other one still works
    CHECK_FALSE(REQUIRE_OK(d.revoke_token(t1.id, t0 + 20)));    // already revoked
    auto after = REQUIRE_OK(d.list_tokens(f.app.id));
    CHECK(after[0].revoked_at == t0 + 10); // the first revocation stands
    CHECK_FALSE(after[1].revoked_at.has_value());
  }
  SECTION("revoked by hash") {
    CHECK(REQUIRE_OK(d.revoke_token(hash_b, t0 + 10)));
    CHECK_FALSE(REQUIRE_OK(d.app_by_token_hash(hash_b)).has_value());
    CHECK(REQUIRE_OK(d.app_by_token_hash(hash_a)).has_value());
  }
  SECTION("unknown token") {
    CHECK_FALSE(REQUIRE_OK(d.revoke_token("nothing", t0)));
  }
}

TEST_CASE("token errors are values", "[apps][tokens]") {
  database_fixture f;
  REQUIRE_OK(f.db->add_token(f.app.id, hash_a, t0));
  auto duplicate = f.db->add_token(f.app.id, hash_a, t0);
  CHECK_FALSE(duplicate.ok());
  auto orphan = f.db->add_token("00000000-0000-4000-8000-00000000ffff", hash_b, t0);
  REQUIRE_FALSE(orphan.ok());
  CHECK(orphan.err().message().find("no app") != std::string::npos);
}

} // namespace receiptd::test

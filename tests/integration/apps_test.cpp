// Apps and access tokens (receiptctl, the supervisor's token lookup).
#include "tests/integration/fixture.hpp"

#include "tests/support/db/raw_sql.hpp"

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
  CHECK(got.app_store_issuer_id == want.app_store_issuer_id);
  CHECK(got.app_store_key_id == want.app_store_key_id);
  CHECK(got.app_store_private_key == want.app_store_private_key);
  CHECK(got == want); // and every other column
}

// The text of a .p8 file (its shape; the key itself is not used here).
const std::string p8_pem = "-----BEGIN PRIVATE KEY-----\n"
                           "MIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQgXmEtW0cc5ZyQ7e0R\n"
                           "oGOHw4T1ZKs0jvnDh+6D9ZyoUZKgCgYIKoZIzj0DAQehRANCAAR4p2h1mVnT+8kA\n"
                           "pAh3YdJx0ESwx9ONw6uG0J9f5KqYq+Vn9aQ3lbUJi3QmQK8n3bX5wH8pP3Yx2Zz0\n"
                           "AbCdEfGh\n"
                           "-----END PRIVATE KEY-----\n";

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

TEST_CASE("App Store Server API credentials are stored with the app", "[apps][server_api]") {
  database_fixture f;
  auto& d = *f.db;
  // An app made without them has none (the columns' default is '').
  CHECK(f.app.app_store_issuer_id.empty());
  auto before = REQUIRE_OK(d.find_app(f.app.id)).value();
  CHECK(before.app_store_issuer_id.empty());
  CHECK(before.app_store_key_id.empty());
  CHECK(before.app_store_private_key.empty());

  model::app with;
  with.name = "with server api " + f.app.id;
  with.bundle_id = "com.example.server-api";
  with.app_store_issuer_id = "57246542-96fe-1a63-e053-0824d011072a";
  with.app_store_key_id = "2X9R4HXF34";
  with.app_store_private_key = p8_pem;
  auto created = REQUIRE_OK(d.create_app(with));
  with.id = created.id;
  check_same(created, with);
  check_same(REQUIRE_OK(d.find_app(with.id)).value(), with);
  check_same(REQUIRE_OK(d.find_app(with.name)).value(), with);
  REQUIRE_OK(d.add_token(with.id, hash_a, t0));
  check_same(REQUIRE_OK(d.app_by_token_hash(hash_a)).value(), with);
  bool listed = false;
  for (const auto& a : REQUIRE_OK(d.list_apps()))
    if (a.id == with.id) {
      check_same(a, with);
      listed = true;
    }
  CHECK(listed);

  SECTION("updated, and cleared") {
    auto changed = with;
    changed.app_store_key_id = "ZZ9R4HXF99";
    changed.app_store_private_key = p8_pem + "\n";
    CHECK(REQUIRE_OK(d.update_app(changed)));
    check_same(REQUIRE_OK(d.find_app(with.id)).value(), changed);
    changed.app_store_issuer_id.clear();
    changed.app_store_key_id.clear();
    changed.app_store_private_key.clear();
    CHECK(REQUIRE_OK(d.update_app(changed)));
    check_same(REQUIRE_OK(d.find_app(with.id)).value(), changed);
  }
  SECTION("a row written without the columns reads as none") {
    auto id = std::string("00000000-0000-4000-8000-0000000000a4");
    execute_sql(f.url,
                "INSERT INTO apps (id, name, bundle_id, package_name,"
                " store_a_shared_secret, store_b_public_key, store_b_service_account)"
                " VALUES ('"
                  + id + "', 'raw " + id + "', '', '', '', '', '')");
    auto raw = REQUIRE_OK(d.find_app(id)).value();
    CHECK(raw.app_store_issuer_id.empty());
    CHECK(raw.app_store_key_id.empty());
    CHECK(raw.app_store_private_key.empty());
  }
}

TEST_CASE("entitlement rules and customer options are stored with the app",
          "[apps][entitlements][customers]") {
  database_fixture f;
  auto& d = *f.db;
  // An app made without them has none, and the defaults.
  auto before = REQUIRE_OK(d.find_app(f.app.id)).value();
  CHECK(before.entitlement_rules == "{}");
  CHECK(before.customer_lookup == model::customer_lookup_policy::client);
  CHECK(before.customer_id_from == model::customer_id_source::none);

  auto changed = before;
  changed.entitlement_rules = R"({"premium":{"monthly":{"product_id":["^premium\\.1m$"]}}})";
  changed.customer_lookup = model::customer_lookup_policy::server_only;
  changed.customer_id_from = model::customer_id_source::app_account_token;
  auto revision = REQUIRE_OK(d.auth_revision());
  CHECK(REQUIRE_OK(d.update_app(changed)));
  CHECK(REQUIRE_OK(d.auth_revision()) > revision); // a running receiptd sees the change
  check_same(REQUIRE_OK(d.find_app(f.app.id)).value(), changed);
  REQUIRE_OK(d.add_token(f.app.id, hash_a, t0));
  check_same(REQUIRE_OK(d.app_by_token_hash(hash_a)).value(), changed);

  SECTION("a row written without the columns reads as the defaults") {
    auto id = std::string("00000000-0000-4000-8000-0000000000e1");
    execute_sql(f.url,
                "INSERT INTO apps (id, name, bundle_id, package_name,"
                " store_a_shared_secret, store_b_public_key, store_b_service_account)"
                " VALUES ('"
                  + id + "', 'raw " + id + "', '', '', '', '', '')");
    auto raw = REQUIRE_OK(d.find_app(id)).value();
    CHECK(raw.entitlement_rules == "{}");
    CHECK(raw.customer_lookup == model::customer_lookup_policy::client);
    CHECK(raw.customer_id_from == model::customer_id_source::none);
  }
  SECTION("an unknown option's text is an error value, not a guess") {
    execute_sql(f.url, "UPDATE apps SET customer_lookup = 'anyone' WHERE id = '" + f.app.id + "'");
    auto found = d.find_app(f.app.id);
    REQUIRE_FALSE(found.ok());
    CHECK(found.err().message().find("customer_lookup") != std::string::npos);
  }
}

TEST_CASE("tokens have a kind: client unless made a server token", "[apps][tokens][token_kind]") {
  database_fixture f;
  auto& d = *f.db;
  auto client = REQUIRE_OK(d.add_token(f.app.id, hash_a, t0));
  auto server = REQUIRE_OK(d.add_token(f.app.id, hash_b, t0 + 1, model::token_kind::server));
  CHECK(client.kind == model::token_kind::client);
  CHECK(server.kind == model::token_kind::server);
  auto tokens = REQUIRE_OK(d.list_tokens(f.app.id));
  REQUIRE(tokens.size() == 2);
  CHECK(tokens[0].kind == model::token_kind::client);
  CHECK(tokens[1].kind == model::token_kind::server);
  // A token made before kinds (a row without the column) is a client token.
  const std::string hash_c(64, 'c');
  execute_sql(f.url, "INSERT INTO access_tokens (id, app_id, token_hash, created_at) VALUES "
                     "('00000000-0000-4000-8000-0000000000c1', '"
                       + f.app.id + "', '" + hash_c + "', 1)");
  auto found = REQUIRE_OK(d.apps_by_token_hashes({hash_b, hash_c}));
  CHECK(found.owners.at(0).value().kind == model::token_kind::server);
  CHECK(found.owners.at(1).value().kind == model::token_kind::client);
  // A revoked server token is unknown like any other.
  CHECK(REQUIRE_OK(d.revoke_token(server.id, t0 + 2)));
  CHECK_FALSE(REQUIRE_OK(d.apps_by_token_hashes({hash_b})).owners.at(0).has_value());
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

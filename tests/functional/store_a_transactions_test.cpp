// StoreKit 2 signed transactions through the real binary: verified
// locally, confirmed with the App Store Server API (the emulator), stored on the
// database under test. Real Apple JWS and ones the emulator's Apple-shaped PKI
// signs; forgeries made with test PKIs.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "model/encoding.hpp"
#include "tests/support/crypto/test_jws.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* transactions = "/client/store_a/transactions";

std::string code_of(const json::value& v) {
  return str(v.at("errors").at(0).at("code"));
}

// Server API calls the emulator saw for this transaction id, at one host.
int calls(suite& s, const std::string& transaction_id, bool sandbox,
          const std::string& endpoint = "/inApps/v1/transactions/") {
  auto log = s.emulator.control("GET", "/control/requests");
  auto path = std::string(sandbox ? "/sandbox" : "") + endpoint + transaction_id;
  int n = 0;
  for (auto& r : log.as_array())
    if (str(r.at("store")) == "store_a" && str(r.at("path")) == path)
      ++n;
  return n;
}

json::object fields(const storekit_app& app, const std::string& id,
                    const std::string& environment = "Sandbox") {
  return json::object{{"transaction_id", id},
                      {"original_transaction_id", id},
                      {"bundle_id", app.bundle_id},
                      {"product_id", app.bundle_id + ".monthly"},
                      {"environment", environment},
                      {"type", "Auto-Renewable Subscription"},
                      {"purchase_date_ms", 1717243200000},
                      {"expires_date_ms", 1719835200000},
                      {"price", 9990},
                      {"currency", "USD"},
                      {"storefront", "USA"}};
}

json::value upload(suite& s, const test_app& app, const std::string& jws, int expect,
                   const std::string& extra = "") {
  auto r = s.service.post(transactions, transaction_body(jws, extra), app.token);
  INFO(r.body);
  REQUIRE(r.status == expect);
  return r.json();
}

json::value get(suite& s, const test_app& app, const std::string& id) {
  auto r = s.service.get(std::string(transactions) + "/" + id, app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

} // namespace

TEST_CASE("a StoreKit 2 transaction confirmed by the App Store Server API", "[storekit2][200]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("sk2"));
  auto id = fresh_transaction_id();
  auto jws = register_transaction(s, fields(app, id));
  auto r = upload(s, app, jws, 200, R"(,"user_identifier":"u1","metadata":{"a":1})");
  CHECK(calls(s, id, true) == 1); // the JWS says Sandbox: asked there, and only there
  CHECK(calls(s, id, false) == 0);
  CHECK(str(r.at("validation_state")) == "validated");
  CHECK(r.at("is_fraud") == false);
  CHECK(r.at("fraud_reason").is_null());
  CHECK(str(r.at("app_family_id")) == app.id);
  CHECK(str(r.at("transaction_id")) == id);
  CHECK(str(r.at("original_transaction_id")) == id);
  CHECK(str(r.at("bundle_id")) == app.bundle_id);
  CHECK(str(r.at("product_id")) == app.bundle_id + ".monthly");
  CHECK(str(r.at("type")) == "Auto-Renewable Subscription");
  CHECK(str(r.at("environment")) == "sandbox");
  CHECK(r.at("purchase_date").at("ms") == 1717243200000);
  CHECK(str(r.at("purchase_date").at("utc")).ends_with("UTC"));
  CHECK(r.at("expires_date").at("ms") == 1719835200000);
  CHECK(r.at("revocation_date").is_null());
  CHECK(r.at("price") == 9990);
  CHECK(str(r.at("currency")) == "USD");
  CHECK(str(r.at("storefront")) == "USA");
  CHECK(r.at("quantity") == 1);
  CHECK(str(r.at("user_identifier")) == "u1");
  CHECK(r.at("metadata").at("a") == 1);

  // The JWT the emulator checked: ES256 with the app's key id.
  auto log = s.emulator.control("GET", "/control/requests");
  bool bearer = false;
  for (auto& q : log.as_array())
    if (str(q.at("path")).ends_with(id))
      bearer = str(q.at("authorization")).starts_with("Bearer ey");
  CHECK(bearer);

  auto again = get(s, app, str(r.at("id")));
  CHECK(again == r);
  // Another app's token does not see it.
  auto other = create_storekit_app(s, unique_package("sk2other"), false);
  CHECK(s.service.get(std::string(transactions) + "/" + str(r.at("id")), other.token).status
        == 404);
}

TEST_CASE("a transaction unknown at its own host is asked of the other, once",
          "[storekit2][flip]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("sk2flip"));
  SECTION("found at the other host: validated with that environment") {
    auto id = fresh_transaction_id();
    auto jws = register_transaction(s, fields(app, id, "Sandbox"));
    register_transaction(s, fields(app, id, "Production")); // the store knows it as production
    auto r = upload(s, app, jws, 200);
    CHECK(calls(s, id, true) == 1);
    CHECK(calls(s, id, false) == 1);
    CHECK(str(r.at("environment")) == "production");
  }
  SECTION("unknown at both: the store rejects it") {
    auto id = fresh_transaction_id();
    auto f = fields(app, id);
    f["known_in"] = "none";
    auto r = upload(s, app, register_transaction(s, f), 402);
    CHECK(code_of(r) == "store_rejected");
    CHECK(r.at("transaction").at("is_fraud") == true);
    CHECK(str(r.at("transaction").at("fraud_reason")) == "store_rejected");
    CHECK(calls(s, id, true) == 1);
    CHECK(calls(s, id, false) == 1);
  }
}

TEST_CASE("Server API answers that are not a verdict: 206, revalidated later", "[storekit2][206]") {
  auto& s = the_suite();
  for (int status : {401, 429, 500, 503}) {
    INFO("HTTP " << status);
    auto app = create_storekit_app(s, unique_package("sk2amb"));
    auto id = fresh_transaction_id();
    auto f = fields(app, id);
    f["http_status"] = status;
    auto r = upload(s, app, register_transaction(s, f), 206);
    CHECK(str(r.at("validation_state")) == "pending");
    CHECK(r.at("is_fraud") == false);
    CHECK(calls(s, id, false) == 0); // no flip on anything but "not found"
    // The store answers again: the retry job validates the record.
    register_transaction(s, fields(app, id));
    auto record_id = str(r.at("id"));
    CHECK(eventually([&] {
      auto g = s.service.get(std::string(transactions) + "/" + record_id, app.token);
      return g.status == 200 && str(g.json().at("validation_state")) == "validated";
    }));
  }
}

TEST_CASE("the store down or slow past the deadline: 206", "[storekit2][206]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("sk2down"));
  auto jws = register_transaction(s, fields(app, fresh_transaction_id()));
  s.emulator.set_mode("store_a", "down");
  auto r = upload(s, app, jws, 206);
  s.emulator.set_mode("store_a", "up");
  auto id = str(r.at("id"));
  CHECK(eventually([&] { return str(get(s, app, id).at("validation_state")) == "validated"; }));
}

TEST_CASE("an app without App Store Server API credentials: 206, never fraud", "[storekit2][206]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("sk2nokey"), false);
  // Signed by the emulator's PKI like any transaction, though receiptd cannot ask.
  auto id = fresh_transaction_id();
  auto r = upload(s, app, register_transaction(s, fields(app, id)), 206);
  CHECK(calls(s, id, true) + calls(s, id, false) == 0);
  CHECK(r.at("is_fraud") == false);
  CHECK(str(r.at("validation_state")) == "pending");
}

TEST_CASE("Apple's answer decides what is stored", "[storekit2][store]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("sk2answer"));
  SECTION("revoked: stored as genuine with its revocation") {
    auto id = fresh_transaction_id();
    auto jws = register_transaction(s, fields(app, id));
    auto f = fields(app, id);
    f["revocation_date_ms"] = 1718000000000;
    f["revocation_reason"] = 1;
    register_transaction(s, f); // refunded since the device signed it
    auto r = upload(s, app, jws, 200);
    CHECK(r.at("is_fraud") == false);
    CHECK(str(r.at("validation_state")) == "validated");
    CHECK(r.at("revocation_date").at("ms") == 1718000000000);
    CHECK(r.at("revocation_reason") == 1);
  }
  SECTION("an answer about another product: store_rejected") {
    auto id = fresh_transaction_id();
    auto jws = register_transaction(s, fields(app, id));
    auto f = fields(app, id);
    f["product_id"] = app.bundle_id + ".lifetime";
    register_transaction(s, f);
    auto r = upload(s, app, jws, 402);
    CHECK(code_of(r) == "store_rejected");
    CHECK(r.at("errors").at(0).as_object().if_contains("field") == nullptr);
  }
  SECTION("an answer that does not verify is unusable: 206") {
    auto id = fresh_transaction_id();
    auto jws = register_transaction(s, fields(app, id));
    auto rogue = test_support::make_jws_pki("rogue storekit");
    test_support::transaction_fields t;
    t.transaction_id = t.original_transaction_id = id;
    t.bundle_id = app.bundle_id;
    t.product_id = app.bundle_id + ".monthly";
    auto f = fields(app, id);
    f["signed_transaction_info"]
      = test_support::make_storekit_jws(test_support::transaction_payload_json(t), rogue);
    register_transaction(s, f);
    auto r = upload(s, app, jws, 206);
    CHECK(r.at("is_fraud") == false);
    CHECK(s.service.log().find("App Store Server API answer unusable") != std::string::npos);
  }
}

TEST_CASE("forged and broken signed transactions", "[storekit2][402][422]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("sk2forge"));
  auto id = fresh_transaction_id();
  auto genuine = register_transaction(s, fields(app, id));
  auto dot1 = genuine.find('.'), dot2 = genuine.rfind('.');

  SECTION("signed by a PKI nobody trusts") {
    auto rogue = test_support::make_jws_pki("rogue storekit");
    test_support::transaction_fields t;
    t.transaction_id = t.original_transaction_id = id;
    t.bundle_id = app.bundle_id;
    auto r = upload(
      s, app, test_support::make_storekit_jws(test_support::transaction_payload_json(t), rogue),
      402);
    CHECK(code_of(r) == "untrusted_certificate");
    CHECK(str(r.at("errors").at(0).at("field")) == "signed_transaction");
    // What a forgery claims is not stored as fact.
    CHECK(r.at("transaction").at("transaction_id").is_null());
  }
  SECTION("a payload changed after signing") {
    test_support::transaction_fields t;
    t.transaction_id = t.original_transaction_id = id;
    t.bundle_id = app.bundle_id;
    t.product_id = app.bundle_id + ".lifetime";
    auto forged = genuine.substr(0, dot1 + 1)
      + test_support::base64url(test_support::transaction_payload_json(t)) + genuine.substr(dot2);
    CHECK(code_of(upload(s, app, forged, 402)) == "invalid_signature");
  }
  SECTION("alg none") {
    auto header = test_support::base64url(R"({"alg":"none","x5c":[]})");
    auto forged = header + genuine.substr(dot1);
    CHECK(code_of(upload(s, app, forged, 402)) == "malformed_receipt");
  }
  SECTION("another app's transaction") {
    auto other = create_storekit_app(s, unique_package("sk2elsewhere"));
    auto r = upload(s, app, register_transaction(s, fields(other, fresh_transaction_id())), 402);
    CHECK(code_of(r) == "bundle_id_mismatch");
  }
  SECTION("not a JWS at all: 422") {
    for (auto bad : {std::string("abc"), std::string("a.b"), std::string("a.b.c.d"),
                     genuine.substr(0, dot2) + ".sig=", std::string("a..c")}) {
      INFO(bad);
      auto r = upload(s, app, bad, 422);
      CHECK(str(r.at("errors").at(0).at("field")) == "signed_transaction");
      CHECK(code_of(r) == "invalid_jws");
    }
    auto r = s.service.post(transactions, "{}", app.token);
    CHECK(r.status == 422);
    CHECK(code_of(r.json()) == "missing");
    r = s.service.post(transactions, R"({"signed_transaction":42})", app.token);
    CHECK(r.status == 422);
    CHECK(code_of(r.json()) == "wrong_type");
  }
  SECTION("a forgery never touches the genuine record") {
    auto good = upload(s, app, genuine, 200);
    auto forged = genuine.substr(0, dot2 + 1) + "AAAA" + genuine.substr(dot2 + 5);
    upload(s, app, forged, 402);
    auto after = get(s, app, str(good.at("id")));
    CHECK(str(after.at("validation_state")) == "validated");
    CHECK(after.at("is_fraud") == false);
  }
}

TEST_CASE("re-uploads of one transaction are one record", "[storekit2][reupload]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("sk2again"));
  auto id = fresh_transaction_id();
  auto first = upload(s, app, register_transaction(s, fields(app, id)), 200,
                      R"(,"user_identifier":"alice")");
  // The device signs the same transaction again later (another signedDate).
  auto second_jws = register_transaction(s, fields(app, id));
  auto second = upload(s, app, second_jws, 200, R"(,"metadata":{"n":2})");
  CHECK(str(second.at("id")) == str(first.at("id")));
  CHECK(str(second.at("user_identifier")) == "alice");
  CHECK(second.at("metadata").at("n") == 2);
  CHECK(second.at("created_at") == first.at("created_at"));
  // Store down now: the validated record is not downgraded to pending.
  s.emulator.set_mode("store_a", "error", 0, 503);
  auto third = upload(s, app, second_jws, 200);
  s.emulator.set_mode("store_a", "up");
  CHECK(str(third.at("validation_state")) == "validated");
}

TEST_CASE("Apple's own signed transactions, confirmed by the Server API", "[storekit2][vectors]") {
  auto& s = the_suite();
  // session-pro: a 2025 sandbox subscription, refunded (revocationDate set).
  auto jws = jws_vector("transaction", "session-pro-revoked-refund-sandbox-2025");
  auto app = create_storekit_app(s, "com.loki-project.loki-messenger");
  s.emulator.control("POST", "/control/store_a/transactions",
                     json::object{{"transaction_id", "2000001032604840"},
                                  {"bundle_id", "com.loki-project.loki-messenger"},
                                  {"product_id", "com.getsession.org.pro_sub"},
                                  {"environment", "Sandbox"},
                                  {"signed_transaction_info", jws}});
  auto r = upload(s, app, jws, 200);
  CHECK(str(r.at("transaction_id")) == "2000001032604840");
  CHECK(str(r.at("original_transaction_id")) == "2000001024993299");
  CHECK(str(r.at("environment")) == "sandbox");
  CHECK(r.at("revocation_date").at("ms") == 1760591999000);
  CHECK(r.at("revocation_reason") == 0);
  CHECK(r.at("is_fraud") == false);
  CHECK(r.at("price") == 1990);
  CHECK(str(r.at("currency")) == "AUD");
  CHECK(str(r.at("storefront")) == "AUS");
}

TEST_CASE("Xcode-signed transactions only for apps that accept StoreKit test receipts",
          "[storekit2][xcode]") {
  auto& s = the_suite();
  auto jws = jws_vector("transaction", "apple-lib-python-xcode-2023");
  const std::string bundle = "com.example.naturelab.backyardbirds.example";
  auto refuses = create_storekit_app(s, bundle, false);
  auto r = upload(s, refuses, jws, 402);
  CHECK(code_of(r) == "untrusted_certificate");
  CHECK(str(r.at("transaction").at("environment")) == "xcode");

  auto accepts = create_storekit_app(s, bundle, false, {"--accept-storekit-test-receipts"});
  auto ok = upload(s, accepts, jws, 200);
  CHECK(str(ok.at("environment")) == "xcode");
  CHECK(str(ok.at("validation_state")) == "validated");
  CHECK(str(ok.at("product_id")) == "pass.premium");
}

TEST_CASE("a unified receipt of an app with Server API credentials is confirmed there",
          "[storekit2][unified]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("sk2unified"));
  auto older = fresh_transaction_id(), newer = fresh_transaction_id();
  test_support::unified_receipt_params p;
  p.bundle_id = app.bundle_id;
  p.receipt_type = "ProductionSandbox";
  p.in_app.push_back(
    test_support::purchase(app.bundle_id + ".monthly", newer, test_support::utc(2024, 6, 1)));
  p.in_app.push_back(
    test_support::purchase(app.bundle_id + ".coins", older, test_support::utc(2024, 5, 1)));
  auto receipt = model::base64_encode(
    test_support::make_unified_receipt(p, test_support::apple_like_signer(s.pki)));

  SECTION("the history from the newest transaction is asked for; verifyReceipt is not") {
    auto f = fields(app, newer);
    f["expires_date_ms"] = 1893456000000; // what Apple knows now: renewed until 2030
    register_transaction(s, f);
    auto coins = fields(app, older);
    coins["product_id"] = app.bundle_id + ".coins";
    coins["type"] = "Consumable";
    register_transaction(s, coins);
    auto r = s.service.post("/client/store_a/receipts",
                            json::serialize(json::object{{"receipt", receipt}}), app.token);
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(calls(s, newer, true, "/inApps/v2/history/") == 1);
    CHECK(calls(s, newer, true) + calls(s, older, true) + calls(s, older, false) == 0);
    int verify_receipt = 0;
    auto log = s.emulator.control("GET", "/control/requests");
    for (auto& q : log.as_array())
      if (str(q.at("path")).ends_with("verifyReceipt")
          && str(q.at("body")).find(receipt.substr(0, 200)) != std::string::npos)
        ++verify_receipt;
    CHECK(verify_receipt == 0);
    auto j = r.json();
    CHECK(str(j.at("validation_state")) == "validated");
    auto& purchases = j.at("in_app_purchases").as_array();
    REQUIRE(purchases.size() == 2);
    CHECK(str(purchases[0].at("transaction_id")) == newer);
    CHECK(purchases[0].at("expires_date").at("ms") == 1893456000000);
    CHECK(purchases[0].at("store_contradiction").is_null());
    CHECK(purchases[1].at("store_contradiction").is_null());
  }
  SECTION("Apple does not know it: store_rejected") {
    auto f = fields(app, newer);
    f["known_in"] = "none";
    register_transaction(s, f);
    auto r = s.service.post("/client/store_a/receipts",
                            json::serialize(json::object{{"receipt", receipt}}), app.token);
    INFO(r.body);
    REQUIRE(r.status == 402);
    CHECK(code_of(r.json()) == "store_rejected");
  }
}

// The App Store Server Notifications types added since receiptd's first model,
// through the real binary on the database under test, signed with the suite's
// trusted Apple-shaped test chain: applied where they change a purchase
// (ONE_TIME_CHARGE, MIGRATION), recorded and answered 200 otherwise, a type or
// a part Apple adds later included.
#include <catch2/catch.hpp>

#include "storekit_support.hpp"

using namespace receiptd;
using namespace receiptd::test;
using namespace receiptd::test::storekit;
namespace json = boost::json;

TEST_CASE("ONE_TIME_CHARGE lands its transaction on the record of that transaction",
          "[notifications][storekit2][api_2026]") {
  auto& s = the_suite();
  // No Server API key: the upload stays pending (206), with what its JWS says.
  auto app = create_storekit_app(s, unique_package("onetime"), false);
  test_support::transaction_fields t;
  t.transaction_id = t.original_transaction_id = fresh_transaction_id();
  t.bundle_id = app.bundle_id;
  t.product_id = app.bundle_id + ".coins";
  t.type = "Consumable";
  t.quantity = 1;
  t.signed_date = now_ms() - 60'000;
  auto record = upload(s, app,
                       test_support::make_storekit_jws(test_support::transaction_payload_json(t),
                                                       s.jws_pki),
                       206);
  const auto record_id = str(record.at("id"));
  CHECK(record.at("app_transaction_id").is_null());

  notification_spec charge{"ONE_TIME_CHARGE", "", app.bundle_id};
  charge.tx = t;
  charge.tx->quantity = 5;
  charge.tx->app_transaction_id = "704289572311513217";
  charge.tx->signed_date = charge.signed_date;
  auto r = notify(s, app, charge);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(str(r.json().at("notification_type")) == "ONE_TIME_CHARGE");
  CHECK(r.json().at("records_changed") == 1);
  auto after = get_transaction(s, app, record_id);
  CHECK(after.at("quantity") == 5);
  CHECK(str(after.at("app_transaction_id")) == "704289572311513217");
  CHECK(str(after.at("validation_state")) == "pending"); // a notification is no verdict
  CHECK(after.at("in_app_purchase").at("quantity") == 5);
}

TEST_CASE("MIGRATION carries the subscription's renewal, its account token included",
          "[notifications][storekit2][api_2026]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("migration"));
  auto id = fresh_transaction_id();
  auto f = current_subscription(app, id);
  auto record_id = str(upload(s, app, register_transaction(s, f), 200).at("id"));

  notification_spec migration{"MIGRATION", "", app.bundle_id};
  migration.tx = as_signed(f);
  migration.tx->signed_date = migration.signed_date;
  migration.renewal = json::object{{"originalTransactionId", id},
                                   {"autoRenewProductId", app.bundle_id + ".monthly"},
                                   {"productId", app.bundle_id + ".monthly"},
                                   {"autoRenewStatus", 1},
                                   {"appAccountToken", "7e3fb20b-4cdb-47cc-936d-99d65f608138"},
                                   {"signedDate", migration.signed_date},
                                   {"environment", "Sandbox"}};
  migration.status = 1;
  auto r = notify(s, app, migration);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.json().at("records_changed") == 1);
  auto t = get_transaction(s, app, record_id);
  CHECK(str(t.at("subscription_status")) == "active");
  CHECK(t.at("auto_renew") == true);
  CHECK(str(t.at("renewal_app_account_token")) == "7e3fb20b-4cdb-47cc-936d-99d65f608138");
}

TEST_CASE("notification types that change no purchase, or that Apple adds later: recorded, 200",
          "[notifications][api_2026]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("recorded"));
  struct kind {
    std::string type, subtype, part;
  };
  // RESCIND_CONSENT names its app in appData; EXTERNAL_PURCHASE_TOKEN's
  // subtypes; a type and a part no Apple document has yet.
  for (const auto& k : std::vector<kind>{{"RESCIND_CONSENT", "", "appData"},
                                         {"EXTERNAL_PURCHASE_TOKEN", "ACTIVE_TOKEN_REMINDER",
                                          "externalPurchaseToken"},
                                         {"EXTERNAL_PURCHASE_TOKEN", "CREATED",
                                          "externalPurchaseToken"},
                                         {"PRICE_CHANGE", "", "data"},
                                         {"METADATA_UPDATE", "", "data"},
                                         {"SOMETHING_NEW_2031", "ALSO_NEW", "somethingNew"},
                                         {"somethingNew", "lowerCase", "data"}}) {
    INFO(k.type << "/" << k.subtype << " in " << k.part);
    notification_spec n{k.type, k.subtype, app.bundle_id, k.part};
    auto r = notify(s, app, n);
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(str(r.json().at("notification_type")) == k.type);
    CHECK(str(r.json().at("status")) == "applied");
    CHECK(r.json().at("records_changed") == 0);
  }
  // Recorded once: Apple's retry of the same notification is a duplicate.
  notification_spec n{"RESCIND_CONSENT", "", app.bundle_id, "appData"};
  const auto jws = signed_payload(n, s.jws_pki);
  auto body = json::serialize(json::object{{"signedPayload", jws}});
  REQUIRE(s.service.post("/notifications/store_a/" + app.id, body, "").status == 200);
  auto again = s.service.post("/notifications/store_a/" + app.id, body, "");
  INFO(again.body);
  REQUIRE(again.status == 200);
  CHECK(str(again.json().at("status")) == "duplicate");
}

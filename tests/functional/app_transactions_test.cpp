// StoreKit 2 app transactions (AppTransaction.jwsRepresentation) through the
// real binary: verified locally, bound to the uploading device, confirmed with
// the App Store Server API's Get App Transaction Info (the emulator), stored on
// the database under test, revalidated after a store outage.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "tests/support/crypto/test_jws.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* app_transactions = "/client/store_a/app_transactions";

// What the emulator registers (POST /control/store_a/app_transactions) and
// hands back as the device would have it: the JWS, its nonce and device id.
struct device_copy {
  std::string jws, nonce, device_id;
};

device_copy register_app_transaction(suite& s, const storekit_app& app, const std::string& id,
                                     json::object extra = {}) {
  json::object o{{"app_transaction_id", id},
                 {"bundle_id", app.bundle_id},
                 {"environment", "Sandbox"},
                 {"original_application_version", "1.2"},
                 {"application_version", "3.0"},
                 {"original_purchase_date_ms", 1600000000000}};
  for (auto& [k, v] : extra)
    o[k] = v;
  auto r = s.emulator.control("POST", "/control/store_a/app_transactions", o);
  return {str(r.at("signed_app_transaction")), str(r.at("device_verification_nonce")),
          str(r.at("device_verification_id"))};
}

std::string body_of(const device_copy& d, const std::string& extra = "") {
  return R"({"signed_app_transaction":")" + d.jws + R"(","device_verification_nonce":")" + d.nonce
    + R"(","device_verification_id":")" + d.device_id + "\"" + extra + "}";
}

json::value upload(suite& s, const test_app& app, const std::string& body, int expect) {
  auto r = s.service.post(app_transactions, body, app.token);
  INFO(r.body);
  REQUIRE(r.status == expect);
  return r.json();
}

json::value get(suite& s, const test_app& app, const std::string& id) {
  auto r = s.service.get(std::string(app_transactions) + "/" + id, app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

// Get App Transaction Info calls the emulator saw for this id, at one host.
int info_calls(suite& s, const std::string& id, bool sandbox) {
  auto path = std::string(sandbox ? "/sandbox" : "") + "/inApps/v1/transactions/appTransactions/"
    + id;
  int n = 0;
  auto log = s.emulator.control("GET", "/control/requests");
  for (auto& r : log.as_array())
    if (str(r.at("store")) == "store_a" && str(r.at("path")) == path)
      ++n;
  return n;
}

std::string code_of(const json::value& v) {
  return str(v.at("errors").at(0).at("code"));
}

std::string field_of(const json::value& v) {
  const auto* f = v.at("errors").at(0).as_object().if_contains("field");
  return f ? str(*f) : "";
}

} // namespace

TEST_CASE("an app transaction confirmed by Get App Transaction Info",
          "[app_transaction][200]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("apptx"));
  auto id = fresh_transaction_id();
  auto device = register_app_transaction(s, app, id);
  auto r = upload(s, app, body_of(device, R"(,"user_identifier":"early-buyer")"), 200);
  CHECK(info_calls(s, id, true) == 1); // receiptType Sandbox: asked there only
  CHECK(info_calls(s, id, false) == 0);
  CHECK(str(r.at("validation_state")) == "validated");
  CHECK(r.at("is_fraud") == false);
  CHECK(str(r.at("app_family_id")) == app.id);
  CHECK(str(r.at("app_transaction_id")) == id);
  CHECK(str(r.at("bundle_id")) == app.bundle_id);
  CHECK(str(r.at("environment")) == "sandbox");
  CHECK(str(r.at("original_application_version")) == "1.2");
  CHECK(r.at("original_purchase_date").at("ms") == 1600000000000);
  CHECK(str(r.at("device_verification")) == "verified");
  CHECK(str(r.at("user_identifier")) == "early-buyer");

  auto stored = get(s, app, str(r.at("id")));
  CHECK(stored == r);
  // Another app's token does not see it.
  auto other = create_storekit_app(s, unique_package("apptxother"), false);
  CHECK(s.service.get(std::string(app_transactions) + "/" + str(r.at("id")), other.token).status
        == 404);

  SECTION("a re-upload is the same record, asked again") {
    auto again = upload(s, app, body_of(device), 200);
    CHECK(again.at("id") == r.at("id"));
    CHECK(again.at("created_at") == r.at("created_at"));
    CHECK(str(again.at("user_identifier")) == "early-buyer"); // kept when not sent
    CHECK(info_calls(s, id, true) == 2);
  }
  SECTION("the nonce alone binds it too") {
    auto body = R"({"signed_app_transaction":")" + device.jws
      + R"(","device_verification_nonce":")" + device.nonce + "\"}";
    auto again = upload(s, app, body, 200);
    CHECK(str(again.at("device_verification")) == "nonce_matched");
  }
}

TEST_CASE("an app transaction re-uploaded for another user: the app's transfer policy",
          "[app_transaction][409]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("apptxmove"));
  auto device = register_app_transaction(s, app, fresh_transaction_id());
  auto first = upload(s, app, body_of(device, R"(,"user_identifier":"ann")"), 200);

  SECTION("transfer (the default): it moves, the previous owner recorded") {
    auto moved = upload(s, app, body_of(device, R"(,"user_identifier":"bob")"), 200);
    CHECK(moved.at("id") == first.at("id"));
    CHECK(str(moved.at("user_identifier")) == "bob");
    CHECK(moved.at("previous_user_identifiers") == json::array{"ann"});
  }
  SECTION("keep: 409 bound_to_other_user, the record unchanged") {
    REQUIRE(s.ctl({"app", "update", app.name, "--transfer-policy=keep"}).code == 0);
    auto refused = upload(s, app, body_of(device, R"(,"user_identifier":"bob")"), 409);
    CHECK(code_of(refused) == "bound_to_other_user");
    CHECK(field_of(refused) == "user_identifier");
    CHECK(str(get(s, app, str(first.at("id"))).at("user_identifier")) == "ann");
  }
}

TEST_CASE("an app transaction during a store outage: 206, validated by its retry job",
          "[app_transaction][206]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("apptxdown"));
  auto id = fresh_transaction_id();
  auto device = register_app_transaction(s, app, id);
  s.emulator.set_mode("store_a", "down");
  auto sent = s.service.post(app_transactions, body_of(device), app.token);
  s.emulator.set_mode("store_a", "up");
  INFO(sent.body);
  REQUIRE(sent.status == 206);
  auto r = sent.json();
  CHECK(str(r.at("validation_state")) == "pending");
  CHECK(r.at("is_fraud") == false);
  auto record_id = str(r.at("id"));
  CHECK(sent.header("location") == std::string(app_transactions) + "/" + record_id);
  CHECK(!sent.header("retry-after").empty());
  CHECK(eventually([&] { return str(get(s, app, record_id).at("validation_state")) == "validated"; }));
  CHECK(info_calls(s, id, true) >= 1);
  // The operator's view: the record and what the store said.
  auto shown = s.ctl({"record", "show", record_id});
  INFO(shown.err << shown.out);
  REQUIRE(shown.code == 0);
  CHECK(str(shown.json.at("kind")) == "store_a_app_transaction");
  CHECK(str(shown.json.at("app_transaction_id")) == id);
  CHECK(!str(shown.json.at("store_detail")).empty());

  SECTION("a 503 or 429 of Get App Transaction Info itself: 206 too") {
    auto other = fresh_transaction_id();
    auto d = register_app_transaction(s, app, other, {{"http_status", 503}});
    auto pending = upload(s, app, body_of(d), 206);
    CHECK(str(pending.at("validation_state")) == "pending");
    register_app_transaction(s, app, other); // the store answers again
    CHECK(eventually([&] {
      return str(get(s, app, str(pending.at("id"))).at("validation_state")) == "validated";
    }));
  }
}

TEST_CASE("an app transaction of another device or bundle: 402, stored as fraud",
          "[app_transaction][402]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("apptxdev"));
  auto id = fresh_transaction_id();
  auto device = register_app_transaction(s, app, id);

  SECTION("another device verification id") {
    auto copied = device;
    copied.device_id = "6f9619ff-8b86-d011-b42d-00c04fc964ff";
    auto r = upload(s, app, body_of(copied), 402);
    CHECK(code_of(r) == "device_hash_mismatch");
    CHECK(field_of(r) == "device_verification_nonce");
    auto stored = get(s, app, str(r.at("app_transaction").at("id")));
    CHECK(stored.at("is_fraud") == true);
    CHECK(str(stored.at("fraud_reason")) == "device_hash_mismatch");
    CHECK(str(stored.at("device_verification")) == "mismatch");
    CHECK(info_calls(s, id, true) + info_calls(s, id, false) == 0); // refused before asking
  }
  SECTION("another app's bundle") {
    auto other = create_storekit_app(s, unique_package("apptxbundle"));
    auto r = upload(s, other, body_of(device), 402);
    CHECK(code_of(r) == "bundle_id_mismatch");
  }
  SECTION("signed by a PKI nobody trusts") {
    test_support::app_transaction_fields f;
    f.app_transaction_id = id;
    f.bundle_id = app.bundle_id;
    auto rogue = test_support::make_storekit_jws(test_support::app_transaction_payload_json(f),
                                                 s.rogue_jws_pki);
    auto r = upload(s, app, R"({"signed_app_transaction":")" + rogue + "\"}", 402);
    CHECK(r.at("app_transaction").at("is_fraud") == true);
  }
}

TEST_CASE("app transaction uploads that are not one: 422 with the field, or 401",
          "[app_transaction][422][401]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("apptx422"));
  auto device = register_app_transaction(s, app, fresh_transaction_id());
  auto refused = [&](const std::string& body, const std::string& field, const std::string& code) {
    auto r = upload(s, app, body, 422);
    CHECK(field_of(r) == field);
    CHECK(code_of(r) == code);
  };
  refused(R"({"device_verification_nonce":")" + device.nonce + "\"}", "signed_app_transaction",
          "missing");
  refused(R"({"signed_app_transaction":"not a jws"})", "signed_app_transaction", "invalid_jws");
  auto bad_nonce = device;
  bad_nonce.nonce = "not-a-uuid";
  refused(body_of(bad_nonce), "device_verification_nonce", "invalid_uuid");
  CHECK(s.service.post(app_transactions, "[1,", app.token).status == 422);

  CHECK(s.service.post(app_transactions, body_of(device), "").status == 401);
  CHECK(s.service.post(app_transactions, body_of(device), "not-a-token").status == 401);
  CHECK(s.service.get(std::string(app_transactions) + "/nope", app.token).status == 404);
}

TEST_CASE("a customer's app transaction grants by its original application version",
          "[app_transaction][customer]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("apptxcust"));
  // Paid until 2.0, free since: the early buyers keep "pro".
  auto set = s.ctl({"entitlement", "set", app.name, "pro", "--offering=paid_app",
                    "--original-application-version-before=2.0"});
  INFO(set.err << set.out);
  REQUIRE(set.code == 0);
  REQUIRE(s.ctl({"entitlement", "set", app.name, "premium", "--offering=monthly",
                 "--pattern=\\.monthly$"})
            .code
          == 0);
  auto customer = [&](const std::string& user, const std::string& query) {
    auto r = s.service.get("/client/customers/" + user + query, app.token);
    INFO(r.body);
    REQUIRE(r.status == 200);
    return r.json().at("customer");
  };
  auto early = unique("early");
  auto late = unique("late");
  auto nobody = unique("nobody");
  upload(s, app,
         body_of(register_app_transaction(s, app, fresh_transaction_id(),
                                          {{"original_application_version", "1.9.3"}}),
                 ",\"user_identifier\":\"" + early + "\""),
         200);
  upload(s, app,
         body_of(register_app_transaction(s, app, fresh_transaction_id(),
                                          {{"original_application_version", "2.1"}}),
                 ",\"user_identifier\":\"" + late + "\""),
         200);

  auto e = customer(early, "?environment=sandbox");
  auto pro = e.at("entitlements").at("pro");
  CHECK(pro.at("is_active") == true);
  CHECK(pro.at("expires_at").is_null());
  CHECK(str(pro.at("offering")) == "paid_app");
  CHECK(str(pro.at("ownership")) == "purchased");
  CHECK(str(pro.at("original_application_version")) == "1.9.3");
  CHECK(e.at("entitlements").at("premium").at("is_active") == false);

  CHECK(customer(late, "?environment=sandbox").at("entitlements").at("pro").at("is_active")
        == false);
  CHECK(customer(nobody, "?environment=sandbox").at("entitlements").at("pro").at("is_active")
        == false);
  // A sandbox app transaction grants only in answers that ask for sandbox.
  CHECK(customer(early, "").at("entitlements").at("pro").at("is_active") == false);
  // Another app's token knows nothing of this customer's app transaction.
  auto other = create_storekit_app(s, unique_package("apptxcust2"), false);
  REQUIRE(s.ctl({"entitlement", "set", other.name, "pro", "--offering=paid_app",
                 "--original-application-version-before=2.0"})
            .code
          == 0);
  auto r = s.service.get("/client/customers/" + early + "?environment=sandbox", other.token);
  REQUIRE(r.status == 200);
  CHECK(r.json().at("customer").at("entitlements").at("pro").at("is_active") == false);
}

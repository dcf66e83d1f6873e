// Re-uploads through the real binary: what a hostile re-upload may
// not change, a legacy upload claiming another product, Xcode test receipts as a
// per-app opt-in, and the per-app transfer policy; on the database under test.
#include <catch2/catch.hpp>

#include "harness.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";
constexpr const char* legacy = "/client/store_b/purchase_orders/legacy";
constexpr const char* receipts = "/client/store_a/receipts";

std::string code_of(const json::value& v) {
  return str(v.at("errors").at(0).at("code"));
}

json::value post(suite& s, const char* path, const std::string& body, const test_app& app,
                 long expect) {
  auto r = s.service.post(path, body, app.token);
  INFO(path << " " << body.substr(0, 300) << " → " << r.status << " " << r.body);
  REQUIRE(r.status == expect);
  return r.json();
}

json::value get(suite& s, const std::string& path, const test_app& app) {
  auto r = s.service.get(path, app.token);
  INFO(path << " → " << r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

// Whether the retry queue still holds a job for `record_id`.
bool has_job(suite& s, const std::string& record_id) {
  auto r = s.ctl({"jobs"});
  REQUIRE(r.code == 0);
  return r.out.find(record_id) != std::string::npos;
}

std::string legacy_body(const std::string& package, const std::string& token,
                        const std::string& product, const std::string& user = "") {
  json::object o{{"package_name", package}, {"purchase_token", token}, {"product_id", product}};
  if (!user.empty())
    o["user_identifier"] = user;
  return json::serialize(o);
}

struct store_down_guard {
  suite& s;
  std::string store;
  store_down_guard(suite& su, std::string st) : s(su), store(std::move(st)) {
    s.emulator.set_mode(store, "down");
  }
  ~store_down_guard() { s.emulator.set_mode(store, "up"); }
};

} // namespace

TEST_CASE("a forged re-upload leaves a genuine pending purchase order as it was",
          "[hostile][store_b][reupload]") {
  auto& s = the_suite();
  auto package = unique_package("pending");
  auto app = create_store_b_app(s, package, test_licence_key());
  auto token = unique("tok");
  register_purchase(s, package, "gold", token, "product");
  auto data = purchase_data_json(package, "gold", token);
  std::string id;
  {
    store_down_guard down(s, "store_b");
    auto genuine = post(
      s, orders, store_b_body(data, sign_purchase(data), R"("user_identifier":"alice")"), app, 206);
    id = str(genuine.at("id"));
    REQUIRE(has_job(s, id));
    auto forged
      = post(s, orders, store_b_body(data, "AAAA", R"("user_identifier":"mallory")"), app, 402);
    CHECK(code_of(forged) == "invalid_signature");
    auto stored = get(s, std::string(orders) + "/" + id, app);
    CHECK(str(stored.at("validation_state")) == "pending");
    CHECK(stored.at("is_fraud") == false);
    CHECK(str(stored.at("user_identifier")) == "alice");
    CHECK(has_job(s, id)); // its revalidation is still due
  }
  // The store is back: the untouched genuine record is validated by its job.
  CHECK(eventually(
    [&] {
      auto r = s.service.get(std::string(orders) + "/" + id, app.token);
      return r.status == 200 && str(r.json().at("validation_state")) == "validated";
    },
    std::chrono::seconds(30)));
}

TEST_CASE("a re-upload from the wrong device leaves a genuine pending receipt as it was",
          "[hostile][store_a][reupload]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "dev.bonzer.weeka.app");
  auto g5 = receipt_vector("unified", "tpinappreceipt-sandbox-g5-ios");
  auto body = [&](const std::string& device) {
    return json::serialize(json::object{{"receipt", g5}, {"identifier_for_vendor", device}});
  };
  store_down_guard down(s, "store_a");
  auto genuine = post(s, receipts, body("956328D9-CC6A-47F4-BE40-6953FB0AB6C7"), app, 206);
  auto id = str(genuine.at("id"));
  auto purchases = genuine.at("in_app_purchases").as_array().size();
  auto wrong = post(s, receipts, body("00000000-0000-0000-0000-000000000000"), app, 402);
  CHECK(code_of(wrong) == "device_hash_mismatch");
  auto stored = get(s, std::string(receipts) + "/" + id, app);
  CHECK(str(stored.at("validation_state")) == "pending");
  CHECK(stored.at("is_fraud") == false);
  CHECK(str(stored.at("identifier_for_vendor")) == "956328D9-CC6A-47F4-BE40-6953FB0AB6C7");
  CHECK(stored.at("in_app_purchases").as_array().size() == purchases);
  CHECK(has_job(s, id));
}

TEST_CASE("the store rejecting a re-upload does not downgrade a validated purchase",
          "[hostile][store_b][reupload]") {
  auto& s = the_suite();
  auto package = unique_package("downgrade");
  auto app = create_store_b_app(s, package, test_licence_key());
  auto token = unique("tok");
  register_purchase(s, package, "gold", token, "product");
  auto ok = post(s, legacy, legacy_body(package, token, "gold"), app, 200);
  // Play forgets the token (as after a refund it would say 410, never 404; this
  // is the definitive "not genuine" answer for the next upload).
  register_purchase(s, package, "gold", token, "product", false, 404);
  auto again = post(s, legacy, legacy_body(package, token, "gold"), app, 402);
  CHECK(code_of(again) == "store_rejected");
  auto stored = get(s, std::string(orders) + "/" + str(ok.at("id")), app);
  CHECK(str(stored.at("validation_state")) == "validated");
  CHECK(stored.at("is_fraud") == false);
}

TEST_CASE("a legacy upload cannot claim another product than its token's",
          "[hostile][store_b][legacy]") {
  auto& s = the_suite();
  auto package = unique_package("product");
  auto app = create_store_b_app(s, package, test_licence_key());
  SECTION("a cheap subscription's token claimed as the expensive one: 402 store_rejected") {
    auto token = unique("tok");
    register_purchase(s, package, "cheap_monthly", token, "subscription");
    auto r = post(s, legacy, legacy_body(package, token, "premium_yearly"), app, 402);
    CHECK(code_of(r) == "store_rejected");
    CHECK(str(r.at("errors").at(0).at("message")).find("cheap_monthly") != std::string::npos);
    CHECK(r.at("purchase_order").at("is_fraud") == true);
    // The refused claim binds nothing: the token's own product is accepted.
    auto ok = post(s, legacy, legacy_body(package, token, "cheap_monthly"), app, 200);
    CHECK(str(ok.at("in_app_purchase").at("product_id")) == "cheap_monthly");
    CHECK(str(ok.at("id")) == str(r.at("purchase_order").at("id")));
  }
  SECTION("a re-upload never changes a record's product id: 409") {
    auto token = unique("tok");
    register_purchase(s, package, "gold", token, "product");
    auto ok = post(s, legacy, legacy_body(package, token, "gold"), app, 200);
    store_down_guard down(s, "store_b");
    auto r = post(s, legacy, legacy_body(package, token, "platinum"), app, 409);
    CHECK(code_of(r) == "product_id_mismatch");
    auto stored = get(s, std::string(orders) + "/" + str(ok.at("id")), app);
    CHECK(str(stored.at("in_app_purchase").at("product_id")) == "gold");
    CHECK(str(stored.at("validation_state")) == "validated");
  }
}

TEST_CASE("Xcode StoreKit test receipts only for an app that opts in, as environment xcode",
          "[hostile][store_a][xcode]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "com.example.naturelab.backyardbirds.example");
  auto receipt = receipt_vector("unified", "xcode-storekit-with-transaction");
  auto body = json::serialize(json::object{{"receipt", receipt}});
  auto refused = post(s, receipts, body, app, 402);
  CHECK(code_of(refused) == "untrusted_certificate");
  CHECK(str(refused.at("receipt").at("environment")) == "xcode");

  auto shown = s.ctl({"app", "show", app.name});
  REQUIRE(shown.code == 0);
  CHECK(shown.json.at("accept_storekit_test_receipts") == false);
  auto updated = s.ctl({"app", "update", app.name, "--accept-storekit-test-receipts"});
  INFO(updated.err);
  REQUIRE(updated.code == 0);
  CHECK(updated.json.at("accept_storekit_test_receipts") == true);

  auto accepted = post(s, receipts, body, app, 200);
  CHECK(str(accepted.at("environment")) == "xcode");
  CHECK(str(accepted.at("validation_state")) == "validated");
  CHECK(str(accepted.at("id")) == str(refused.at("receipt").at("id")));
  CHECK(accepted.at("in_app_purchases").as_array().size() == 1);

  auto off = s.ctl({"app", "update", app.name, "--accept-storekit-test-receipts=false"});
  REQUIRE(off.code == 0);
  CHECK(s.ctl({"app", "update", app.name, "--accept-storekit-test-receipts=maybe"}).code != 0);
}

TEST_CASE("transfer policies: transfer records the move, keep refuses it, reject_after=N",
          "[hostile][transfer]") {
  auto& s = the_suite();
  auto package = unique_package("transfer");
  auto app = create_store_b_app(s, package, test_licence_key());
  auto upload = [&](const std::string& token, const std::string& user, long expect) {
    auto data = purchase_data_json(package, "gold", token);
    return post(s, orders,
                store_b_body(data, sign_purchase(data), "\"user_identifier\":\"" + user + "\""),
                app, expect);
  };
  auto set_policy = [&](const std::string& policy) {
    auto r = s.ctl({"app", "update", app.name, "--transfer-policy=" + policy});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(str(r.json.at("transfer_policy")) == policy);
  };
  auto token = unique("tok");
  register_purchase(s, package, "gold", token, "product");

  // Default: transfer, visible in the resource.
  upload(token, "alice", 200);
  auto moved = upload(token, "bob", 200);
  CHECK(str(moved.at("user_identifier")) == "bob");
  CHECK(moved.at("previous_user_identifiers") == json::parse(R"(["alice"])"));

  set_policy("keep");
  auto kept = upload(token, "carol", 409);
  CHECK(code_of(kept) == "bound_to_other_user");
  CHECK(str(kept.at("errors").at(0).at("field")) == "user_identifier");
  auto stored = get(s, std::string(orders) + "/" + str(moved.at("id")), app);
  CHECK(str(stored.at("user_identifier")) == "bob");
  upload(token, "bob", 200); // its owner may upload it again

  set_policy("reject_after=2"); // moved once already
  auto again = upload(token, "carol", 200);
  CHECK(again.at("previous_user_identifiers") == json::parse(R"(["alice","bob"])"));
  CHECK(code_of(upload(token, "dave", 409)) == "bound_to_other_user");

  CHECK(s.ctl({"app", "update", app.name, "--transfer-policy=sometimes"}).code != 0);
  auto typo = s.ctl({"app", "update", app.name, "--transfer-polcy=keep"});
  CHECK(typo.code == 2);
  CHECK(typo.err.find("transfer-polcy") != std::string::npos);
}

TEST_CASE("Store A receipts follow the app's transfer policy", "[hostile][transfer][store_a]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "com.revenuecat.sampleapp", "shared-secret-1");
  auto receipt = receipt_vector("unified", "revenuecat-sample1-sandbox-ios");
  auto body = [&](const std::string& user) {
    return json::serialize(json::object{{"receipt", receipt}, {"user_identifier", user}});
  };
  REQUIRE(s.ctl({"app", "update", app.name, "--transfer-policy=keep"}).code == 0);
  auto first = post(s, receipts, body("alice"), app, 200);
  auto refused = post(s, receipts, body("bob"), app, 409);
  CHECK(code_of(refused) == "bound_to_other_user");
  auto stored = get(s, std::string(receipts) + "/" + str(first.at("id")), app);
  CHECK(str(stored.at("user_identifier")) == "alice");
  CHECK(stored.at("previous_user_identifiers").as_array().empty());
}

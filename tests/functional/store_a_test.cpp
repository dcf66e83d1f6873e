// Store A through the real binary: unified and transaction receipts, real and
// generated, verified locally and with verifyReceipt (the emulator), on the
// database under test.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "model/encoding.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* receipts = "/client/store_a/receipts";

// verifyReceipt calls the emulator saw for this very receipt (the retry
// scheduler keeps revalidating other tests' pending receipts meanwhile, so the
// global counters would not do).
// The verifyReceipt calls for `receipt` the emulator logged after request `since`
// (its log keeps the last 200 requests: a count of all would drop old ones).
int calls(suite& s, const std::string& receipt, const char* endpoint, std::uint64_t since = 0) {
  auto log = s.emulator.control("GET", "/control/requests");
  std::string path
    = std::string(endpoint) == "sandbox" ? "/sandbox/verifyReceipt" : "/verifyReceipt";
  int n = 0;
  for (auto& r : log.as_array())
    if (r.at("seq").to_number<std::uint64_t>() > since && str(r.at("store")) == "store_a"
        && str(r.at("path")) == path && str(r.at("body")).find(receipt) != std::string::npos)
      ++n;
  return n;
}

// The last request the emulator logged (0: none yet).
std::uint64_t last_request(suite& s) {
  auto log = s.emulator.control("GET", "/control/requests");
  const auto& all = log.as_array();
  return all.empty() ? 0 : all.back().at("seq").to_number<std::uint64_t>();
}

std::string body(const std::string& receipt, const std::string& extra = "") {
  auto b = json::serialize(json::object{{"receipt", receipt}});
  if (!extra.empty())
    b.insert(b.size() - 1, "," + extra);
  return b;
}

json::value upload(suite& s, const test_app& app, const std::string& receipt, long expect,
                   const std::string& extra = "") {
  auto r = s.service.post(receipts, body(receipt, extra), app.token);
  INFO(r.body);
  REQUIRE(r.status == expect);
  return r.json();
}

std::string code_of(const json::value& v) {
  return str(v.at("errors").at(0).at("code"));
}

std::string generated_unified(suite& s, const std::string& bundle, const char* type,
                              const test_support::test_pki& pki, int purchases = 2) {
  test_support::unified_receipt_params p;
  p.bundle_id = bundle;
  p.receipt_type = type;
  for (int i = 0; i < purchases; ++i)
    p.in_app.push_back(test_support::purchase("com.example.pro." + std::to_string(i),
                                              unique("100000"), test_support::utc(2024, 5, 1)));
  return model::base64_encode(
    test_support::make_unified_receipt(p, test_support::apple_like_signer(pki)));
}

} // namespace

TEST_CASE("a sandbox unified receipt is checked at the sandbox", "[store_a][200]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "com.revenuecat.sampleapp", "shared-secret-1");
  auto receipt = receipt_vector("unified", "revenuecat-sample1-sandbox-ios");
  auto before = last_request(s);
  auto r = upload(s, app, receipt, 200,
                  R"("country_code":"de","identifier_for_vendor":null,"user_identifier":"u7")");
  // The receipt says sandbox, so sandbox is asked first: no flip needed.
  CHECK(calls(s, receipt, "sandbox", before) == 1);
  CHECK(calls(s, receipt, "production", before) == 0);
  CHECK(str(r.at("style")) == "unified");
  CHECK(str(r.at("bundle_id")) == "com.revenuecat.sampleapp");
  CHECK(str(r.at("environment")) == "sandbox");
  CHECK(str(r.at("app_family_id")) == app.id);
  CHECK(str(r.at("validation_state")) == "validated");
  CHECK(r.at("is_fraud") == false);
  CHECK(str(r.at("country_code")) == "DE");
  CHECK(str(r.at("user_identifier")) == "u7");
  auto& purchases = r.at("in_app_purchases").as_array();
  REQUIRE(purchases.size() == 9);
  CHECK(str(purchases[0].at("product_id")) == "com.revenuecat.monthly_4.99.1_week_intro");
  CHECK(purchases[0].at("purchase_date").at("utc").as_string().ends_with("UTC"));
  // Enriched from verifyReceipt's answer where the receipt says nothing.
  CHECK(purchases[0].at("is_trial_period").is_bool());
}

TEST_CASE("21007 flip: a receipt that calls itself production but is a sandbox one",
          "[store_a][200][flip]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "com.example.flip");
  auto receipt = generated_unified(s, "com.example.flip", "Production", s.pki);
  s.emulator.control("POST", "/control/store_a/receipts",
                     json::object{{"receipt_data", receipt}, {"belongs_to", "Sandbox"}});
  auto r = upload(s, app, receipt, 200);
  CHECK(calls(s, receipt, "production") == 1);  // 21007 there …
  CHECK(calls(s, receipt, "sandbox") == 1);     // … then once at the sandbox
  CHECK(str(r.at("environment")) == "sandbox"); // the store's answer wins
}

TEST_CASE("the flip happens once, not in a loop", "[store_a][flip]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "com.example.flip-loop");
  auto receipt = generated_unified(s, "com.example.flip-loop", "Production", s.pki);
  s.emulator.control("POST", "/control/store_a/receipts",
                     json::object{{"receipt_data", receipt}, {"status", 21007}});
  auto r = s.service.post(receipts, body(receipt), app.token);
  INFO(r.body);
  CHECK(r.status == 206); // still 21007 at the sandbox: ambiguous, retried later
  CHECK(calls(s, receipt, "sandbox") >= 1);
}

TEST_CASE("a production unified receipt asks production only", "[store_a][200]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "org.getpure.pure-iphone");
  auto receipt = receipt_vector("unified", "tpinappreceipt-production-ios");
  auto before = last_request(s);
  auto r = upload(s, app, receipt, 200);
  CHECK(calls(s, receipt, "production", before) == 1);
  CHECK(calls(s, receipt, "sandbox", before) == 0);
  CHECK(str(r.at("environment")) == "production");
  CHECK(r.at("in_app_purchases").as_array().size() == 4);
}

TEST_CASE("transaction receipts: real sandbox and generated production", "[store_a][200]") {
  auto& s = the_suite();
  SECTION("the real iOS 6 sandbox receipt") {
    auto app = create_store_a_app(s, "com.mbaasy.ios.demo");
    auto r
      = upload(s, app, receipt_vector("transaction", "mbaasy-yearly-subscription-sandbox-2015"),
               200, R"("identifier_for_vendor":"4E5E1A3B-F01A-4855-820F-F349F1242148")");
    CHECK(str(r.at("style")) == "transaction");
    CHECK(str(r.at("environment")) == "sandbox");
    auto& p = r.at("in_app_purchases").as_array();
    REQUIRE(p.size() == 1);
    CHECK(str(p[0].at("product_id")) == "yearly");
    CHECK(str(p[0].at("transaction_id")) == "1000000181298734");
    CHECK(p[0].at("expires_date").at("ms") == 1448346881000);
    CHECK(str(r.at("identifier_for_vendor")) == "4E5E1A3B-F01A-4855-820F-F349F1242148");
  }
  SECTION("a generated production receipt under the configured test CA") {
    auto app = create_store_a_app(s, "com.example.tx");
    // Only the leaf travels in a transaction receipt: the suite configured the
    // test intermediate, as an operator configures Apple's.
    test_support::transaction_receipt_params p;
    p.bundle_id = "com.example.tx";
    p.purchase_date = test_support::utc(2024, 3, 1);
    p.environment.reset();
    p.blob_version = 3;
    auto receipt = model::base64_encode(test_support::make_transaction_receipt(p, s.pki.leaf));
    auto r = upload(s, app, receipt, 200);
    CHECK(str(r.at("environment")) == "production");
    CHECK(calls(s, receipt, "production") == 1);
  }
}

// Xcode StoreKit receipts (per-app opt-in, environment xcode): reupload_test.cpp.

TEST_CASE("402: every fraud reason, stored", "[store_a][402]") {
  auto& s = the_suite();
  auto expect = [&](const test_app& app, const std::string& receipt, const std::string& reason,
                    const std::string& extra = "") {
    auto j = upload(s, app, receipt, 402, extra);
    CHECK(code_of(j) == reason);
    auto& rec = j.at("receipt");
    CHECK(rec.at("is_fraud") == true);
    CHECK(str(rec.at("fraud_reason")) == reason);
    auto got = s.service.get(std::string(receipts) + "/" + str(rec.at("id")), app.token);
    CHECK(got.status == 200);
    CHECK(str(got.json().at("fraud_reason")) == reason);
    return j;
  };
  auto real = receipt_vector("unified", "revenuecat-sample1-sandbox-ios");
  SECTION("invalid_signature: one byte of the signature flipped") {
    auto app = create_store_a_app(s, "com.revenuecat.sampleapp");
    auto der = *model::base64_decode(real);
    der[der.size() - 10] ^= 0x01;
    expect(app, model::base64_encode(der), "invalid_signature");
  }
  SECTION("untrusted_certificate: signed under a root nobody configured") {
    auto app = create_store_a_app(s, "com.example.rogue");
    expect(app, generated_unified(s, "com.example.rogue", "Production", s.rogue),
           "untrusted_certificate");
  }
  SECTION("malformed_receipt: base64 of bytes that are no receipt") {
    auto app = create_store_a_app(s, "com.example.junk");
    auto j = expect(app, model::base64_encode("definitely not a receipt"), "malformed_receipt");
    CHECK(j.at("receipt").at("bundle_id").is_null());
  }
  SECTION("bundle_id_mismatch: a genuine receipt of another app") {
    auto app = create_store_a_app(s, "com.example.not-revenuecat");
    auto j = expect(app, real, "bundle_id_mismatch");
    CHECK(str(j.at("receipt").at("bundle_id")) == "com.revenuecat.sampleapp");
  }
  SECTION("device_hash_mismatch, and the right device passes") {
    auto app = create_store_a_app(s, "dev.bonzer.weeka.app");
    auto g5 = receipt_vector("unified", "tpinappreceipt-sandbox-g5-ios");
    expect(app, g5, "device_hash_mismatch",
           R"("identifier_for_vendor":"00000000-0000-0000-0000-000000000000")");
    auto ok = upload(s, app, g5, 200,
                     R"("identifier_for_vendor":"956328D9-CC6A-47F4-BE40-6953FB0AB6C7")");
    CHECK(str(ok.at("validation_state")) == "validated");
    // Once validated, the same receipt from the wrong device is refused but the
    // genuine record is not turned into fraud.
    auto again = upload(s, app, g5, 402,
                        R"("identifier_for_vendor":"00000000-0000-0000-0000-000000000000")");
    CHECK(code_of(again) == "device_hash_mismatch");
    CHECK(str(again.at("receipt").at("id")) == str(ok.at("id")));
    CHECK(again.at("receipt").at("is_fraud") == false);
  }
  SECTION("store_rejected: verifyReceipt says 21003") {
    auto app = create_store_a_app(s, "com.example.rejected");
    auto receipt = generated_unified(s, "com.example.rejected", "Production", s.pki);
    s.emulator.control("POST", "/control/store_a/receipts",
                       json::object{{"receipt_data", receipt}, {"status", 21003}});
    expect(app, receipt, "store_rejected");
  }
}

TEST_CASE("206 while verifyReceipt is unreachable, validated after it returns", "[store_a][206]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "com.example.later");
  auto receipt = generated_unified(s, "com.example.later", "Production", s.pki);
  std::string id;
  for (auto mode : {"down", "error", "html"}) {
    s.emulator.set_mode("store_a", mode);
    auto r = upload(s, app, receipt, 206);
    CHECK(str(r.at("validation_state")) == "pending");
    if (id.empty())
      id = str(r.at("id"));
    CHECK(str(r.at("id")) == id);
  }
  s.emulator.set_mode("store_a", "up");
  bool validated = eventually([&] {
    auto r = s.service.get(std::string(receipts) + "/" + id, app.token);
    return r.status == 200 && str(r.json().at("validation_state")) == "validated";
  });
  CHECK(validated);
}

TEST_CASE("ambiguous verifyReceipt answers are retried, never fraud", "[store_a][206]") {
  auto& s = the_suite();
  for (auto status : {21002, 21005, 21009, 21100, 21199}) {
    auto app = create_store_a_app(s, unique("com.example.amb"));
    auto receipt = generated_unified(s, app.bundle_id, "Production", s.pki);
    s.emulator.control("POST", "/control/store_a/receipts",
                       json::object{{"receipt_data", receipt}, {"status", status}});
    INFO("status " << status);
    auto r = upload(s, app, receipt, 206);
    CHECK(r.at("is_fraud") == false);
  }
  SECTION("is-retryable marks a retry") {
    auto app = create_store_a_app(s, unique("com.example.retryable"));
    auto receipt = generated_unified(s, app.bundle_id, "Production", s.pki);
    s.emulator.control(
      "POST", "/control/store_a/receipts",
      json::object{{"receipt_data", receipt}, {"status", 21199}, {"is_retryable", true}});
    upload(s, app, receipt, 206);
  }
  SECTION("21006 (expired subscription) is still genuine") {
    auto app = create_store_a_app(s, unique("com.example.expired"));
    auto receipt = generated_unified(s, app.bundle_id, "Production", s.pki);
    s.emulator.control("POST", "/control/store_a/receipts",
                       json::object{{"receipt_data", receipt}, {"status", 21006}});
    upload(s, app, receipt, 200);
  }
}

TEST_CASE("the shared secret: a wrong one is the operator's problem (206), the right one 200",
          "[store_a][secret]") {
  auto& s = the_suite();
  auto bundle = unique("com.example.secret");
  s.emulator.control("POST", "/control/store_a/shared_secrets",
                     json::object{{"bundle_id", bundle}, {"password", "right"}});
  auto receipt = generated_unified(s, bundle, "Production", s.pki);
  auto wrong = create_store_a_app(s, bundle, "wrong");
  auto r = upload(s, wrong, receipt, 206);
  CHECK(r.at("is_fraud") == false);
  auto right = create_store_a_app(s, bundle, "right");
  upload(s, right, receipt, 200);
}

TEST_CASE("Store A 422: every field rule", "[store_a][422]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "com.example.rules");
  auto receipt = generated_unified(s, "com.example.rules", "Production", s.pki);
  auto expect_422 = [&](const std::string& b, const std::string& field, const std::string& code) {
    auto r = s.service.post(receipts, b, app.token);
    INFO(b.substr(0, 120) << " → " << r.body);
    REQUIRE(r.status == 422);
    auto j = r.json();
    bool found = false;
    for (auto& e : j.at("errors").as_array()) {
      auto f = e.as_object().contains("field") ? str(e.at("field")) : "";
      found = found || (f == field && str(e.at("code")) == code);
    }
    CHECK(found);
  };
  expect_422("{}", "receipt", "missing");
  expect_422(R"({"receipt":42})", "receipt", "wrong_type");
  expect_422(R"({"receipt":{"a":1}})", "receipt", "wrong_type");
  expect_422(R"({"receipt":"***not base64***"})", "receipt", "invalid_base64");
  expect_422(R"({"receipt":""})", "receipt", "blank");
  expect_422(body(receipt, R"("country_code":"DEU")"), "country_code", "invalid_country_code");
  expect_422(body(receipt, R"("country_code":"1a")"), "country_code", "invalid_country_code");
  expect_422(body(receipt, R"("country_code":49)"), "country_code", "wrong_type");
  expect_422(body(receipt, R"("metadata":"x")"), "metadata", "wrong_type");
  expect_422(body(receipt, R"("metadata":[])"), "metadata", "wrong_type");
  expect_422(body(receipt, R"("ip_address":"1.2.3")"), "ip_address", "invalid_ip_address");
  expect_422(body(receipt, R"("identifier_for_vendor":"nope")"), "identifier_for_vendor",
             "invalid_identifier_for_vendor");
  expect_422("[]", "", "not_an_object");
  expect_422("{", "", "invalid_json");
}

TEST_CASE("Store A re-upload and GET", "[store_a][idempotent][get]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "com.example.again");
  auto other = create_store_a_app(s, "com.example.again");
  auto receipt = generated_unified(s, "com.example.again", "Production", s.pki, 3);
  auto first = upload(s, app, receipt, 200, R"("metadata":{"n":1},"ip_address":null)");
  auto second = upload(s, app, receipt, 200, R"("metadata":{"n":2})");
  CHECK(str(second.at("id")) == str(first.at("id")));
  CHECK(second.at("metadata").at("n") == 2);
  CHECK(first.at("ip_address").is_null());
  CHECK(str(second.at("ip_address")) == "127.0.0.1");
  auto path = std::string(receipts) + "/" + str(first.at("id"));
  auto mine = s.service.get(path, app.token);
  REQUIRE(mine.status == 200);
  CHECK(mine.json().at("in_app_purchases").as_array().size() == 3);
  CHECK(s.service.get(path, other.token).status == 404);
  // The same receipt uploaded by another app is that app's own record.
  auto theirs = upload(s, other, receipt, 200);
  CHECK(str(theirs.at("id")) != str(first.at("id")));
}

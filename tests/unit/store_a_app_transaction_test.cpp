// StoreKit 2 app transactions (model/store_a/app_transaction.hpp), the pure
// rules: the upload's body, the payload, the device binding StoreKit documents
// (AppStore.deviceVerificationID), the record from the local verification, how
// Get App Transaction Info's answer lands, re-uploads; and the entitlement
// subjects on the original application version (model/entitlements/).
// Generated Apple-shaped EC chains (tests/support/crypto/test_jws.hpp).
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <string>

#include "model/entitlements/matcher.hpp"
#include "model/purchases/customer.hpp"
#include "model/store_a/app_transaction.hpp"
#include "model/store_a/trust.hpp"
#include "model/upload_request.hpp"
#include "tests/support/crypto/test_jws.hpp"

using namespace receiptd::model;
namespace sa = receiptd::model::store_a;
namespace ts = receiptd::test_support;
namespace ent = receiptd::model::entitlements;
namespace json = boost::json;

namespace {

const std::string bundle = "com.example.receiptd";
const unix_ms now = ts::utc(2024, 6, 2, 8);

const ts::test_pki& apple_pki() {
  static const auto pki = ts::make_jws_pki("receiptd app transaction test");
  return pki;
}
const ts::test_pki& stranger_pki() {
  static const auto pki = ts::make_jws_pki("receiptd app transaction stranger");
  return pki;
}

const sa::trust_anchors& anchors() {
  static const auto a = [] {
    auto loaded = sa::load_trust_anchors({{apple_pki().root.pem()}, {}, {}});
    REQUIRE(loaded);
    return *loaded;
  }();
  return *a;
}

app the_app() {
  app a;
  a.id = "8d7c2a61-3f0e-4b5a-9c1d-2e3f4a5b6c7d";
  a.bundle_id = bundle;
  return a;
}

std::string body_with(const std::string& jws, const json::object& extra = {}) {
  json::object o{{"signed_app_transaction", jws}};
  for (const auto& kv : extra)
    o[kv.key()] = kv.value();
  return json::serialize(o);
}

sa::app_transaction_record record_for(const std::string& jws, const json::object& extra = {}) {
  auto upload = parse_app_transaction_upload(body_with(jws, extra));
  REQUIRE(upload);
  auto v = sa::verify_app_transaction_jws(upload->signed_app_transaction, anchors());
  REQUIRE_FALSE(v.internal_error);
  return sa::make_record(*upload, the_app(), v, "203.0.113.9", now);
}

std::string signed_app_transaction(const ts::app_transaction_fields& f = {}) {
  return ts::make_storekit_jws(ts::app_transaction_payload_json(f), apple_pki());
}

store_verdict confirmed() {
  store_verdict v;
  v.outcome = store_outcome::confirmed;
  v.detail = "200";
  return v;
}

} // namespace

TEST_CASE("an app transaction upload's body", "[app_transaction]") {
  const auto jws = signed_app_transaction();
  auto ok = parse_app_transaction_upload(body_with(
    jws, {{"device_verification_nonce", "5F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F9"},
          {"user_identifier", "u-1"}}));
  REQUIRE(ok);
  CHECK(ok->signed_app_transaction == jws);
  CHECK(ok->device_verification_nonce == "5f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9");
  CHECK_FALSE(ok->device_verification_id);
  CHECK(ok->common.user_identifier == "u-1");

  auto bad = parse_app_transaction_upload(
    R"({"signed_app_transaction":"not a jws","device_verification_nonce":"nope",)"
    R"("device_verification_id":7})");
  REQUIRE_FALSE(bad);
  const auto& errors = bad.errors();
  REQUIRE(errors.size() == 3);
  CHECK(errors[0].field == "signed_app_transaction");
  CHECK(errors[0].code == "invalid_jws");
  CHECK(errors[1].field == "device_verification_nonce");
  CHECK(errors[1].code == "invalid_uuid");
  CHECK(errors[2].field == "device_verification_id");
  CHECK(errors[2].code == "wrong_type");

  auto missing = parse_app_transaction_upload("{}");
  REQUIRE_FALSE(missing);
  CHECK(missing.errors()[0].code == "missing");
}

TEST_CASE("an app transaction payload in Apple's names", "[app_transaction]") {
  ts::app_transaction_fields f;
  f.preorder_date = ts::utc(2021, 3, 1);
  auto t = sa::parse_app_transaction(ts::app_transaction_payload_json(f));
  REQUIRE(t);
  CHECK(t->app_transaction_id == "704289572311552238");
  CHECK(t->bundle_id == bundle);
  CHECK(t->env == environment::sandbox);
  CHECK(t->app_apple_id == 1234567890);
  CHECK(t->application_version == "3.1");
  CHECK(t->original_application_version == "1.4");
  CHECK(t->original_purchase_date == ts::utc(2021, 3, 4, 5, 6, 7));
  CHECK(t->preorder_date == ts::utc(2021, 3, 1));
  CHECK(t->receipt_creation_date == f.receipt_creation_date);
  CHECK(t->original_platform == "iOS");
  CHECK(t->device_verification_nonce == f.device_verification_nonce);

  // Closed where it matters: the bundle, the receipt type, the types.
  ts::app_transaction_fields wrong;
  wrong.receipt_type = "Staging";
  wrong.extra = {{"appAppleId", "123"}, {"originalPurchaseDate", -1}};
  auto refused = sa::parse_app_transaction(ts::app_transaction_payload_json(wrong));
  REQUIRE_FALSE(refused);
  CHECK(refused.errors().size() == 3);
  for (const auto& e : refused.errors()) {
    CHECK(e.field == "signed_app_transaction");
    CHECK(e.code == "malformed_receipt");
  }
  CHECK_FALSE(sa::parse_app_transaction(R"({"receiptType":"Production"})"));
  CHECK_FALSE(sa::parse_app_transaction("[]"));
}

TEST_CASE("the device binding is StoreKit's SHA-384 of nonce and device id",
          "[app_transaction]") {
  ts::app_transaction_fields f;
  auto t = sa::parse_app_transaction(ts::app_transaction_payload_json(f));
  REQUIRE(t);
  using dv = sa::device_verification;
  const std::string upper_id = "6A0F0B91-7C3E-4D25-9B8A-1F2E3D4C5B6A";
  CHECK(sa::check_device(*t, std::nullopt, std::nullopt) == dv::not_checked);
  CHECK(sa::check_device(*t, f.device_verification_nonce, std::nullopt) == dv::nonce_matched);
  CHECK(sa::check_device(*t, std::nullopt, f.device_verification_id) == dv::verified);
  CHECK(sa::check_device(*t, std::nullopt, upper_id) == dv::verified); // case does not matter
  CHECK(sa::check_device(*t, f.device_verification_nonce, f.device_verification_id)
        == dv::verified);
  // Another device, another nonce, or nothing signed to compare with.
  CHECK(sa::check_device(*t, std::nullopt, "00000000-0000-4000-8000-000000000000")
        == dv::mismatch);
  CHECK(sa::check_device(*t, "00000000-0000-4000-8000-000000000000", f.device_verification_id)
        == dv::mismatch);
  auto unsigned_device = *t;
  unsigned_device.device_verification.reset();
  CHECK(sa::check_device(unsigned_device, std::nullopt, f.device_verification_id)
        == dv::mismatch);
  CHECK(sa::to_string(dv::nonce_matched) == "nonce_matched");
  CHECK(sa::parse_device_verification("verified") == dv::verified);
  CHECK_FALSE(sa::parse_device_verification("maybe"));
}

TEST_CASE("an app transaction's record from its local verification", "[app_transaction]") {
  SECTION("genuine: pending for Get App Transaction Info, keyed by appTransactionId") {
    auto r = record_for(signed_app_transaction(),
                        {{"device_verification_id", "6a0f0b91-7c3e-4d25-9b8a-1f2e3d4c5b6a"}});
    CHECK(r.state == validation_state::pending);
    CHECK(r.fraud == fraud_reason::none);
    CHECK(r.app_transaction_key == "704289572311552238");
    CHECK(r.env == environment::sandbox);
    CHECK(r.device == sa::device_verification::verified);
    CHECK(r.said_at == ts::app_transaction_fields{}.receipt_creation_date);
  }
  SECTION("another device's: device_hash_mismatch") {
    auto r = record_for(signed_app_transaction(),
                        {{"device_verification_nonce", "00000000-0000-4000-8000-000000000000"}});
    CHECK(r.state == validation_state::rejected);
    CHECK(r.fraud == fraud_reason::device_hash_mismatch);
    CHECK(r.device == sa::device_verification::mismatch);
  }
  SECTION("another app's: bundle_id_mismatch") {
    ts::app_transaction_fields f;
    f.bundle_id = "com.example.other";
    auto r = record_for(signed_app_transaction(f));
    CHECK(r.fraud == fraud_reason::bundle_id_mismatch);
  }
  SECTION("a forged signature or chain: refused, keyed by its hash, nothing claimed") {
    auto forged = ts::make_storekit_jws(ts::app_transaction_payload_json({}), stranger_pki());
    auto r = record_for(forged);
    CHECK(r.fraud == fraud_reason::untrusted_certificate);
    CHECK(r.app_transaction_key.rfind("sha256:", 0) == 0);
    CHECK(r.transaction.bundle_id.empty());
    auto jws = signed_app_transaction();
    jws[jws.size() - 5] = jws[jws.size() - 5] == 'A' ? 'B' : 'A';
    CHECK(record_for(jws).fraud == fraud_reason::invalid_signature);
  }
  SECTION("the chain is checked at receiptCreationDate, not at a signedDate it lacks") {
    ts::app_transaction_fields f;
    f.receipt_creation_date = ts::utc(2050, 1, 1); // after the test chain expired
    CHECK(record_for(signed_app_transaction(f)).fraud == fraud_reason::untrusted_certificate);
  }
  SECTION("without appTransactionId: validated on its signature") {
    ts::app_transaction_fields f;
    f.app_transaction_id.reset();
    auto r = record_for(signed_app_transaction(f));
    CHECK(r.state == validation_state::validated);
    CHECK(r.app_transaction_key.rfind("sha256:", 0) == 0);
  }
}

TEST_CASE("Get App Transaction Info's answer lands on the record", "[app_transaction]") {
  auto r = record_for(signed_app_transaction(),
                      {{"device_verification_id", "6a0f0b91-7c3e-4d25-9b8a-1f2e3d4c5b6a"}});
  SECTION("confirmed: validated with the answer's fields, the device's binding kept") {
    ts::app_transaction_fields answer;
    answer.application_version = "3.2";
    answer.receipt_creation_date += 60'000;
    answer.extra = {{"deviceVerification", nullptr}, {"deviceVerificationNonce", nullptr}};
    auto why = sa::apply_server_answer(r, confirmed(), signed_app_transaction(answer), anchors());
    CHECK(why.empty());
    CHECK(r.state == validation_state::validated);
    CHECK(r.transaction.application_version == "3.2");
    CHECK(r.transaction.device_verification_nonce == answer.device_verification_nonce);
    CHECK(r.device == sa::device_verification::verified);
  }
  SECTION("another appTransactionId: store_rejected") {
    ts::app_transaction_fields answer;
    answer.app_transaction_id = "1";
    sa::apply_server_answer(r, confirmed(), signed_app_transaction(answer), anchors());
    CHECK(r.fraud == fraud_reason::store_rejected);
  }
  SECTION("an answer that does not verify: still pending, and said why") {
    auto forged = ts::make_storekit_jws(ts::app_transaction_payload_json({}), stranger_pki());
    auto why = sa::apply_server_answer(r, confirmed(), forged, anchors());
    CHECK(r.state == validation_state::pending);
    CHECK_THAT(why, Catch::Contains("untrusted_certificate"));
  }
  SECTION("unreachable: pending") {
    sa::apply_server_answer(r, unreachable_verdict("503"), "", anchors());
    CHECK(r.state == validation_state::pending);
  }
}

TEST_CASE("an app transaction re-upload", "[app_transaction]") {
  auto first = record_for(signed_app_transaction(), {{"user_identifier", "u-1"}});
  first.id = "11111111-1111-4111-8111-111111111111";
  first.state = validation_state::validated;
  auto again = record_for(signed_app_transaction());
  auto merged = sa::merge_reupload(first, again);
  CHECK(merged.id == first.id);
  CHECK(merged.state == validation_state::validated); // not downgraded by a pending upload
  CHECK(merged.echo.user_identifier == "u-1");

  auto other_device = record_for(
    signed_app_transaction(), {{"device_verification_nonce", "00000000-0000-4000-8000-000000000000"}});
  auto kept = sa::merge_reupload(first, other_device);
  CHECK(kept.state == validation_state::validated);
  CHECK(kept.fraud == fraud_reason::none);
}

TEST_CASE("versions compare numerically, component by component", "[entitlements]") {
  CHECK(ent::version_before("1.9", "2.0") == true);
  CHECK(ent::version_before("1.10", "1.9") == false);
  CHECK(ent::version_before("1.9", "1.10") == true);
  CHECK(ent::version_before("2", "2.0") == false);
  CHECK(ent::version_before("2.0.0", "2") == false);
  CHECK(ent::version_before("1.99.7", "2") == true);
  CHECK(ent::version_before("2.0b3", "2.0.1") == true);
  CHECK(ent::version_before("42", "100") == true); // iOS build numbers
  CHECK_FALSE(ent::version_before("", "2.0"));
  CHECK_FALSE(ent::version_before("beta", "2.0"));

  CHECK(ent::check_version_bound("2.0"));
  CHECK(ent::check_version_bound("1.10.3.4"));
  for (const char* bad : {"", "2.", ".2", "2..0", "v2", "1.2.3.4.5", "1234567890", "^2"}) {
    INFO(bad);
    auto refused = ent::check_version_bound(bad);
    REQUIRE_FALSE(refused);
    CHECK(refused.err().fields()[0].code == "invalid_version");
  }
}

TEST_CASE("an app transaction re-upload naming another user: the app's transfer policy",
          "[app_transaction]") {
  auto first = record_for(signed_app_transaction(), {{"user_identifier", "u-1"}});
  first.id = "11111111-1111-4111-8111-111111111111";
  first.state = validation_state::validated;
  auto again = record_for(signed_app_transaction(), {{"user_identifier", "u-2"}});

  SECTION("transfer: it moves, the previous owner recorded") {
    again.terms.transfers = {transfer_policy::kind::transfer};
    auto moved = sa::merge_reupload(first, again);
    CHECK_FALSE(moved.terms.refused);
    CHECK(moved.echo.user_identifier == "u-2");
    CHECK(moved.previous_users == previous_owners{"u-1"});
  }
  SECTION("keep: refused with bound_to_other_user, the record unchanged") {
    again.terms.transfers = {transfer_policy::kind::keep};
    auto kept = sa::merge_reupload(first, again);
    REQUIRE(kept.terms.refused);
    CHECK(kept.terms.refused->code == "bound_to_other_user");
    CHECK(kept.echo.user_identifier == "u-1");
  }
  SECTION("the same user, or none named: no transfer") {
    again.terms.transfers = {transfer_policy::kind::keep};
    again.echo.user_identifier = "u-1";
    CHECK_FALSE(sa::merge_reupload(first, again).terms.refused);
    again.echo.user_identifier.reset();
    CHECK(sa::merge_reupload(first, again).echo.user_identifier == "u-1");
  }
}

TEST_CASE("a customer's answer with the original versions of their app transactions",
          "[app_transaction][entitlements]") {
  auto r = ent::with_offering({}, "pro", "paid_app",
                              ent::pattern_subject::original_application_version_before, {"2.0"});
  REQUIRE(r);
  auto m = ent::matcher::compile(*r);
  REQUIRE(m);
  auto rules = purchases::rules_of(*m);
  CHECK(rules->matches_versions());
  CHECK(rules->version_tags("1.10") == std::vector<std::string>{"pro/paid_app"});
  CHECK(rules->version_tags("2.1").empty());
  CHECK_FALSE(purchases::no_entitlements()->matches_versions());

  auto pro = [&](const std::vector<std::string>& versions) {
    return purchases::customer_json("u-1", environment::production, {}, {}, *rules, now, versions)
      .at("customer")
      .at("entitlements")
      .at("pro")
      .as_object();
  };
  auto granted = pro({"2.3", "1.4"});
  CHECK(granted.at("is_active") == true);
  CHECK(granted.at("ownership") == "purchased");
  CHECK(granted.at("offering") == "paid_app");
  CHECK(granted.at("original_application_version") == "1.4");
  CHECK(granted.at("expires_at").is_null());
  auto not_granted = pro({"2.3"});
  CHECK(not_granted.at("is_active") == false);
  CHECK(not_granted.if_contains("original_application_version") == nullptr);
  CHECK(pro({}).at("is_active") == false);
}

TEST_CASE("entitlements granted by the original application version", "[entitlements]") {
  auto r = ent::with_offering({}, "premium", "early_buyers",
                              ent::pattern_subject::original_application_version_before, {"2.0"});
  REQUIRE(r);
  r = ent::with_offering(*r, "premium", "monthly", ent::pattern_subject::product_id,
                         {"^premium\\.monthly$"});
  REQUIRE(r);
  r = ent::with_offering(*r, "legacy", "one_x", ent::pattern_subject::original_application_version,
                         {"^1\\."});
  REQUIRE(r);
  CHECK(ent::to_json(*r)
        == R"({"legacy":{"one_x":{"original_application_version":["^1\\."]}},)"
           R"("premium":{"early_buyers":{"original_application_version_before":["2.0"]},)"
           R"("monthly":{"product_id":["^premium\\.monthly$"]}}})");
  auto back = ent::parse_rules(ent::to_json(*r));
  REQUIRE(back);
  CHECK(*back == *r);

  auto m = ent::matcher::compile(*r);
  REQUIRE(m);
  auto tags = [&](ent::pattern_subject s, std::string_view v) {
    std::vector<std::string> out;
    for (const auto& x : (*m)->matches(s, v))
      out.push_back(x.tag());
    return out;
  };
  using subject = ent::pattern_subject;
  CHECK(tags(subject::original_application_version_before, "1.9")
        == std::vector<std::string>{"premium/early_buyers"});
  CHECK(tags(subject::original_application_version_before, "2.0").empty());
  CHECK(tags(subject::original_application_version, "1.9")
        == std::vector<std::string>{"legacy/one_x"});
  CHECK((*m)->tags_for_product("premium.monthly") == std::vector<std::string>{"premium/monthly"});
  // A version bound is no product pattern, and the other way round.
  CHECK((*m)->tags_for_product("1.9").empty());

  // A row written with its subjects in another order reads as the rules it
  // writes back (patterns grouped by subject).
  auto hand = ent::parse_rules(R"({"p":{"m":{"original_application_version":["^1"],)"
                               R"("product_id":["^p$"]}}})");
  REQUIRE(hand);
  CHECK(hand->entitlements[0].offerings[0].patterns[0].subject == subject::product_id);
  CHECK(*ent::parse_rules(ent::to_json(*hand)) == *hand);

  auto bad = ent::with_offering({}, "premium", "early", subject::original_application_version_before,
                                {"before 2"});
  REQUIRE_FALSE(bad);
}

TEST_CASE("Get App Transaction Info: its URL and its answers", "[app_transaction]") {
  CHECK(sa::app_transaction_info_url("https://api.storekit.apple.com/", "7042 89/1")
        == "https://api.storekit.apple.com/inApps/v1/transactions/appTransactions/7042%2089%2F1");
  const unix_ms at = ts::utc(2024, 6, 1);
  auto ok = sa::classify_app_transaction_info(200, R"({"signedAppTransactionInfo":"a.b.c"})", "",
                                              "", at);
  CHECK(ok.verdict.outcome == store_outcome::confirmed);
  CHECK(ok.signed_app_transaction_info == "a.b.c");
  // Not there: asked at the other host once, then Apple's definitive answer.
  for (auto body : {R"({"errorCode":4040019,"errorMessage":"No app transaction"})",
                    R"({"errorCode":4040010,"errorMessage":"Transaction id not found."})"}) {
    auto missing = sa::classify_app_transaction_info(404, body, "", "", at);
    CHECK(missing.verdict.outcome == store_outcome::rejected);
    CHECK(missing.transaction_not_found);
  }
  // Anything else is no verdict on the proof.
  CHECK(sa::classify_app_transaction_info(200, R"({"signedTransactionInfo":"a.b.c"})", "", "", at)
          .verdict.outcome
        == store_outcome::unreachable);
  auto limited = sa::classify_app_transaction_info(429, R"({"errorCode":4290000})", "", "3", at);
  CHECK(limited.verdict.outcome == store_outcome::unreachable);
  CHECK(limited.verdict.retry_not_before == at + 3000);
  CHECK(sa::classify_app_transaction_info(0, "", "connection refused", "", at).verdict.outcome
        == store_outcome::unreachable);
  auto refused = sa::classify_app_transaction_info(401, "", "", "", at);
  CHECK(refused.verdict.operator_problem);
  CHECK(sa::classify_app_transaction_info(404, R"({"errorCode":4040001})", "", "", at)
          .verdict.outcome
        == store_outcome::unreachable);
}

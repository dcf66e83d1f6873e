// StoreKit 2 transactions, the pure model rules: an upload's body,
// its record from the local JWS verification, how the App Store Server API's
// answer lands on it (and on a unified receipt confirmed that way), the
// resource's JSON and the re-upload rules. Generated Apple-shaped EC chains
// (tests/support/crypto/test_jws.hpp), loaded as trust roots the way
// production loads them.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <string>
#include <vector>

#include "model/encoding.hpp"
#include "model/resource_json.hpp"
#include "model/store_a/history.hpp"
#include "model/store_a/receipt_record.hpp"
#include "model/store_a/transaction_record.hpp"
#include "model/store_a/trust.hpp"
#include "model/upload_request.hpp"
#include "tests/support/crypto/test_jws.hpp"

using namespace receiptd::model;
namespace sa = receiptd::model::store_a;
namespace ts = receiptd::test_support;
namespace json = boost::json;

namespace {

const std::string bundle = "com.example.receiptd";
const std::string peer = "203.0.113.9";
const unix_ms now = ts::utc(2024, 6, 2, 8);

// One PKI per test binary (EC key generation is cheap, but not free).
const ts::test_pki& apple_pki() {
  static const auto pki = ts::make_jws_pki("receiptd transaction record test");
  return pki;
}
const ts::test_pki& stranger_pki() {
  static const auto pki = ts::make_jws_pki("receiptd stranger");
  return pki;
}

std::shared_ptr<const sa::trust_anchors> load(const sa::trust_config& cfg) {
  auto a = sa::load_trust_anchors(cfg);
  INFO((a ? std::string() : a.err().message()));
  REQUIRE(a);
  return *a;
}

const sa::trust_anchors& anchors() {
  static const auto a = load({{apple_pki().root.pem()}, {}, {}});
  return *a;
}

// Xcode signs a StoreKit 2 transaction with one self-signed certificate of its
// own, which an operator configures as a StoreKit test (sandbox) root.
const ts::test_cert& xcode_cert() {
  static const auto cert = [] {
    ts::cert_options o;
    o.common_name = "StoreKit Testing in Xcode";
    o.key_algorithm = "EC";
    o.is_ca = true;
    return ts::make_cert(o);
  }();
  return cert;
}
const sa::trust_anchors& anchors_with_xcode() {
  static const auto a = load({{apple_pki().root.pem()}, {}, {xcode_cert().pem()}});
  return *a;
}

ts::transaction_fields fields() {
  ts::transaction_fields t;
  t.transaction_id = "2000000000000042";
  t.original_transaction_id = "2000000000000001";
  t.bundle_id = bundle;
  t.product_id = "com.example.receiptd.monthly";
  t.expires_date = ts::utc(2024, 7, 1, 12);
  t.app_account_token = "7e3fb20b-4cdb-47cc-936d-99d65f608138";
  t.environment = "Sandbox";
  return t;
}

std::string jws_of(const ts::transaction_fields& t, const ts::test_pki& pki = apple_pki()) {
  return ts::make_storekit_jws(ts::transaction_payload_json(t), pki);
}

std::string xcode_jws(const ts::transaction_fields& t) {
  return ts::make_storekit_jws(ts::transaction_payload_json(t), {xcode_cert().der()},
                               xcode_cert().key());
}

app the_app(bool accept_xcode = false) {
  app a;
  a.id = "app-1";
  a.bundle_id = bundle;
  a.accept_storekit_test_receipts = accept_xcode;
  return a;
}

store_a_transaction_upload upload_of(const std::string& jws) {
  store_a_transaction_upload u;
  u.signed_transaction = jws;
  u.common.user_identifier = "alice";
  return u;
}

// The record of an upload of `jws`, through the same two steps as the validator.
transaction_record record_of(const std::string& jws, const app& a = the_app(),
                             const sa::trust_anchors& with = anchors()) {
  auto v = sa::verify_jws(jws, with);
  REQUIRE_FALSE(v.internal_error);
  return sa::make_record(upload_of(jws), a, v, peer, now);
}

// A record the Server API has still to confirm.
transaction_record pending_record(const ts::transaction_fields& t = fields()) {
  auto r = record_of(jws_of(t));
  REQUIRE(r.state == validation_state::pending);
  return r;
}

store_verdict verdict_of(store_outcome outcome, std::string detail = "HTTP 200",
                         std::optional<environment> env = std::nullopt) {
  store_verdict v;
  v.outcome = outcome;
  v.detail = std::move(detail);
  v.env = env;
  return v;
}

// Every transaction field of a record the JWS did not vouch for is empty.
void check_no_claims(const transaction_record& r) {
  const auto& t = r.transaction;
  CHECK(t.transaction_id.empty());
  CHECK(t.original_transaction_id.empty());
  CHECK(t.bundle_id.empty());
  CHECK(t.product_id.empty());
  CHECK(t.type.empty());
  CHECK_FALSE(t.purchase_date);
  CHECK_FALSE(t.expires_date);
  CHECK_FALSE(t.quantity);
  CHECK_FALSE(t.app_account_token);
}

std::string hash_key(const std::string& jws) {
  return "sha256:" + sha256_hex(jws);
}

// The body's one error, when parsing must fail.
field_error only_error(std::string_view body) {
  auto r = parse_store_a_transaction_upload(body);
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.errors().size() == 1);
  return r.errors().front();
}

std::string body_with(const json::value& signed_transaction) {
  return json::serialize(json::object{{"signed_transaction", signed_transaction}});
}

} // namespace

// ---- make_record --------------------------------------------------------------

TEST_CASE("a verified transaction is pending, keyed by its transactionId, with its fields",
          "[transaction_record]") {
  const auto jws = jws_of(fields());
  auto r = record_of(jws);
  CHECK(r.state == validation_state::pending);
  CHECK(r.fraud == fraud_reason::none);
  CHECK(r.transaction_key == "2000000000000042");
  CHECK(r.signed_transaction == jws);
  CHECK(r.app_id == "app-1");
  CHECK(r.env == environment::sandbox);
  CHECK(r.created_at == now);
  CHECK(r.updated_at == now);
  CHECK(r.echo.user_identifier == std::string("alice"));
  CHECK(r.echo.ip_address == peer); // ip_address omitted: the peer's
  const auto& t = r.transaction;
  CHECK(t.transaction_id == "2000000000000042");
  CHECK(t.original_transaction_id == "2000000000000001");
  CHECK(t.bundle_id == bundle);
  CHECK(t.product_id == "com.example.receiptd.monthly");
  CHECK(t.type == "Auto-Renewable Subscription");
  CHECK(t.purchase_date == ts::utc(2024, 6, 1, 12));
  CHECK(t.expires_date == ts::utc(2024, 7, 1, 12));
  CHECK(t.app_account_token == std::string("7e3fb20b-4cdb-47cc-936d-99d65f608138"));
  CHECK(t.quantity == 1);
  CHECK(t.storefront == std::string("USA"));
  CHECK(t.price == 9990);
  CHECK(t.currency == std::string("USD"));
  CHECK_FALSE(t.revocation_date);
  CHECK(sa::sandbox_first(r));

  auto production = fields();
  production.environment = "Production";
  auto p = record_of(jws_of(production));
  CHECK(p.env == environment::production);
  CHECK_FALSE(sa::sandbox_first(p));
}

TEST_CASE("a JWS that does not verify is rejected, keyed by its hash, claiming nothing",
          "[transaction_record]") {
  const auto good = jws_of(fields());
  struct forged {
    const char* what;
    std::string jws;
    fraud_reason reason;
  };
  auto tampered = good;
  tampered[tampered.size() - 5] = tampered[tampered.size() - 5] == 'A' ? 'B' : 'A';
  std::vector<forged> cases{
    {"another signature", tampered, fraud_reason::invalid_signature},
    {"another PKI's chain", jws_of(fields(), stranger_pki()), fraud_reason::untrusted_certificate},
    // Three base64url segments, but the header is not JSON.
    {"not a JWS inside", "eyJh.eyJh.AAAA", fraud_reason::malformed_receipt},
  };
  for (const auto& f : cases) {
    INFO(f.what);
    auto r = record_of(f.jws);
    CHECK(r.state == validation_state::rejected);
    CHECK(r.fraud == f.reason);
    CHECK(r.transaction_key == hash_key(f.jws));
    CHECK(r.signed_transaction == f.jws);
    CHECK(r.env == environment::production); // nothing unverified is believed
    CHECK_FALSE(r.store_detail.empty());
    check_no_claims(r);
    // Still an upload with its echo fields, answered 402 naming the field.
    CHECK(r.echo.user_identifier == std::string("alice"));
    auto a = answer_for(r, r.fraud);
    CHECK(a.status == 402);
    auto body = json::parse(a.body);
    CHECK(body.at("errors").at(0).at("code").as_string() == to_string(f.reason));
    CHECK(body.at("errors").at(0).at("field") == "signed_transaction");
    CHECK(body.at("transaction").at("transaction_id").is_null());
  }
}

TEST_CASE("a verified payload that is not a transaction is malformed_receipt",
          "[transaction_record]") {
  // Signed by the trusted chain, with a signedDate to check it at, but a
  // renewal info / anything else rather than a transaction.
  const std::string payload
    = R"({"originalTransactionId":"2000000000000001","autoRenewProductId":"x",)"
      R"("signedDate":1717243205000,"environment":"Sandbox"})";
  const auto jws = ts::make_storekit_jws(payload, apple_pki());
  auto v = sa::verify_jws(jws, anchors());
  REQUIRE(v.reason == fraud_reason::none); // the JWS itself is fine
  auto r = sa::make_record(upload_of(jws), the_app(), v, peer, now);
  CHECK(r.state == validation_state::rejected);
  CHECK(r.fraud == fraud_reason::malformed_receipt);
  CHECK(r.transaction_key == hash_key(jws));
  check_no_claims(r);
}

TEST_CASE("a transaction of another bundle is bundle_id_mismatch, with what it claims",
          "[transaction_record]") {
  auto t = fields();
  t.bundle_id = "com.example.other";
  auto r = record_of(jws_of(t));
  CHECK(r.state == validation_state::rejected);
  CHECK(r.fraud == fraud_reason::bundle_id_mismatch);
  CHECK(r.transaction_key == "2000000000000042");
  CHECK(r.transaction.bundle_id == "com.example.other");
  CHECK(r.transaction.product_id == "com.example.receiptd.monthly");
  CHECK(r.env == environment::sandbox);
  CHECK(r.store_detail.find("com.example.other") != std::string::npos);
}

TEST_CASE("Xcode StoreKit test transactions: validated only for an app that opted in",
          "[transaction_record]") {
  auto t = fields();
  t.environment = "Xcode";
  const auto jws = xcode_jws(t);
  auto v = sa::verify_jws(jws, anchors_with_xcode());
  INFO(v.detail);
  REQUIRE(v.reason == fraud_reason::none);
  REQUIRE(v.xcode);

  SECTION("opted in: validated locally, environment xcode") {
    auto r = sa::make_record(upload_of(jws), the_app(true), v, peer, now);
    CHECK(r.state == validation_state::validated);
    CHECK(r.fraud == fraud_reason::none);
    CHECK(r.env == environment::xcode);
    // Xcode numbers test transactions from 0 on every machine: keyed by the JWS.
    CHECK(r.transaction_key == "sha256:" + receiptd::model::sha256_hex(jws));
    CHECK(r.transaction.transaction_id == "2000000000000042");
    CHECK(r.transaction.product_id == "com.example.receiptd.monthly");
    CHECK(answer_for(r, fraud_reason::none).status == 200);
  }
  SECTION("not opted in: untrusted_certificate, and the 402 says how to opt in") {
    auto r = sa::make_record(upload_of(jws), the_app(false), v, peer, now);
    CHECK(r.state == validation_state::rejected);
    CHECK(r.fraud == fraud_reason::untrusted_certificate);
    CHECK(r.env == environment::xcode);
    CHECK(r.transaction_key == "sha256:" + receiptd::model::sha256_hex(jws));
    auto a = answer_for(r, r.fraud);
    CHECK(a.status == 402);
    auto message = std::string(json::parse(a.body).at("errors").at(0).at("message").as_string());
    CHECK(message.find("accept-storekit-test-receipts") != std::string::npos);
  }
  SECTION("under the Xcode root, a payload naming another environment is malformed") {
    auto sandbox = fields(); // "Sandbox"
    auto w = sa::verify_jws(xcode_jws(sandbox), anchors_with_xcode());
    REQUIRE(w.reason == fraud_reason::none);
    auto r = sa::make_record(upload_of(xcode_jws(sandbox)), the_app(true), w, peer, now);
    CHECK(r.state == validation_state::rejected);
    CHECK(r.fraud == fraud_reason::malformed_receipt);
    check_no_claims(r);
  }
}

TEST_CASE("an App Store chain's payload claiming environment Xcode is malformed",
          "[transaction_record]") {
  auto t = fields();
  t.environment = "Xcode";
  const auto jws = jws_of(t);
  for (bool accept_xcode : {false, true}) {
    auto r = record_of(jws, the_app(accept_xcode), anchors_with_xcode());
    CHECK(r.state == validation_state::rejected);
    CHECK(r.fraud == fraud_reason::malformed_receipt);
    CHECK(r.transaction_key == hash_key(jws));
    CHECK(r.env == environment::production);
    check_no_claims(r);
  }
}

// ---- apply_server_answer (transactions) -------------------------------------------

TEST_CASE("Server API verdicts without an answer to check pass through",
          "[transaction_record][server_api]") {
  SECTION("unreachable: pending, the detail kept") {
    auto r = pending_record();
    auto v = verdict_of(store_outcome::unreachable, "HTTP 503");
    v.operator_problem = true;
    CHECK(sa::apply_server_answer(r, v, "", anchors()).empty());
    CHECK(r.state == validation_state::pending);
    CHECK(r.fraud == fraud_reason::none);
    CHECK(r.store_detail == "HTTP 503");
    CHECK(r.transaction.transaction_id == "2000000000000042");
  }
  SECTION("rejected (TransactionIdNotFound at both hosts): store_rejected") {
    auto r = pending_record();
    CHECK(sa::apply_server_answer(r, verdict_of(store_outcome::rejected, "HTTP 404"), "", anchors())
            .empty());
    CHECK(r.state == validation_state::rejected);
    CHECK(r.fraud == fraud_reason::store_rejected);
    CHECK(r.store_detail == "HTTP 404");
    auto a = answer_for(r, r.fraud);
    CHECK(a.status == 402);
    auto err = json::parse(a.body).at("errors").at(0).as_object();
    CHECK(err.at("code") == "store_rejected");
    CHECK_FALSE(err.contains("field"));
  }
}

TEST_CASE("a confirmed answer that verifies validates the record with Apple's fields",
          "[transaction_record][server_api]") {
  auto r = pending_record();
  const auto uploaded = r.signed_transaction;
  // Apple's current view: refunded since the upload, renewed expiry; signed
  // for production although the host was the sandbox one.
  auto now_at_apple = fields();
  now_at_apple.environment = "Production";
  now_at_apple.expires_date = ts::utc(2024, 8, 1, 12);
  now_at_apple.revocation_date = ts::utc(2024, 6, 20);
  now_at_apple.revocation_reason = 1;
  now_at_apple.signed_date = ts::utc(2024, 6, 21);
  const auto info = jws_of(now_at_apple);
  auto why = sa::apply_server_answer(
    r, verdict_of(store_outcome::confirmed, "HTTP 200", environment::sandbox), info, anchors());
  CHECK(why.empty());
  CHECK(r.state == validation_state::validated);
  CHECK(r.fraud == fraud_reason::none);    // revoked is not fraud: Apple vouches for it
  CHECK(r.env == environment::production); // the payload's, not the host's
  CHECK(r.transaction.revocation_date == ts::utc(2024, 6, 20));
  CHECK(r.transaction.revocation_reason == 1);
  CHECK(r.transaction.expires_date == ts::utc(2024, 8, 1, 12));
  CHECK(r.store_detail == "HTTP 200");
  CHECK(r.transaction_key == "2000000000000042");
  CHECK(r.signed_transaction == uploaded); // the proof stays the upload's, not the answer
  auto a = answer_for(r, fraud_reason::none);
  CHECK(a.status == 200);
  auto body = json::parse(a.body);
  CHECK(body.at("validation_state") == "validated");
  CHECK(body.at("revocation_reason") == 1);
  CHECK(body.at("revocation_date").at("ms") == ts::utc(2024, 6, 20));
}

TEST_CASE("App Store Server API 1.15–1.21 fields reach the transaction resource, in snake_case",
          "[transaction_record][server_api]") {
  auto uploaded = fields();
  uploaded.app_transaction_id = "704289572311513217";
  uploaded.extra = {{"offerType", 4},
                    {"offerDiscountType", "PAY_UP_FRONT"},
                    {"offerPeriod", "P3M"},
                    {"billingPlanType", "MONTHLY"},
                    {"commitmentInfo",
                     {{"billingPeriodNumber", 1},
                      {"totalBillingPeriods", 12},
                      {"commitmentExpiresDate", ts::utc(2025, 6, 1, 12)},
                      {"commitmentPrice", 119880}}}};
  auto r = pending_record(uploaded);
  auto o = transaction_json(r);
  CHECK(o.at("app_transaction_id") == "704289572311513217");
  CHECK(o.at("offer_type") == 4);
  CHECK(o.at("offer_discount_type") == "PAY_UP_FRONT");
  CHECK(o.at("offer_period") == "P3M");
  CHECK(o.at("billing_plan_type") == "MONTHLY");
  const auto& c = o.at("commitment_info");
  CHECK(c.at("billing_period_number") == 1);
  CHECK(c.at("total_billing_periods") == 12);
  CHECK(c.at("commitment_expires_date").at("ms") == ts::utc(2025, 6, 1, 12));
  CHECK(c.at("commitment_price") == 119880);
  CHECK(o.at("revocation_type").is_null());
  CHECK(o.at("revocation_percentage").is_null());
  CHECK(o.at("renewal_app_account_token").is_null());

  // Apple's answer later: a prorated refund of 25%, the offer as it was.
  auto refunded = uploaded;
  refunded.revocation_date = ts::utc(2024, 6, 20);
  refunded.revocation_reason = 0;
  refunded.extra["revocationType"] = "REFUND_PRORATED";
  refunded.extra["revocationPercentage"] = 25000;
  refunded.signed_date = ts::utc(2024, 6, 21);
  CHECK(sa::apply_server_answer(r, verdict_of(store_outcome::confirmed), jws_of(refunded),
                                anchors())
          .empty());
  o = transaction_json(r);
  CHECK(o.at("revocation_type") == "REFUND_PRORATED");
  CHECK(o.at("revocation_percentage") == 25000);
  CHECK(o.at("offer_type") == 4);

  // Without them (a 2024 payload) every one is null.
  auto plain = transaction_json(pending_record());
  for (const char* key : {"app_transaction_id", "offer_type", "offer_discount_type", "offer_period",
                          "billing_plan_type", "commitment_info"}) {
    INFO(key);
    CHECK(plain.at(key).is_null());
  }
}

TEST_CASE("a verified answer about another purchase is store_rejected",
          "[transaction_record][server_api][hostile]") {
  struct other {
    const char* field;
    ts::transaction_fields t;
  };
  std::vector<other> cases;
  auto t = fields();
  t.transaction_id = "2000000000000099";
  cases.push_back({"transactionId", t});
  t = fields();
  t.original_transaction_id = "2000000000000098";
  cases.push_back({"originalTransactionId", t});
  t = fields();
  t.product_id = "com.example.receiptd.lifetime";
  cases.push_back({"productId", t});
  t = fields();
  t.bundle_id = "com.example.other";
  cases.push_back({"bundleId", t});
  for (const auto& c : cases) {
    INFO(c.field);
    auto r = pending_record();
    auto why
      = sa::apply_server_answer(r, verdict_of(store_outcome::confirmed), jws_of(c.t), anchors());
    CHECK(why.empty()); // Apple's answer is usable: it says no
    CHECK(r.state == validation_state::rejected);
    CHECK(r.fraud == fraud_reason::store_rejected);
    CHECK(r.store_detail.find(c.field) != std::string::npos);
    // The record keeps what the upload said, not the other purchase's fields.
    CHECK(r.transaction.transaction_id == "2000000000000042");
    CHECK(r.transaction.product_id == "com.example.receiptd.monthly");
    CHECK(r.transaction.bundle_id == bundle);
  }
}

TEST_CASE("a confirmed answer that does not verify is unusable: pending, and said why",
          "[transaction_record][server_api][hostile]") {
  auto xcode_env = fields();
  xcode_env.environment = "Xcode";
  const std::vector<std::pair<const char*, std::string>> answers{
    {"signed by an untrusted PKI", jws_of(fields(), stranger_pki())},
    {"garbage", "x"},
    {"empty", ""},
    {"an App Store chain claiming Xcode", jws_of(xcode_env)},
    {"a signed non-transaction",
     ts::make_storekit_jws(R"({"signedDate":1717243205000})", apple_pki())},
  };
  for (const auto& [what, info] : answers) {
    INFO(what);
    auto r = pending_record();
    auto why = sa::apply_server_answer(r, verdict_of(store_outcome::confirmed), info, anchors());
    CHECK_FALSE(why.empty());
    CHECK(r.state == validation_state::pending);
    CHECK(r.fraud == fraud_reason::none);
    CHECK(r.store_detail == why);
    CHECK(r.transaction.transaction_id == "2000000000000042");
    CHECK(r.transaction.expires_date == ts::utc(2024, 7, 1, 12));
  }
}

// ---- unified receipts confirmed through the Server API ------------------------------

namespace {

receipt_record unified_receipt(std::vector<apple_in_app_purchase> purchases) {
  receipt_record r;
  r.id = "r1";
  r.app_id = "app-1";
  r.style = receipt_style::unified;
  r.bundle_id = bundle;
  r.env = environment::sandbox;
  r.in_app_purchases = std::move(purchases);
  return r;
}

apple_in_app_purchase bought(std::string transaction_id, unix_ms at,
                             std::string product = "com.example.receiptd.monthly") {
  auto p = ts::purchase(std::move(product), std::move(transaction_id), at);
  p.original_transaction_id = "2000000000000001";
  p.expires_date = at + 30LL * 24 * 3600 * 1000;
  return p;
}

} // namespace

TEST_CASE("the receipt's transaction to confirm is its newest purchase",
          "[transaction_record][server_api]") {
  CHECK_FALSE(sa::transaction_to_confirm(unified_receipt({})));
  CHECK(sa::transaction_to_confirm(unified_receipt({bought("1", ts::utc(2024, 1, 1))}))
        == std::string("1"));
  // Newest by purchase date, wherever it stands in the receipt.
  CHECK(sa::transaction_to_confirm(
          unified_receipt({bought("a", ts::utc(2024, 1, 1)), bought("b", ts::utc(2024, 3, 1)),
                           bought("c", ts::utc(2024, 2, 1))}))
        == std::string("b"));
  CHECK(sa::transaction_to_confirm(
          unified_receipt({bought("b", ts::utc(2024, 3, 1)), bought("a", ts::utc(2024, 1, 1))}))
        == std::string("b"));
  // Equal dates: the last in receipt order.
  CHECK(sa::transaction_to_confirm(
          unified_receipt({bought("a", ts::utc(2024, 3, 1)), bought("b", ts::utc(2024, 3, 1)),
                           bought("c", ts::utc(2024, 1, 1))}))
        == std::string("b"));
}

TEST_CASE("confirm_with_server_api: unified receipts only, by mode and credentials",
          "[transaction_record][server_api]") {
  using sa::confirmation;
  receipt_record unified = unified_receipt({});
  receipt_record transaction = unified;
  transaction.style = receipt_style::transaction;
  struct row {
    confirmation how;
    bool key;
    bool unified_uses_api;
  };
  const row table[] = {
    {confirmation::automatic, true, true},       {confirmation::automatic, false, false},
    {confirmation::verify_receipt, true, false}, {confirmation::verify_receipt, false, false},
    {confirmation::server_api, true, true},      {confirmation::server_api, false, true},
  };
  for (const auto& r : table) {
    INFO(sa::to_string(r.how) << " key=" << r.key);
    CHECK(sa::confirm_with_server_api(unified, r.how, r.key) == r.unified_uses_api);
    // iOS 6 transaction receipts have no Server API transaction to ask about.
    CHECK_FALSE(sa::confirm_with_server_api(transaction, r.how, r.key));
  }
}

TEST_CASE("store-a.confirm-with text", "[transaction_record][server_api]") {
  using sa::confirmation;
  for (auto c : {confirmation::automatic, confirmation::verify_receipt, confirmation::server_api})
    CHECK(sa::parse_confirmation(sa::to_string(c)) == c);
  CHECK(sa::parse_confirmation("auto") == confirmation::automatic);
  CHECK(sa::parse_confirmation("verify-receipt") == confirmation::verify_receipt);
  CHECK(sa::parse_confirmation("server-api") == confirmation::server_api);
  for (auto bad : {"", "Auto", "automatic", "server_api", "verify_receipt", " auto"})
    CHECK_FALSE(sa::parse_confirmation(bad));
}

TEST_CASE("the transaction history confirms every purchase of a unified receipt",
          "[transaction_record][server_api][history]") {
  auto receipt = [] {
    return unified_receipt({bought("2000000000000041", ts::utc(2024, 5, 1, 12)),
                            bought("2000000000000042", ts::utc(2024, 6, 1, 12)),
                            bought("2000000000000043", ts::utc(2024, 4, 1, 12),
                                   "com.example.receiptd.lifetime")});
  };
  auto entry = [](std::string id, std::string product = "com.example.receiptd.monthly") {
    auto t = fields();
    t.transaction_id = std::move(id);
    t.product_id = std::move(product);
    t.environment = "Production";
    return t;
  };
  auto verified = [](std::vector<ts::transaction_fields> entries) {
    std::vector<std::string> jws;
    for (const auto& t : entries)
      jws.push_back(jws_of(t));
    auto h = sa::verified_history(jws, bundle, std::nullopt, anchors());
    INFO((h ? std::string() : h.err().message()));
    REQUIRE(h);
    return std::move(h).value();
  };
  const auto confirmed = verdict_of(store_outcome::confirmed, "HTTP 200", environment::production);

  SECTION("every purchase in the history: validated, each takes its own expiry and revocation") {
    auto r = receipt();
    auto a = entry("2000000000000041");
    a.expires_date = ts::utc(2024, 6, 1, 12);
    a.revocation_date = ts::utc(2024, 5, 20);
    a.revocation_reason = 1;
    auto b = entry("2000000000000042");
    b.expires_date = ts::utc(2024, 8, 1, 12);
    auto c = entry("2000000000000043", "com.example.receiptd.lifetime");
    c.original_transaction_id = "2000000000000001";
    c.expires_date.reset();
    sa::apply_history(r, confirmed, verified({a, b, c}));
    CHECK(r.state == validation_state::validated);
    CHECK(r.fraud == fraud_reason::none);
    CHECK(r.env == environment::production);
    CHECK(r.store_detail == "HTTP 200");
    CHECK(r.in_app_purchases[0].cancellation_date == ts::utc(2024, 5, 20));
    CHECK(r.in_app_purchases[0].cancellation_reason == 1);
    CHECK(r.in_app_purchases[1].expires_date == ts::utc(2024, 8, 1, 12));
    CHECK_FALSE(r.in_app_purchases[1].cancellation_date);
    for (const auto& p : r.in_app_purchases)
      CHECK_FALSE(p.store_contradiction);
  }
  SECTION("absent or another product: that purchase is contradicted, the others stand") {
    auto r = receipt();
    sa::apply_history(r, confirmed,
                      verified({entry("2000000000000042"),
                                entry("2000000000000043", "com.example.receiptd.other")}));
    CHECK(r.state == validation_state::validated);
    REQUIRE(r.in_app_purchases[0].store_contradiction);
    CHECK(r.in_app_purchases[0].store_contradiction->find("absent") != std::string::npos);
    CHECK_FALSE(r.in_app_purchases[1].store_contradiction);
    REQUIRE(r.in_app_purchases[2].store_contradiction);
    CHECK(r.in_app_purchases[2].store_contradiction->find("another product") != std::string::npos);
    CHECK(r.store_detail.find("2 of 3 purchases contradicted") != std::string::npos);

    // A later history that holds them lifts the contradiction.
    auto c = entry("2000000000000043", "com.example.receiptd.lifetime");
    sa::apply_history(r, confirmed, verified({entry("2000000000000041"),
                                              entry("2000000000000042"), c}));
    for (const auto& p : r.in_app_purchases)
      CHECK_FALSE(p.store_contradiction);
  }
  SECTION("none of the receipt's purchases in the history: store_rejected") {
    auto r = receipt();
    sa::apply_history(r, confirmed, verified({entry("2000000000000099")}));
    CHECK(r.state == validation_state::rejected);
    CHECK(r.fraud == fraud_reason::store_rejected);
  }
  SECTION("verdicts without a history pass through") {
    auto r = receipt();
    sa::apply_history(r, verdict_of(store_outcome::unreachable, "HTTP 500"), {});
    CHECK(r.state == validation_state::pending);
    CHECK(r.store_detail == "HTTP 500");
    for (const auto& p : r.in_app_purchases)
      CHECK_FALSE(p.store_contradiction);
    sa::apply_history(r, verdict_of(store_outcome::rejected, "HTTP 404"), {});
    CHECK(r.fraud == fraud_reason::store_rejected);
  }
  SECTION("an entry that does not verify, or of another bundle or environment: unusable") {
    auto foreign = entry("2000000000000042");
    foreign.bundle_id = "com.example.other";
    auto sandbox = entry("2000000000000041");
    sandbox.environment = "Sandbox";
    const std::vector<std::vector<std::string>> bad{
      {jws_of(entry("2000000000000042"), stranger_pki())},
      {"x"},
      {jws_of(foreign)},
      {jws_of(entry("2000000000000042")), jws_of(sandbox)},
    };
    for (const auto& jws : bad) {
      auto h = sa::verified_history(jws, bundle, std::nullopt, anchors());
      CHECK_FALSE(h);
    }
    CHECK_FALSE(sa::verified_history({jws_of(entry("1"))}, bundle, environment::sandbox, anchors()));
  }
}

// ---- the upload body ------------------------------------------------------------

TEST_CASE("signed_transaction must be a compact JWS", "[transaction_record][upload]") {
  SECTION("missing, null, wrong type, blank") {
    auto e = only_error(R"({"user_identifier":"alice"})");
    CHECK(e.field == "signed_transaction");
    CHECK(e.code == "missing");
    CHECK(only_error(R"({"signed_transaction":null})").code == "missing");
    CHECK(only_error(R"({"signed_transaction":42})").code == "wrong_type");
    CHECK(only_error(R"({"signed_transaction":["a.b.c"]})").code == "wrong_type");
    CHECK(only_error(R"({"signed_transaction":{}})").code == "wrong_type");
    CHECK(only_error(R"({"signed_transaction":""})").code == "blank");
  }
  SECTION("at most 65,536 bytes") {
    // Three segments, 65,536 bytes in all: accepted as it is.
    const std::string longest = "eyJh." + std::string(65526, 'A') + ".AAAA";
    REQUIRE(longest.size() == 65536);
    auto ok = parse_store_a_transaction_upload(body_with(json::value(longest)));
    REQUIRE(ok);
    CHECK(ok->signed_transaction == longest);
    const std::string too_long = "eyJh." + std::string(65527, 'A') + ".AAAA";
    REQUIRE(too_long.size() == 65537);
    auto e = only_error(body_with(json::value(too_long)));
    CHECK(e.field == "signed_transaction");
    CHECK(e.code == "too_long");
  }
  SECTION("anything but three base64url segments: invalid_jws") {
    for (const char* bad : {
           "eyJh.eyJh",           // two segments
           "eyJh.eyJh.AAAA.AAAA", // four
           "eyJh..AAAA",          // an empty one
           ".eyJh.AAAA",
           "eyJh.eyJh.",
           "eyJh.eyJh.AA==",  // padding
           "eyJh.ey+h.AAAA",  // '+': base64, not base64url
           "eyJh.ey/h.AAAA",  // '/'
           "eyJh.eyJh.AAAA ", // whitespace
           " eyJh.eyJh.AAAA",
           "eyJh.ey\nJh.AAAA",
           "eyJh.eyJh.AA\tAA",
           "eyJhx.eyJh.AAAA", // 5 characters: no base64url text is that long
           "not a jws at all",
         }) {
      INFO(bad);
      auto e = only_error(body_with(json::value(bad)));
      CHECK(e.field == "signed_transaction");
      CHECK(e.code == "invalid_jws");
    }
  }
  SECTION("NUL is refused") {
    auto e = only_error(body_with(json::value(std::string("eyJh.eyJh.AA\0A", 14))));
    CHECK(e.code == "invalid_characters");
  }
  SECTION("not a JSON object") {
    CHECK(only_error("[]").code == "not_an_object");
    CHECK(only_error("{").code == "invalid_json");
  }
  SECTION("every problem is reported") {
    auto r = parse_store_a_transaction_upload(
      R"({"signed_transaction":"a.b","ip_address":"999.1.1.1","metadata":[]})");
    REQUIRE_FALSE(r.ok());
    std::vector<std::string> codes;
    for (const auto& e : r.errors())
      codes.push_back(e.field + ":" + e.code);
    CHECK(codes
          == std::vector<std::string>{"signed_transaction:invalid_jws", "metadata:wrong_type",
                                      "ip_address:invalid_ip_address"});
  }
}

TEST_CASE("a good transaction upload keeps the JWS exactly and echoes its fields",
          "[transaction_record][upload]") {
  const auto jws = jws_of(fields());
  json::object body{{"signed_transaction", jws},
                    {"user_identifier", "alice"},
                    {"metadata", json::object{{"plan", "gold"}, {"n", 1}}},
                    {"ip_address", "2001:DB8::0:1"}};
  auto u = parse_store_a_transaction_upload(json::serialize(body));
  REQUIRE(u);
  CHECK(u->signed_transaction == jws);
  auto e = u->common.echo(peer);
  CHECK(e.user_identifier == std::string("alice"));
  REQUIRE(e.metadata);
  CHECK(json::parse(*e.metadata) == json::parse(R"({"plan":"gold","n":1})"));
  CHECK(e.ip_address == std::string("2001:db8::1"));

  body["ip_address"] = nullptr;
  auto null_ip = parse_store_a_transaction_upload(json::serialize(body));
  REQUIRE(null_ip);
  CHECK_FALSE(null_ip->common.echo(peer).ip_address);

  json::object bare{{"signed_transaction", jws}};
  auto omitted = parse_store_a_transaction_upload(json::serialize(bare));
  REQUIRE(omitted);
  auto oe = omitted->common.echo(peer);
  CHECK(oe.ip_address == peer);
  CHECK_FALSE(oe.user_identifier);
  CHECK_FALSE(oe.metadata);

  // What the record stores is that exact string.
  auto r = record_of(u->signed_transaction);
  CHECK(r.signed_transaction == jws);
}

// ---- the resource ----------------------------------------------------------------

TEST_CASE("the transaction resource: its fields, null when unknown", "[transaction_record][json]") {
  const std::vector<std::string> keys{"id",
                                      "app_family_id",
                                      "is_fraud",
                                      "fraud_reason",
                                      "environment",
                                      "user_identifier",
                                      "previous_user_identifiers",
                                      "metadata",
                                      "ip_address",
                                      "validation_state",
                                      "created_at",
                                      "updated_at",
                                      "transaction_id",
                                      "original_transaction_id",
                                      "bundle_id",
                                      "product_id",
                                      "type",
                                      "purchase_date",
                                      "original_purchase_date",
                                      "expires_date",
                                      "revocation_date",
                                      "revocation_reason",
                                      "revocation_type",
                                      "revocation_percentage",
                                      "app_account_token",
                                      "app_transaction_id",
                                      "quantity",
                                      "storefront",
                                      "price",
                                      "currency",
                                      "offer_type",
                                      "offer_discount_type",
                                      "offer_period",
                                      "billing_plan_type",
                                      "commitment_info",
                                      "subscription_status",
                                      "subscription_expires_date",
                                      "auto_renew",
                                      "auto_renew_product_id",
                                      "renewal_app_account_token",
                                      "in_app_purchase"};
  auto keys_of = [](const json::object& o) {
    std::vector<std::string> out;
    for (const auto& kv : o)
      out.emplace_back(kv.key());
    return out;
  };

  SECTION("a verified transaction") {
    auto t = fields();
    t.revocation_date = ts::utc(2024, 6, 20);
    t.revocation_reason = 0;
    auto r = record_of(jws_of(t));
    r.id = "0b7c3f2e-4a5d-4c1e-9a8b-1c2d3e4f5a6b";
    auto o = transaction_json(r);
    CHECK(keys_of(o) == keys);
    CHECK(o.at("id") == "0b7c3f2e-4a5d-4c1e-9a8b-1c2d3e4f5a6b");
    CHECK(o.at("app_family_id") == "app-1");
    CHECK(o.at("is_fraud") == false);
    CHECK(o.at("fraud_reason").is_null());
    CHECK(o.at("environment") == "sandbox");
    CHECK(o.at("validation_state") == "pending");
    CHECK(o.at("transaction_id") == "2000000000000042");
    CHECK(o.at("original_transaction_id") == "2000000000000001");
    CHECK(o.at("bundle_id").as_string() == bundle);
    CHECK(o.at("product_id") == "com.example.receiptd.monthly");
    CHECK(o.at("type") == "Auto-Renewable Subscription");
    CHECK(o.at("purchase_date")
          == json::parse(R"({"ms":1717243200000,"utc":"2024-06-01 12:00:00 UTC"})"));
    CHECK(o.at("expires_date").at("ms") == ts::utc(2024, 7, 1, 12));
    CHECK(o.at("revocation_date").at("ms") == ts::utc(2024, 6, 20));
    CHECK(o.at("revocation_reason") == 0);
    CHECK(o.at("app_account_token") == "7e3fb20b-4cdb-47cc-936d-99d65f608138");
    CHECK(o.at("quantity") == 1);
    CHECK(o.at("storefront") == "USA");
    CHECK(o.at("price") == 9990);
    CHECK(o.at("currency") == "USD");
    CHECK(o.at("created_at").at("ms") == now);
    CHECK(o.at("ip_address").as_string() == peer);
    // The JWS itself is not part of the resource.
    CHECK(json::serialize(o).find(r.signed_transaction.substr(0, 40)) == std::string::npos);
  }
  SECTION("2023 payloads without storefront, price, currency or expiry: null") {
    auto t = fields();
    t.storefront.reset();
    t.price.reset();
    t.currency.reset();
    t.expires_date.reset();
    t.app_account_token.reset();
    auto o = transaction_json(record_of(jws_of(t)));
    CHECK(keys_of(o) == keys);
    for (const char* k : {"storefront", "price", "currency", "expires_date", "revocation_date",
                          "revocation_reason", "app_account_token"}) {
      INFO(k);
      CHECK(o.at(k).is_null());
    }
    CHECK(o.at("quantity") == 1);
  }
  SECTION("a rejected JWS: every transaction field null") {
    auto r = record_of(jws_of(fields(), stranger_pki()));
    auto o = transaction_json(r);
    CHECK(keys_of(o) == keys);
    CHECK(o.at("is_fraud") == true);
    CHECK(o.at("fraud_reason") == "untrusted_certificate");
    CHECK(o.at("validation_state") == "rejected");
    for (const char* k : {"transaction_id", "original_transaction_id", "bundle_id", "product_id",
                          "type", "purchase_date", "original_purchase_date", "expires_date",
                          "revocation_date", "revocation_reason", "app_account_token", "quantity",
                          "storefront", "price", "currency", "revocation_type",
                          "revocation_percentage", "app_transaction_id", "offer_type",
                          "offer_discount_type", "offer_period", "billing_plan_type",
                          "commitment_info", "renewal_app_account_token"}) {
      INFO(k);
      CHECK(o.at(k).is_null());
    }
  }
}

TEST_CASE("transaction answers: 206 pending, 200 validated, 402 with the record",
          "[transaction_record][json]") {
  auto r = pending_record();
  auto pending = answer_for(r, fraud_reason::none);
  CHECK(pending.status == 206);
  CHECK(json::parse(pending.body).at("transaction_id") == "2000000000000042");
  CHECK(pending.body == upload_response_body(r));

  // A forged re-upload against this record: 402, the record as stored.
  auto forged = answer_for(r, fraud_reason::invalid_signature);
  CHECK(forged.status == 402);
  auto fb = json::parse(forged.body);
  CHECK(fb.at("errors").at(0).at("code") == "invalid_signature");
  CHECK(fb.at("errors").at(0).at("field") == "signed_transaction");
  CHECK(fb.at("transaction").at("validation_state") == "pending");
  CHECK(fb.at("transaction").at("is_fraud") == false);

  sa::apply_server_answer(r, verdict_of(store_outcome::confirmed), jws_of(fields()), anchors());
  REQUIRE(r.state == validation_state::validated);
  CHECK(answer_for(r, fraud_reason::none).status == 200);

  sa::apply_server_answer(r, verdict_of(store_outcome::rejected, "HTTP 404 TransactionIdNotFound"),
                          "", anchors());
  auto rejected = answer_for(r, fraud_reason::none);
  CHECK(rejected.status == 402);
  auto rb = json::parse(rejected.body);
  CHECK(rb.at("errors").at(0).at("code") == "store_rejected");
  CHECK(std::string(rb.at("errors").at(0).at("message").as_string()).find("TransactionIdNotFound")
        != std::string::npos);
  CHECK(rb.at("transaction").at("fraud_reason") == "store_rejected");
  CHECK(rejected.body == rejection_body(r));
}

// ---- re-uploads (as tests/unit/reupload_rules_test.cpp for receipts) ----------------

namespace {

transaction_record stored(validation_state state, fraud_reason fraud = fraud_reason::none) {
  transaction_record r;
  r.id = "t1";
  r.app_id = "app-1";
  r.transaction_key = "2000000000000042";
  r.signed_transaction = "genuine";
  r.transaction.transaction_id = "2000000000000042";
  r.transaction.product_id = "com.example.receiptd.monthly";
  r.echo.user_identifier = "alice";
  r.echo.metadata = R"({"a":1})";
  r.echo.ip_address = "192.0.2.1";
  r.state = state;
  r.fraud = fraud;
  r.created_at = 1700000000000;
  r.updated_at = 1700000000000;
  return r;
}

transaction_record later(transaction_record r) {
  r.id.clear();
  r.created_at = r.updated_at = 1800000000000;
  return r;
}

} // namespace

TEST_CASE("a transaction re-upload failing its own proof never touches a record that passed",
          "[transaction_record][merge][hostile]") {
  for (auto stored_state :
       {validation_state::pending, validation_state::validated, validation_state::failed}) {
    for (auto reason : {fraud_reason::invalid_signature, fraud_reason::untrusted_certificate,
                        fraud_reason::malformed_receipt, fraud_reason::bundle_id_mismatch}) {
      INFO(to_string(stored_state) << " / " << to_string(reason));
      auto old = stored(stored_state);
      auto forged = later(stored(validation_state::rejected, reason));
      forged.signed_transaction = "forged";
      forged.transaction = {};
      forged.echo.user_identifier = "mallory";
      auto m = merge_reupload(old, forged);
      CHECK(m.state == stored_state);
      CHECK(m.signed_transaction == "genuine");
      CHECK(m.transaction.product_id == "com.example.receiptd.monthly");
      CHECK(m.echo.user_identifier == std::string("alice"));
      CHECK(m.updated_at == old.updated_at);
      CHECK_FALSE(m.is_fraud());
      CHECK_FALSE(m.terms.refused);
      auto a = answer_for(m, reason);
      CHECK(a.status == 402);
      CHECK(json::parse(a.body).at("errors").at(0).at("code").as_string() == to_string(reason));
    }
  }
}

TEST_CASE("a transaction re-upload keeps identity, takes the latest echo and verdict",
          "[transaction_record][merge]") {
  SECTION("pending, then validated: the new verdict and fields") {
    auto old = stored(validation_state::pending);
    auto now_validated = later(stored(validation_state::validated));
    now_validated.transaction.expires_date = 1900000000000;
    now_validated.echo.metadata.reset();   // not sent: the stored one stays
    now_validated.echo.ip_address.reset(); // sent as null: latest wins
    auto m = merge_reupload(old, now_validated);
    CHECK(m.id == "t1");
    CHECK(m.created_at == 1700000000000);
    CHECK(m.updated_at == 1800000000000);
    CHECK(m.state == validation_state::validated);
    CHECK(m.transaction.expires_date == 1900000000000);
    CHECK(m.echo.metadata == std::string(R"({"a":1})"));
    CHECK_FALSE(m.echo.ip_address);
  }
  SECTION("validated is not downgraded by an unconfirmed re-upload") {
    auto old = stored(validation_state::validated);
    auto unconfirmed = later(stored(validation_state::pending));
    unconfirmed.echo.metadata = R"({"b":2})";
    auto m = merge_reupload(old, unconfirmed);
    CHECK(m.state == validation_state::validated);
    CHECK(m.id == "t1");
    CHECK(m.echo.metadata == std::string(R"({"b":2})"));
    CHECK(m.updated_at == 1800000000000);
  }
  SECTION("validated is not downgraded by a store rejection; that upload alone is 402") {
    auto old = stored(validation_state::validated);
    auto refused = later(stored(validation_state::rejected, fraud_reason::store_rejected));
    refused.echo.user_identifier = "mallory";
    auto m = merge_reupload(old, refused);
    CHECK(m.state == validation_state::validated);
    CHECK(m.echo.user_identifier == std::string("alice"));
    CHECK(m.updated_at == old.updated_at);
    CHECK(answer_for(m, fraud_reason::store_rejected).status == 402);
  }
  SECTION("a forged first upload binds nothing: the genuine one takes over") {
    auto forged = stored(validation_state::rejected, fraud_reason::invalid_signature);
    forged.echo.user_identifier = "mallory";
    forged.transaction = {};
    auto genuine = later(stored(validation_state::pending));
    genuine.terms.transfers = *parse_transfer_policy("keep");
    auto m = merge_reupload(forged, genuine);
    CHECK_FALSE(m.terms.refused);
    CHECK(m.state == validation_state::pending);
    CHECK(m.id == "t1");
    CHECK(m.transaction.transaction_id == "2000000000000042");
    CHECK(m.echo.user_identifier == std::string("alice"));
    CHECK(m.previous_users.empty());
  }
  SECTION("a store-rejected record binds no user") {
    auto squat = stored(validation_state::rejected, fraud_reason::store_rejected);
    squat.echo.user_identifier = "mallory";
    auto genuine = later(stored(validation_state::validated));
    genuine.terms.transfers = *parse_transfer_policy("keep");
    auto m = merge_reupload(squat, genuine);
    CHECK_FALSE(m.terms.refused);
    CHECK(m.echo.user_identifier == std::string("alice"));
    CHECK(m.state == validation_state::validated);
  }
}

TEST_CASE("transaction transfers follow the app's policy", "[transaction_record][merge]") {
  auto old = stored(validation_state::validated);
  auto bob = later(stored(validation_state::validated));
  bob.echo.user_identifier = "bob";

  SECTION("transfer: moves, the previous owner recorded") {
    auto m = merge_reupload(old, bob);
    CHECK_FALSE(m.terms.refused);
    CHECK(m.echo.user_identifier == std::string("bob"));
    CHECK(m.previous_users == previous_owners{"alice"});
    CHECK(json::parse(answer_for(m, fraud_reason::none).body).at("previous_user_identifiers")
          == json::parse(R"(["alice"])"));
  }
  SECTION("keep: 409 bound_to_other_user, the record stays") {
    bob.terms.transfers = *parse_transfer_policy("keep");
    auto m = merge_reupload(old, bob);
    REQUIRE(m.terms.refused);
    CHECK(m.terms.refused->code == "bound_to_other_user");
    CHECK(m.echo.user_identifier == std::string("alice"));
    CHECK(m.updated_at == old.updated_at);
    auto a = answer_for(m, fraud_reason::none);
    CHECK(a.status == 409);
    CHECK(json::parse(a.body).at("errors").at(0).at("field") == "user_identifier");
    // The same user, or none named, is no transfer.
    auto again = later(stored(validation_state::validated));
    again.terms.transfers = bob.terms.transfers;
    CHECK_FALSE(merge_reupload(old, again).terms.refused);
    again.echo.user_identifier.reset();
    CHECK_FALSE(merge_reupload(old, again).terms.refused);
  }
  SECTION("reject_after=1: one move, then 409") {
    bob.terms.transfers = *parse_transfer_policy("reject_after=1");
    auto m = merge_reupload(old, bob);
    REQUIRE_FALSE(m.terms.refused);
    m.terms = {};
    auto carol = later(stored(validation_state::validated));
    carol.echo.user_identifier = "carol";
    carol.terms.transfers = bob.terms.transfers;
    auto m2 = merge_reupload(m, carol);
    REQUIRE(m2.terms.refused);
    CHECK(m2.echo.user_identifier == std::string("bob"));
    CHECK(m2.previous_users == previous_owners{"alice"});
  }
}

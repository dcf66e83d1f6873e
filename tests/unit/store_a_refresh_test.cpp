// The scheduled refresh of StoreKit 2 subscriptions, the pure rules:
// Get All Subscription Statuses' URL and answers, the entry for a record's
// subscription verified under the (generated, Apple-shaped) chain, and how it
// lands on the record.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <string>
#include <vector>

#include "model/store_a/refresh.hpp"
#include "model/store_a/trust.hpp"
#include "tests/support/crypto/test_jws.hpp"

using namespace receiptd::model;
namespace sa = receiptd::model::store_a;
namespace ts = receiptd::test_support;
namespace json = boost::json;

namespace {

const std::string bundle = "com.example.receiptd";
const unix_ms now = ts::utc(2024, 8, 2, 8);

const ts::test_pki& apple_pki() {
  static const auto pki = ts::make_jws_pki("receiptd refresh test");
  return pki;
}
const ts::test_pki& stranger_pki() {
  static const auto pki = ts::make_jws_pki("receiptd refresh stranger");
  return pki;
}

const sa::trust_anchors& anchors() {
  static const auto a = [] {
    auto r = sa::load_trust_anchors({{apple_pki().root.pem()}, {}, {}});
    REQUIRE(r);
    return *r;
  }();
  return *a;
}

// The renewal of 2024-07-01: the subscription's newest transaction.
ts::transaction_fields renewal() {
  ts::transaction_fields t;
  t.transaction_id = "2000000000000077";
  t.original_transaction_id = "2000000000000001";
  t.bundle_id = bundle;
  t.purchase_date = ts::utc(2024, 7, 1, 12);
  t.original_purchase_date = ts::utc(2024, 6, 1, 12);
  t.expires_date = ts::utc(2024, 9, 1, 12);
  t.signed_date = ts::utc(2024, 8, 2, 7, 59);
  t.environment = "Sandbox";
  return t;
}

std::string renewal_info_json(const std::string& original, int auto_renew_status,
                              const std::string& env = "Sandbox") {
  return json::serialize(json::object{{"originalTransactionId", original},
                                      {"autoRenewProductId", "com.example.receiptd.yearly"},
                                      {"productId", "com.example.receiptd.monthly"},
                                      {"autoRenewStatus", auto_renew_status},
                                      {"signedDate", ts::utc(2024, 8, 2, 7, 59)},
                                      {"environment", env}});
}

sa::subscription_status_entry entry(int status, const ts::transaction_fields& t,
                                    const ts::test_pki& pki = apple_pki()) {
  sa::subscription_status_entry e;
  e.original_transaction_id = t.original_transaction_id;
  e.status = status;
  e.signed_transaction_info = ts::make_storekit_jws(ts::transaction_payload_json(t), pki);
  e.signed_renewal_info
    = ts::make_storekit_jws(renewal_info_json(t.original_transaction_id, 1), pki);
  return e;
}

// The first month's transaction, validated at upload: its period ended 2024-07-01.
transaction_record uploaded() {
  transaction_record r;
  r.id = "tx-1";
  r.app_id = "app-1";
  r.env = environment::sandbox;
  r.state = validation_state::validated;
  auto& a = r.transaction;
  a.transaction_id = "2000000000000001";
  a.original_transaction_id = "2000000000000001";
  a.bundle_id = bundle;
  a.product_id = "com.example.receiptd.monthly";
  a.type = "Auto-Renewable Subscription";
  a.purchase_date = ts::utc(2024, 6, 1, 12);
  a.expires_date = ts::utc(2024, 7, 1, 12);
  return r;
}

store_verdict confirmed() {
  store_verdict v;
  v.outcome = store_outcome::confirmed;
  v.detail = "HTTP 200";
  return v;
}

} // namespace

TEST_CASE("Get All Subscription Statuses: the URL", "[store_a][refresh]") {
  CHECK(sa::subscription_statuses_url("https://api.storekit.itunes.apple.com/", "2000000000000001")
        == "https://api.storekit.itunes.apple.com/inApps/v1/subscriptions/2000000000000001");
  CHECK(sa::subscription_statuses_url("http://127.0.0.1:9/sandbox", "a/b c")
        == "http://127.0.0.1:9/sandbox/inApps/v1/subscriptions/a%2Fb%20c");
}

TEST_CASE("Get All Subscription Statuses: how answers read", "[store_a][refresh]") {
  auto classify = [](int status, std::string_view body, std::string_view transport = "") {
    return sa::classify_subscription_statuses(status, body, transport, "", now);
  };
  SECTION("200 with every group's last transactions") {
    auto a = classify(200, R"({"environment":"Sandbox","bundleId":"com.example.receiptd",
      "appAppleId":1234,"data":[
        {"subscriptionGroupIdentifier":"21000000","lastTransactions":[
          {"originalTransactionId":"1","status":1,"signedTransactionInfo":"a.b.c",
           "signedRenewalInfo":"d.e.f"},
          {"originalTransactionId":"2","status":2,"signedTransactionInfo":"g.h.i"}]},
        {"subscriptionGroupIdentifier":"21000001","lastTransactions":[
          {"originalTransactionId":"3","status":5,"signedTransactionInfo":"j.k.l"}]}]})");
    CHECK(a.verdict.outcome == store_outcome::confirmed);
    REQUIRE(a.entries.size() == 3);
    CHECK(a.entries[0].original_transaction_id == "1");
    CHECK(a.entries[0].status == 1);
    CHECK(a.entries[0].signed_transaction_info == "a.b.c");
    CHECK(a.entries[0].signed_renewal_info == "d.e.f");
    CHECK(a.entries[1].signed_renewal_info.empty());
    CHECK(a.entries[2].status == 5);
  }
  SECTION("200 with no subscriptions") {
    auto a = classify(200, R"({"data":[]})");
    CHECK(a.verdict.outcome == store_outcome::confirmed);
    CHECK(a.entries.empty());
  }
  SECTION("a 200 of another shape is unreachable, never confirmed") {
    for (std::string_view body :
         {R"(<html>oops</html>)", R"({"signedTransactionInfo":"a.b.c"})", R"({"data":{}})",
          R"({"data":[{"lastTransactions":{}}]})", R"({"data":[{"lastTransactions":[1]}]})",
          R"({"data":[{"lastTransactions":[{"originalTransactionId":"1","status":"1",)"
          R"("signedTransactionInfo":"a.b.c"}]}]})",
          R"({"data":[{"lastTransactions":[{"originalTransactionId":"1","status":1,)"
          R"("signedTransactionInfo":""}]}]})",
          R"({"data":[{"lastTransactions":[{"originalTransactionId":1,"status":1,)"
          R"("signedTransactionInfo":"a.b.c"}]}]})",
          R"({"data":[{"lastTransactions":[{"originalTransactionId":"1","status":1,)"
          R"("signedTransactionInfo":"a.b.c","signedRenewalInfo":7}]}]})"}) {
      INFO(body);
      auto a = classify(200, body);
      CHECK(a.verdict.outcome == store_outcome::unreachable);
      CHECK(a.entries.empty());
    }
  }
  SECTION("errors read as Get Transaction Info's") {
    auto not_found
      = classify(404, R"({"errorCode":4040010,"errorMessage":"Transaction id not found."})");
    CHECK(not_found.verdict.outcome == store_outcome::rejected);
    CHECK(not_found.transaction_not_found);
    auto refused = classify(401, "");
    CHECK(refused.verdict.outcome == store_outcome::unreachable);
    CHECK(refused.verdict.operator_problem);
    auto down = classify(0, "", "connection refused");
    CHECK(down.verdict.outcome == store_outcome::unreachable);
    CHECK(down.verdict.detail.find("connection refused") != std::string::npos);
    auto limited = sa::classify_subscription_statuses(
      429, R"({"errorCode":4290000,"errorMessage":"Rate limit exceeded."})", "", "7", now);
    CHECK(limited.verdict.outcome == store_outcome::unreachable);
    CHECK(limited.retry_after_ms == 7000);
  }
}

TEST_CASE("the refresh finds and verifies the record's subscription", "[store_a][refresh]") {
  auto r = uploaded();
  SECTION("the entry of its originalTransactionId, both JWS verified") {
    auto other = renewal();
    other.original_transaction_id = other.transaction_id = "2000000000000900";
    auto found = sa::status_of(r, {entry(1, other), entry(3, renewal())}, anchors());
    REQUIRE(found);
    REQUIRE(found->has_value());
    CHECK((*found)->status == 3);
    CHECK((*found)->transaction.transaction_id == "2000000000000077");
    REQUIRE((*found)->renewal);
    CHECK((*found)->renewal->auto_renew_status == 1);
  }
  SECTION("none listed for it") {
    auto other = renewal();
    other.original_transaction_id = "2000000000000900";
    auto found = sa::status_of(r, {entry(1, other)}, anchors());
    REQUIRE(found);
    CHECK_FALSE(found->has_value());
  }
  SECTION("a JWS under another chain is unusable") {
    auto found = sa::status_of(r, {entry(1, renewal(), stranger_pki())}, anchors());
    REQUIRE_FALSE(found);
    CHECK(found.err().message().find("does not verify") != std::string::npos);
    auto e = entry(1, renewal());
    e.signed_renewal_info
      = ts::make_storekit_jws(renewal_info_json("2000000000000001", 1), stranger_pki());
    CHECK_FALSE(sa::status_of(r, {e}, anchors()));
  }
  SECTION("a transaction of another bundle, environment or subscription is unusable") {
    auto other_bundle = renewal();
    other_bundle.bundle_id = "com.example.other";
    CHECK_FALSE(sa::status_of(r, {entry(1, other_bundle)}, anchors()));
    auto production = renewal();
    production.environment = "Production";
    CHECK_FALSE(sa::status_of(r, {entry(1, production)}, anchors()));
    auto e = entry(1, renewal());
    auto stranger = renewal();
    stranger.original_transaction_id = "2000000000000900";
    e.signed_transaction_info = entry(1, stranger).signed_transaction_info; // listed under ours
    CHECK_FALSE(sa::status_of(r, {e}, anchors()));
  }
  SECTION("Apple's null renewal info is no renewal info") {
    auto e = entry(2, renewal());
    e.signed_renewal_info = ts::make_storekit_jws("null", apple_pki());
    auto found = sa::status_of(r, {e}, anchors());
    REQUIRE(found);
    REQUIRE(found->has_value());
    CHECK_FALSE((*found)->renewal);
  }
}

TEST_CASE("a refresh's answer lands on the record", "[store_a][refresh]") {
  auto r = uploaded();
  auto status = [](int s, ts::transaction_fields t = renewal()) {
    auto found = sa::status_of(uploaded(), {entry(s, t)}, anchors());
    REQUIRE(found);
    REQUIRE(found->has_value());
    return **found;
  };
  SECTION("renewed: the subscription's status, expiry and renewal; its own fields stay") {
    CHECK(sa::apply_refresh(r, confirmed(), status(1)));
    CHECK(r.transaction.subscription_status == "active");
    CHECK(r.transaction.subscription_expires_date == ts::utc(2024, 9, 1, 12));
    CHECK(r.transaction.auto_renew == true);
    CHECK(r.transaction.auto_renew_product_id == "com.example.receiptd.yearly");
    CHECK(r.transaction.expires_date == ts::utc(2024, 7, 1, 12)); // its own period
    CHECK(r.transaction.notified_at == ts::utc(2024, 8, 2, 7, 59));
    CHECK(r.state == validation_state::validated);
    CHECK_FALSE(r.is_fraud());
    CHECK(r.store_detail.find("refresh") != std::string::npos);
  }
  SECTION("expired, in billing retry, in grace period, revoked") {
    for (auto [code, name] : std::vector<std::pair<int, std::string>>{
           {2, "expired"}, {3, "billing_retry"}, {4, "grace_period"}, {5, "revoked"}}) {
      auto x = uploaded();
      CHECK(sa::apply_refresh(x, confirmed(), status(code)));
      CHECK(x.transaction.subscription_status == name);
      CHECK(x.state == validation_state::validated);
      CHECK_FALSE(x.is_fraud());
    }
  }
  SECTION("a status Apple adds later keeps the record's") {
    r.transaction.subscription_status = "active";
    CHECK(sa::apply_refresh(r, confirmed(), status(9)));
    CHECK(r.transaction.subscription_status == "active");
  }
  SECTION("the very transaction Apple names takes its own fields and revocation") {
    auto same = renewal();
    same.transaction_id = "2000000000000001";
    same.purchase_date = ts::utc(2024, 6, 1, 12);
    same.revocation_date = ts::utc(2024, 6, 20);
    same.revocation_reason = 1;
    CHECK(sa::apply_refresh(r, confirmed(), status(5, same)));
    CHECK(r.transaction.revocation_date == ts::utc(2024, 6, 20));
    CHECK(r.transaction.revocation_reason == 1);
    CHECK(r.transaction.expires_date == ts::utc(2024, 9, 1, 12));
    CHECK(r.transaction.subscription_status == "revoked");
    CHECK_FALSE(r.is_fraud());
  }
  SECTION("an expiry never moves back") {
    r.transaction.subscription_expires_date = ts::utc(2024, 10, 1);
    CHECK(sa::apply_refresh(r, confirmed(), status(1)));
    CHECK(r.transaction.subscription_expires_date == ts::utc(2024, 10, 1));
  }
  SECTION("a notification signed after the answer has said more") {
    r.transaction.subscription_status = "expired";
    r.transaction.notified_at = ts::utc(2024, 8, 2, 8);
    CHECK(sa::apply_refresh(r, confirmed(), status(1)));
    CHECK(r.transaction.subscription_status == "expired");
    CHECK_FALSE(r.transaction.subscription_expires_date);
    CHECK(r.transaction.notified_at == ts::utc(2024, 8, 2, 8));
  }
  SECTION("no entry for it, or Apple does not know it: settled, nothing but the detail") {
    CHECK(sa::apply_refresh(r, confirmed(), std::nullopt));
    CHECK_FALSE(r.transaction.subscription_status);
    CHECK(r.store_detail.find("no status") != std::string::npos);
    store_verdict gone;
    gone.outcome = store_outcome::rejected;
    gone.detail = "HTTP 404 TransactionIdNotFound (errorCode 4040010)";
    CHECK(sa::apply_refresh(r, gone, std::nullopt));
    CHECK(r.state == validation_state::validated);
    CHECK_FALSE(r.is_fraud());
    CHECK(r.store_detail.find("4040010") != std::string::npos);
  }
  SECTION("unreachable: not settled, only the detail") {
    store_verdict down;
    down.outcome = store_outcome::unreachable;
    down.detail = "HTTP 503";
    CHECK_FALSE(sa::apply_refresh(r, down, std::nullopt));
    CHECK(r.store_detail == "HTTP 503");
    CHECK_FALSE(r.transaction.subscription_status);
    CHECK(r.state == validation_state::validated);
  }
  SECTION("the sweep's live statuses") {
    CHECK(sa::is_live_subscription_status("active"));
    CHECK(sa::is_live_subscription_status("billing_retry"));
    CHECK(sa::is_live_subscription_status("grace_period"));
    CHECK_FALSE(sa::is_live_subscription_status("expired"));
    CHECK_FALSE(sa::is_live_subscription_status("revoked"));
  }
}

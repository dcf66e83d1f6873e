// Play Developer API: URLs, answers → verdicts (DESIGN.md §2), OAuth JWT.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "model/encoding.hpp"
#include "model/store_b/play_api.hpp"
#include "model/store_b/purchase_order.hpp"
#include "model/store_b/service_account.hpp"
#include "test_files.hpp"

using namespace receiptd::model;
using namespace receiptd::model::store_b;
using receiptd::test::data_file;

TEST_CASE("purchase URLs escape every path segment", "[store_b][api]") {
  CHECK(purchase_url("https://androidpublisher.googleapis.com/", purchase_api::products, "com.ex",
                     "gold 1", "a/b")
        == "https://androidpublisher.googleapis.com/androidpublisher/v3/applications/"
           "com.ex/purchases/products/gold%201/tokens/a%2Fb");
  CHECK(
    purchase_url("http://127.0.0.1:9", purchase_api::subscriptions_v2, "com.ex", "ignored", "tok")
    == "http://127.0.0.1:9/androidpublisher/v3/applications/com.ex/purchases/"
       "subscriptionsv2/tokens/tok");
}

TEST_CASE("Play answers map onto the status table", "[store_b][api][status]") {
  play_purchase p;
  auto classify = [&](int status, std::string body = "{}") {
    p = play_purchase{};
    return classify_purchase_response(purchase_api::products, status, body, "", p);
  };
  CHECK(classify(200).outcome == store_outcome::confirmed);
  CHECK(classify(410).outcome == store_outcome::confirmed);
  CHECK_FALSE(p.subscription_state);
  CHECK(p.purchase_state == purchase_state::unknown);
  {
    // A subscription Google has forgotten is an expired one (the
    // scheduled refresh stops asking about it).
    play_purchase sub;
    sub.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
    sub.purchase_state = purchase_state::purchased;
    auto v = classify_purchase_response(purchase_api::subscriptions_v2, 410, "", "", sub);
    CHECK(v.outcome == store_outcome::confirmed);
    CHECK(sub.subscription_state == "SUBSCRIPTION_STATE_EXPIRED");
    CHECK(sub.purchase_state == purchase_state::cancelled);
  }
  CHECK(classify(400).outcome == store_outcome::rejected);
  CHECK(classify(404).outcome == store_outcome::rejected);
  for (int s : {401, 403}) {
    auto v = classify(s);
    CHECK(v.outcome == store_outcome::unreachable);
    CHECK(v.operator_problem);
  }
  for (int s : {429, 500, 502, 503, 504, 302})
    CHECK(classify(s).outcome == store_outcome::unreachable);
  CHECK(classify(200, "<html>oops</html>").outcome == store_outcome::unreachable);
  CHECK(classify(0).outcome == store_outcome::unreachable);
}

TEST_CASE("products.get enrichment and test purchases", "[store_b][api]") {
  play_purchase p;
  auto body = data_file(
    "responses/google-play-developer-api/candy_check-products.get-200-valid_but_not_consumed.json");
  auto v = classify_purchase_response(purchase_api::products, 200, body, "", p);
  CHECK(v.outcome == store_outcome::confirmed);
  CHECK(p.kind == product_kind::product);
  CHECK(p.purchase_state == purchase_state::purchased);
  CHECK(p.purchase_time.has_value());

  play_purchase t;
  auto test = classify_purchase_response(
    purchase_api::products, 200,
    R"({"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1700000000000","purchaseState":0,"purchaseType":0,"acknowledgementState":1})",
    "", t);
  CHECK(test.env == environment::sandbox);
  CHECK(t.is_test);
  CHECK(t.acknowledged == true);
  CHECK(t.purchase_time == 1700000000000);
}

TEST_CASE("products.get quantity and refundableQuantity", "[store_b][api][voided]") {
  play_purchase p;
  p.product_id = "coins";
  auto v = classify_purchase_response(
    purchase_api::products, 200,
    R"({"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1700000000000",)"
    R"("purchaseState":0,"quantity":3,"refundableQuantity":1})",
    "", p);
  CHECK(v.outcome == store_outcome::confirmed);
  CHECK(p.quantity == 3);
  CHECK(p.refundable_quantity == 1);

  // Not a count: left unsaid.
  play_purchase odd;
  classify_purchase_response(purchase_api::products, 200,
                             R"({"purchaseState":0,"quantity":-2,"refundableQuantity":"x"})",
                             "", odd);
  CHECK_FALSE(odd.quantity);
  CHECK_FALSE(odd.refundable_quantity);
}

TEST_CASE("subscriptionsv2 enrichment", "[store_b][api]") {
  play_purchase p;
  p.product_id = "";
  auto body
    = data_file("responses/google-play-developer-api/guardian-subscriptionsv2.get-active-GB.json");
  auto v = classify_purchase_response(purchase_api::subscriptions_v2, 200, body, "", p);
  CHECK(v.outcome == store_outcome::confirmed);
  CHECK(v.env == environment::production);
  CHECK(p.kind == product_kind::subscription);
  CHECK(p.subscription_state == std::string("SUBSCRIPTION_STATE_ACTIVE"));
  CHECK(p.expiry_time.has_value());
  CHECK_FALSE(p.product_id.empty());

  play_purchase t;
  auto test = classify_purchase_response(
    purchase_api::subscriptions_v2, 200,
    R"({"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","testPurchase":{},"lineItems":[{"productId":"m","expiryTime":"2030-01-01T00:00:00Z"}]})",
    "", t);
  CHECK(test.env == environment::sandbox);
  CHECK(t.expiry_time == 1893456000000);
}

TEST_CASE("subscriptionsv2 line item fields since 2024", "[store_b][api]") {
  auto answer = [](const std::string& line, const std::string& top = "") {
    play_purchase p;
    p.product_id = "m";
    auto v = classify_purchase_response(
      purchase_api::subscriptions_v2, 200,
      R"({"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE",)" + top
        + R"("lineItems":[{"productId":"m","expiryTime":"2030-01-01T00:00:00Z",)" + line + "}]}",
      "", p);
    REQUIRE(v.outcome == store_outcome::confirmed);
    return p;
  };

  SECTION("latestSuccessfulOrderId wins over the deprecated latestOrderId") {
    auto p = answer(R"("latestSuccessfulOrderId":"GPA.1-2..3","autoRenewingPlan":{})",
                    R"("latestOrderId":"GPA.old",)");
    CHECK(p.latest_order_id == std::optional<std::string>("GPA.1-2..3"));
    CHECK(answer(R"("autoRenewingPlan":{})", R"("latestOrderId":"GPA.old",)").latest_order_id
          == std::optional<std::string>("GPA.old"));
    CHECK_FALSE(answer(R"("autoRenewingPlan":{})").latest_order_id);
  }
  SECTION("offerPhase by name") {
    const std::pair<const char*, const char*> phases[] = {
      {"basePrice", "base_price"},
      {"freeTrial", "free_trial"},
      {"introductoryPrice", "introductory_price"},
      {"prorationPeriod", "proration_period"},
    };
    for (auto [key, name] : phases) {
      auto p = answer(std::string(R"("offerPhase":{")") + key + R"(":{}})");
      CHECK(p.offer_phase == std::optional<std::string>(name));
      CHECK(p.in_free_trial == (std::string(key) == "freeTrial"));
    }
    CHECK_FALSE(answer(R"("offerPhase":{"somethingNew":{}})").offer_phase);
  }
  SECTION("a prepaid plan never renews, and says when it may be topped up") {
    auto p = answer(R"("prepaidPlan":{"allowExtendAfterTime":"2029-12-01T00:00:00Z"})");
    CHECK(p.prepaid == true);
    CHECK(p.auto_renewing == false);
    CHECK(p.allow_extend_after == 1890777600000);
    CHECK_FALSE(p.installments);
  }
  SECTION("an installment plan's commitment, pending cancellation or not") {
    auto p = answer(
      R"("autoRenewingPlan":{"autoRenewEnabled":true,"installmentDetails":{)"
      R"("initialCommittedPaymentsCount":12,"subsequentCommittedPaymentsCount":12,)"
      R"("remainingCommittedPaymentsCount":"9","pendingCancellation":{}}})");
    CHECK(p.prepaid == false);
    CHECK(p.auto_renewing == true);
    REQUIRE(p.installments);
    CHECK(p.installments->initial_payments == 12);
    CHECK(p.installments->subsequent_payments == 12);
    CHECK(p.installments->remaining_payments == 9);
    CHECK(p.installments->pending_cancellation);
    auto plain = answer(R"("autoRenewingPlan":{"installmentDetails":{)"
                        R"("initialCommittedPaymentsCount":-1}})");
    REQUIRE(plain.installments);
    CHECK_FALSE(plain.installments->initial_payments);
    CHECK_FALSE(plain.installments->pending_cancellation);
    CHECK_FALSE(answer(R"("autoRenewingPlan":{"autoRenewEnabled":true})").installments);
  }
  SECTION("a deferred replacement names its product") {
    auto p = answer(R"("autoRenewingPlan":{},"deferredItemReplacement":{"productId":"yearly"})");
    CHECK(p.deferred_product_id == std::optional<std::string>("yearly"));
  }
  SECTION("an answer that no longer says them forgets them") {
    play_purchase p;
    p.product_id = "m";
    p.offer_phase = "free_trial";
    p.prepaid = true;
    p.installments = play_installments{};
    p.deferred_product_id = "yearly";
    p.latest_order_id = "GPA.x";
    classify_purchase_response(
      purchase_api::subscriptions_v2, 200,
      R"({"lineItems":[{"productId":"m","expiryTime":"2030-01-01T00:00:00Z"}]})", "", p);
    CHECK_FALSE(p.offer_phase);
    CHECK_FALSE(p.prepaid);
    CHECK_FALSE(p.installments);
    CHECK_FALSE(p.deferred_product_id);
    CHECK_FALSE(p.latest_order_id);
  }
}

namespace {

std::string make_service_account_json(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  auto len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  boost::json::object o{{"type", "service_account"},
                        {"client_email", "svc@example.iam.gserviceaccount.com"},
                        {"private_key", pem},
                        {"private_key_id", "k1"},
                        {"token_uri", "http://127.0.0.1:1/token"}};
  return boost::json::serialize(o);
}

std::string b64url_decode(std::string s) {
  for (auto& c : s)
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  return *base64_decode(s);
}

} // namespace

TEST_CASE("service-account JWT is RS256 over the documented claims", "[store_b][oauth]") {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  REQUIRE(key);
  auto sa = service_account::parse(make_service_account_json(key));
  REQUIRE(sa);
  auto jwt = (*sa)->make_assertion(1700000000123);
  auto dot1 = jwt.find('.');
  auto dot2 = jwt.rfind('.');
  auto header = boost::json::parse(b64url_decode(jwt.substr(0, dot1)));
  auto claims = boost::json::parse(b64url_decode(jwt.substr(dot1 + 1, dot2 - dot1 - 1)));
  CHECK(header.at("alg") == "RS256");
  CHECK(header.at("kid") == "k1");
  CHECK(claims.at("iss") == "svc@example.iam.gserviceaccount.com");
  CHECK(claims.at("scope") == "https://www.googleapis.com/auth/androidpublisher");
  CHECK(claims.at("aud") == "http://127.0.0.1:1/token");
  CHECK(claims.at("iat") == 1700000000);
  CHECK(claims.at("exp") == 1700003600);
  auto sig = b64url_decode(jwt.substr(dot2 + 1));
  auto input = jwt.substr(0, dot2);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  REQUIRE(EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1);
  CHECK(EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                         reinterpret_cast<const unsigned char*>(input.data()), input.size())
        == 1);
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  CHECK((*sa)->token_request_body(0).rfind(
          "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=", 0)
        == 0);
}

TEST_CASE("bad service accounts and token answers", "[store_b][oauth]") {
  CHECK_FALSE(service_account::parse("nope"));
  CHECK_FALSE(service_account::parse(R"({"client_email":"a"})"));
  CHECK_FALSE(service_account::parse(
    R"({"client_email":"a","private_key":"-----BEGIN PRIVATE KEY-----\nxx\n-----END PRIVATE KEY-----\n"})"));
  auto t = parse_token_response(200, R"({"access_token":"abc","expires_in":3599})", 1000);
  REQUIRE(t);
  CHECK(t->value == "abc");
  CHECK(t->expires_at == 1000 + 3599000);
  CHECK_FALSE(parse_token_response(400, R"({"error":"invalid_grant"})", 0));
  CHECK_FALSE(parse_token_response(200, "<html>", 0));
}

TEST_CASE("local checks of an upload", "[store_b][status]") {
  auto dir = std::string("google-play/voltrue2-trivialdrive-subscription/");
  auto data = data_file(dir + "signed_data.txt");
  auto key = licence_key::parse(data_file(dir + "public_key.b64"));
  REQUIRE(key);
  auto make = [&](const std::string& d, const std::string& s) {
    boost::json::object body{{"purchase_data", d}, {"purchase_signature", s}};
    auto u = parse_store_b_upload(boost::json::serialize(body));
    REQUIRE(u);
    return std::move(u).value();
  };
  app a;
  a.id = "app-1";
  a.package_name = "com.topdox.android.trivialdrivesample2";
  auto upload = make(data, data_file(dir + "signature.b64"));
  CHECK(check_locally(upload, **key, a) == fraud_reason::none);

  auto record = make_record(upload, a, "10.0.0.9", 42);
  CHECK(record.purchase.kind == product_kind::subscription);
  CHECK(first_api(record) == purchase_api::subscriptions_v2);
  CHECK(record.purchase_data == data);
  CHECK(record.echo.ip_address == std::string("10.0.0.9"));
  CHECK(record.state == validation_state::pending);

  SECTION("package name of another app") {
    a.package_name = "com.other";
    CHECK(check_locally(upload, **key, a) == fraud_reason::package_name_mismatch);
  }
  SECTION("tampered data: the signature is checked first") {
    auto tampered = data;
    tampered.replace(tampered.find("1456139019030"), 13, "1456139019031");
    a.package_name = "com.other";
    CHECK(check_locally(make(tampered, data_file(dir + "signature.b64")), **key, a)
          == fraud_reason::invalid_signature);
  }
  SECTION("store verdicts land on the record") {
    store_verdict v;
    v.outcome = store_outcome::confirmed;
    v.env = environment::sandbox;
    apply_store_verdict(record, v);
    CHECK(record.state == validation_state::validated);
    CHECK(record.env == environment::sandbox);
    v.outcome = store_outcome::rejected;
    apply_store_verdict(record, v);
    CHECK(record.state == validation_state::rejected);
    CHECK(record.fraud == fraud_reason::store_rejected);
  }
  SECTION("legacy uploads check the package name and try products first") {
    auto legacy = parse_store_b_legacy_upload(
      R"({"package_name":"com.topdox.android.trivialdrivesample2","purchase_token":"t","product_id":"x"})");
    REQUIRE(legacy);
    CHECK(check_locally(*legacy, a) == fraud_reason::none);
    auto r = make_record(*legacy, a, "::1", 1);
    CHECK(r.is_legacy);
    CHECK(first_api(r) == purchase_api::products);
  }
}

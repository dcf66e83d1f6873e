// Drives the real receiptd-emulator binary over real sockets, through every
// control call and mode of PROTOCOL.md.

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/encoding.hpp"
#include "test_client.hpp"

using namespace emulator_test;
namespace json = boost::json;

namespace {

const std::string data_dir = TEST_DATA_DIR;
const std::string sandbox_receipt_dir = data_dir + "/apple-unified/revenuecat-sample1-sandbox-ios";
const std::string production_receipt_dir
  = data_dir + "/apple-unified/tpinappreceipt-production-ios";
const std::string service_email = "receiptd@example-project.iam.gserviceaccount.com";

std::string verify_body(const std::string& receipt_data, const std::string& password = "") {
  json::object o{{"receipt-data", receipt_data}, {"exclude-old-transactions", false}};
  if (!password.empty())
    o["password"] = password;
  return json::serialize(o);
}

std::int64_t status_of(const http_result& r) {
  return r.json().at("status").as_int64();
}

std::string products_path(const std::string& package, const std::string& product,
                          const std::string& token) {
  return "/androidpublisher/v3/applications/" + package + "/purchases/products/" + product
    + "/tokens/" + token;
}

std::string subscriptions_path(const std::string& package, const std::string& token) {
  return "/androidpublisher/v3/applications/" + package + "/purchases/subscriptionsv2/tokens/"
    + token;
}

// An emulator with a registered service account and a live access token.
struct store_b_fixture {
  emulator_process emulator;
  http_client client;
  rsa_key key;
  std::string access_token;

  store_b_fixture() {
    auto r = client.post(emulator.control_url("/control/store_b/service_accounts"),
                         json::serialize(json::object{{"client_email", service_email},
                                                      {"public_key_pem", key.public_pem()}}));
    REQUIRE(r.status == 200);
    auto token = request_token(make_jwt(key, service_account_claims(service_email, token_url())));
    REQUIRE(token.status == 200);
    access_token = std::string(token.json().at("access_token").as_string());
  }

  std::string token_url() const { return emulator.store_b_url("/token"); }

  http_result request_token(const std::string& assertion) {
    return client.post(token_url(),
                       "grant_type=" + url_encode("urn:ietf:params:oauth:grant-type:jwt-bearer")
                         + "&assertion=" + url_encode(assertion),
                       {"Content-Type: application/x-www-form-urlencoded"});
  }

  http_result get_b(const std::string& path, const std::string& bearer) {
    std::vector<std::string> headers;
    if (!bearer.empty())
      headers.push_back("Authorization: Bearer " + bearer);
    return client.get(emulator.store_b_url(path), headers);
  }

  http_result post_b(const std::string& path, const std::string& body, const std::string& bearer) {
    std::vector<std::string> headers{"Content-Type: application/json"};
    if (!bearer.empty())
      headers.push_back("Authorization: Bearer " + bearer);
    return client.post(emulator.store_b_url(path), body, headers);
  }

  void register_purchase(json::object o) {
    auto r = client.post(emulator.control_url("/control/store_b/purchases"), json::serialize(o));
    REQUIRE(r.status == 200);
  }

  void register_voided(json::object o) {
    auto r = client.post(emulator.control_url("/control/store_b/voided"), json::serialize(o));
    REQUIRE(r.status == 200);
    CHECK(json::serialize(r.json()) == R"({"ok":true})");
  }

  // GET /control/store_b/purchases/{token}
  json::object purchase_state(const std::string& token) {
    auto r = client.get(emulator.control_url("/control/store_b/purchases/" + url_encode(token)));
    REQUIRE(r.status == 200);
    return r.json().as_object();
  }

  std::uint64_t calls(const std::string& name) {
    return client.get(emulator.control_url("/control/calls"))
      .json()
      .at("store_b")
      .at(name)
      .to_number<std::uint64_t>();
  }
};

std::string product_ack_path(const std::string& package, const std::string& product,
                             const std::string& token) {
  return products_path(package, product, url_encode(token)) + ":acknowledge";
}

std::string subscription_ack_path(const std::string& package, const std::string& subscription,
                                  const std::string& token) {
  return "/androidpublisher/v3/applications/" + package + "/purchases/subscriptions/" + subscription
    + "/tokens/" + url_encode(token) + ":acknowledge";
}

std::string voided_path(const std::string& package, const std::string& query = "") {
  return "/androidpublisher/v3/applications/" + package + "/purchases/voidedpurchases"
    + (query.empty() ? "" : "?" + query);
}

std::string google_reason(const http_result& r) {
  return std::string(r.json().at("error").at("errors").at(0).at("reason").as_string());
}

} // namespace

TEST_CASE("control: unknown paths, bad JSON, zero counters, store listing") {
  emulator_process emulator;
  http_client client;

  CHECK(client.get(emulator.control_url("/control/nope")).status == 404);
  CHECK(client.get(emulator.control_url("/elsewhere")).status == 404);
  CHECK(client.get(emulator.control_url("/control/reset")).status == 405);

  auto bad = client.post(emulator.control_url("/control/store_b/purchases"), "{not json");
  CHECK(bad.status == 400);
  CHECK(bad.json().at("error").is_string());
  auto missing
    = client.post(emulator.control_url("/control/store_b/purchases"), R"({"token":"t"})");
  CHECK(missing.status == 400);
  auto wrong_type = client.post(emulator.control_url("/control/store_a/shared_secrets"),
                                R"({"bundle_id":1,"password":"x"})");
  CHECK(wrong_type.status == 400);
  CHECK(client.put(emulator.control_url("/control/stores/store_c/mode"), R"({"mode":"up"})").status
        == 404);
  CHECK(client.put(emulator.control_url("/control/stores/store_a/mode"), R"({"mode":"sideways"})")
          .status
        == 400);
  CHECK(
    client
      .put(emulator.control_url("/control/stores/store_a/mode"), R"({"mode":"slow","delay_ms":-1})")
      .status
    == 400);

  auto calls = client.get(emulator.control_url("/control/calls"));
  REQUIRE(calls.status == 200);
  CHECK(calls.content_type.find("application/json") == 0);
  CHECK(
    json::serialize(calls.json())
    == R"({"store_a":{"production":0,"sandbox":0,"server_api_production":0,"server_api_sandbox":0,"server_api_unauthorized":0,"subscription_statuses_production":0,"subscription_statuses_sandbox":0,"history_production":0,"history_sandbox":0,"consumption":0,"app_transaction_production":0,"app_transaction_sandbox":0},"store_b":{"token":0,"products":0,"subscriptionsv2":0,"acknowledge":0,"voidedpurchases":0,"productsv2":0,"orders":0,"reviewrefund":0}})");

  auto stores = client.get(emulator.control_url("/control/stores")).json();
  CHECK(stores.at("store_a").at("mode").as_string() == "up");
  CHECK(stores.at("store_b").at("port").to_number<int>() == emulator.store_b_port());

  CHECK(client.get(emulator.control_url("/control/requests")).json().as_array().empty());
}

TEST_CASE("store_b token endpoint checks the JWT") {
  store_b_fixture f;
  auto good
    = f.request_token(make_jwt(f.key, service_account_claims(service_email, f.token_url())));
  REQUIRE(good.status == 200);
  auto body = good.json().as_object();
  CHECK(body.at("token_type").as_string() == "Bearer");
  CHECK(body.at("expires_in").as_int64() == 3600);
  CHECK(body.at("access_token").as_string().starts_with("ya29."));

  auto invalid_grant = [](const http_result& r) {
    return r.status == 400 && r.json().at("error").as_string() == "invalid_grant";
  };

  SECTION("bad signature") {
    rsa_key other;
    CHECK(invalid_grant(
      f.request_token(make_jwt(other, service_account_claims(service_email, f.token_url())))));
  }
  SECTION("unknown iss") {
    CHECK(invalid_grant(f.request_token(make_jwt(
      f.key, service_account_claims("stranger@example.iam.gserviceaccount.com", f.token_url())))));
  }
  SECTION("expired") {
    auto claims = service_account_claims(service_email, f.token_url());
    claims["iat"] = unix_now() - 7200;
    claims["exp"] = unix_now() - 3600;
    CHECK(invalid_grant(f.request_token(make_jwt(f.key, claims))));
  }
  SECTION("lifetime over an hour, iat in the future") {
    auto claims = service_account_claims(service_email, f.token_url());
    claims["exp"] = unix_now() + 7200;
    CHECK(invalid_grant(f.request_token(make_jwt(f.key, claims))));
    claims["iat"] = unix_now() + 600;
    claims["exp"] = unix_now() + 1200;
    CHECK(invalid_grant(f.request_token(make_jwt(f.key, claims))));
  }
  SECTION("scope and audience") {
    auto claims = service_account_claims(service_email, f.token_url());
    claims["scope"] = "https://www.googleapis.com/auth/cloud-platform";
    CHECK(invalid_grant(f.request_token(make_jwt(f.key, claims))));
    claims = service_account_claims(service_email, "https://example.com/elsewhere");
    CHECK(invalid_grant(f.request_token(make_jwt(f.key, claims))));
  }
  SECTION("malformed assertions and grants") {
    for (std::string junk :
         {"", "a.b.c", "..", "a.b", "!!!.???.***", "e30.e30.", "e30.e30.e30.e30"})
      CHECK(f.request_token(junk).status == 400);
    auto wrong_grant = f.client.post(f.token_url(), "grant_type=client_credentials");
    CHECK(wrong_grant.status == 400);
    CHECK(wrong_grant.json().at("error").as_string() == "unsupported_grant_type");
    CHECK(f.client.post(f.token_url(), "%zz=%").status == 400);
  }
  SECTION("token lifetime, and a service-account JSON registered as is") {
    REQUIRE(
      f.client.put(f.emulator.control_url("/control/store_b/token_lifetime"), R"({"seconds":120})")
        .status
      == 200);
    rsa_key second;
    auto sa = json::object{{"type", "service_account"},
                           {"client_email", "second@example.iam.gserviceaccount.com"},
                           {"private_key", second.private_pem()},
                           {"token_uri", f.token_url()}};
    REQUIRE(
      f.client
        .post(f.emulator.control_url("/control/store_b/service_accounts"), json::serialize(sa))
        .status
      == 200);
    auto r = f.request_token(make_jwt(
      second, service_account_claims("second@example.iam.gserviceaccount.com", f.token_url())));
    REQUIRE(r.status == 200);
    CHECK(r.json().at("expires_in").as_int64() == 120);
  }
  SECTION("bad key registrations") {
    auto url = f.emulator.control_url("/control/store_b/service_accounts");
    CHECK(f.client.post(url, R"({"client_email":"x","public_key_pem":"not a key"})").status == 400);
    CHECK(f.client.post(url, R"({"client_email":"x"})").status == 400);
  }
}

TEST_CASE("store_b purchase endpoints") {
  store_b_fixture f;
  const std::string pkg = "com.example.game";
  f.register_purchase({{"package_name", pkg},
                       {"product_id", "gems_100"},
                       {"token", "tok-product"},
                       {"kind", "product"},
                       {"test", true},
                       {"order_id", "GPA.3312-0000-0000-00001"},
                       {"purchase_time_ms", 1700000000123}});
  f.register_purchase({{"package_name", pkg},
                       {"product_id", "premium_monthly"},
                       {"token", "tok-sub"},
                       {"kind", "subscription"},
                       {"test", true},
                       {"expiry_ms", 4102444800000},
                       {"purchase_time_ms", 1700000000123}});
  const auto product = products_path(pkg, "gems_100", "tok-product");
  const auto subscription = subscriptions_path(pkg, "tok-sub");

  SECTION("without a valid bearer: 401 UNAUTHENTICATED") {
    for (auto bearer : {std::string(), std::string("ya29.made-up")}) {
      auto r = f.get_b(product, bearer);
      CHECK(r.status == 401);
      CHECK(r.json().at("error").at("status").as_string() == "UNAUTHENTICATED");
    }
    CHECK(
      f.client.get(f.emulator.store_b_url(product), {"Authorization: Basic dXNlcjpwYXNz"}).status
      == 401);
  }
  SECTION("products.get") {
    auto r = f.get_b(product, f.access_token);
    REQUIRE(r.status == 200);
    auto o = r.json().as_object();
    CHECK(o.at("kind").as_string() == "androidpublisher#productPurchase");
    CHECK(o.at("purchaseTimeMillis").as_string() == "1700000000123");
    CHECK(o.at("purchaseState").as_int64() == 0);
    CHECK(o.at("consumptionState").as_int64() == 0);
    CHECK(o.at("orderId").as_string() == "GPA.3312-0000-0000-00001");
    CHECK(o.at("acknowledgementState").as_int64() == 1);
    CHECK(o.at("purchaseType").as_int64() == 0);
    CHECK(o.at("regionCode").as_string() == "US");
  }
  SECTION("subscriptionsv2.get") {
    auto r = f.get_b(subscription, f.access_token);
    REQUIRE(r.status == 200);
    auto o = r.json().as_object();
    CHECK(o.at("kind").as_string() == "androidpublisher#subscriptionPurchaseV2");
    CHECK(o.at("startTime").as_string() == "2023-11-14T22:13:20.123Z");
    CHECK(o.at("subscriptionState").as_string() == "SUBSCRIPTION_STATE_ACTIVE");
    CHECK(o.at("acknowledgementState").as_string() == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED");
    CHECK(o.at("testPurchase").as_object().empty());
    CHECK(o.at("latestOrderId").as_string().starts_with("GPA."));
    auto line = o.at("lineItems").at(0).as_object();
    CHECK(line.at("productId").as_string() == "premium_monthly");
    CHECK(line.at("expiryTime").as_string() == "2100-01-01T00:00:00.000Z");
    CHECK(line.at("autoRenewingPlan").at("autoRenewEnabled").as_bool());
  }
  SECTION("unknown token 404, wrong product / package / kind 400") {
    auto unknown = f.get_b(products_path(pkg, "gems_100", "tok-nobody"), f.access_token);
    CHECK(unknown.status == 404);
    CHECK(google_reason(unknown) == "purchaseTokenNotFound");
    auto wrong_product = f.get_b(products_path(pkg, "gems_500", "tok-product"), f.access_token);
    CHECK(wrong_product.status == 400);
    CHECK(wrong_product.json().at("error").at("message").as_string() == "Invalid Value");
    CHECK(f.get_b(products_path("com.other", "gems_100", "tok-product"), f.access_token).status
          == 400);
    CHECK(f.get_b(subscriptions_path(pkg, "tok-product"), f.access_token).status == 400);
    CHECK(f.get_b(products_path(pkg, "premium_monthly", "tok-sub"), f.access_token).status == 400);
  }
  SECTION("overrides: http_status alone, body alone") {
    f.register_purchase({{"package_name", pkg},
                         {"product_id", "premium_monthly"},
                         {"token", "tok-gone"},
                         {"kind", "subscription"},
                         {"http_status", 410}});
    auto gone = f.get_b(subscriptions_path(pkg, "tok-gone"), f.access_token);
    CHECK(gone.status == 410);
    CHECK(gone.json().at("error").at("code").as_int64() == 410);
    CHECK(gone.json().at("error").at("status").as_string() == "GONE");
    f.register_purchase({{"package_name", pkg},
                         {"product_id", "gems_100"},
                         {"token", "tok-body"},
                         {"body", {{"kind", "custom"}, {"purchaseState", 1}}}});
    auto custom = f.get_b(products_path(pkg, "gems_100", "tok-body"), f.access_token);
    CHECK(custom.status == 200);
    CHECK(json::serialize(custom.json()) == R"({"kind":"custom","purchaseState":1})");
    CHECK(custom.retry_after.empty());
  }
  SECTION("overrides: a quota error with the Retry-After registered, verbatim") {
    f.register_purchase({{"package_name", pkg},
                         {"product_id", "gems_100"},
                         {"token", "tok-quota"},
                         {"http_status", 429},
                         {"retry_after", "Wed, 21 Oct 2037 07:28:00 GMT"}});
    auto limited = f.get_b(products_path(pkg, "gems_100", "tok-quota"), f.access_token);
    CHECK(limited.status == 429);
    CHECK(limited.json().at("error").at("status").as_string() == "RESOURCE_EXHAUSTED");
    CHECK(limited.retry_after == "Wed, 21 Oct 2037 07:28:00 GMT");
  }
  SECTION("revoked and expired tokens") {
    REQUIRE(f.client.post(f.emulator.control_url("/control/store_b/revoke_tokens"), "").status
            == 200);
    CHECK(f.get_b(product, f.access_token).status == 401);
    REQUIRE(
      f.client.put(f.emulator.control_url("/control/store_b/token_lifetime"), R"({"seconds":0})")
        .status
      == 200);
    auto t = f.request_token(make_jwt(f.key, service_account_claims(service_email, f.token_url())));
    REQUIRE(t.status == 200);
    CHECK(t.json().at("expires_in").as_int64() == 0);
    CHECK(f.get_b(product, std::string(t.json().at("access_token").as_string())).status == 401);
  }
  SECTION("calls are counted per endpoint") {
    f.get_b(product, f.access_token);
    f.get_b(subscription, f.access_token);
    f.get_b(subscription, "");
    auto calls = f.client.get(f.emulator.control_url("/control/calls")).json();
    CHECK(calls.at("store_b").at("token").to_number<std::uint64_t>() == 1);
    CHECK(calls.at("store_b").at("products").to_number<std::uint64_t>() == 1);
    CHECK(calls.at("store_b").at("subscriptionsv2").to_number<std::uint64_t>() == 2);
  }
  SECTION("unknown store_b paths") {
    CHECK(f.get_b("/androidpublisher/v3/applications/x/purchases/voided", f.access_token).status
          == 404);
    CHECK(f.get_b("/androidpublisher/v3/applications/%zz/purchases/subscriptionsv2/tokens/t",
                  f.access_token)
            .status
          == 404);
    CHECK(f.client.post(f.emulator.store_b_url(product), "").status == 404);
  }
}

TEST_CASE("store_b productsv2 and orders") {
  store_b_fixture f;
  const std::string pkg = "com.example.v2";
  const auto v2 = [&](const std::string& token) {
    return "/androidpublisher/v3/applications/" + pkg + "/purchases/productsv2/tokens/" + token;
  };
  f.register_purchase({{"package_name", pkg},
                       {"product_id", "gems_100"},
                       {"token", "tok-v2"},
                       {"test", true},
                       {"quantity", 3},
                       {"purchase_option_id", "pack"},
                       {"order_id", "GPA.3312-0000-0000-00002"},
                       {"purchase_time_ms", 1700000000123}});

  SECTION("productsv2: one line item from the registration") {
    auto r = f.get_b(v2("tok-v2"), f.access_token);
    REQUIRE(r.status == 200);
    auto o = r.json().as_object();
    CHECK(o.at("kind").as_string() == "androidpublisher#productPurchaseV2");
    auto item = o.at("productLineItem").at(0);
    CHECK(item.at("productId").as_string() == "gems_100");
    CHECK(item.at("productOfferDetails").at("quantity").as_int64() == 3);
    CHECK(item.at("productOfferDetails").at("refundableQuantity").as_int64() == 3);
    CHECK(item.at("productOfferDetails").at("purchaseOptionId").as_string() == "pack");
    CHECK(item.at("productOfferDetails").at("consumptionState").as_string()
          == "CONSUMPTION_STATE_YET_TO_BE_CONSUMED");
    CHECK(o.at("purchaseStateContext").at("purchaseState").as_string() == "PURCHASED");
    CHECK(o.at("orderId").as_string() == "GPA.3312-0000-0000-00002");
    CHECK(o.at("purchaseCompletionTime").as_string() == "2023-11-14T22:13:20.123Z");
    CHECK(o.at("acknowledgementState").as_string() == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED");
    CHECK(o.at("testPurchaseContext").at("fopType").as_string() == "TEST");
  }
  SECTION("productsv2: registered line items, states, and what it does not know") {
    f.register_purchase({{"package_name", pkg},
                         {"product_id", "premium"},
                         {"token", "tok-two"},
                         {"purchase_state", 2},
                         {"product_line_items",
                          json::array{json::object{{"productId", "premium"}},
                                      json::object{{"productId", "gems_100"}}}}});
    auto two = f.get_b(v2("tok-two"), f.access_token);
    REQUIRE(two.status == 200);
    CHECK(two.json().at("productLineItem").as_array().size() == 2);
    CHECK(two.json().at("purchaseStateContext").at("purchaseState").as_string() == "PENDING");
    CHECK_FALSE(two.json().as_object().contains("purchaseCompletionTime"));
    f.register_purchase({{"package_name", pkg},
                         {"product_id", "premium"},
                         {"token", "tok-v1"},
                         {"productsv2", false}});
    CHECK(f.get_b(v2("tok-v1"), f.access_token).status == 404);
    CHECK(f.get_b(products_path(pkg, "premium", "tok-v1"), f.access_token).status == 200);
    CHECK(f.get_b(v2("tok-unknown"), f.access_token).status == 404);
    CHECK(f.get_b(v2("tok-v2"), "").status == 401);
    f.register_purchase({{"package_name", pkg},
                         {"product_id", "premium"},
                         {"token", "tok-503"},
                         {"http_status", 503}});
    CHECK(f.get_b(v2("tok-503"), f.access_token).status == 503);
  }
  SECTION("orders.get and orders.batchGet, and failures on demand") {
    auto order = [&](const char* id, const char* total) {
      auto r = f.client.post(f.emulator.control_url("/control/store_b/orders"),
                             json::serialize(json::object{{"package_name", pkg},
                                                          {"order_id", id},
                                                          {"currency_code", "EUR"},
                                                          {"total", total},
                                                          {"tax", "0.32"},
                                                          {"refunded", "0.50"}}));
      REQUIRE(r.status == 200);
    };
    order("GPA.1", "1.99");
    order("GPA.2", "10");
    const auto base = "/androidpublisher/v3/applications/" + pkg + "/orders";
    auto one = f.get_b(base + "/GPA.1", f.access_token);
    REQUIRE(one.status == 200);
    CHECK(one.json().at("orderId").as_string() == "GPA.1");
    CHECK(one.json().at("total")
          == json::parse(R"({"currencyCode":"EUR","units":"1","nanos":990000000})"));
    CHECK(one.json().at("orderHistory").at("refundEvent").at("refundDetails").at("total").at(
            "nanos")
          == 500000000);
    CHECK(f.get_b(base + "/GPA.9", f.access_token).status == 404);
    // Over HTTP/1.1 the emulator reads a comma list (Pistache keeps one orderIds).
    auto both = f.get_b(base + ":batchGet?orderIds=GPA.2,GPA.1", f.access_token);
    REQUIRE(both.status == 200);
    REQUIRE(both.json().at("orders").as_array().size() == 2);
    CHECK(both.json().at("orders").at(0).at("orderId").as_string() == "GPA.2");
    CHECK(f.get_b(base + ":batchGet?orderIds=GPA.2,GPA.9", f.access_token).status == 404);
    CHECK(f.get_b(base + ":batchGet?orderIds=GPA.2,GPA.2", f.access_token).status == 400);
    CHECK(f.get_b(base + ":batchGet", f.access_token).status == 400);
    REQUIRE(f.client
              .post(f.emulator.control_url("/control/store_b/orders_failures"),
                    R"({"count":1,"status":429})")
              .status
            == 200);
    CHECK(f.get_b(base + "/GPA.1", f.access_token).status == 429);
    CHECK(f.get_b(base + "/GPA.1", f.access_token).status == 200);
    auto calls = f.client.get(f.emulator.control_url("/control/calls")).json();
    CHECK(calls.at("store_b").at("orders").to_number<std::uint64_t>() == 8);
  }
}

TEST_CASE("store_b accept_unregistered: any token of a package is a valid purchase") {
  store_b_fixture f;
  const std::string pkg = "com.example.bench";
  const auto control = f.emulator.control_url("/control/store_b/accept_unregistered");
  f.register_purchase({{"package_name", pkg},
                       {"product_id", "gems_100"},
                       {"token", "tok-gone"},
                       {"http_status", 410}});

  // Off by default: an unknown token is 404.
  CHECK(f.get_b(products_path(pkg, "gems_100", "tok-any-1"), f.access_token).status == 404);

  auto on = f.client.put(control,
                         json::serialize(json::object{{"package_name", pkg}, {"kind", "product"}}));
  REQUIRE(on.status == 200);
  CHECK(on.json().at("ok").as_bool());

  SECTION("products.get answers any token of that package") {
    auto r = f.get_b(products_path(pkg, "gems_100", "tok-any-1"), f.access_token);
    REQUIRE(r.status == 200);
    auto o = r.json().as_object();
    CHECK(o.at("kind").as_string() == "androidpublisher#productPurchase");
    CHECK(o.at("purchaseState").as_int64() == 0);
    CHECK(o.at("acknowledgementState").as_int64() == 1);
    CHECK(!o.contains("purchaseType"));
    auto order = std::string(o.at("orderId").as_string());
    CHECK(order.starts_with("GPA.33"));
    auto again = f.get_b(products_path(pkg, "gems_100", "tok-any-1"), f.access_token);
    CHECK(std::string(again.json().at("orderId").as_string()) == order); // stable per token
    CHECK(f.get_b(products_path(pkg, "other_product", "tok-any-2"), f.access_token).status == 200);
  }
  SECTION("registered tokens, other packages, other kinds and auth are unchanged") {
    CHECK(f.get_b(products_path(pkg, "gems_100", "tok-gone"), f.access_token).status == 410);
    CHECK(f.get_b(products_path("com.other", "gems_100", "tok-any-1"), f.access_token).status
          == 404);
    CHECK(f.get_b(subscriptions_path(pkg, "tok-any-1"), f.access_token).status == 404);
    CHECK(f.get_b(products_path(pkg, "gems_100", "tok-any-1"), "ya29.made-up").status == 401);
  }
  SECTION("subscriptions, test purchases, switching off, reset") {
    auto sub = f.client.put(control,
                            json::serialize(json::object{{"package_name", pkg},
                                                         {"kind", "subscription"},
                                                         {"test", true},
                                                         {"product_id", "premium_monthly"}}));
    REQUIRE(sub.status == 200);
    auto r = f.get_b(subscriptions_path(pkg, "tok-any-3"), f.access_token);
    REQUIRE(r.status == 200);
    auto o = r.json().as_object();
    CHECK(o.at("subscriptionState").as_string() == "SUBSCRIPTION_STATE_ACTIVE");
    CHECK(o.at("testPurchase").as_object().empty());
    CHECK(o.at("lineItems").at(0).at("productId").as_string() == "premium_monthly");
    CHECK(f.get_b(products_path(pkg, "gems_100", "tok-any-3"), f.access_token).status == 404);

    auto off = f.client.put(
      control, json::serialize(json::object{{"package_name", pkg}, {"enabled", false}}));
    REQUIRE(off.status == 200);
    CHECK(f.get_b(subscriptions_path(pkg, "tok-any-3"), f.access_token).status == 404);

    REQUIRE(f.client.put(control, json::serialize(json::object{{"package_name", pkg}})).status
            == 200);
    REQUIRE(f.client.post(f.emulator.control_url("/control/reset"), "").status == 200);
    REQUIRE(f.client
              .post(f.emulator.control_url("/control/store_b/service_accounts"),
                    json::serialize(json::object{{"client_email", service_email},
                                                 {"public_key_pem", f.key.public_pem()}}))
              .status
            == 200);
    auto token
      = f.request_token(make_jwt(f.key, service_account_claims(service_email, f.token_url())));
    REQUIRE(token.status == 200);
    auto fresh = std::string(token.json().at("access_token").as_string());
    CHECK(f.get_b(products_path(pkg, "gems_100", "tok-any-4"), fresh).status == 404);
  }
  SECTION("bad bodies and methods") {
    CHECK(f.client.put(control, R"({"kind":"product"})").status == 400);
    CHECK(f.client.put(control, R"({"package_name":"p","kind":"book"})").status == 400);
    CHECK(f.client.put(control, R"({"package_name":"p","test":"yes"})").status == 400);
    CHECK(f.client.get(control).status == 405);
  }
}

TEST_CASE("store_b acknowledge: products and subscriptions") {
  store_b_fixture f;
  const std::string pkg = "com.example.game";
  // Play tokens are opaque; this one needs percent-encoding in the path.
  const std::string product_token = "tok/product+1=";
  f.register_purchase({{"package_name", pkg},
                       {"product_id", "gems_100"},
                       {"token", product_token},
                       {"acknowledged", false}});
  f.register_purchase({{"package_name", pkg},
                       {"product_id", "premium_monthly"},
                       {"token", "tok-sub"},
                       {"kind", "subscription"},
                       {"acknowledged", false},
                       {"expiry_ms", 4102444800000}});
  const auto product_get = products_path(pkg, "gems_100", url_encode(product_token));
  const auto product_ack = product_ack_path(pkg, "gems_100", product_token);
  const auto subscription_ack = subscription_ack_path(pkg, "premium_monthly", "tok-sub");

  SECTION("a product: 200 with an empty body, then acknowledged in products.get") {
    REQUIRE(f.get_b(product_get, f.access_token).json().at("acknowledgementState").as_int64() == 0);
    auto r = f.post_b(product_ack, R"({"developerPayload":"order 42"})", f.access_token);
    CHECK(r.status == 200);
    CHECK(r.body.empty());
    auto o = f.get_b(product_get, f.access_token).json().as_object();
    CHECK(o.at("acknowledgementState").as_int64() == 1);
    CHECK(o.at("developerPayload").as_string() == "order 42");
    auto state = f.purchase_state(product_token);
    CHECK(state.at("ok").as_bool());
    CHECK(state.at("package_name").as_string() == pkg);
    CHECK(state.at("product_id").as_string() == "gems_100");
    CHECK(state.at("kind").as_string() == "product");
    CHECK(state.at("acknowledged").as_bool());
    CHECK(state.at("acknowledge_calls").as_int64() == 1);
    CHECK(state.at("purchase_state").as_int64() == 0);

    // Idempotent: again 200, still acknowledged, the call counted.
    auto again = f.post_b(product_ack, "", f.access_token);
    CHECK(again.status == 200);
    CHECK(again.body.empty());
    CHECK(f.purchase_state(product_token).at("acknowledged").as_bool());
    CHECK(f.purchase_state(product_token).at("acknowledge_calls").as_int64() == 2);
    CHECK(f.post_b(product_ack, "{}", f.access_token).status == 200);
    CHECK(f.calls("acknowledge") == 3);
  }
  SECTION("a subscription: acknowledged in subscriptionsv2.get") {
    REQUIRE(f.get_b(subscriptions_path(pkg, "tok-sub"), f.access_token)
              .json()
              .at("acknowledgementState")
              .as_string()
            == "ACKNOWLEDGEMENT_STATE_PENDING");
    auto r = f.post_b(subscription_ack, "", f.access_token);
    CHECK(r.status == 200);
    CHECK(r.body.empty());
    CHECK(f.get_b(subscriptions_path(pkg, "tok-sub"), f.access_token)
            .json()
            .at("acknowledgementState")
            .as_string()
          == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED");
    auto state = f.purchase_state("tok-sub");
    CHECK(state.at("kind").as_string() == "subscription");
    CHECK(state.at("acknowledged").as_bool());
    CHECK(state.at("acknowledge_calls").as_int64() == 1);
  }
  SECTION("unknown token, other package / product / kind: 404, nothing changes") {
    for (const auto& path : {product_ack_path(pkg, "gems_100", "tok-nobody"),
                             product_ack_path("com.other", "gems_100", product_token),
                             product_ack_path(pkg, "gems_500", product_token),
                             subscription_ack_path(pkg, "gems_100", product_token),
                             product_ack_path(pkg, "premium_monthly", "tok-sub"),
                             subscription_ack_path(pkg, "premium_yearly", "tok-sub")}) {
      auto r = f.post_b(path, "", f.access_token);
      CHECK(r.status == 404);
      CHECK(r.json().at("error").at("status").as_string() == "NOT_FOUND");
    }
    CHECK_FALSE(f.purchase_state(product_token).at("acknowledged").as_bool());
    CHECK_FALSE(f.purchase_state("tok-sub").at("acknowledged").as_bool());
    auto missing = f.client.get(f.emulator.control_url("/control/store_b/purchases/tok-nobody"));
    CHECK(missing.status == 404);
    CHECK(missing.json().at("error").is_string());
    CHECK(f.calls("acknowledge") == 6);
  }
  SECTION("a cancelled product, a pending subscription: 400, not acknowledged") {
    f.register_purchase({{"package_name", pkg},
                         {"product_id", "gems_100"},
                         {"token", "tok-cancelled"},
                         {"purchase_state", 1},
                         {"acknowledged", false}});
    f.register_purchase({{"package_name", pkg},
                         {"product_id", "premium_monthly"},
                         {"token", "tok-pending"},
                         {"kind", "subscription"},
                         {"purchase_state", 2},
                         {"acknowledged", false}});
    auto cancelled
      = f.post_b(product_ack_path(pkg, "gems_100", "tok-cancelled"), "", f.access_token);
    CHECK(cancelled.status == 400);
    CHECK(cancelled.json().at("error").at("message").as_string()
          == "The purchase is not in a valid state to perform the desired operation.");
    CHECK(cancelled.json().at("error").at("status").as_string() == "INVALID_ARGUMENT");
    CHECK(f.post_b(subscription_ack_path(pkg, "premium_monthly", "tok-pending"), "", f.access_token)
            .status
          == 400);
    auto state = f.purchase_state("tok-cancelled");
    CHECK_FALSE(state.at("acknowledged").as_bool());
    CHECK(state.at("acknowledge_calls").as_int64() == 1);
    CHECK(state.at("purchase_state").as_int64() == 1);
    CHECK_FALSE(f.purchase_state("tok-pending").at("acknowledged").as_bool());
  }
  SECTION("without a valid bearer: 401, nothing changes") {
    for (auto bearer : {std::string(), std::string("ya29.made-up")}) {
      auto r = f.post_b(product_ack, "", bearer);
      CHECK(r.status == 401);
      CHECK(r.json().at("error").at("status").as_string() == "UNAUTHENTICATED");
    }
    CHECK_FALSE(f.purchase_state(product_token).at("acknowledged").as_bool());
    CHECK(f.purchase_state(product_token).at("acknowledge_calls").as_int64() == 0);
  }
  SECTION("injected failures, then success") {
    auto control = f.emulator.control_url("/control/store_b/acknowledge_failures");
    auto set = f.client.post(control, R"({"count":2,"status":503})");
    REQUIRE(set.status == 200);
    CHECK(json::serialize(set.json()) == R"({"count":2,"status":503,"ok":true})");
    for (int i = 0; i < 2; ++i) {
      auto r = f.post_b(product_ack, "", f.access_token);
      CHECK(r.status == 503);
      CHECK(r.json().at("error").at("code").as_int64() == 503);
      CHECK_FALSE(f.purchase_state(product_token).at("acknowledged").as_bool());
    }
    CHECK(f.post_b(product_ack, "", f.access_token).status == 200);
    auto state = f.purchase_state(product_token);
    CHECK(state.at("acknowledged").as_bool());
    CHECK(state.at("acknowledge_calls").as_int64() == 3);

    // Any purchase, status default 503, count 0 clears.
    REQUIRE(f.client.put(control, R"({"count":1,"status":429})").status == 200);
    CHECK(f.post_b(subscription_ack, "", f.access_token).status == 429);
    CHECK_FALSE(f.purchase_state("tok-sub").at("acknowledged").as_bool());
    CHECK(f.client.post(control, R"({"count":5})").json().at("status").as_int64() == 503);
    REQUIRE(f.client.post(control, R"({"count":0})").status == 200);
    CHECK(f.post_b(subscription_ack, "", f.access_token).status == 200);
    CHECK(f.calls("acknowledge") == 5);

    CHECK(f.client.post(control, R"({"status":503})").status == 400);
    CHECK(f.client.post(control, R"({"count":1,"status":600})").status == 400);
    CHECK(f.client.post(control, R"({"count":-1})").status == 400);
  }
  SECTION("reset forgets injected failures") {
    REQUIRE(
      f.client
        .post(f.emulator.control_url("/control/store_b/acknowledge_failures"), R"({"count":3})")
        .status
      == 200);
    REQUIRE(f.client.post(f.emulator.control_url("/control/reset"), "").status == 200);
    REQUIRE(f.client
              .post(f.emulator.control_url("/control/store_b/service_accounts"),
                    json::serialize(json::object{{"client_email", service_email},
                                                 {"public_key_pem", f.key.public_pem()}}))
              .status
            == 200);
    auto token
      = f.request_token(make_jwt(f.key, service_account_claims(service_email, f.token_url())));
    REQUIRE(token.status == 200);
    auto fresh = std::string(token.json().at("access_token").as_string());
    f.register_purchase({{"package_name", pkg},
                         {"product_id", "gems_100"},
                         {"token", product_token},
                         {"acknowledged", false}});
    CHECK(f.post_b(product_ack, "", fresh).status == 200);
  }
  SECTION("the GET overrides do not apply; bodies, methods and modes") {
    f.register_purchase({{"package_name", pkg},
                         {"product_id", "gems_100"},
                         {"token", "tok-override"},
                         {"acknowledged", false},
                         {"http_status", 410}});
    CHECK(f.post_b(product_ack_path(pkg, "gems_100", "tok-override"), "", f.access_token).status
          == 200);
    CHECK(f.purchase_state("tok-override").at("acknowledged").as_bool());

    CHECK(f.post_b(product_ack, "{not json", f.access_token).status == 400);
    CHECK(f.post_b(product_ack, R"({"developerPayload":7})", f.access_token).status == 400);
    CHECK_FALSE(f.purchase_state(product_token).at("acknowledged").as_bool());
    // GET on an acknowledge path, POST on a get path: no such endpoint.
    CHECK(google_reason(f.get_b(product_ack, f.access_token)) == "notFound");
    CHECK(google_reason(f.post_b(product_get, "", f.access_token)) == "notFound");
    CHECK(f.client.post(f.emulator.control_url("/control/store_b/purchases/tok-sub"), "{}").status
          == 405);

    REQUIRE(
      f.client.put(f.emulator.control_url("/control/stores/store_b/mode"), R"({"mode":"error"})")
        .status
      == 200);
    CHECK(f.post_b(product_ack, "", f.access_token).status == 503);
    CHECK_FALSE(f.purchase_state(product_token).at("acknowledged").as_bool());
    REQUIRE(f.client
              .put(f.emulator.control_url("/control/stores/store_b/mode"),
                   R"({"mode":"slow","delay_ms":200})")
              .status
            == 200);
    auto slow = f.post_b(product_ack, "", f.access_token);
    CHECK(slow.status == 200);
    CHECK(slow.seconds >= 0.2);
    CHECK(f.purchase_state(product_token).at("acknowledged").as_bool());
  }
}

TEST_CASE("store_b voided purchases list") {
  store_b_fixture f;
  const std::string pkg = "com.example.game";
  const std::int64_t now = unix_now() * 1000;
  const std::int64_t hour = 3600 * 1000;
  const std::int64_t day = 24 * hour;
  // As receiptd asks: quantity-based partial refunds included (but where a
  // section says otherwise).
  auto list_as_is
    = [&](const std::string& query) { return f.get_b(voided_path(pkg, query), f.access_token); };
  auto list = [&](const std::string& query) {
    return list_as_is(query + (query.empty() ? "" : "&") + "includeQuantityBasedPartialRefund=true");
  };
  auto tokens_of = [](const json::value& answer) {
    std::vector<std::string> out;
    if (auto* v = answer.as_object().if_contains("voidedPurchases"))
      for (const auto& e : v->as_array())
        out.emplace_back(e.at("purchaseToken").as_string());
    return out;
  };

  SECTION("nothing voided: {}") {
    auto r = list("");
    REQUIRE(r.status == 200);
    CHECK(json::serialize(r.json()) == "{}");
    CHECK(f.calls("voidedpurchases") == 1);
  }

  // Five voided products, one voided subscription, one of another package.
  f.register_purchase({{"package_name", pkg},
                       {"product_id", "gems_100"},
                       {"token", "v-registered"},
                       {"order_id", "GPA.3312-1111-2222-33333"},
                       {"purchase_time_ms", now - 10 * day}});
  f.register_voided(
    {{"package_name", pkg}, {"token", "v-registered"}, {"voided_time_ms", now - 5 * hour}});
  f.register_voided({{"package_name", pkg},
                     {"token", "v-b"},
                     {"voided_time_ms", now - 4 * hour},
                     {"voided_source", 2},
                     {"voided_reason", 7},
                     {"voided_quantity", 2}});
  f.register_voided({{"package_name", pkg}, {"token", "v-a"}, {"voided_time_ms", now - 4 * hour}});
  f.register_voided({{"package_name", pkg},
                     {"token", "v-late"},
                     {"order_id", "GPA.custom"},
                     {"purchase_time_ms", now - 2 * day},
                     {"voided_time_ms", now - 1 * hour}});
  f.register_voided(
    {{"package_name", pkg}, {"token", "v-old"}, {"voided_time_ms", now - 20 * day}});
  f.register_voided({{"package_name", pkg},
                     {"token", "v-sub"},
                     {"kind", "subscription"},
                     {"voided_time_ms", now - 3 * hour}});
  f.register_voided(
    {{"package_name", "com.other"}, {"token", "v-other"}, {"voided_time_ms", now - hour}});
  const std::vector<std::string> products{"v-old", "v-registered", "v-a", "v-b", "v-late"};

  SECTION("default window and type: this package's products, by voided time then token") {
    auto r = list("");
    REQUIRE(r.status == 200);
    auto o = r.json().as_object();
    CHECK(!o.contains("tokenPagination"));
    CHECK(tokens_of(o) == products);
    auto entries = o.at("voidedPurchases").as_array();
    auto registered = entries[1].as_object();
    CHECK(json::serialize(registered)
          == json::serialize(json::object{{"kind", "androidpublisher#voidedPurchase"},
                                          {"purchaseToken", "v-registered"},
                                          {"purchaseTimeMillis", std::to_string(now - 10 * day)},
                                          {"voidedTimeMillis", std::to_string(now - 5 * hour)},
                                          {"orderId", "GPA.3312-1111-2222-33333"},
                                          {"voidedSource", 0},
                                          {"voidedReason", 0}}));
    auto b = entries[3].as_object();
    CHECK(b.at("voidedSource").as_int64() == 2);
    CHECK(b.at("voidedReason").as_int64() == 7);
    CHECK(b.at("voidedQuantity").as_int64() == 2);
    CHECK(b.at("purchaseTimeMillis").as_string() == std::to_string(now - 4 * hour - day));
    CHECK(b.at("orderId").as_string().starts_with("GPA.voided-"));
    CHECK(entries[4].at("orderId").as_string() == "GPA.custom");
    CHECK(entries[4].at("purchaseTimeMillis").as_string() == std::to_string(now - 2 * day));
  }
  SECTION("quantity-based partial refunds only with includeQuantityBasedPartialRefund=true") {
    const std::vector<std::string> whole{"v-old", "v-registered", "v-a", "v-late"};
    CHECK(tokens_of(list_as_is("").json()) == whole);
    CHECK(tokens_of(list_as_is("includeQuantityBasedPartialRefund=false").json()) == whole);
    CHECK(tokens_of(list("").json()) == products);
  }
  SECTION("type=1 adds subscriptions") {
    CHECK(tokens_of(list("type=1").json())
          == std::vector<std::string>{"v-old", "v-registered", "v-a", "v-b", "v-sub", "v-late"});
    CHECK(tokens_of(list("type=0").json()) == products);
  }
  SECTION("the window: startTime <= voidedTimeMillis <= endTime") {
    auto r = list("startTime=" + std::to_string(now - 5 * hour)
                  + "&endTime=" + std::to_string(now - 4 * hour) + "&type=1");
    REQUIRE(r.status == 200);
    CHECK(tokens_of(r.json()) == std::vector<std::string>{"v-registered", "v-a", "v-b"});
    CHECK(tokens_of(list("endTime=" + std::to_string(now - 2 * day)).json())
          == std::vector<std::string>{"v-old"});
    CHECK(json::serialize(list("startTime=" + std::to_string(now - 30 * day)
                               + "&endTime=" + std::to_string(now - 25 * day))
                            .json())
          == "{}");
  }
  SECTION("maxResults=2: three pages joined by nextPageToken") {
    std::vector<std::string> seen;
    auto page1 = list("maxResults=2").json().as_object();
    CHECK(tokens_of(page1).size() == 2);
    auto next1 = std::string(page1.at("tokenPagination").at("nextPageToken").as_string());
    auto page2 = list("maxResults=2&token=" + url_encode(next1)).json().as_object();
    CHECK(tokens_of(page2).size() == 2);
    auto next2 = std::string(page2.at("tokenPagination").at("nextPageToken").as_string());
    CHECK(next2 != next1);
    auto page3 = list("maxResults=2&token=" + url_encode(next2)).json().as_object();
    CHECK(tokens_of(page3).size() == 1);
    CHECK(!page3.contains("tokenPagination"));
    for (const auto* page : {&page1, &page2, &page3})
      for (auto& t : tokens_of(*page))
        seen.push_back(t);
    CHECK(seen == products);
    // The same token again gives the same page.
    CHECK(tokens_of(list("maxResults=2&token=" + url_encode(next1)).json()) == tokens_of(page2));
  }
  SECTION("the same token again replaces its entry") {
    f.register_voided(
      {{"package_name", pkg}, {"token", "v-old"}, {"voided_time_ms", now - 30 * 60 * 1000}});
    CHECK(tokens_of(list("").json())
          == std::vector<std::string>{"v-registered", "v-a", "v-b", "v-late", "v-old"});
  }
  SECTION("bad queries: 400; no bearer: 401") {
    auto too_old = list("startTime=" + std::to_string(now - 31 * day));
    CHECK(too_old.status == 400);
    CHECK(too_old.json().at("error").at("message").as_string()
          == "startTime is too far in the past");
    CHECK(list("startTime=" + std::to_string(now - 30 * day)).status == 200);
    CHECK(
      list("startTime=" + std::to_string(now - hour) + "&endTime=" + std::to_string(now - 2 * hour))
        .status
      == 400);
    for (std::string q :
         {"maxResults=0", "maxResults=1001", "maxResults=x", "type=2", "startTime=yesterday",
          "endTime=1e12", "token=nonsense", "token=0123456789abcdef"}) {
      auto r = list(q);
      CHECK(r.status == 400);
      CHECK(r.json().at("error").at("code").as_int64() == 400);
    }
    CHECK(list("maxResults=1000").status == 200);
    CHECK(f.get_b(voided_path(pkg), "").status == 401);
    CHECK(f.get_b(voided_path(pkg), "ya29.made-up").status == 401);
    CHECK(google_reason(f.post_b(voided_path(pkg), "", f.access_token)) == "notFound");
  }
  SECTION("control: bad registrations, reset forgets") {
    auto url = f.emulator.control_url("/control/store_b/voided");
    CHECK(f.client.post(url, R"({"token":"t"})").status == 400);
    CHECK(f.client.post(url, R"({"package_name":"p"})").status == 400);
    CHECK(f.client.post(url, R"({"package_name":"p","token":"t","voided_source":3})").status
          == 400);
    CHECK(f.client.post(url, R"({"package_name":"p","token":"t","voided_reason":8})").status
          == 400);
    CHECK(f.client.post(url, R"({"package_name":"p","token":"t","kind":"book"})").status == 400);
    CHECK(f.client.get(url).status == 405);
    REQUIRE(f.client.post(f.emulator.control_url("/control/reset"), "").status == 200);
    REQUIRE(f.client
              .post(f.emulator.control_url("/control/store_b/service_accounts"),
                    json::serialize(json::object{{"client_email", service_email},
                                                 {"public_key_pem", f.key.public_pem()}}))
              .status
            == 200);
    auto token
      = f.request_token(make_jwt(f.key, service_account_claims(service_email, f.token_url())));
    REQUIRE(token.status == 200);
    auto fresh = std::string(token.json().at("access_token").as_string());
    auto r = f.get_b(voided_path(pkg), fresh);
    REQUIRE(r.status == 200);
    CHECK(json::serialize(r.json()) == "{}");
  }
  SECTION("modes apply") {
    REQUIRE(f.client
              .put(f.emulator.control_url("/control/stores/store_b/mode"),
                   R"({"mode":"error","status":500})")
              .status
            == 200);
    CHECK(list("").status == 500);
    CHECK(f.calls("voidedpurchases") == 1);
  }
}

TEST_CASE("store_a verifyReceipt") {
  emulator_process emulator;
  http_client client;
  const auto sandbox = read_file(sandbox_receipt_dir + "/receipt.b64");
  const auto production = read_file(production_receipt_dir + "/receipt.b64");
  const auto prod_url = emulator.store_a_url("/verifyReceipt");
  const auto sandbox_url = emulator.store_a_url("/sandbox/verifyReceipt");

  SECTION("a sandbox receipt: 21007 on production, a realistic body on sandbox") {
    CHECK(status_of(client.post(prod_url, verify_body(sandbox))) == 21007);
    auto r = client.post(sandbox_url, verify_body(sandbox));
    REQUIRE(r.status == 200);
    auto o = r.json().as_object();
    CHECK(o.at("status").as_int64() == 0);
    CHECK(o.at("environment").as_string() == "Sandbox");
    CHECK(o.at("latest_receipt").as_string() == sandbox);
    auto receipt = o.at("receipt").as_object();
    CHECK(receipt.at("bundle_id").as_string() == "com.revenuecat.sampleapp");
    CHECK(receipt.at("receipt_creation_date_ms").as_string() == "1595439548000");
    CHECK(receipt.at("receipt_creation_date").as_string() == "2020-07-22 17:39:08 Etc/GMT");
    // The first in-app entry of
    // tests/data/responses/apple-verifyReceipt/revenuecat-verifyReceiptSample1.json.
    auto first = receipt.at("in_app").at(0).as_object();
    CHECK(receipt.at("in_app").as_array().size() == 9);
    CHECK(first.at("quantity").as_string() == "1");
    CHECK(first.at("product_id").as_string() == "com.revenuecat.monthly_4.99.1_week_intro");
    CHECK(first.at("transaction_id").as_string() == "1000000692879214");
    CHECK(first.at("purchase_date").as_string() == "2020-07-14 19:36:40 Etc/GMT");
    CHECK(first.at("purchase_date_ms").as_string() == "1594755400000");
    CHECK(first.at("purchase_date_pst").as_string() == "2020-07-14 12:36:40 America/Los_Angeles");
    CHECK(first.at("expires_date_ms").as_string() == "1594755700000");
    CHECK(first.at("web_order_line_item_id").as_string() == "1000000054042695");
    CHECK(first.at("is_trial_period").as_string() == "false");
    CHECK(o.at("latest_receipt_info").as_array().size() == 9);
    CHECK(o.at("pending_renewal_info").as_array().size() >= 1);
  }
  SECTION("exclude-old-transactions keeps the latest renewal of each subscription") {
    json::object request{{"receipt-data", sandbox}, {"exclude-old-transactions", true}};
    auto o = client.post(sandbox_url, json::serialize(request)).json();
    auto latest = o.at("latest_receipt_info").as_array();
    CHECK(latest.size() < 9);
    CHECK(latest.size() == o.at("pending_renewal_info").as_array().size());
  }
  SECTION("an iOS 6 transaction receipt: purchase-info echoed with Apple's underscored keys") {
    auto receipt
      = read_file(data_dir + "/apple-transaction/es-purchaser-consumable-sandbox-2015/receipt.b64");
    CHECK(status_of(client.post(prod_url, verify_body(receipt))) == 21007);
    auto o = client.post(sandbox_url, verify_body(receipt)).json().as_object();
    CHECK(o.at("status").as_int64() == 0);
    CHECK(o.at("environment").as_string() == "Sandbox");
    auto r = o.at("receipt").as_object();
    CHECK(r.at("bid").as_string() == "com.es.Purchaser");
    CHECK(r.at("product_id").as_string() == "purchaser.consumableFeature");
    CHECK(r.at("transaction_id").as_string() == "1000000181492557");
    CHECK(r.at("purchase_date_ms").as_string() == "1448296347138");
    CHECK(!r.contains("product-id"));
  }
  SECTION("belongs_to: a receipt calling itself production that the store knows as sandbox") {
    auto reg = client.post(
      emulator.control_url("/control/store_a/receipts"),
      json::serialize(json::object{{"receipt_data", production}, {"belongs_to", "Sandbox"}}));
    REQUIRE(reg.status == 200);
    CHECK(status_of(client.post(prod_url, verify_body(production))) == 21007);
    auto r = client.post(sandbox_url, verify_body(production));
    CHECK(status_of(r) == 0);
    CHECK(r.json().at("environment").as_string() == "Sandbox");
  }
  SECTION("a production receipt: 21008 on sandbox, 0 on production") {
    CHECK(status_of(client.post(sandbox_url, verify_body(production))) == 21008);
    auto r = client.post(prod_url, verify_body(production));
    CHECK(status_of(r) == 0);
    CHECK(r.json().at("environment").as_string() == "Production");
  }
  SECTION("garbage: 21002") {
    for (std::string body :
         {std::string("not json"), std::string("{}"), std::string("[1,2]"),
          std::string(R"({"receipt-data":42})"), verify_body("!!!not base64!!!"),
          verify_body(receiptd::model::base64_encode("hello, I am not a receipt"))}) {
      auto r = client.post(prod_url, body);
      CHECK(r.status == 200);
      CHECK(status_of(r) == 21002);
    }
    CHECK(status_of(client.get(prod_url)) == 21000); // Apple: not a POST
  }
  SECTION("registered answers win") {
    auto reg = [&](json::object o) {
      auto r = client.post(emulator.control_url("/control/store_a/receipts"), json::serialize(o));
      REQUIRE(r.status == 200);
      return r;
    };
    reg({{"receipt_data", sandbox}, {"status", 21010}});
    CHECK(status_of(client.post(prod_url, verify_body(sandbox))) == 21010);
    CHECK(status_of(client.post(sandbox_url, verify_body(sandbox))) == 21010);

    auto bytes = *receiptd::model::base64_decode(production);
    reg({{"receipt_sha256", receiptd::model::sha256_hex(bytes)},
         {"status", 21199},
         {"is_retryable", true},
         {"environment", "Production"}});
    auto retry = client.post(prod_url, verify_body(production)).json();
    CHECK(retry.at("status").as_int64() == 21199);
    CHECK(retry.at("is-retryable").as_bool());
    CHECK(retry.at("environment").as_string() == "Production");

    reg({{"receipt_data", production}, {"body", {{"status", 0}, {"custom", "yes"}}}});
    CHECK(json::serialize(client.post(sandbox_url, verify_body(production)).json())
          == R"({"status":0,"custom":"yes"})");

    // Even bytes that are no receipt can be given an answer.
    auto junk = receiptd::model::base64_encode("synthetic receipt bytes");
    reg({{"receipt_data", junk}, {"status", 0}});
    auto ok = client.post(prod_url, verify_body(junk)).json();
    CHECK(ok.at("status").as_int64() == 0);

    CHECK(client.post(emulator.control_url("/control/store_a/receipts"), R"({"status":0})").status
          == 400);
    CHECK(
      client.post(emulator.control_url("/control/store_a/receipts"), R"({"receipt_sha256":"abc"})")
        .status
      == 400);
  }
  SECTION("shared secret: 21004 unless the password matches") {
    REQUIRE(client
              .post(emulator.control_url("/control/store_a/shared_secrets"),
                    R"({"bundle_id":"com.revenuecat.sampleapp","password":"s3cret"})")
              .status
            == 200);
    CHECK(status_of(client.post(sandbox_url, verify_body(sandbox))) == 21004);
    CHECK(status_of(client.post(sandbox_url, verify_body(sandbox, "wrong"))) == 21004);
    CHECK(status_of(client.post(sandbox_url, verify_body(sandbox, "s3cret"))) == 0);
    CHECK(status_of(client.post(prod_url, verify_body(production))) == 0); // another bundle
  }
  SECTION("counters and the request log") {
    client.post(prod_url, verify_body(sandbox));
    client.post(sandbox_url, verify_body(sandbox));
    client.post(sandbox_url, "x");
    auto calls = client.get(emulator.control_url("/control/calls")).json();
    CHECK(calls.at("store_a").at("production").to_number<std::uint64_t>() == 1);
    CHECK(calls.at("store_a").at("sandbox").to_number<std::uint64_t>() == 2);
    auto log = client.get(emulator.control_url("/control/requests")).json().as_array();
    REQUIRE(log.size() == 3);
    CHECK(log[0].at("store").as_string() == "store_a");
    CHECK(log[0].at("method").as_string() == "POST");
    CHECK(log[0].at("path").as_string() == "/verifyReceipt");
    CHECK(log[0].at("body").as_string() == verify_body(sandbox));
    CHECK(log[2].at("path").as_string() == "/sandbox/verifyReceipt");
    CHECK(log[2].at("body").as_string() == "x");
  }
}

TEST_CASE("modes: down, error, html, slow") {
  store_b_fixture f;
  auto& emulator = f.emulator;
  auto& client = f.client;
  const auto sandbox = read_file(sandbox_receipt_dir + "/receipt.b64");
  const auto prod_url = emulator.store_a_url("/verifyReceipt");
  auto set_mode = [&](const std::string& store, const std::string& body) {
    auto r = client.put(emulator.control_url("/control/stores/" + store + "/mode"), body);
    REQUIRE(r.status == 200);
  };
  auto calls = [&] { return client.get(emulator.control_url("/control/calls")).json(); };

  SECTION("down refuses connections, up comes back on the same port") {
    http_client kept; // holds a keep-alive connection across the switch
    REQUIRE(kept.post(prod_url, verify_body(sandbox)).status == 200);
    set_mode("store_a", R"({"mode":"down"})");
    auto refused = client.post(prod_url, verify_body(sandbox));
    CHECK(refused.code == CURLE_COULDNT_CONNECT);
    CHECK(refused.status == 0);
    // The open connection was closed too: no answer on it, and no hang.
    CHECK(kept.post(prod_url, verify_body(sandbox)).code != CURLE_OK);
    CHECK(calls().at("store_a").at("production").to_number<std::uint64_t>() == 1);
    // The other store is unaffected.
    CHECK(f.get_b(subscriptions_path("p", "t"), f.access_token).status == 404);

    set_mode("store_a", R"({"mode":"up"})");
    CHECK(status_of(client.post(prod_url, verify_body(sandbox))) == 21007);
    CHECK(status_of(kept.post(prod_url, verify_body(sandbox))) == 21007);
    CHECK(client.get(emulator.control_url("/control/stores"))
            .json()
            .at("store_a")
            .at("port")
            .to_number<int>()
          == emulator.store_a_port());

    // Repeated switching stays healthy.
    for (int i = 0; i < 5; ++i) {
      set_mode("store_a", R"({"mode":"down"})");
      set_mode("store_a", R"({"mode":"down"})");
      set_mode("store_a", R"({"mode":"up"})");
      set_mode("store_a", R"({"mode":"up"})");
    }
    CHECK(status_of(client.post(prod_url, verify_body(sandbox))) == 21007);
  }
  SECTION("error answers the configured status with a small JSON body") {
    set_mode("store_a", R"({"mode":"error"})");
    auto r = client.post(prod_url, verify_body(sandbox));
    CHECK(r.status == 503);
    CHECK(r.json().is_object());
    set_mode("store_b", R"({"mode":"error","status":429})");
    auto b = f.get_b(subscriptions_path("p", "t"), f.access_token);
    CHECK(b.status == 429);
    CHECK(b.json().at("error").at("code").as_int64() == 429);
    CHECK(f.request_token("x").status == 429);
    CHECK(calls().at("store_a").at("production").to_number<std::uint64_t>() == 1);
  }
  SECTION("error and html with a fraction fail about that share, the rest answer as up") {
    set_mode("store_a", R"({"mode":"error","status":500,"fraction":0.5})");
    CHECK(client.get(emulator.control_url("/control/stores/store_a/mode"))
            .json()
            .at("fraction")
            .to_number<double>()
          == 0.5);
    int failed = 0, answered = 0;
    for (int i = 0; i < 200; ++i) {
      auto r = client.post(prod_url, verify_body(sandbox));
      if (r.status == 500)
        ++failed;
      else if (status_of(r) == 21007)
        ++answered;
    }
    CHECK(failed + answered == 200);
    CHECK(failed > 50); // binomial(200, 0.5): outside 50..150 with odds below 1e-12
    CHECK(failed < 150);
    CHECK(calls().at("store_a").at("production").to_number<std::uint64_t>() == 200);

    set_mode("store_b", R"({"mode":"html","fraction":0})");
    CHECK(f.get_b(subscriptions_path("p", "t"), f.access_token).status == 404); // as up
    auto bad = client.put(emulator.control_url("/control/stores/store_b/mode"),
                          R"({"mode":"error","fraction":1.5})");
    CHECK(bad.status == 400);
    CHECK(bad.json().at("error").as_string() == "fraction must be a number from 0 to 1");
  }
  SECTION("html answers 200 text/html") {
    set_mode("store_b", R"({"mode":"html"})");
    auto r = f.get_b(subscriptions_path("p", "t"), f.access_token);
    CHECK(r.status == 200);
    CHECK(r.content_type.find("text/html") == 0);
    CHECK(r.body.find("<html>") != std::string::npos);
  }
  SECTION("slow answers normally after the delay") {
    set_mode("store_a", R"({"mode":"slow","delay_ms":300})");
    auto r = client.post(prod_url, verify_body(sandbox));
    CHECK(status_of(r) == 21007);
    CHECK(r.seconds >= 0.3);
    set_mode("store_b", R"({"mode":"slow","delay_ms":200})");
    auto b = f.get_b(subscriptions_path("p", "t"), f.access_token);
    CHECK(b.status == 404);
    CHECK(b.seconds >= 0.2);
  }
  SECTION("slow holds no thread: hundreds of concurrent requests all arrive after the delay") {
    set_mode("store_a", R"({"mode":"slow","delay_ms":300})");
    auto results = concurrent_posts(prod_url, verify_body(sandbox), 300);
    int answered = 0;
    for (const auto& r : results) {
      if (r.code == CURLE_OK && r.status == 200 && status_of(r) == 21007 && r.seconds >= 0.3)
        ++answered;
    }
    CHECK(answered == 300);
  }
  SECTION("a slow response pending when the store goes down is dropped, not sent") {
    set_mode("store_a", R"({"mode":"slow","delay_ms":500})");
    std::thread later([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      http_client c;
      c.put(emulator.control_url("/control/stores/store_a/mode"), R"({"mode":"down"})");
    });
    auto r = http_client().post(prod_url, verify_body(sandbox));
    later.join();
    CHECK(r.code != CURLE_OK);
    set_mode("store_a", R"({"mode":"up"})");
    CHECK(status_of(client.post(prod_url, verify_body(sandbox))) == 21007);
  }
}

TEST_CASE("keep-alive: connections are reused") {
  emulator_process emulator;
  http_client client;
  const auto url = emulator.store_a_url("/verifyReceipt");
  auto first = client.post(url, "{}");
  auto second = client.post(url, "{}");
  CHECK(first.connection == "Keep-Alive");
  CHECK(second.new_connections == 0);
  CHECK(client.get(emulator.control_url("/control/calls")).new_connections == 1); // another port
}

TEST_CASE("reset forgets everything and reopens the stores") {
  store_b_fixture f;
  f.register_purchase({{"package_name", "p"}, {"product_id", "x"}, {"token", "t"}});
  REQUIRE(f.get_b(products_path("p", "x", "t"), f.access_token).status == 200);
  REQUIRE(f.client.put(f.emulator.control_url("/control/stores/store_b/mode"), R"({"mode":"down"})")
            .status
          == 200);
  REQUIRE(f.client.post(f.emulator.control_url("/control/reset"), "").status == 200);

  auto stores = f.client.get(f.emulator.control_url("/control/stores")).json();
  CHECK(stores.at("store_b").at("mode").as_string() == "up");
  CHECK(stores.at("store_b").at("listening").as_bool());
  CHECK(f.get_b(products_path("p", "x", "t"), f.access_token).status == 401); // token forgotten
  CHECK(
    f.request_token(make_jwt(f.key, service_account_claims(service_email, f.token_url()))).status
    == 400);
  auto calls = f.client.get(f.emulator.control_url("/control/calls")).json();
  CHECK(calls.at("store_b").at("token").to_number<std::uint64_t>() == 1);
  CHECK(calls.at("store_b").at("products").to_number<std::uint64_t>() == 1);
}

TEST_CASE("robust to hostile input") {
  emulator_process emulator({"--max-request-bytes=1048576"});
  http_client client;
  const auto url = emulator.store_a_url("/verifyReceipt");

  // Over the request limit: refused by Pistache (413), the emulator lives on.
  std::string huge(2 * 1024 * 1024, 'a');
  auto big = client.post(url, huge);
  CHECK((big.status == 413 || big.code != CURLE_OK));
  CHECK(http_client().post(emulator.control_url("/control/store_a/receipts"), huge).status != 200);

  // A large but acceptable body, invalid UTF-8, deep nesting.
  std::string large = "{\"receipt-data\":\"" + std::string(1000 * 1000, 'A') + "\"}";
  CHECK(status_of(http_client().post(url, large)) == 21002);
  CHECK(status_of(http_client().post(url, "{\"receipt-data\":\"\xff\xfe\x80\"}")) == 21002);
  CHECK(status_of(http_client().post(url, std::string(100000, '['))) == 21002);
  CHECK(http_client()
          .post(emulator.control_url("/control/store_b/purchases"), std::string(100000, '['))
          .status
        == 400);
  CHECK(http_client()
          .post(emulator.control_url("/control/store_b/purchases"),
                R"({"package_name":"p","product_id":"x","token":"t","http_status":99999})")
          .status
        == 400);
  CHECK(http_client().request("DELETE", emulator.store_b_url("/token")).status == 404);

  // The log stays valid JSON whatever was sent.
  auto log = http_client().get(emulator.control_url("/control/requests"));
  REQUIRE(log.status == 200);
  CHECK(log.json().as_array().size() >= 3);

  CHECK(status_of(http_client().post(url, "{}")) == 21002);
  CHECK(emulator.stop() == 0); // SIGTERM: a clean exit
}

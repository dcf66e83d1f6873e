// The Store B client on the deterministic scheduler, against a transport the test
// answers: the OAuth access token (fetched, shared by waiting checks, reused,
// refreshed token_refresh_margin before expiry, replaced once after a 401) and
// the Play Developer API calls made with it.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "actors/app_context.hpp"
#include "actors/store_b_client.hpp"
#include "fixture.hpp"
#include "tests/support/crypto/test_ca.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

constexpr const char* token_uri = "https://oauth2.example.test/token";
// A one-time product is asked of productsv2 first.
constexpr const char* purchase_url = "https://play.example.test/androidpublisher/v3/applications/"
                                     "com.example/purchases/productsv2/tokens/purchase-1";
constexpr const char* products_v1_url = "https://play.example.test/androidpublisher/v3/"
                                        "applications/com.example/purchases/products/gold/tokens/"
                                        "purchase-1";
constexpr const char* play_ok = R"({"productLineItem":[{"productId":"gold"}],)"
                                R"("purchaseStateContext":{"purchaseState":"PURCHASED"}})";

// Google's service-account JSON with a generated key (one key per test binary:
// RSA key generation is slow).
std::string service_account_json() {
  static const std::string key = test_support::make_cert({}).key_pem();
  boost::json::object o{{"type", "service_account"},
                        {"client_email", "svc@example.iam.gserviceaccount.com"},
                        {"private_key", key},
                        {"private_key_id", "k1"},
                        {"token_uri", token_uri}};
  return boost::json::serialize(o);
}

std::string token_answer(const std::string& token) {
  return R"({"access_token":")" + token + R"(","expires_in":3600,"token_type":"Bearer"})";
}

struct store_b_bench : actor_fixture {
  fake_transport transport;
  config::store_b_settings settings;
  store_b_client_actor client;
  app_context_ptr app;

  store_b_bench() {
    settings.api_url = "https://play.example.test";
    settings.token_refresh_margin = std::chrono::minutes(5);
    model::app a;
    a.id = "app-1";
    a.package_name = "com.example";
    a.store_b_service_account = service_account_json();
    app = make_app_context(a);
    REQUIRE(app->service_account);
    client = keep(spawn_store_b_client(*sys, settings, {}, transport, tracer::off(), clock));
  }

  auto check(store_deadline deadline = std::nullopt) {
    store_b_check c;
    c.deadline = deadline;
    c.trace = {"t1", 0};
    c.app = app;
    c.package_name = "com.example";
    c.purchase_token = "purchase-1";
    c.purchase.product_id = "gold";
    c.api = model::store_b::purchase_api::products;
    auto answer = ask<store_b_answer>(client, std::move(c));
    run();
    return answer;
  }

  void answer(std::size_t i, int status, const std::string& body) {
    transport.answer(i, status, body);
    run();
  }

  bool is_token_fetch(std::size_t i) const {
    const auto& r = transport[i];
    return r.method == "POST" && r.url == token_uri
      && r.body.starts_with("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"
                            "&assertion=");
  }

  bool is_play_call(std::size_t i, const std::string& token) const {
    const auto& r = transport[i];
    return r.method == "GET" && r.url == purchase_url
      && has_header(r, "Authorization: Bearer " + token);
  }
};

bool confirmed(const std::shared_ptr<std::optional<store_b_answer>>& a) {
  return a->has_value() && (*a)->verdict.outcome == model::store_outcome::confirmed;
}

} // namespace

TEST_CASE("the first check fetches a token, then asks the Play API with it", "[actors][store_b]") {
  store_b_bench b;
  auto answer = b.check();
  REQUIRE(b.transport.size() == 1);
  CHECK(b.is_token_fetch(0));
  b.answer(0, 200, token_answer("token-1"));
  REQUIRE(b.transport.size() == 2);
  CHECK(b.is_play_call(1, "token-1"));
  CHECK_FALSE(answer->has_value());
  b.answer(1, 200, play_ok);
  CHECK(confirmed(answer));
  CHECK(b.transport.size() == 2);
}

TEST_CASE("a silent store: the check is answered unreachable at its deadline, its late answer "
          "let go",
          "[actors][store_b][deadline]") {
  store_b_bench b;
  auto answer = b.check(b.clock.steady_now() + std::chrono::seconds(5));
  b.answer(0, 200, token_answer("token-1"));
  REQUIRE(b.transport.size() == 2); // the Play call is out; the store says nothing
  b.sched->advance_time(std::chrono::milliseconds(4900));
  b.run();
  CHECK_FALSE(answer->has_value());
  b.sched->advance_time(std::chrono::milliseconds(200));
  b.run();
  REQUIRE(answer->has_value());
  CHECK((*answer)->verdict.outcome == model::store_outcome::unreachable);
  CHECK((*answer)->verdict.detail.find("store deadline passed") != std::string::npos);
  CHECK_FALSE((*answer)->verdict.operator_problem);
  b.answer(1, 200, play_ok); // too late: nobody waits for it any more
  CHECK((*answer)->verdict.outcome == model::store_outcome::unreachable);
  auto next = b.check(b.clock.steady_now() + std::chrono::seconds(5));
  REQUIRE(b.transport.size() == 3); // the token is kept; the slot was given back
  b.answer(2, 200, play_ok);
  CHECK(confirmed(next));
}

TEST_CASE("a 401 from the Play API: a new token once, the call retried once", "[actors][store_b]") {
  store_b_bench b;
  auto answer = b.check();
  b.answer(0, 200, token_answer("token-1"));
  b.answer(1, 401, R"({"error":{"code":401}})");
  REQUIRE(b.transport.size() == 3);
  CHECK(b.is_token_fetch(2));
  b.answer(2, 200, token_answer("token-2"));
  REQUIRE(b.transport.size() == 4);
  CHECK(b.is_play_call(3, "token-2"));
  SECTION("the retry succeeds") {
    b.answer(3, 200, play_ok);
    CHECK(confirmed(answer));
  }
  SECTION("a second 401 is the answer: an operator problem, no third call") {
    b.answer(3, 401, R"({"error":{"code":401}})");
    REQUIRE(answer->has_value());
    CHECK((*answer)->verdict.outcome == model::store_outcome::unreachable);
    CHECK((*answer)->verdict.operator_problem);
    CHECK((*answer)->verdict.detail == "HTTP 401");
  }
  CHECK(b.transport.size() == 4);
}

TEST_CASE("the token is reused until expires_in minus token-refresh-margin", "[actors][store_b]") {
  store_b_bench b;
  b.check();
  b.answer(0, 200, token_answer("token-1")); // expires 3600 s from now
  b.answer(1, 200, play_ok);
  // Refreshed from 3600 s − 5 min = 3300 s on.
  b.clock.advance(std::chrono::milliseconds(3'300'000 - 1));
  auto reused = b.check();
  REQUIRE(b.transport.size() == 3);
  CHECK(b.is_play_call(2, "token-1"));
  b.answer(2, 200, play_ok);
  CHECK(confirmed(reused));
  b.clock.advance(std::chrono::milliseconds(1));
  auto refreshed = b.check();
  REQUIRE(b.transport.size() == 4);
  CHECK(b.is_token_fetch(3));
  b.answer(3, 200, token_answer("token-2"));
  REQUIRE(b.transport.size() == 5);
  CHECK(b.is_play_call(4, "token-2"));
  b.answer(4, 200, play_ok);
  CHECK(confirmed(refreshed));
}

TEST_CASE("checks arriving while the token is fetched share that fetch", "[actors][store_b]") {
  store_b_bench b;
  auto first = b.check();
  auto second = b.check();
  REQUIRE(b.transport.size() == 1);
  CHECK(b.is_token_fetch(0));
  b.answer(0, 200, token_answer("token-1"));
  REQUIRE(b.transport.size() == 3);
  CHECK(b.is_play_call(1, "token-1"));
  CHECK(b.is_play_call(2, "token-1"));
  b.answer(1, 200, play_ok);
  b.answer(2, 200, play_ok);
  CHECK(confirmed(first));
  CHECK(confirmed(second));
}

TEST_CASE("productsv2 answers 404: products.get is asked, with the same token",
          "[actors][store_b][productsv2]") {
  store_b_bench b;
  auto answer = b.check();
  b.answer(0, 200, token_answer("token-1"));
  REQUIRE(b.is_play_call(1, "token-1"));
  b.answer(1, 404, R"({"error":{"code":404,"status":"NOT_FOUND"}})");
  REQUIRE(b.transport.size() == 3);
  CHECK(b.transport[2].url == products_v1_url);
  CHECK(has_header(b.transport[2], "Authorization: Bearer token-1"));
  CHECK_FALSE(answer->has_value());
  b.answer(2, 200, R"({"productId":"gold","purchaseState":0,"quantity":2})");
  REQUIRE(confirmed(answer));
  CHECK((*answer)->purchase.quantity == 2);
  CHECK(b.transport.size() == 3);
}

TEST_CASE("productsv2 refusing otherwise (400, 5xx) is its answer: no products.get",
          "[actors][store_b][productsv2]") {
  store_b_bench b;
  auto answer = b.check();
  b.answer(0, 200, token_answer("token-1"));
  b.answer(1, 503, R"({"error":{"code":503}})");
  REQUIRE(answer->has_value());
  CHECK((*answer)->verdict.outcome == model::store_outcome::unreachable);
  CHECK(b.transport.size() == 2);
}

TEST_CASE("a confirmed purchase naming an order: orders.get fills its cost; a failure leaves it "
          "to the sweep",
          "[actors][store_b][orders]") {
  store_b_bench b;
  const std::string v2_with_order
    = R"({"productLineItem":[{"productId":"gold"}],"orderId":"GPA.1-2-3",)"
      R"("purchaseStateContext":{"purchaseState":"PURCHASED"}})";
  const std::string order_url
    = "https://play.example.test/androidpublisher/v3/applications/com.example/orders/GPA.1-2-3";
  SECTION("read") {
    auto answer = b.check();
    b.answer(0, 200, token_answer("token-1"));
    b.answer(1, 200, v2_with_order);
    REQUIRE(b.transport.size() == 3);
    CHECK(b.transport[2].url == order_url);
    CHECK_FALSE(answer->has_value());
    b.answer(2, 200,
             R"({"orderId":"GPA.1-2-3","total":{"currencyCode":"EUR","units":"1","nanos":990000000},)"
             R"("tax":{"currencyCode":"EUR","units":"0","nanos":320000000}})");
    REQUIRE(confirmed(answer));
    const auto& p = (*answer)->purchase;
    CHECK(p.cost.price == 1990);
    CHECK(p.cost.currency_code == std::optional<std::string>("EUR"));
    CHECK(p.cost.tax == 320);
    CHECK(p.order_read_at.has_value());
  }
  SECTION("the orders API fails: still confirmed, the cost unknown and the order still to read") {
    auto answer = b.check();
    b.answer(0, 200, token_answer("token-1"));
    b.answer(1, 200, v2_with_order);
    b.answer(2, 503, R"({"error":{"code":503}})");
    REQUIRE(confirmed(answer));
    CHECK_FALSE((*answer)->purchase.cost.price);
    CHECK_FALSE((*answer)->purchase.order_read_at);
    CHECK((*answer)->purchase.latest_order_id == std::optional<std::string>("GPA.1-2-3"));
  }
}

TEST_CASE("the orders sweep's query: orders.batchGet with every id, repeated",
          "[actors][store_b][orders]") {
  store_b_bench b;
  store_b_orders_query q{{"t", 0}, b.app, {"GPA.1", "GPA.2"}};
  auto answer = b.ask<play_orders, orders_atom>(b.client, std::move(q));
  b.run();
  b.answer(0, 200, token_answer("token-1"));
  REQUIRE(b.transport.size() == 2);
  CHECK(b.transport[1].url
        == "https://play.example.test/androidpublisher/v3/applications/com.example/"
           "orders:batchGet?orderIds=GPA.1&orderIds=GPA.2");
  b.answer(1, 200,
           R"({"orders":[{"orderId":"GPA.1","total":{"currencyCode":"USD","units":"2"}},)"
           R"({"orderId":"GPA.2","total":{"currencyCode":"USD","nanos":500000000}}]})");
  REQUIRE(answer->has_value());
  REQUIRE((*answer)->size() == 2);
  CHECK((**answer)[0].cost.price == 2000);
  CHECK((**answer)[1].cost.price == 500);
}

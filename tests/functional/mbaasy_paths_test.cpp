// Drop-in for Mbaasy integrations: Mbaasy's original paths are aliases
// of the neutral ones, through the real binary on the database under test. An
// upload through one path and a re-upload through the other are one record; a
// record reads the same through both. And GET /openapi.yaml serves the document
// that lists them.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "model/upload_request.hpp"
#include "raw_socket.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";
constexpr const char* mbaasy_orders = "/client/google_play/purchase_orders";
constexpr const char* legacy = "/client/store_b/purchase_orders/legacy";
constexpr const char* mbaasy_legacy = "/client/google_play/purchase_orders/legacy";
constexpr const char* receipts = "/client/store_a/receipts";
constexpr const char* mbaasy_receipts = "/client/itunes_connect/receipts";

json::object answered(const http_response& r, long status) {
  INFO(r.body);
  REQUIRE(r.status == status);
  return r.json().as_object();
}

// A record as a re-upload of the same proof answers it: the same, but for the
// moment of the update.
// An answer without what a re-upload moves: the record's updated_at, and when
// the store last spoke of its purchases (each upload asks it again).
json::object but_updated_at(json::object o) {
  o.erase("updated_at");
  if (auto* p = o.if_contains("in_app_purchase"); p && p->is_object())
    p->as_object().erase("last_synced_at");
  if (auto* items = o.if_contains("in_app_purchases"); items && items->is_array())
    for (auto& item : items->as_array())
      item.as_object().erase("last_synced_at");
  return o;
}

} // namespace

TEST_CASE("Mbaasy's Google Play paths are the Store B endpoints", "[mbaasy][store_b]") {
  auto& s = the_suite();
  auto package = unique_package("mbaasy");
  auto app = create_store_b_app(s, package, test_licence_key());
  auto other = create_store_b_app(s, unique_package("mbaasy_other"), test_licence_key());

  SECTION("signed purchase data: one record through both paths") {
    auto token = unique("tok");
    register_purchase(s, package, "gold", token, "product");
    auto data = purchase_data_json(package, "gold", token);
    auto body = store_b_body(data, sign_purchase(data), R"("user_identifier":"u-1")");

    auto first = answered(s.service.post(mbaasy_orders, body, app.token), 200);
    CHECK(str(first.at("validation_state")) == "validated");
    CHECK(str(first.at("package_name")) == package);
    CHECK(first.at("is_legacy") == false);
    auto again = answered(s.service.post(orders, body, app.token), 200);
    CHECK(str(again.at("id")) == str(first.at("id")));
    CHECK(but_updated_at(again) == but_updated_at(first));
    // And the other way round.
    auto third = answered(s.service.post(mbaasy_orders, body, app.token), 200);
    CHECK(str(third.at("id")) == str(first.at("id")));

    auto id = str(first.at("id"));
    auto neutral = answered(s.service.get(std::string(orders) + "/" + id, app.token), 200);
    auto mbaasy = answered(s.service.get(std::string(mbaasy_orders) + "/" + id, app.token), 200);
    CHECK(mbaasy == neutral);
    CHECK(but_updated_at(mbaasy) == but_updated_at(first));

    // The alias keeps the neutral path's rules: another app's token, no token.
    CHECK(s.service.get(std::string(mbaasy_orders) + "/" + id, other.token).status == 404);
    CHECK(s.service.get(std::string(mbaasy_orders) + "/" + id, "").status == 401);
    CHECK(s.service.post(mbaasy_orders, body, "").status == 401);
    CHECK(http_call("DELETE", s.service.url(mbaasy_orders)).status == 405);
  }

  SECTION("the request limits hold through the alias: too deep is 422, too large 413") {
    std::string deep = R"({"x":1})";
    for (std::size_t i = 0; i < receiptd::model::max_metadata_depth; ++i)
      deep = R"({"a":)" + deep + "}";
    json::object o{
      {"package_name", package}, {"purchase_token", unique("tok")}, {"product_id", "gold"}};
    auto body = json::serialize(o);
    body.insert(body.size() - 1, R"(,"metadata":)" + deep);
    auto r = s.service.post(mbaasy_legacy, body, app.token);
    INFO(r.body);
    REQUIRE(r.status == 422);
    bool too_deep = false;
    auto answer_body = r.json();
    for (const auto& e : answer_body.at("errors").as_array())
      too_deep = too_deep || (str(e.at("field")) == "metadata" && str(e.at("code")) == "too_deep");
    CHECK(too_deep);
    // One byte over http.max-body-bytes (1 MiB by default): refused before it is read.
    raw_connection c(s.service.port());
    c.send_all("POST " + std::string(mbaasy_orders)
               + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               + "Authorization: Bearer " + app.token
               + "\r\nContent-Length: " + std::to_string(1024 * 1024 + 1) + "\r\n\r\n{");
    auto answer = c.read_for(std::chrono::seconds(3));
    INFO(answer);
    CHECK(answer.rfind("HTTP/1.1 413", 0) == 0);
  }

  SECTION("a forged signature is the same 402 through the alias") {
    auto token = unique("tok");
    register_purchase(s, package, "gold", token, "product");
    auto data = purchase_data_json(package, "gold", token);
    auto forged = store_b_body(data, sign_purchase(data + " "));
    auto r = answered(s.service.post(mbaasy_orders, forged, app.token), 402);
    CHECK(str(r.at("errors").at(0).at("code")) == "invalid_signature");
    CHECK(r.at("purchase_order").at("is_fraud") == true);
  }

  SECTION("the legacy endpoint: one record through both paths") {
    auto token = unique("tok");
    register_purchase(s, package, "gold", token, "product");
    auto body = json::serialize(
      json::object{{"package_name", package}, {"purchase_token", token}, {"product_id", "gold"}});
    auto first = answered(s.service.post(mbaasy_legacy, body, app.token), 200);
    CHECK(first.at("is_legacy") == true);
    CHECK(str(first.at("purchase_token")) == token);
    auto again = answered(s.service.post(legacy, body, app.token), 200);
    CHECK(str(again.at("id")) == str(first.at("id")));
    CHECK(but_updated_at(again) == but_updated_at(first));
    // …/legacy is the legacy upload, not a lookup of the record "legacy".
    CHECK(s.service.get(mbaasy_legacy, app.token).status == 405);
  }
}

TEST_CASE("Mbaasy's iTunes Connect paths are the Store A receipt endpoints", "[mbaasy][store_a]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "org.getpure.pure-iphone");
  auto receipt = receipt_vector("unified", "tpinappreceipt-production-ios");
  auto body = json::serialize(json::object{{"receipt", receipt}, {"user_identifier", "u-7"}});

  auto first = answered(s.service.post(mbaasy_receipts, body, app.token), 200);
  CHECK(str(first.at("bundle_id")) == "org.getpure.pure-iphone");
  CHECK(str(first.at("validation_state")) == "validated");
  CHECK(first.at("in_app_purchases").as_array().size() == 4);
  auto again = answered(s.service.post(receipts, body, app.token), 200);
  CHECK(str(again.at("id")) == str(first.at("id")));
  CHECK(but_updated_at(again) == but_updated_at(first));

  auto id = str(first.at("id"));
  auto neutral = answered(s.service.get(std::string(receipts) + "/" + id, app.token), 200);
  auto mbaasy = answered(s.service.get(std::string(mbaasy_receipts) + "/" + id, app.token), 200);
  CHECK(mbaasy == neutral);

  // A body the neutral path refuses, the alias refuses the same way.
  auto bad = R"({"receipt":"not base64!"})";
  auto neutral_422 = answered(s.service.post(receipts, bad, app.token), 422);
  auto mbaasy_422 = answered(s.service.post(mbaasy_receipts, bad, app.token), 422);
  CHECK(mbaasy_422 == neutral_422);
  CHECK(str(mbaasy_422.at("errors").at(0).at("code")) == "invalid_base64");
}

TEST_CASE("GET /openapi.yaml serves docs/openapi.yaml, without a token", "[openapi]") {
  auto& s = the_suite();
  auto r = http_call("GET", s.service.url("/openapi.yaml"));
  REQUIRE(r.status == 200);
  CHECK(r.header("content-type") == "application/yaml");
  CHECK(r.body.rfind("openapi: 3.1", 0) == 0);
  CHECK(r.body == read_text(std::string(RECEIPTD_SOURCE_DIR) + "/docs/openapi.yaml"));
  CHECK(!r.header("x-request-id").empty());
  // A token is neither needed nor checked; the document is only read.
  CHECK(s.service.get("/openapi.yaml", "not-a-token").status == 200);
  CHECK(http_call("POST", s.service.url("/openapi.yaml"), "{}").status == 405);
}

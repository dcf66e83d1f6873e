// Google Play RTDN pushes through the supervisor on the deterministic scheduler
//: the URL's token and the package are checked before anything is
// looked up or applied; only the Play Developer API's confirmed answer changes
// a purchase order; a store that does not answer gets a 503 and nothing recorded.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "actors/supervisor.hpp"
#include "fixture.hpp"
#include "model/encoding.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* app_id = "app-1";
constexpr const char* package = "com.example";
constexpr const char* secret = "rtdn_0123456789abcdef";

struct rtdn_bench : actor_fixture {
  std::shared_ptr<persistence_log> log = std::make_shared<persistence_log>();
  supervisor_actor supervisor;

  // `store`: what the fake Play client answers every check with (none: it never answers).
  // `max_age`: notifications.max-age (the pushes below carry a fixed 2025
  // eventTimeMillis, long before the bench's clock).
  explicit rtdn_bench(std::optional<model::store_verdict> store = std::nullopt,
                      std::chrono::milliseconds max_age = std::chrono::hours(200000)) {
    model::app a;
    a.id = app_id;
    a.package_name = package;
    a.rtdn_token = secret;
    log->apps_by_id[a.id] = a;
    auto d = std::make_shared<validator_deps>();
    d->persistence = keep(sys->spawn(fake_persistence, log));
    d->store_b = keep(sys->spawn(fake_store_b, store, &clock));
    d->settings.store_deadline = std::chrono::seconds(5);
    d->settings.notification_max_age = max_age;
    d->clock = &clock;
    d->random = &random;
    supervisor = keep(spawn_supervisor(*sys, {}, {}, d));
  }

  std::shared_ptr<recording_sink> push(const std::string& body, const std::string& token = secret,
                                       const std::string& app = app_id) {
    http::inbound_request req(http::route::store_b_notification);
    req.record_id = app;
    req.token = token;
    req.body = body;
    req.trace_id = "t-rtdn";
    auto sink = std::make_shared<recording_sink>();
    caf::anon_send(supervisor, upload_atom_v, inbound{std::move(req), sink});
    run();
    return sink;
  }
};

// A Pub/Sub push of `notification` (the DeveloperNotification's own object).
std::string push_body(const json::object& notification, const std::string& pkg = package,
                      const std::string& message_id = "1001") {
  json::object data{{"version", "1.0"}, {"packageName", pkg}, {"eventTimeMillis", "1746683885460"}};
  for (auto& [k, v] : notification)
    data[k] = v;
  json::object message{{"data", model::base64_encode(json::serialize(data))},
                       {"messageId", message_id}};
  return json::serialize(
    json::object{{"message", message}, {"subscription", "projects/p/subscriptions/s"}});
}

std::string cancellation(const std::string& token) {
  return push_body(json::object{{"subscriptionNotification",
                                 json::object{{"version", "1.0"},
                                              {"notificationType", 3},
                                              {"purchaseToken", token},
                                              {"subscriptionId", "gold_monthly"}}}});
}

std::string code_of(const http::reply& r) {
  return std::string(json::parse(r.body).at("errors").at(0).at("code").as_string());
}

model::purchase_order_record stored_order(const std::string& token) {
  model::purchase_order_record r;
  r.id = "po-1";
  r.app_id = app_id;
  r.package_name = package;
  r.purchase_token = token;
  r.purchase.product_id = "gold_monthly";
  r.purchase.kind = model::product_kind::subscription;
  r.purchase.purchase_state = model::purchase_state::purchased;
  r.state = model::validation_state::validated;
  return r;
}

} // namespace

TEST_CASE("a push without the app's token is a 401 and applies nothing",
          "[actors][notifications][store_b]") {
  rtdn_bench b(verdict(model::store_outcome::confirmed));
  b.log->orders_by_token["tok-1"] = stored_order("tok-1");
  for (std::string token : {"", "rtdn_0123456789abcdeX", "rtdn_0123456789abcde",
                            "rtdn_0123456789abcdef0", "RTDN_0123456789ABCDEF"}) {
    auto sink = b.push(cancellation("tok-1"), token);
    INFO("token '" << token << "'");
    REQUIRE(sink->replies.size() == 1);
    CHECK(sink->replies[0].status == 401);
    CHECK(code_of(sink->replies[0]) == "unauthorized");
  }
  CHECK(b.log->order_lookups == 0); // nor was the store asked: that comes after the lookup
  CHECK(b.log->store_b_notifications.empty());

  // The right token goes through: the bench above could not pass by accident.
  auto ok = b.push(cancellation("tok-1"));
  REQUIRE(ok->replies.size() == 1);
  CHECK(ok->replies[0].status == 200);
  CHECK(b.log->store_b_notifications.size() == 1);
}

TEST_CASE("an app without an RTDN token refuses every push, even one without a token",
          "[actors][notifications][store_b]") {
  rtdn_bench b(verdict(model::store_outcome::confirmed));
  b.log->apps_by_id[app_id].rtdn_token.clear();
  auto sink = b.push(cancellation("tok-1"), "");
  REQUIRE(sink->replies.size() == 1);
  CHECK(sink->replies[0].status == 401);
  CHECK(b.log->store_b_notifications.empty());
}

TEST_CASE("a push for another package is a 401; an unknown app a 404; a malformed body a 400",
          "[actors][notifications][store_b]") {
  rtdn_bench b(verdict(model::store_outcome::confirmed));
  auto foreign = b.push(
    push_body(json::object{{"subscriptionNotification",
                            json::object{{"notificationType", 3}, {"purchaseToken", "tok-1"}}}},
              "com.someone.else"));
  REQUIRE(foreign->replies.size() == 1);
  CHECK(foreign->replies[0].status == 401);

  auto nobody = b.push(cancellation("tok-1"), secret, "app-2");
  REQUIRE(nobody->replies.size() == 1);
  CHECK(nobody->replies[0].status == 404);

  auto malformed = b.push(R"({"message":{"data":"not-base64","messageId":"1"}})");
  REQUIRE(malformed->replies.size() == 1);
  CHECK(malformed->replies[0].status == 400);
  CHECK(code_of(malformed->replies[0]) == "invalid_base64");
  CHECK(b.log->store_b_notifications.empty());
}

TEST_CASE("the Play Developer API's confirmed answer is applied to the stored order",
          "[actors][notifications][store_b]") {
  rtdn_bench b(verdict(model::store_outcome::confirmed, "200"));
  auto stored = stored_order("tok-1");
  stored.state = model::validation_state::pending;
  b.log->orders_by_token["tok-1"] = stored;
  auto sink = b.push(cancellation("tok-1"));
  REQUIRE(sink->replies.size() == 1);
  CHECK(sink->replies[0].status == 200);
  REQUIRE(b.log->store_b_notifications.size() == 1);
  const auto& applied = b.log->store_b_notifications[0];
  CHECK(applied.app_id == app_id);
  CHECK(applied.n.message_id == "1001");
  REQUIRE(applied.updated.has_value());
  CHECK(applied.updated->id == "po-1");
  CHECK(applied.updated->state == model::validation_state::validated);
}

TEST_CASE("a store rejection is recorded without touching the order; no answer is a 503",
          "[actors][notifications][store_b]") {
  SECTION("rejected") {
    rtdn_bench b(verdict(model::store_outcome::rejected, "404"));
    b.log->orders_by_token["tok-1"] = stored_order("tok-1");
    auto sink = b.push(cancellation("tok-1"));
    REQUIRE(sink->replies.size() == 1);
    CHECK(sink->replies[0].status == 200);
    REQUIRE(b.log->store_b_notifications.size() == 1);
    CHECK_FALSE(b.log->store_b_notifications[0].updated.has_value());
  }
  SECTION("unreachable") {
    rtdn_bench b(verdict(model::store_outcome::unreachable, "503"));
    b.log->orders_by_token["tok-1"] = stored_order("tok-1");
    auto sink = b.push(cancellation("tok-1"));
    REQUIRE(sink->replies.size() == 1);
    CHECK(sink->replies[0].status == 503);
    CHECK(sink->replies[0].retry_after_seconds.has_value());
    CHECK(b.log->store_b_notifications.empty());
  }
  SECTION("past the store deadline") {
    rtdn_bench b; // the store never answers
    b.log->orders_by_token["tok-1"] = stored_order("tok-1");
    auto sink = b.push(cancellation("tok-1"));
    CHECK(sink->replies.empty());
    b.sched->advance_time(std::chrono::seconds(5));
    b.run();
    REQUIRE(sink->replies.size() == 1);
    CHECK(sink->replies[0].status == 503);
    CHECK(b.log->store_b_notifications.empty());
  }
}

TEST_CASE("a test notification, or a token nobody uploaded, is recorded only",
          "[actors][notifications][store_b]") {
  rtdn_bench b(verdict(model::store_outcome::confirmed));
  auto test
    = b.push(push_body(json::object{{"testNotification", json::object{{"version", "1.0"}}}}));
  REQUIRE(test->replies.size() == 1);
  CHECK(test->replies[0].status == 200);
  auto unknown = b.push(cancellation("tok-nobody"));
  REQUIRE(unknown->replies.size() == 1);
  CHECK(unknown->replies[0].status == 200);
  CHECK(json::parse(unknown->replies[0].body).at("records_changed") == 0);
  REQUIRE(b.log->store_b_notifications.size() == 2);
  CHECK_FALSE(b.log->store_b_notifications[0].updated.has_value());
  CHECK_FALSE(b.log->store_b_notifications[1].updated.has_value());
  CHECK(b.log->order_lookups == 1); // the test notification names no purchase
}

TEST_CASE("a push sent longer ago than notifications.max-age is recorded, not applied",
          "[actors][notifications][store_b]") {
  // The push says 2025-05-08; the clock is 2026-11-22; the bound is ten days.
  rtdn_bench b(verdict(model::store_outcome::confirmed, "200"), std::chrono::hours(240));
  b.log->orders_by_token["tok-1"] = stored_order("tok-1");
  auto sink = b.push(cancellation("tok-1"));
  REQUIRE(sink->replies.size() == 1);
  CHECK(sink->replies[0].status == 200);
  CHECK(json::parse(sink->replies[0].body)
        == json::object{{"status", "recorded"},
                        {"notification_type", "subscription"},
                        {"notification_subtype", "SUBSCRIPTION_CANCELED"},
                        {"records_changed", 0}});
  // Kept once per messageId, with nothing to apply: the order was not even looked up.
  REQUIRE(b.log->store_b_notifications.size() == 1);
  CHECK_FALSE(b.log->store_b_notifications[0].updated.has_value());
  CHECK(b.log->order_lookups == 0);
}

// Google Play real-time developer notifications through the real binary:
// Pub/Sub pushes to the URL `receiptctl app rtdn-url` prints, authenticated
// by its ?token=, never trusted for what they say (the emulator's Play
// Developer API is asked again and its answer applied), recorded once per
// messageId, on the database under test.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "harness.hpp"
#include "model/encoding.hpp"
#include "tests/support/db/raw_sql.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";
constexpr std::int64_t first_expiry = 1893456000000; // register_purchase's subscriptions
constexpr std::int64_t later_expiry = 1924992000000; // 2031-01-01

std::string code_of(const json::value& v) {
  return str(v.at("errors").at(0).at("code"));
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// An app with the test licence key and a service account, and the path (with
// its ?token=) of the push URL receiptctl prints for it.
struct rtdn_app {
  test_app app;
  std::string package;
  std::string push_path;
};

std::string push_path_of(suite& s, const test_app& app) {
  auto base = s.service.url("");
  auto r = s.ctl({"app", "rtdn-url", app.id, "--base-url=" + base});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto url = str(r.json.at("url"));
  REQUIRE(url.starts_with(base + "/notifications/store_b/" + app.id + "?token="));
  return url.substr(base.size());
}

rtdn_app fresh_app(suite& s, const std::string& name) {
  rtdn_app a;
  a.package = unique_package(name);
  a.app = create_store_b_app(s, a.package, test_licence_key());
  a.push_path = push_path_of(s, a.app);
  return a;
}

// A subscription the emulator's Play API knows, uploaded and validated.
json::value uploaded_subscription(suite& s, const rtdn_app& a, const std::string& token) {
  register_purchase(s, a.package, "gold", token, "subscription");
  auto data = purchase_data_json(a.package, "gold", token, true);
  auto r = s.service.post(orders, store_b_body(data, sign_purchase(data)), a.app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

// What the emulator's Play API answers about the subscription from now on.
void play_api_says(suite& s, const rtdn_app& a, const std::string& token, bool auto_renewing,
                   std::int64_t expiry_ms) {
  s.emulator.control("POST", "/control/store_b/purchases",
                     json::object{{"package_name", a.package},
                                  {"product_id", "gold"},
                                  {"token", token},
                                  {"kind", "subscription"},
                                  {"purchase_state", 0},
                                  {"acknowledged", true},
                                  {"auto_renewing", auto_renewing},
                                  {"expiry_ms", expiry_ms},
                                  {"order_id", "GPA.1234-5678-9012-34567"}});
}

// A Pub/Sub push body carrying `notification` (a DeveloperNotification's own field).
std::string push_body(const std::string& package, const json::object& notification,
                      const std::string& message_id) {
  json::object data{
    {"version", "1.0"}, {"packageName", package}, {"eventTimeMillis", "1746683885460"}};
  for (auto& [k, v] : notification)
    data[k] = v;
  json::object message{{"data", model::base64_encode(json::serialize(data))},
                       {"messageId", message_id},
                       {"publishTime", "2025-05-08T05:58:05.617Z"}};
  return json::serialize(
    json::object{{"message", message}, {"subscription", "projects/p/subscriptions/play-rtdn"}});
}

std::string subscription_push(const std::string& package, const std::string& token, int type,
                              const std::string& message_id) {
  return push_body(package,
                   json::object{{"subscriptionNotification",
                                 json::object{{"version", "1.0"},
                                              {"notificationType", type},
                                              {"purchaseToken", token},
                                              {"subscriptionId", "gold"}}}},
                   message_id);
}

constexpr int subscription_renewed = 2;
constexpr int subscription_canceled = 3;

std::string message_id() {
  auto hex = model::hex_encode(model::random_bytes(6));
  return std::to_string(std::stoull(hex, nullptr, 16));
}

http_response push(suite& s, const std::string& path, const std::string& body) {
  return s.service.post(path, body, "");
}

json::value get_order(suite& s, const rtdn_app& a, const std::string& id) {
  auto r = s.service.get(std::string(orders) + "/" + id, a.app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

int subscriptionsv2_calls(suite& s) {
  return s.emulator.calls().at("store_b").at("subscriptionsv2").to_number<int>();
}

} // namespace

TEST_CASE("an RTDN is not trusted: the purchase order follows the Play Developer API, once",
          "[rtdn][store_b]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-api");
  auto token = unique("tok");
  auto po = uploaded_subscription(s, a, token);
  auto id = str(po.at("id"));
  REQUIRE(po.at("in_app_purchase").at("expires_at").at("ms") == first_expiry);
  REQUIRE(po.at("in_app_purchase").at("auto_renewing") == true);

  // The push says the subscription was cancelled; Google's API says it renewed.
  play_api_says(s, a, token, true, later_expiry);
  auto calls = subscriptionsv2_calls(s);
  auto body = subscription_push(a.package, token, subscription_canceled, message_id());
  auto r = push(s, a.push_path, body);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(str(r.json().at("status")) == "applied");
  CHECK(r.json().at("records_changed") == 1);
  CHECK(subscriptionsv2_calls(s) == calls + 1);

  auto after = get_order(s, a, id);
  CHECK(after.at("in_app_purchase").at("expires_at").at("ms") == later_expiry);
  CHECK(after.at("in_app_purchase").at("auto_renewing") == true);
  CHECK(str(after.at("in_app_purchase").at("purchase_state")) == "purchased");
  CHECK(str(after.at("in_app_purchase").at("subscription_state")) == "SUBSCRIPTION_STATE_ACTIVE");
  CHECK(str(after.at("validation_state")) == "validated");
  CHECK(after.at("is_fraud") == false);

  // Pub/Sub delivers at least once: the same messageId again changes nothing,
  // even though the API would now say something else.
  play_api_says(s, a, token, false, later_expiry);
  auto again = push(s, a.push_path, body);
  INFO(again.body);
  REQUIRE(again.status == 200);
  CHECK(str(again.json().at("status")) == "duplicate");
  CHECK(again.json().at("records_changed") == 0);
  CHECK(get_order(s, a, id) == after);

  // A new push (a renewal, says its content) while the API says it is cancelled.
  auto renewed
    = push(s, a.push_path, subscription_push(a.package, token, subscription_renewed, message_id()));
  INFO(renewed.body);
  REQUIRE(renewed.status == 200);
  CHECK(renewed.json().at("records_changed") == 1);
  auto cancelled = get_order(s, a, id);
  CHECK(cancelled.at("in_app_purchase").at("auto_renewing") == false);
  CHECK(str(cancelled.at("in_app_purchase").at("subscription_state"))
        == "SUBSCRIPTION_STATE_CANCELED");
  CHECK(str(cancelled.at("in_app_purchase").at("purchase_state")) == "cancelled");
  CHECK(str(cancelled.at("validation_state")) == "validated");

  // Another push while the API's answer is the same: it changed nothing, and
  // says so; the record is as it was, its updated_at included.
  auto same = push(s, a.push_path,
                   subscription_push(a.package, token, subscription_canceled, message_id()));
  INFO(same.body);
  REQUIRE(same.status == 200);
  CHECK(str(same.json().at("status")) == "applied");
  CHECK(same.json().at("records_changed") == 0);
  CHECK(get_order(s, a, id) == cancelled);
}

TEST_CASE("an RTDN keeps what was written to the purchase order while Play was being asked",
          "[rtdn][store_b][race]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-race");
  auto token = unique("tok");
  auto id = str(uploaded_subscription(s, a, token).at("id"));
  play_api_says(s, a, token, false, later_expiry); // cancelled

  // A receiptd of its own that waits for a slow Play, on the same database.
  auto args = standard_service_args(s);
  for (auto& arg : args)
    if (arg.starts_with("--store-b.timeout="))
      arg = "--store-b.timeout=10s";
    else if (arg.starts_with("--validator.store-deadline="))
      arg = "--validator.store-deadline=12s";
    else if (arg.starts_with("--retry.lease="))
      arg = "--retry.lease=15s";
  service_process own(make_temp_dir("receiptd-rtdn-race"), s.db_url, args);
  own.start();
  struct store_b_back_up {
    suite& s;
    ~store_b_back_up() { s.emulator.set_mode("store_b", "up"); }
  } restore{s};
  s.emulator.set_mode("store_b", "slow", 5000);

  // The Play Developer API calls about the purchase so far (its upload's).
  auto asked = [&] {
    int n = 0;
    auto log = s.emulator.control("GET", "/control/requests");
    for (auto& r : log.as_array())
      n += str(r.at("path")).find("/subscriptionsv2/tokens/" + token) != std::string::npos;
    return n;
  };
  auto asked_before = asked();
  http_response pushed;
  std::jthread pushing([&] {
    pushed = own.post(a.push_path,
                      subscription_push(a.package, token, subscription_canceled, message_id()), "");
  });
  // The handler has read the purchase order and asked Play; meanwhile the
  // voided purchases poll writes a chargeback (as apply_voided writes it).
  REQUIRE(eventually([&] { return asked() > asked_before; }));
  execute_sql(s.db_url,
              "UPDATE store_b_purchase_orders SET purchase_state = 'refunded', voided_time = "
              "1746683885000, voided_reason = 7, voided_source = 2 WHERE id = '"
                + id + "'");
  pushing.join();
  INFO(pushed.body);
  REQUIRE(pushed.status == 200);
  CHECK(pushed.json().at("records_changed") == 1);

  auto after = get_order(s, a, id);
  INFO(json::serialize(after));
  // Play's answer …
  CHECK(after.at("in_app_purchase").at("auto_renewing") == false);
  CHECK(str(after.at("in_app_purchase").at("subscription_state"))
        == "SUBSCRIPTION_STATE_CANCELED");
  // … and the chargeback, which Play's answer about the subscription does not undo.
  CHECK(after.at("in_app_purchase").at("voided_at").at("ms") == 1746683885000);
  CHECK(after.at("in_app_purchase").at("voided_reason") == 7);
  CHECK(after.at("in_app_purchase").at("voided_source") == 2);
  CHECK(str(after.at("in_app_purchase").at("purchase_state")) == "refunded");
  CHECK(own.stop() == 0);
}

TEST_CASE("RTDN pushes without the app's token, or for another package, are 401 and change "
          "nothing",
          "[rtdn][store_b][hostile]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-token");
  auto other = fresh_app(s, "rtdn-other");
  auto token = unique("tok");
  auto id = str(uploaded_subscription(s, a, token).at("id"));
  play_api_says(s, a, token, false, later_expiry); // what a wrongly accepted push would apply
  auto before = get_order(s, a, id);
  auto calls = subscriptionsv2_calls(s);
  auto body = subscription_push(a.package, token, subscription_canceled, message_id());
  auto bare = "/notifications/store_b/" + a.app.id;
  auto other_token = other.push_path.substr(other.push_path.find("?token="));

  for (const auto& path : {bare, bare + "?token=", bare + "?token=wrong", bare + other_token,
                           bare + "?secret=" + a.push_path.substr(a.push_path.find("=") + 1)}) {
    auto r = push(s, path, body);
    INFO(path << " → " << r.body);
    CHECK(r.status == 401);
    CHECK(code_of(r.json()) == "unauthorized");
  }
  SECTION("another app's push URL for this app's purchase") {
    auto r = push(s, other.push_path, body);
    INFO(r.body);
    CHECK(r.status == 401); // other's token is right, but the push names a's package
  }
  SECTION("a real push of another package") {
    auto r = push(s, a.push_path,
                  data_file("google-play-rtdn/dmzlingyin-aitubo-subscription-canceled-2025/"
                            "body.json"));
    INFO(r.body);
    CHECK(r.status == 401);
  }
  SECTION("an app that does not exist") {
    auto r = push(s,
                  "/notifications/store_b/00000000-0000-4000-8000-000000000000"
                    + a.push_path.substr(a.push_path.find('?')),
                  body);
    CHECK(r.status == 404);
  }
  CHECK(get_order(s, a, id) == before);
  CHECK(subscriptionsv2_calls(s) == calls);

  // The same push with the right URL does go through: the refusals above were
  // about the token, not the push.
  auto ok = push(s, a.push_path, body);
  INFO(ok.body);
  CHECK(ok.status == 200);
  CHECK(get_order(s, a, id).at("in_app_purchase").at("auto_renewing") == false);
}

TEST_CASE("a flood of refused RTDN pushes writes a line a minute, not one each",
          "[rtdn][store_b][hostile][log]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-flood");
  auto bare = "/notifications/store_b/" + a.app.id;
  for (int i = 0; i < 40; ++i) {
    auto body = subscription_push(a.package, unique("tok"), subscription_canceled, message_id());
    auto r = push(s, bare + "?token=forged" + std::to_string(i), body);
    INFO(r.body);
    REQUIRE(r.status == 401);
  }
  // With the app's token but for another package: refused, and counted with the others.
  for (int i = 0; i < 10; ++i) {
    auto body = subscription_push(unique_package("elsewhere"), unique("tok"), subscription_canceled,
                                  message_id());
    REQUIRE(push(s, a.push_path, body).status == 401);
  }
  // Each refusal is logged (or left out) before it is answered.
  CHECK(count_of(s.service.log(), "store notification refused for app " + a.app.id) == 1);
}

TEST_CASE("malformed RTDN pushes are 400 with the error shape and change nothing",
          "[rtdn][store_b][hostile]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-malformed");
  auto token = unique("tok");
  auto id = str(uploaded_subscription(s, a, token).at("id"));
  auto before = get_order(s, a, id);
  for (auto name : {"bat-go-negative-data-not-base64", "bat-go-negative-data-not-json",
                    "google-docs-reference-envelope", "imdhemy-negative-weird-data-2020"}) {
    auto r
      = push(s, a.push_path, data_file(std::string("google-play-rtdn/") + name + "/body.json"));
    INFO(name << " → " << r.body);
    CHECK(r.status == 400);
    auto error = r.json().at("errors").at(0);
    CHECK_FALSE(str(error.at("code")).empty());
    CHECK_FALSE(str(error.at("message")).empty());
  }
  for (std::string body : {"", "{", "[]", "{}", R"({"message":{}})"}) {
    auto r = push(s, a.push_path, body);
    INFO("'" << body << "' → " << r.body);
    CHECK(r.status == 400);
  }
  CHECK(get_order(s, a, id) == before);
  CHECK(s.service.get(a.push_path, "").status == 405);
}

TEST_CASE("a test notification is answered 200", "[rtdn][store_b]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-test");
  auto r = push(s, a.push_path,
                push_body(a.package,
                          json::object{{"testNotification", json::object{{"version", "1.0"}}}},
                          message_id()));
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(str(r.json().at("status")) == "applied");
  CHECK(r.json().at("records_changed") == 0);

  // A purchase nobody uploaded is recorded only: there is no order to update.
  auto unknown
    = push(s, a.push_path,
           subscription_push(a.package, unique("tok"), subscription_canceled, message_id()));
  INFO(unknown.body);
  REQUIRE(unknown.status == 200);
  CHECK(unknown.json().at("records_changed") == 0);
}

TEST_CASE("an RTDN that changes a purchase order fires purchase_order.updated",
          "[rtdn][store_b][webhooks]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-hooks");
  auto name = unique("hook");
  auto added
    = s.ctl({"webhook", "add", a.app.id, "--url=" + s.emulator.control_url("/webhooks/" + name),
             "--events=purchase_order.updated"});
  INFO(added.out << added.err);
  REQUIRE(added.code == 0);
  auto secret = str(added.json.at("secret"));
  auto token = unique("tok");
  auto id = str(uploaded_subscription(s, a, token).at("id"));
  play_api_says(s, a, token, false, first_expiry);
  auto r = push(s, a.push_path,
                subscription_push(a.package, token, subscription_canceled, message_id()));
  INFO(r.body);
  REQUIRE(r.status == 200);

  json::array got;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (got.empty() && std::chrono::steady_clock::now() < deadline) {
    // Held: a range-for over a temporary's member would outlive the temporary.
    auto received = s.emulator.control("GET", "/control/webhooks/" + name);
    for (auto& d : received.at("deliveries").as_array())
      if (d.at("status_answered").to_number<int>() / 100 == 2)
        got.push_back(d);
    if (got.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(got.size() == 1);
  auto body = str(got[0].at("body"));
  CHECK(delivery_header(got[0], "X-SHA256-Digest") == hmac_sha256_hex(secret, body));
  auto event = json::parse(body);
  CHECK(str(event.at("type")) == "purchase_order.updated");
  CHECK(str(event.at("data").at("id")) == id);
  CHECK(event.at("data").at("in_app_purchase").at("auto_renewing") == false);
  CHECK(event.at("previous_attributes").is_object());
}

TEST_CASE("a query string never changes the route", "[rtdn][http]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-query");
  auto id = str(uploaded_subscription(s, a, unique("tok")).at("id"));
  auto r = s.service.get(std::string(orders) + "/" + id + "?token=x&y", a.app.token);
  INFO(r.body);
  CHECK(r.status == 200);
  CHECK(str(r.json().at("id")) == id);
  CHECK(s.service.get("/healthz?probe=1", "").status == 200);
}

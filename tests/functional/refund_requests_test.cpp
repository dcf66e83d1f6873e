// The stores' refund requests answered, through the real binary on the
// database under test and the store emulator: Apple's CONSUMPTION_REQUEST
// answered with Send Consumption Information, Play's pending refund review with
// orders.reviewrefund; what is sent comes from the app's settings (receiptctl),
// the app's backend (PUT /server/in_app_purchases/{id}/consumption) and
// receiptd's records; retried through a store outage, skipped when the app
// answers nothing, missed (counted) past the store's deadline, and shown on the
// In-App Purchase resource as refund_request.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include <boost/json/parse.hpp>

#include "storekit_support.hpp"

using namespace receiptd;
using namespace receiptd::test;
using namespace receiptd::test::storekit;
namespace json = boost::json;

namespace {

constexpr auto patience = std::chrono::seconds(20);

std::string server_token_of(suite& s, const test_app& app) {
  auto r = s.ctl({"token", "issue", app.name, "--kind=server"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  return str(r.json.at("token"));
}

void refund_settings(suite& s, const test_app& app, const std::vector<std::string>& options) {
  std::vector<std::string> args{"app", "update", app.id};
  args.insert(args.end(), options.begin(), options.end());
  auto r = s.ctl(args);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
}

// A consumable bought an hour ago, registered, uploaded and confirmed: its
// signed form (for the notification) and its purchase id.
struct bought {
  test_support::transaction_fields tx;
  std::string purchase_id;
};

bought buy_coins(suite& s, const storekit_app& app) {
  const auto id = fresh_transaction_id();
  json::object f{{"transaction_id", id},
                 {"original_transaction_id", id},
                 {"bundle_id", app.bundle_id},
                 {"product_id", app.bundle_id + ".coins"},
                 {"type", "Consumable"},
                 {"environment", "Sandbox"},
                 {"purchase_date_ms", now_ms() - 3600'000}};
  auto record = upload(s, app, register_transaction(s, f), 200);
  bought b{as_signed(f), str(record.at("in_app_purchase").at("id"))};
  return b;
}

http_response consumption_request(suite& s, const storekit_app& app, const bought& b,
                                  std::int64_t signed_date = now_ms()) {
  notification_spec n{"CONSUMPTION_REQUEST", "", app.bundle_id};
  n.signed_date = signed_date;
  n.tx = b.tx;
  n.tx->signed_date = signed_date;
  auto r = notify(s, app, n);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r;
}

json::object purchase_of(suite& s, const test_app& app, const std::string& id) {
  auto r = s.service.get("/client/in_app_purchases/" + id, app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json().at("in_app_purchase").as_object();
}

// The purchase once its refund request is in `state`.
json::object refund_settled(suite& s, const test_app& app, const std::string& id,
                            const std::string& state) {
  const auto until = std::chrono::steady_clock::now() + patience;
  for (;;) {
    auto p = purchase_of(s, app, id);
    const auto& r = p.at("refund_request");
    if (r.is_object() && str(r.at("state")) == state)
      return p;
    if (std::chrono::steady_clock::now() > until) {
      INFO(json::serialize(p));
      FAIL("the refund request did not become " << state);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// What the emulator's stores received as refund answers for `key`.
std::vector<json::object> answers_for(suite& s, const std::string& key) {
  std::vector<json::object> out;
  const auto all = s.emulator.control("GET", "/control/refund_answers");
  for (const auto& a : all.as_array())
    if (str(a.at("key")) == key)
      out.push_back(a.as_object());
  return out;
}

json::object sent_body(const json::object& answer) {
  return json::parse(str(answer.at("body"))).as_object();
}

http_response put_consumption(suite& s, const std::string& purchase_id, const std::string& body,
                              const std::string& token) {
  return http_call("PUT", s.service.url("/server/in_app_purchases/" + purchase_id + "/consumption"),
                   body,
                   {"Content-Type: application/json", "Accept: application/json",
                    "Authorization: Bearer " + token});
}

} // namespace

TEST_CASE("CONSUMPTION_REQUEST is answered with what receiptd and the app's backend know",
          "[refund][store_a]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("refund-a"));
  refund_settings(s, app, {"--refund-preference=decline", "--refund-consent=true"});
  auto hook = add_endpoint(s, app, "in_app_purchase.updated");
  auto b = buy_coins(s, app);
  auto server = server_token_of(s, app);
  auto put = put_consumption(s, b.purchase_id,
                             R"({"consumption_percentage":25,"delivery_status":"delivered"})",
                             server);
  INFO(put.body);
  REQUIRE(put.status == 200);
  CHECK(put.json().at("consumption").at("consumption_percentage") == 25.0);

  consumption_request(s, app, b);
  auto p = refund_settled(s, app, b.purchase_id, "answered");
  const auto& r = p.at("refund_request");
  CHECK(str(r.at("store")) == "store_a");
  CHECK(r.at("store_status") == 202);
  CHECK(r.at("answered_at").at("ms").to_number<std::int64_t>()
        < r.at("deadline_at").at("ms").to_number<std::int64_t>());
  CHECK(r.at("deadline_at").at("ms").to_number<std::int64_t>()
          - r.at("received_at").at("ms").to_number<std::int64_t>()
        <= 12 * 3600'000);

  auto answers = answers_for(s, b.tx.transaction_id);
  REQUIRE(answers.size() == 1);
  CHECK(str(answers[0].at("environment")) == "Sandbox"); // the sandbox host
  auto body = sent_body(answers[0]);
  CHECK(body == json::object{{"customerConsented", true},
                             {"deliveryStatus", "DELIVERED"},
                             {"sampleContentProvided", false},
                             {"refundPreference", "DECLINE"},
                             {"consumptionPercentage", 25000}});
  CHECK(r.at("sent") == body); // what was sent, on the resource

  // The change was announced.
  bool announced = false;
  const auto until = std::chrono::steady_clock::now() + patience;
  while (!announced && std::chrono::steady_clock::now() < until) {
    const auto deliveries = received(s, hook);
    for (const auto& d : deliveries) {
      auto event = json::parse(str(d.at("body")));
      const auto& data = event.at("data");
      if (str(data.at("id")) == b.purchase_id && data.at("refund_request").is_object()
          && str(data.at("refund_request").at("state")) == "answered")
        announced = true;
    }
    if (!announced)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(announced);
}

TEST_CASE("the backend's word changes what is sent; without it, receiptd's records speak",
          "[refund][store_a]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("refund-report"));
  refund_settings(s, app,
                  {"--refund-preference=grant", "--refund-consent=true",
                   "--sample-content-provided=true"});
  auto server = server_token_of(s, app);

  SECTION("no report: delivered by receiptd's records, no percentage") {
    auto b = buy_coins(s, app);
    consumption_request(s, app, b);
    refund_settled(s, app, b.purchase_id, "answered");
    auto answers = answers_for(s, b.tx.transaction_id);
    REQUIRE(answers.size() == 1);
    CHECK(sent_body(answers[0])
          == json::object{{"customerConsented", true},
                          {"deliveryStatus", "DELIVERED"},
                          {"sampleContentProvided", true},
                          {"refundPreference", "GRANT_FULL"}});
  }
  SECTION("the backend says it was not delivered: percentage 0") {
    auto b = buy_coins(s, app);
    auto put = put_consumption(
      s, b.purchase_id,
      R"({"consumption_percentage":80,"delivery_status":"undelivered_server_outage","sample_content_provided":false})",
      server);
    REQUIRE(put.status == 200);
    consumption_request(s, app, b);
    refund_settled(s, app, b.purchase_id, "answered");
    auto answers = answers_for(s, b.tx.transaction_id);
    REQUIRE(answers.size() == 1);
    auto body = sent_body(answers[0]);
    CHECK(str(body.at("deliveryStatus")) == "UNDELIVERED_SERVER_OUTAGE");
    CHECK(body.at("consumptionPercentage") == 0);
    CHECK(body.at("sampleContentProvided") == false);
  }
}

TEST_CASE("a store outage: the answer is retried and sent", "[refund][store_a]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("refund-outage"));
  refund_settings(s, app, {"--refund-preference=grant-prorated", "--refund-consent=true"});
  auto b = buy_coins(s, app);
  s.emulator.control("PUT", "/control/refund_failures",
                     json::object{{"count", 2}, {"status", 503}});
  consumption_request(s, app, b);
  auto p = refund_settled(s, app, b.purchase_id, "answered");
  CHECK(p.at("refund_request").at("attempts") == 3);
  CHECK(answers_for(s, b.tx.transaction_id).size() == 1);
  CHECK(str(sent_body(answers_for(s, b.tx.transaction_id)[0]).at("refundPreference"))
        == "GRANT_PRORATED");
}

TEST_CASE("nothing is sent when the app answers nothing or lacks consent", "[refund][store_a]") {
  auto& s = the_suite();
  SECTION("preference none (the default)") {
    auto app = create_storekit_app(s, unique_package("refund-none"));
    auto b = buy_coins(s, app);
    consumption_request(s, app, b);
    auto p = refund_settled(s, app, b.purchase_id, "skipped");
    CHECK(str(p.at("refund_request").at("last_error")) == "preference_none");
    CHECK(p.at("refund_request").at("sent").is_null());
    CHECK(answers_for(s, b.tx.transaction_id).empty());
  }
  SECTION("no consent: Apple takes no consumption data") {
    auto app = create_storekit_app(s, unique_package("refund-consent"));
    refund_settings(s, app, {"--refund-preference=decline"});
    auto b = buy_coins(s, app);
    consumption_request(s, app, b);
    auto p = refund_settled(s, app, b.purchase_id, "skipped");
    CHECK(str(p.at("refund_request").at("last_error")) == "no_consent");
    CHECK(answers_for(s, b.tx.transaction_id).empty());
  }
}

TEST_CASE("a request past Apple's 12 hours is missed, counted, and not answered",
          "[refund][store_a]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("refund-late"));
  refund_settings(s, app, {"--refund-preference=decline", "--refund-consent=true"});
  auto b = buy_coins(s, app);
  // Signed 13 hours ago (Apple's retry of a notification receiptd never got).
  consumption_request(s, app, b, now_ms() - 13 * 3600'000);
  auto p = refund_settled(s, app, b.purchase_id, "expired");
  CHECK(answers_for(s, b.tx.transaction_id).empty());
  auto metrics = http_call("GET", s.service.url("/metrics"));
  REQUIRE(metrics.status == 200);
  CHECK(metrics.body.find(R"(receiptd_refund_requests_total{outcome="missed",store="store_a"})")
        != std::string::npos);
}

TEST_CASE("PUT /server/in_app_purchases/{id}/consumption checks its caller and its fields",
          "[refund]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("refund-put"));
  auto b = buy_coins(s, app);
  auto server = server_token_of(s, app);
  auto bad = put_consumption(s, b.purchase_id, R"({"consumption_percentage":120})", server);
  CHECK(bad.status == 422);
  CHECK(str(bad.json().at("errors").at(0).at("field")) == "consumption_percentage");
  auto status = put_consumption(s, b.purchase_id, R"({"delivery_status":"lost"})", server);
  CHECK(status.status == 422);
  CHECK(put_consumption(s, "00000000-0000-4000-8000-000000000000",
                        R"({"consumption_percentage":1})", server)
          .status
        == 404);
  CHECK(put_consumption(s, b.purchase_id, R"({"consumption_percentage":1})", app.token).status
        == 401); // a client token
  auto other = create_storekit_app(s, unique_package("refund-put-other"));
  CHECK(put_consumption(s, b.purchase_id, R"({"consumption_percentage":1})",
                        server_token_of(s, other))
          .status
        == 404); // another app's purchase
}

TEST_CASE("a pending refund review is answered with orders.reviewrefund", "[refund][store_b]") {
  auto& s = the_suite();
  const auto package = unique_package("refund-b");
  auto app = create_store_b_app(s, package, test_licence_key());
  refund_settings(s, app, {"--refund-preference=decline"});
  auto base = s.service.url("");
  auto url = s.ctl({"app", "rtdn-url", app.id, "--base-url=" + base});
  REQUIRE(url.code == 0);
  const auto push_path = str(url.json.at("url")).substr(base.size());

  const auto token = unique("tok");
  const auto order = "GPA.3300-" + model::hex_encode(model::random_bytes(4));
  s.emulator.control("POST", "/control/store_b/purchases",
                     json::object{{"package_name", package},
                                  {"product_id", "coins"},
                                  {"token", token},
                                  {"kind", "product"},
                                  {"order_id", order},
                                  {"acknowledged", true}});
  auto data = purchase_data_json(package, "coins", token, false, order);
  auto up = s.service.post("/client/store_b/purchase_orders",
                           store_b_body(data, sign_purchase(data)), app.token);
  INFO(up.body);
  REQUIRE(up.status == 200);
  const auto purchase_id = str(up.json().at("in_app_purchase").at("id"));
  REQUIRE(put_consumption(s, purchase_id, R"({"consumption_percentage":60})",
                          server_token_of(s, app))
            .status
          == 200);

  json::object notification{
    {"version", "1.0"},
    {"packageName", package},
    {"eventTimeMillis", std::to_string(now_ms())},
    {"pendingRefundReviewNotification",
     json::object{{"version", "1.0"}, {"pendingRefundToken", "prt-" + token}, {"orderId", order}}}};
  json::object message{{"data", model::base64_encode(json::serialize(notification))},
                       {"messageId", std::to_string(now_ms())},
                       {"publishTime", "2026-11-27T05:58:05.617Z"}};
  auto pushed = s.service.post(
    push_path,
    json::serialize(json::object{{"message", message}, {"subscription", "projects/p/subscriptions/s"}}),
    "");
  INFO(pushed.body);
  REQUIRE(pushed.status == 200);

  auto p = refund_settled(s, app, purchase_id, "answered");
  CHECK(str(p.at("refund_request").at("store")) == "store_b");
  CHECK(p.at("refund_request").at("deadline_at").at("ms").to_number<std::int64_t>()
          - p.at("refund_request").at("received_at").at("ms").to_number<std::int64_t>()
        <= 24 * 3600'000);
  auto answers = answers_for(s, order);
  REQUIRE(answers.size() == 1);
  CHECK(str(answers[0].at("environment")) == package);
  CHECK(sent_body(answers[0])
        == json::object{{"pendingRefundToken", "prt-" + token},
                        {"sampleContentProvided", false},
                        {"refundPreference", "DECLINE"},
                        {"consumptionPercentageMilliunits", 60000}});
}

// The Play upkeep through the real binary, on the database under
// test, against the emulator's Play Developer API: acknowledgement of validated
// purchases (retried durably, across a kill -9), the voided purchases poll, and
// the refresh of subscriptions whose expiry passed without a notification. Its
// own receiptd runs with the upkeep on and short intervals; the suite's has it off.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "harness.hpp"
#include "process.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::vector<std::string> upkeep_args(suite& s) {
  auto args = standard_service_args(s);
  std::erase(args, std::string("--store-b.voided-purchases=false"));
  std::erase(args, std::string("--store-b.refresh-interval=0s"));
  args.push_back("--store-b.voided-purchases-interval=1s");
  args.push_back("--store-b.voided-purchases-page-size=2");
  args.push_back("--store-b.refresh-interval=1s");
  return args;
}

// A receiptd with the upkeep on, beside the suite's, for one test (section):
// stopped when it goes, so that no other test shares its outbox or jobs with it.
std::unique_ptr<service_process> upkeep_service() {
  auto& s = the_suite();
  auto p
    = std::make_unique<service_process>(make_temp_dir("receiptd-upkeep"), s.db_url, upkeep_args(s));
  p->start();
  return p;
}

struct play_app {
  test_app app;
  std::string package;
};

play_app fresh_app(suite& s, const std::string& name, bool acknowledge) {
  play_app a;
  a.package = unique_package(name);
  a.app = create_store_b_app(s, a.package, test_licence_key());
  if (acknowledge) {
    auto r = s.ctl({"app", "update", a.app.id, "--acknowledge-purchases"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    REQUIRE(r.json.at("acknowledge_purchases") == true);
  }
  return a;
}

// Registers a purchase with the emulator's Play API as the test says it.
void play_api_says(suite& s, const play_app& a, const std::string& token, json::object fields) {
  fields["package_name"] = a.package;
  fields["token"] = token;
  if (!fields.contains("product_id"))
    fields["product_id"] = "gold";
  s.emulator.control("POST", "/control/store_b/purchases", fields);
}

// Purchase data made now (Google's acknowledgement deadline runs from its
// purchaseTime), uploaded.
json::value upload(service_process& p, const play_app& a, const std::string& token,
                   bool subscription, long expect = 200) {
  auto data = purchase_data_json(a.package, "gold", token, subscription);
  const std::string fixed_time = "\"purchaseTime\":1700000000000";
  auto at = data.find(fixed_time);
  REQUIRE(at != std::string::npos);
  data.replace(at, fixed_time.size(), "\"purchaseTime\":" + std::to_string(now_ms()));
  auto r = p.post(orders, store_b_body(data, sign_purchase(data)), a.app.token);
  INFO(r.body);
  REQUIRE(r.status == expect);
  return r.json();
}

json::value get_order(service_process& p, const play_app& a, const std::string& id) {
  auto r = p.get(std::string(orders) + "/" + id, a.app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

json::value emulator_purchase(suite& s, const std::string& token) {
  return s.emulator.control("GET", "/control/store_b/purchases/" + token);
}

// Waits until the order's resource satisfies `ok`; returns it as last read.
template <class F>
json::value wait_order(service_process& p, const play_app& a, const std::string& id, F ok) {
  json::value last;
  eventually([&] {
    last = get_order(p, a, id);
    return ok(last);
  });
  return last;
}

} // namespace

TEST_CASE("Play acknowledgement: an unacknowledged purchase is acknowledged for apps that ask",
          "[play_upkeep][acknowledgement]") {
  auto& s = the_suite();
  auto service = upkeep_service();
  auto& p = *service;

  SECTION("a one-time product, acknowledged once") {
    auto a = fresh_app(s, "ack-product", true);
    auto token = unique("tok");
    play_api_says(s, a, token, {{"kind", "product"}, {"acknowledged", false}});
    auto po = upload(p, a, token, false);
    CHECK(str(po.at("acknowledgement_state")) == "pending");
    CHECK(po.at("in_app_purchase").at("acknowledged") == false);
    auto id = str(po.at("id"));
    auto done = wait_order(p, a, id, [](const json::value& o) {
      return str(o.at("acknowledgement_state")) == "acknowledged";
    });
    CHECK(str(done.at("acknowledgement_state")) == "acknowledged");
    CHECK(done.at("in_app_purchase").at("acknowledged") == true);
    CHECK(str(done.at("validation_state")) == "validated");
    auto at_play = emulator_purchase(s, token);
    CHECK(at_play.at("acknowledged") == true);
    CHECK(at_play.at("acknowledge_calls") == 1);
    // Uploaded again: Play says acknowledged now, and nothing is asked of it.
    auto again = upload(p, a, token, false);
    CHECK(str(again.at("acknowledgement_state")) == "acknowledged");
    CHECK(emulator_purchase(s, token).at("acknowledge_calls") == 1);
  }

  SECTION("a subscription, after two failed attempts") {
    auto a = fresh_app(s, "ack-sub", true);
    auto token = unique("tok");
    play_api_says(s, a, token, {{"kind", "subscription"}, {"acknowledged", false}});
    s.emulator.control("POST", "/control/store_b/acknowledge_failures",
                       json::object{{"count", 2}, {"status", 503}});
    auto po = upload(p, a, token, true);
    auto id = str(po.at("id"));
    auto done = wait_order(p, a, id, [](const json::value& o) {
      return str(o.at("acknowledgement_state")) == "acknowledged";
    });
    CHECK(str(done.at("acknowledgement_state")) == "acknowledged");
    CHECK(emulator_purchase(s, token).at("acknowledge_calls") == 3);
  }

  SECTION("an app that does not ask is left alone") {
    auto a = fresh_app(s, "ack-off", false);
    auto token = unique("tok");
    play_api_says(s, a, token, {{"kind", "product"}, {"acknowledged", false}});
    auto po = upload(p, a, token, false);
    CHECK(po.at("acknowledgement_state").is_null());
    CHECK(po.at("in_app_purchase").at("acknowledged") == false);
    // Long enough for a job that should not exist to have run several times.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    CHECK(emulator_purchase(s, token).at("acknowledge_calls") == 0);
    CHECK(get_order(p, a, str(po.at("id"))).at("acknowledgement_state").is_null());
  }

  SECTION("past Google's three days it is too late: failed at once, never asked") {
    auto a = fresh_app(s, "ack-late", true);
    auto token = unique("tok");
    auto four_days_ago = now_ms() - 4LL * 24 * 3600 * 1000;
    play_api_says(
      s, a, token,
      {{"kind", "product"}, {"acknowledged", false}, {"purchase_time_ms", four_days_ago}});
    auto po = upload(p, a, token, false);
    CHECK(str(po.at("acknowledgement_state")) == "failed");
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    CHECK(emulator_purchase(s, token).at("acknowledge_calls") == 0);
  }

  SECTION("Play refuses it (the purchase was cancelled since): failed, not retried") {
    auto a = fresh_app(s, "ack-refused", true);
    auto token = unique("tok");
    // The first attempt fails, which leaves time to cancel the purchase at Play.
    s.emulator.control("POST", "/control/store_b/acknowledge_failures",
                       json::object{{"count", 1}, {"status", 503}});
    play_api_says(s, a, token, {{"kind", "product"}, {"acknowledged", false}});
    auto po = upload(p, a, token, false);
    play_api_says(s, a, token,
                  {{"kind", "product"}, {"acknowledged", false}, {"purchase_state", 1}});
    auto done = wait_order(p, a, str(po.at("id")), [](const json::value& o) {
      return str(o.at("acknowledgement_state")) != "pending";
    });
    CHECK(str(done.at("acknowledgement_state")) == "failed");
    CHECK(str(done.at("validation_state")) == "validated");
    CHECK(done.at("is_fraud") == false);
  }
}

TEST_CASE("Play acknowledgement survives kill -9: the job is durable", "[play_upkeep][kill9]") {
  auto& s = the_suite();
  auto service = upkeep_service();
  auto& p = *service;
  auto a = fresh_app(s, "ack-kill", true);
  auto token = unique("tok");
  play_api_says(s, a, token, {{"kind", "product"}, {"acknowledged", false}});
  // Play is failing every acknowledgement while receiptd dies.
  s.emulator.control("POST", "/control/store_b/acknowledge_failures",
                     json::object{{"count", 1000000}, {"status", 503}});
  auto po = upload(p, a, token, false);
  REQUIRE(str(po.at("acknowledgement_state")) == "pending");
  REQUIRE(eventually([&] { return emulator_purchase(s, token).at("acknowledge_calls") != 0; }));
  p.kill9();
  s.emulator.control("POST", "/control/store_b/acknowledge_failures",
                     json::object{{"count", 0}, {"status", 503}});
  p.start();
  auto done = wait_order(p, a, str(po.at("id")), [](const json::value& o) {
    return str(o.at("acknowledgement_state")) == "acknowledged";
  });
  CHECK(str(done.at("acknowledgement_state")) == "acknowledged");
  CHECK(emulator_purchase(s, token).at("acknowledged") == true);
}

TEST_CASE("voided purchases: Play's list marks the purchase orders refunded, not fraud",
          "[play_upkeep][voided]") {
  auto& s = the_suite();
  auto service = upkeep_service();
  auto& p = *service;
  auto a = fresh_app(s, "voided", false);
  auto hook = unique("hook");
  {
    auto r
      = s.ctl({"webhook", "add", a.app.id, "--url=" + s.emulator.control_url("/webhooks/" + hook),
               "--events=purchase_order.updated"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
  }
  // Three orders uploaded, two of them voided at Play (listed over two pages of
  // two with one voided purchase nobody uploaded here), one left alone.
  std::vector<std::string> tokens, ids;
  for (int i = 0; i < 3; ++i) {
    tokens.push_back(unique("tok"));
    play_api_says(s, a, tokens.back(), {{"kind", "product"}});
    ids.push_back(str(upload(p, a, tokens.back(), false).at("id")));
  }
  auto voided_at = now_ms() - 60000;
  s.emulator.control("POST", "/control/store_b/voided",
                     json::object{{"package_name", a.package},
                                  {"token", tokens[0]},
                                  {"voided_time_ms", voided_at},
                                  {"voided_source", 2},
                                  {"voided_reason", 7}});
  s.emulator.control("POST", "/control/store_b/voided",
                     json::object{{"package_name", a.package},
                                  {"token", unique("stranger")},
                                  {"voided_time_ms", voided_at + 1}});
  s.emulator.control("POST", "/control/store_b/voided",
                     json::object{{"package_name", a.package},
                                  {"token", tokens[1]},
                                  {"voided_time_ms", voided_at + 2},
                                  {"voided_source", 0},
                                  {"voided_reason", 1}});

  auto first = wait_order(p, a, ids[0], [](const json::value& o) {
    return str(o.at("in_app_purchase").at("purchase_state")) == "refunded";
  });
  auto second = wait_order(p, a, ids[1], [](const json::value& o) {
    return str(o.at("in_app_purchase").at("purchase_state")) == "refunded";
  });
  const auto& fp = first.at("in_app_purchase");
  CHECK(str(fp.at("purchase_state")) == "refunded");
  CHECK(fp.at("voided_at").at("ms") == voided_at);
  CHECK(fp.at("voided_reason") == 7);
  CHECK(fp.at("voided_source") == 2);
  CHECK(first.at("is_fraud") == false);
  CHECK(str(first.at("validation_state")) == "validated");
  CHECK(second.at("in_app_purchase").at("voided_reason") == 1);
  auto third = get_order(p, a, ids[2]);
  CHECK(str(third.at("in_app_purchase").at("purchase_state")) == "purchased");
  CHECK(third.at("in_app_purchase").at("voided_at").is_null());

  // One purchase_order.updated per voided order, saying "refunded"; the list
  // read again at the next intervals changes nothing and sends nothing more.
  auto deliveries = [&] {
    return s.emulator.control("GET", "/control/webhooks/" + hook).at("deliveries").as_array();
  };
  REQUIRE(eventually([&] { return deliveries().size() >= 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  auto got = deliveries();
  CHECK(got.size() == 2);
  for (auto& d : got) {
    auto event = json::parse(str(d.at("body")));
    CHECK(str(event.at("type")) == "purchase_order.updated");
    auto changes = event.at("changes").as_array();
    CHECK(std::find(changes.begin(), changes.end(), json::value("refunded")) != changes.end());
  }

  // A re-upload (the device still has the purchase) keeps it voided.
  auto again = upload(p, a, tokens[0], false);
  CHECK(str(again.at("in_app_purchase").at("purchase_state")) == "refunded");
  CHECK(again.at("in_app_purchase").at("voided_at").at("ms") == voided_at);
}

TEST_CASE("voided purchases: a quantity-based partial refund is listed and voids its share only",
          "[play_upkeep][voided]") {
  auto& s = the_suite();
  auto service = upkeep_service();
  auto& p = *service;
  auto a = fresh_app(s, "voided-partial", false);
  auto token = unique("tok");
  play_api_says(s, a, token, {{"kind", "product"}, {"quantity", 4}});
  auto id = str(upload(p, a, token, false).at("id"));
  // Google lists it only to a poll asking for includeQuantityBasedPartialRefund.
  auto voided_at = now_ms() - 60000;
  s.emulator.control("POST", "/control/store_b/voided",
                     json::object{{"package_name", a.package},
                                  {"token", token},
                                  {"voided_time_ms", voided_at},
                                  {"voided_quantity", 1}});
  auto order = wait_order(p, a, id, [](const json::value& o) {
    return !o.at("in_app_purchase").at("voided_at").is_null();
  });
  const auto& ip = order.at("in_app_purchase");
  CHECK(ip.at("voided_at").at("ms") == voided_at);
  CHECK(ip.at("voided_quantity") == 1);
  CHECK(ip.at("revoked_at").at("ms") == voided_at);
  CHECK(str(ip.at("revocation_type")) == "refund_partial_quantity");
  CHECK(ip.at("revocation_percentage") == 25000);
  CHECK(ip.at("is_active") == true);
}

TEST_CASE("scheduled refresh: a subscription past its expiry is asked again without a notification",
          "[play_upkeep][refresh]") {
  auto& s = the_suite();
  auto service = upkeep_service();
  auto& p = *service;
  auto a = fresh_app(s, "refresh", false);
  auto hour = 3600LL * 1000;

  SECTION("it renewed: the new expiry is taken") {
    auto token = unique("tok");
    // Play still says active while the expiry has passed (a renewal not seen yet).
    play_api_says(s, a, token,
                  {{"kind", "subscription"},
                   {"expiry_ms", now_ms() - hour},
                   {"subscription_state", "SUBSCRIPTION_STATE_ACTIVE"}});
    auto po = upload(p, a, token, true);
    auto id = str(po.at("id"));
    auto renewed_until = now_ms() + 30 * 24 * hour;
    play_api_says(s, a, token, {{"kind", "subscription"}, {"expiry_ms", renewed_until}});
    auto done = wait_order(p, a, id, [&](const json::value& o) {
      return o.at("in_app_purchase").at("expires_at").at("ms") == renewed_until;
    });
    CHECK(done.at("in_app_purchase").at("expires_at").at("ms") == renewed_until);
    CHECK(str(done.at("in_app_purchase").at("subscription_state")) == "SUBSCRIPTION_STATE_ACTIVE");
    CHECK(str(done.at("validation_state")) == "validated");
  }

  SECTION("Play has forgotten the token: expired, not fraud") {
    auto token = unique("tok");
    play_api_says(s, a, token,
                  {{"kind", "subscription"},
                   {"expiry_ms", now_ms() - hour},
                   {"subscription_state", "SUBSCRIPTION_STATE_ACTIVE"}});
    auto po = upload(p, a, token, true);
    play_api_says(s, a, token, {{"kind", "subscription"}, {"http_status", 410}});
    auto done = wait_order(p, a, str(po.at("id")), [](const json::value& o) {
      return str(o.at("in_app_purchase").at("subscription_state")) == "SUBSCRIPTION_STATE_EXPIRED";
    });
    CHECK(str(done.at("in_app_purchase").at("subscription_state")) == "SUBSCRIPTION_STATE_EXPIRED");
    CHECK(done.at("is_fraud") == false);
    CHECK(str(done.at("validation_state")) == "validated");
  }

  SECTION("a subscription still within its period is not asked") {
    auto token = unique("tok");
    play_api_says(s, a, token, {{"kind", "subscription"}, {"expiry_ms", now_ms() + 24 * hour}});
    upload(p, a, token, true);
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    // Other sections' subscriptions may be asked meanwhile; this one is not:
    // its state at Play changes nothing, so count the requests for its token.
    auto requests = s.emulator.control("GET", "/control/requests").as_array();
    int asked = 0;
    for (auto& r : requests)
      if (str(r.at("path")).find(token) != std::string::npos)
        ++asked;
    CHECK(asked == 1); // the upload's own call
  }
}

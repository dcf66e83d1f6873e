// The scheduled refresh of StoreKit 2 subscriptions through the real binary
//, on the database under test, against the emulator's App Store
// Server API (Get All Subscription Statuses): a subscription whose period
// ended without a notification is asked again, takes its renewal (and tells
// the app's webhook endpoint), and once expired is not asked again. Its own
// receiptd runs with the refresh on; the suite's has it off.
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

constexpr const char* transactions = "/client/store_a/transactions";
constexpr std::int64_t day = 86'400'000;

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// A receiptd with the StoreKit 2 refresh every second, beside the suite's, for
// one test: stopped when it goes (it shares the suite's jobs and outbox).
std::unique_ptr<service_process> refresh_service() {
  auto& s = the_suite();
  auto args = standard_service_args(s);
  std::erase(args, std::string("--store-a.refresh-interval=0s"));
  args.push_back("--store-a.refresh-interval=1s");
  auto p = std::make_unique<service_process>(make_temp_dir("receiptd-sk2-refresh"), s.db_url, args);
  p->start();
  return p;
}

// A monthly subscription transaction of the app (Sandbox), registered with the
// emulator's Server API; the JWS a device would upload.
std::string register_period(suite& s, const storekit_app& app, const std::string& id,
                            const std::string& original, std::int64_t purchase,
                            std::int64_t expires, json::object extra = {}) {
  json::object f{{"transaction_id", id},         {"original_transaction_id", original},
                 {"bundle_id", app.bundle_id},   {"product_id", app.bundle_id + ".monthly"},
                 {"environment", "Sandbox"},     {"type", "Auto-Renewable Subscription"},
                 {"purchase_date_ms", purchase}, {"original_purchase_date_ms", purchase},
                 {"expires_date_ms", expires}};
  for (auto& [k, v] : extra)
    f[k] = v;
  return register_transaction(s, f);
}

json::value get(service_process& p, const test_app& app, const std::string& id) {
  auto r = p.get(std::string(transactions) + "/" + id, app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

int statuses_calls(suite& s) {
  return s.emulator.calls().at("store_a").at("subscription_statuses_sandbox").to_number<int>();
}

} // namespace

TEST_CASE("a StoreKit 2 subscription whose period ended is asked again: renewed, told, then "
          "expired and left alone",
          "[storekit2][refresh]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("sk2refresh"));
  auto hook = add_endpoint(s, app, "transaction.updated");
  const auto t = now_ms();
  const auto original = fresh_transaction_id();
  // The first month ended yesterday; the device uploaded it (validated) and
  // no notification came since.
  auto jws = register_period(s, app, original, original, t - 31 * day, t - day);
  auto uploaded = s.service.post(transactions, transaction_body(jws), app.token);
  INFO(uploaded.body);
  REQUIRE(uploaded.status == 200);
  const auto id = str(uploaded.json().at("id"));
  CHECK(uploaded.json().at("subscription_status").is_null());

  // Apple renewed it yesterday for another month.
  const auto renewal = fresh_transaction_id();
  register_period(s, app, renewal, original, t - day, t + 29 * day);
  const int calls_before = statuses_calls(s);

  auto p = refresh_service();
  json::value r;
  REQUIRE(eventually([&] {
    r = get(*p, app, id);
    return r.at("subscription_status") == "active";
  }));
  CHECK(statuses_calls(s) > calls_before);
  CHECK(r.at("subscription_expires_date").at("ms") == t + 29 * day);
  CHECK(r.at("auto_renew") == true);
  CHECK(str(r.at("transaction_id")) == original);
  CHECK(r.at("expires_date").at("ms") == t - day); // its own period stays what it was
  CHECK(str(r.at("validation_state")) == "validated");
  CHECK(r.at("is_fraud") == false);

  // The app's endpoint heard of the renewal, signed.
  json::value event;
  REQUIRE(eventually([&] {
    for (auto& d : received(s, hook)) {
      auto e = json::parse(str(d.at("body")));
      if (str(e.at("type")) == "transaction.updated" && str(e.at("data").at("id")) == id) {
        event = d;
        return true;
      }
    }
    return false;
  }));
  auto body = str(event.at("body"));
  CHECK(delivery_header(event, "X-SHA256-Digest") == hmac_sha256_hex(hook.secret, body));
  auto changes = json::parse(body).at("changes").as_array();
  CHECK(std::find(changes.begin(), changes.end(), json::value("renewed")) != changes.end());

  // Live until t + 29 days: not asked again meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const int settled = statuses_calls(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  CHECK(statuses_calls(s) == settled);
}

TEST_CASE("a StoreKit 2 subscription Apple says expired becomes expired, once; an outage leaves "
          "it as it was until Apple answers",
          "[storekit2][refresh]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("sk2expired"));
  const auto t = now_ms();
  const auto original = fresh_transaction_id();
  // Apple's statuses endpoint is down for this subscription at first.
  auto jws = register_period(s, app, original, original, t - 31 * day, t - day,
                             {{"statuses_http_status", 503}, {"auto_renew_status", 0}});
  auto uploaded = s.service.post(transactions, transaction_body(jws), app.token);
  INFO(uploaded.body);
  REQUIRE(uploaded.status == 200);
  const auto id = str(uploaded.json().at("id"));

  auto p = refresh_service();
  // Its refresh job says why it waits.
  REQUIRE(eventually([&] {
    auto jobs = s.ctl({"jobs"});
    REQUIRE(jobs.code == 0);
    for (auto& j : jobs.json.as_array())
      if (str(j.at("record_id")) == id && str(j.at("last_error")).find("503") != std::string::npos)
        return str(j.at("kind")) == "store_a_transaction";
    return false;
  }));
  json::value r = get(*p, app, id);
  CHECK(r.at("subscription_status").is_null());
  CHECK(str(r.at("validation_state")) == "validated");
  CHECK(r.at("is_fraud") == false);

  // Apple answers again: the subscription has expired, auto-renew off.
  register_period(s, app, original, original, t - 31 * day, t - day, {{"auto_renew_status", 0}});
  REQUIRE(eventually([&] {
    r = get(*p, app, id);
    return r.at("subscription_status") == "expired";
  }));
  CHECK(r.at("auto_renew") == false);
  CHECK(r.at("subscription_expires_date").at("ms") == t - day);
  CHECK(str(r.at("validation_state")) == "validated");
  CHECK(r.at("is_fraud") == false);

  // Expired is final: never asked again.
  const int settled = statuses_calls(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  CHECK(statuses_calls(s) == settled);
}

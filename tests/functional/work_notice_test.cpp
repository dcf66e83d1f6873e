// Background work this instance writes is started when it falls due, not at the
// next poll: with hour-long polls, through the real binary on a database of its
// own, a 206 upload is revalidated once its job is due, its webhook event is
// sent as soon as it is recorded, and a failed delivery is sent again when its
// backoff ends.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "tests/support/db/test_db.hpp"

using namespace receiptd::test;
namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";

// A receiptd polling once an hour, on a database of its own (the suite's
// receiptd, polling every 100 ms, must not do the work for it), with one Store B
// app and a webhook endpoint on the emulator's receiver.
struct hourly_poller {
  std::string db_url;
  service_process service;
  test_app app;
  hook_endpoint endpoint;

  explicit hourly_poller(suite& s)
    : db_url(fresh_database_url(s.dialect)),
      service(make_temp_dir("receiptd-notice"), db_url,
              {"--store-b.api-url=" + s.emulator.store_b_url(), "--retry.poll-interval=3600s",
               "--webhooks.poll-interval=3600s", "--retry.initial=200ms", "--retry.max=1s",
               "--webhooks.initial-backoff=100ms", "--webhooks.max-backoff=400ms",
               "--webhooks.timeout=2s", "--store-b.voided-purchases=false",
               "--store-b.refresh-interval=0s", "--store-b.orders=false",
               "--store-a.refresh-interval=0s", "--limits.client-rate=0"}) {
    app.package_name = unique_package("notice");
    auto account = make_service_account(s);
    auto created = ctl({"app", "create", "--name=" + unique("app"),
                        "--package-name=" + app.package_name,
                        "--license-key=" + test_licence_key(),
                        "--service-account-file=" + account.path});
    app.id = str(created.at("id"));
    app.token = str(created.at("token"));
    endpoint.name = unique("hook");
    auto added = ctl({"webhook", "add", app.id,
                      "--url=" + s.emulator.control_url("/webhooks/" + endpoint.name)});
    endpoint.id = str(added.at("id"));
    endpoint.secret = str(added.at("secret"));
    // Started after the app and endpoint exist: its claims at start find nothing.
    service.start();
  }

  json::value ctl(std::vector<std::string> args) {
    args.insert(args.begin(), {RECEIPTCTL_BINARY, "--db.url=" + db_url, "--json"});
    auto r = run_program(args);
    INFO(r.err << r.out);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
  }

  http_response upload(suite& s, const std::string& token) {
    register_purchase(s, app.package_name, "gold", token, "product");
    auto data = purchase_data_json(app.package_name, "gold", token);
    return service.post(orders, store_b_body(data, sign_purchase(data)), app.token);
  }
};

// The statuses the endpoint answered, in order.
std::vector<int> answered(suite& s, const hook_endpoint& e) {
  std::vector<int> out;
  for (auto& d : received(s, e))
    out.push_back(d.at("status_answered").to_number<int>());
  return out;
}

} // namespace

TEST_CASE("with hour-long polls, a 206 upload is revalidated when its job falls due",
          "[work_notice][resilience]") {
  auto& s = the_suite();
  hourly_poller p(s);
  s.emulator.set_mode("store_b", "down");
  auto r = p.upload(s, unique("tok"));
  s.emulator.set_mode("store_b", "up");
  INFO(r.body);
  REQUIRE(r.status == 206);
  auto id = str(r.json().at("id"));
  // The job is due 200 ms after the upload (full jitter below it): well before an hour.
  bool validated = eventually(
    [&] {
      auto got = p.service.get(std::string(orders) + "/" + id, p.app.token);
      return got.status == 200 && str(got.json().at("validation_state")) == "validated";
    },
    std::chrono::seconds(15));
  CHECK(validated);
}

TEST_CASE("with hour-long polls, an event is sent when recorded and again after its backoff",
          "[work_notice][webhooks]") {
  auto& s = the_suite();
  hourly_poller p(s);
  // The first attempt gets a 503; the second, after the backoff, is answered.
  s.emulator.control("POST", "/control/webhooks/" + p.endpoint.name + "/mode",
                     json::object{{"status", 503}, {"times", 1}});
  auto r = p.upload(s, unique("tok"));
  INFO(r.body);
  REQUIRE(r.status == 200);
  bool delivered = eventually(
    [&] {
      auto statuses = answered(s, p.endpoint);
      return !statuses.empty() && statuses.back() >= 200 && statuses.back() < 300;
    },
    std::chrono::seconds(15));
  CHECK(delivered);
  auto statuses = answered(s, p.endpoint);
  REQUIRE(statuses.size() >= 2);
  CHECK(statuses.front() == 503);
}

// Customers and entitlements through the real binary: what a user may unlock
// now, as uploads, Apple's notifications, grants and rule changes move it; the
// two token kinds kept apart; one app never sees another's customers; and the
// events an app's backend receives for each change.
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "harness.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* transactions = "/client/store_a/transactions";
constexpr std::int64_t day = 86400000;
constexpr std::int64_t hour = 3600000;

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string server_token(suite& s, const test_app& app) {
  auto r = s.ctl({"token", "issue", app.name, "--kind=server"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  return str(r.json.at("token"));
}

void set_premium(suite& s, const test_app& app, const std::string& pattern) {
  auto r = s.ctl({"entitlement", "set", app.name, "premium", "--offering=monthly",
                  "--pattern=" + pattern});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
}

http_response get(suite& s, const std::string& path, const std::string& token) {
  auto r = s.service.get(path, token);
  INFO(path << " → " << r.status << " " << r.body);
  return r;
}

// The customer answer's "premium" entitlement (sandbox purchases: the tests'
// transactions are Sandbox ones).
json::value premium_of(suite& s, const test_app& app, const std::string& user,
                       const std::string& token = "") {
  auto r = get(s, "/client/customers/" + user + "?environment=sandbox",
               token.empty() ? app.token : token);
  REQUIRE(r.status == 200);
  return r.json().at("customer").at("entitlements").at("premium");
}

// A subscription transaction (Sandbox) registered with the emulator; its JWS.
std::string subscription(suite& s, const test_app& app, const std::string& id,
                         const std::string& original, std::int64_t bought,
                         std::int64_t expires) {
  return register_transaction(s, json::object{{"transaction_id", id},
                                              {"original_transaction_id", original},
                                              {"bundle_id", app.bundle_id},
                                              {"product_id", app.bundle_id + ".monthly"},
                                              {"environment", "Sandbox"},
                                              {"purchase_date_ms", bought},
                                              {"expires_date_ms", expires}});
}

json::value upload(suite& s, const test_app& app, const std::string& jws,
                   const std::string& user) {
  auto r = s.service.post(transactions,
                          transaction_body(jws, ",\"user_identifier\":\"" + user + "\""), app.token);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

// An App Store Server Notification V2 about `t`, signed by the suite's Apple PKI.
struct apple_notice {
  std::string type, subtype;
  test_support::transaction_fields t;
  std::int64_t signed_date = 0;
  std::optional<int> status;
  std::optional<json::object> renewal;
};

json::value notify(suite& s, const test_app& app, const apple_notice& n) {
  json::object data{{"bundleId", app.bundle_id},
                    {"environment", "Sandbox"},
                    {"signedTransactionInfo",
                     test_support::make_storekit_jws(test_support::transaction_payload_json(n.t),
                                                     s.jws_pki)}};
  if (n.status)
    data["status"] = *n.status;
  if (n.renewal)
    data["signedRenewalInfo"] = test_support::make_storekit_jws(json::serialize(*n.renewal), s.jws_pki);
  json::object payload{{"notificationType", n.type},
                       {"notificationUUID", unique("uuid")},
                       {"data", data},
                       {"version", "2.0"},
                       {"signedDate", n.signed_date}};
  if (!n.subtype.empty())
    payload["subtype"] = n.subtype;
  auto r = s.service.post(
    "/notifications/store_a/" + app.id,
    json::serialize(json::object{
      {"signedPayload", test_support::make_storekit_jws(json::serialize(payload), s.jws_pki)}}),
    "");
  INFO(n.type << " " << r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

test_support::transaction_fields transaction(const test_app& app, const std::string& id,
                                             const std::string& original, std::int64_t bought,
                                             std::int64_t expires) {
  test_support::transaction_fields t;
  t.transaction_id = id;
  t.original_transaction_id = original;
  t.bundle_id = app.bundle_id;
  t.product_id = app.bundle_id + ".monthly";
  t.purchase_date = bought;
  t.original_purchase_date = bought;
  t.expires_date = expires;
  t.signed_date = bought + 1000;
  return t;
}

json::value purchase(suite& s, const test_app& app, const std::string& id) {
  auto r = get(s, "/client/in_app_purchases/" + id, app.token);
  REQUIRE(r.status == 200);
  return r.json().at("in_app_purchase");
}

// The bodies of the endpoint's deliveries named `name` (purchase and customer
// events carry a name), once at least `count` arrived (polled, with a deadline).
std::vector<json::value> events_named(suite& s, const hook_endpoint& e, const std::string& name,
                                      std::size_t count) {
  std::vector<json::value> out;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);;) {
    out.clear();
    for (const auto& d : received(s, e)) {
      auto body = json::parse(str(d.at("body")));
      if (auto* n = body.as_object().if_contains("name"); n && str(*n) == name)
        out.push_back(body);
    }
    if (out.size() >= count || std::chrono::steady_clock::now() > deadline)
      return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<std::string> names_in(const json::value& v) {
  std::vector<std::string> out;
  for (const auto& n : v.as_array())
    out.emplace_back(n.as_string());
  return out;
}

} // namespace

TEST_CASE("a customer's entitlements: unknown, bought, looked up by either token kind",
          "[customers][entitlements]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("customers"));
  set_premium(s, app, "\\.monthly$");
  const auto server = server_token(s, app);
  const auto user = unique("user");

  // Before any purchase: 200, every entitlement listed, none active.
  auto before = get(s, "/client/customers/" + user, app.token);
  REQUIRE(before.status == 200);
  CHECK(before.json().at("customer").at("entitlements").at("premium").at("is_active") == false);
  CHECK(before.json().at("customer").at("in_app_purchases").as_array().empty());

  const auto now = now_ms();
  auto id = fresh_transaction_id();
  auto answer = upload(s, app, subscription(s, app, id, id, now - day, now + 29 * day), user);
  const auto purchase_id = str(answer.at("in_app_purchase").at("id"));
  CHECK(names_in(answer.at("in_app_purchase").at("entitlements"))
        == std::vector<std::string>{"premium/monthly"});

  auto premium = premium_of(s, app, user);
  CHECK(premium.at("is_active") == true);
  CHECK(str(premium.at("in_app_purchase_id")) == purchase_id);
  CHECK(str(premium.at("offering")) == "monthly");
  CHECK(str(premium.at("ownership")) == "purchased");
  CHECK(premium.at("expires_at").at("ms") == now + 29 * day);
  // Production is another world: the sandbox purchase grants nothing there.
  CHECK(get(s, "/client/customers/" + user, app.token)
          .json()
          .at("customer")
          .at("entitlements")
          .at("premium")
          .at("is_active")
        == false);

  SECTION("the server path answers the same to a server token; each path refuses the other kind") {
    auto r = get(s, "/server/customers/" + user + "?environment=sandbox", server);
    REQUIRE(r.status == 200);
    CHECK(r.json().at("customer").at("entitlements").at("premium").at("is_active") == true);
    CHECK(get(s, "/server/customers/" + user, app.token).status == 401);
    CHECK(get(s, "/client/customers/" + user, server).status == 401);
    CHECK(s.service.post(transactions, transaction_body("a.b.c"), server).status == 401);
    auto listed = get(s, "/server/customers/" + user + "/in_app_purchases?environment=sandbox",
                      server);
    REQUIRE(listed.status == 200);
    REQUIRE(listed.json().at("in_app_purchases").as_array().size() == 1);
    CHECK(str(listed.json().at("in_app_purchases").at(0).at("id")) == purchase_id);
  }

  SECTION("another app's tokens see nothing of this customer") {
    auto other = create_storekit_app(s, unique_package("stranger"));
    set_premium(s, other, "\\.monthly$");
    CHECK(premium_of(s, other, user).at("is_active") == false);
    CHECK(get(s, "/client/in_app_purchases/" + purchase_id, other.token).status == 404);
  }

  SECTION("server-only lookups: the client path is 403, the server path still answers") {
    REQUIRE(s.ctl({"app", "update", app.name, "--customer-lookup=server-only"}).code == 0);
    // The change reaches the running receiptd with the app's row (no token cache here).
    auto r = get(s, "/client/customers/" + user, app.token);
    CHECK(r.status == 403);
    CHECK(str(r.json().at("errors").at(0).at("code")) == "forbidden");
    CHECK(get(s, "/server/customers/" + user, server).status == 200);
  }

  SECTION("new rules re-tag the purchase at once") {
    set_premium(s, app, "^no-such-product$");
    CHECK(premium_of(s, app, user).at("is_active") == false);
    set_premium(s, app, "monthly");
    CHECK(premium_of(s, app, user).at("is_active") == true);
  }
}

TEST_CASE("grants: a promotional entitlement from the app's backend, and its removal",
          "[customers][grants]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("grants"));
  set_premium(s, app, "\\.monthly$");
  const auto server = server_token(s, app);
  const auto user = unique("user");
  const auto path = "/server/customers/" + user + "/entitlements/premium/grants";

  CHECK(s.service.post(path, R"({"duration":"7d"})", app.token).status == 401);
  auto bad = s.service.post(path, R"({"duration":"soon"})", server);
  CHECK(bad.status == 422);
  auto unknown = s.service.post("/server/customers/" + user + "/entitlements/gold/grants",
                                R"({"duration":"7d"})", server);
  CHECK(unknown.status == 422);

  auto made = s.service.post(path, R"({"duration":"7d"})", server);
  INFO(made.body);
  REQUIRE(made.status == 201);
  const auto grant_id = str(made.json().at("grant").at("id"));
  auto premium = get(s, "/client/customers/" + user, app.token).json()
                   .at("customer").at("entitlements").at("premium");
  CHECK(premium.at("is_active") == true);
  CHECK(str(premium.at("ownership")) == "granted");

  auto removed = s.service.del(path + "/" + grant_id, server);
  INFO(removed.body);
  CHECK(removed.status == 200);
  CHECK(get(s, "/client/customers/" + user, app.token).json()
          .at("customer").at("entitlements").at("premium").at("is_active")
        == false);
  CHECK(s.service.del(path + "/" + grant_id, server).status == 404);
}

TEST_CASE("an Apple subscription's life: bought, renewed, grace period, recovered, auto-renew "
          "off, refunded",
          "[customers][lifecycle][storekit2][notifications]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("life"));
  set_premium(s, app, "\\.monthly$");
  auto hook = add_endpoint(s, app, "in_app_purchase,customer");
  const auto user = unique("user");
  const auto now = now_ms();
  const auto original = fresh_transaction_id();

  // Bought 29 days ago, renewing in a day.
  auto first = upload(s, app, subscription(s, app, original, original, now - 29 * day, now + day),
                      user);
  const auto id = str(first.at("in_app_purchase").at("id"));
  CHECK(first.at("in_app_purchase").at("is_active") == true);
  auto created = events_named(s, hook, "in_app_purchase.created", 1);
  REQUIRE(created.size() == 1);
  CHECK(str(created[0].at("data").at("id")) == id);
  CHECK(created[0].at("previous_attributes").as_object().empty());
  auto changed = events_named(s, hook, "customer.entitlements_changed", 1);
  REQUIRE(changed.size() == 1);
  CHECK(names_in(changed[0].at("new_attributes").at("active_entitlements"))
        == std::vector<std::string>{"premium"});

  // Renewed early (DID_RENEW): a new transaction, the same purchase, a later period end.
  const auto renewal = fresh_transaction_id();
  notify(s, app, {"DID_RENEW", "", transaction(app, renewal, original, now - hour, now + 30 * day),
                  now - hour + 1000, 1, std::nullopt});
  auto p = purchase(s, app, id);
  CHECK(p.at("current_period_end_at").at("ms") == now + 30 * day);
  CHECK(p.at("versions") == 2);
  CHECK(p.at("sources").as_array().size() == 1); // a notification is not a record
  auto updated = events_named(s, hook, "in_app_purchase.updated", 1);
  REQUIRE(updated.size() >= 1);
  CHECK(updated.back().at("previous_attributes").at("current_period_end_at").at("ms")
        == now + day);

  // Billing failed, Apple grants a grace period (DID_FAIL_TO_RENEW / GRACE_PERIOD).
  json::object grace{{"originalTransactionId", original},
                     {"autoRenewProductId", app.bundle_id + ".monthly"},
                     {"environment", "Sandbox"},
                     {"productId", app.bundle_id + ".monthly"},
                     {"autoRenewStatus", 1},
                     {"isInBillingRetryPeriod", true},
                     {"gracePeriodExpiresDate", now + 16 * day},
                     {"signedDate", now - hour + 2000}};
  notify(s, app, {"DID_FAIL_TO_RENEW", "GRACE_PERIOD",
                  transaction(app, renewal, original, now - hour, now + 30 * day),
                  now - hour + 2000, 4, grace});
  p = purchase(s, app, id);
  CHECK(p.at("in_grace_period") == true);
  CHECK(p.at("in_billing_retry") == true);
  CHECK(p.at("grace_period_end_at").at("ms") == now + 16 * day);
  auto premium = premium_of(s, app, user);
  CHECK(premium.at("is_active") == true);
  CHECK(premium.at("in_billing_retry") == true);

  // Recovered (DID_RECOVER): paid again, out of billing retry.
  json::object recovered = grace;
  recovered["isInBillingRetryPeriod"] = false;
  recovered.erase("gracePeriodExpiresDate");
  recovered["signedDate"] = now - hour + 3000;
  notify(s, app, {"DID_RECOVER", "", transaction(app, renewal, original, now - hour, now + 30 * day),
                  now - hour + 3000, 1, recovered});
  p = purchase(s, app, id);
  CHECK(p.at("in_grace_period") == false);
  CHECK(p.at("in_billing_retry") == false);
  CHECK(premium_of(s, app, user).at("is_active") == true);

  // Auto-renew turned off: still active until the period ends, will not renew.
  json::object off = recovered;
  off["autoRenewStatus"] = 0;
  off["signedDate"] = now - hour + 4000;
  notify(s, app, {"DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED",
                  transaction(app, renewal, original, now - hour, now + 30 * day),
                  now - hour + 4000, 1, off});
  p = purchase(s, app, id);
  CHECK(p.at("is_auto_renewing") == false);
  premium = premium_of(s, app, user);
  CHECK(premium.at("is_active") == true);
  CHECK(premium.at("will_renew") == false);

  // Refunded: inactive at once, announced to the backend.
  auto refunded = transaction(app, renewal, original, now - hour, now + 30 * day);
  refunded.revocation_date = now - 60000;
  refunded.revocation_reason = 0;
  notify(s, app, {"REFUND", "", refunded, now - 50000, std::nullopt, std::nullopt});
  p = purchase(s, app, id);
  CHECK(p.at("is_active") == false);
  CHECK(p.at("revoked_at").at("ms") == now - 60000);
  CHECK(premium_of(s, app, user).at("is_active") == false);
  changed = events_named(s, hook, "customer.entitlements_changed", 2);
  REQUIRE(changed.size() == 2);
  CHECK(names_in(changed[1].at("previous_attributes").at("active_entitlements"))
        == std::vector<std::string>{"premium"});
  CHECK(changed[1].at("new_attributes").at("active_entitlements").as_array().empty());
}

TEST_CASE("a notification older than notifications.max-age is recorded and changes nothing",
          "[notifications][hostile]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("replay"));
  const auto now = now_ms();
  auto id = fresh_transaction_id();
  auto answer = upload(s, app, subscription(s, app, id, id, now - 400 * day, now + 30 * day),
                       "alice");
  const auto record_id = str(answer.at("id"));

  // A receiptd with the default bound (10 days) on the suite's database.
  auto args = standard_service_args(s);
  args.erase(std::remove_if(args.begin(), args.end(),
                            [](const std::string& a) { return a.starts_with("--notifications."); }),
             args.end());
  service_process bounded(make_temp_dir("receiptd-max-age"), s.db_url, args);
  bounded.start();
  auto refund = transaction(app, id, id, now - 400 * day, now + 30 * day);
  refund.revocation_date = now - 396 * day;
  refund.revocation_reason = 0;
  // Signed 13 months ago: genuine, and replayed now.
  json::object payload{{"notificationType", "REFUND"},
                       {"notificationUUID", unique("uuid")},
                       {"data", json::object{{"bundleId", app.bundle_id},
                                             {"environment", "Sandbox"},
                                             {"signedTransactionInfo",
                                              test_support::make_storekit_jws(
                                                test_support::transaction_payload_json(refund),
                                                s.jws_pki)}}},
                       {"version", "2.0"},
                       {"signedDate", now - 395 * day}};
  auto r = bounded.post(
    "/notifications/store_a/" + app.id,
    json::serialize(json::object{
      {"signedPayload", test_support::make_storekit_jws(json::serialize(payload), s.jws_pki)}}),
    "");
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(str(r.json().at("status")) == "recorded");
  CHECK(r.json().at("records_changed") == 0);
  auto record = get(s, std::string(transactions) + "/" + record_id, app.token).json();
  CHECK(record.at("revocation_date").is_null());
  CHECK(record.at("in_app_purchase").at("is_active") == true);
}

namespace {

// receiptd_customer_answers_kept_total of an instance (no metrics.token set).
long kept_answers(service_process& svc) {
  auto r = svc.get("/metrics", "");
  REQUIRE(r.status == 200);
  const std::string name = "\nreceiptd_customer_answers_kept_total ";
  auto at = r.body.find(name);
  REQUIRE(at != std::string::npos);
  return std::stol(r.body.substr(at + name.size()));
}

bool premium_active(service_process& svc, const test_app& app, const std::string& user) {
  auto r = svc.get("/client/customers/" + user, app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json().at("customer").at("entitlements").at("premium").at("is_active") == true;
}

} // namespace

TEST_CASE("customer answers given again never outlive a write, here or on another instance",
          "[customers][kept]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("kept"));
  set_premium(s, app, "\\.monthly$");
  const auto server = server_token(s, app);
  const auto user = unique("user");
  const auto grants = "/server/customers/" + user + "/entitlements/premium/grants";
  service_process other(make_temp_dir("receiptd-kept-other"), s.db_url, standard_service_args(s));
  other.start();
  const bool postgresql = s.dialect == db::dialect::postgresql;

  // Asked again and again: on PostgreSQL the answer is kept and given again, once
  // the first lookup has the instance listen for the others' writes.
  auto ask_both = [&] {
    CHECK_FALSE(premium_active(s.service, app, user));
    CHECK_FALSE(premium_active(other, app, user));
  };
  const auto kept_at_start = kept_answers(s.service);
  ask_both();
  if (postgresql) {
    REQUIRE(eventually(
      [&] {
        ask_both();
        return kept_answers(s.service) > kept_at_start && kept_answers(other) > 0;
      },
      std::chrono::seconds(5)));
  }
  const auto kept_before = kept_answers(s.service);
  for (int i = 0; i < 4; ++i)
    ask_both();
  // (/metrics renders its text anew at most every 100 ms; a background write of
  // this instance may make one a fresh read.)
  if (postgresql)
    CHECK(eventually([&] { return kept_answers(s.service) - kept_before >= 3; },
                     std::chrono::seconds(3)));
  else
    CHECK(kept_answers(s.service) == 0); // SQLite keeps none

  // A write on this instance: the very next answer here shows it.
  auto made = s.service.post(grants, R"({"duration":"7d"})", server);
  INFO(made.body);
  REQUIRE(made.status == 201);
  CHECK(premium_active(s.service, app, user));
  // The other instance hears of it (PostgreSQL: NOTIFY, within milliseconds).
  CHECK(eventually([&] { return premium_active(other, app, user); }, std::chrono::seconds(1)));
  for (int i = 0; i < 3; ++i)
    CHECK(premium_active(other, app, user));

  // A write on the other instance, the answers kept here and there alike.
  auto removed = other.del(grants + "/" + str(made.json().at("grant").at("id")), server);
  INFO(removed.body);
  REQUIRE(removed.status == 200);
  CHECK_FALSE(premium_active(other, app, user));
  CHECK(eventually([&] { return !premium_active(s.service, app, user); },
                   std::chrono::seconds(1)));
  CHECK(other.stop() == 0);
}

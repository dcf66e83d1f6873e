// App Store purchases as the In-App Purchase resource and the customer answer
// tell them, through the real binary on the database under test: a transaction
// shared through Family Sharing, an upgrade within a subscription group, and a
// unified receipt holding several purchases. The JWS and receipts are signed
// here with the suite's test PKIs, which its receiptd trusts.
#include <catch2/catch.hpp>

#include <chrono>
#include <set>

#include "harness.hpp"
#include "model/encoding.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* transactions = "/client/store_a/transactions";
constexpr std::int64_t hour = 3600000;
constexpr std::int64_t day = 24 * hour;

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

void entitle(suite& s, const test_app& app, const std::string& entitlement,
             const std::string& offering, const std::string& pattern) {
  auto r = s.ctl({"entitlement", "set", app.name, entitlement, "--offering=" + offering,
                  "--pattern=" + pattern});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
}

// A Sandbox auto-renewable subscription transaction of the app.
test_support::transaction_fields transaction(const test_app& app, const std::string& id,
                                             const std::string& original,
                                             const std::string& product, std::int64_t bought,
                                             std::int64_t expires) {
  test_support::transaction_fields t;
  t.transaction_id = id;
  t.original_transaction_id = original;
  t.bundle_id = app.bundle_id;
  t.product_id = app.bundle_id + "." + product;
  t.purchase_date = bought;
  t.original_purchase_date = bought;
  t.expires_date = expires;
  t.signed_date = bought + 1000;
  return t;
}

// The transaction signed with the suite's StoreKit test PKI, registered with the
// emulator's Server API so that Get Transaction Info answers that very JWS; the
// JWS the device uploads.
std::string signed_and_known(suite& s, const test_support::transaction_fields& t) {
  auto jws = test_support::make_storekit_jws(test_support::transaction_payload_json(t), s.jws_pki);
  s.emulator.control("POST", "/control/store_a/transactions",
                     json::object{{"transaction_id", t.transaction_id},
                                  {"original_transaction_id", t.original_transaction_id},
                                  {"bundle_id", t.bundle_id},
                                  {"product_id", t.product_id},
                                  {"environment", t.environment},
                                  {"purchase_date_ms", t.purchase_date},
                                  {"signed_transaction_info", jws}});
  return jws;
}

json::value upload(suite& s, const test_app& app, const std::string& jws, const std::string& user) {
  auto r = s.service.post(
    transactions, transaction_body(jws, ",\"user_identifier\":\"" + user + "\""), app.token);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

// An App Store Server Notification V2 about `t`, signed now by the suite's Apple PKI.
json::value notify(suite& s, const test_app& app, const std::string& type,
                   const std::string& subtype, const std::string& transaction_payload) {
  json::object payload{
    {"notificationType", type},
    {"notificationUUID", unique("uuid")},
    {"data",
     json::object{
       {"bundleId", app.bundle_id},
       {"environment", "Sandbox"},
       {"signedTransactionInfo", test_support::make_storekit_jws(transaction_payload, s.jws_pki)}}},
    {"version", "2.0"},
    {"signedDate", now_ms()}};
  if (!subtype.empty())
    payload["subtype"] = subtype;
  auto r = s.service.post(
    "/notifications/store_a/" + app.id,
    json::serialize(json::object{
      {"signedPayload", test_support::make_storekit_jws(json::serialize(payload), s.jws_pki)}}),
    "");
  INFO(type << " " << r.status << " " << r.body);
  REQUIRE(r.status == 200);
  CHECK(str(r.json().at("status")) == "applied");
  return r.json();
}

json::value purchase(suite& s, const test_app& app, const std::string& id) {
  auto r = s.service.get("/client/in_app_purchases/" + id, app.token);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.json().at("in_app_purchase");
}

// The customer answer (the tests' purchases are sandbox ones).
json::value customer(suite& s, const test_app& app, const std::string& user) {
  auto r = s.service.get("/client/customers/" + user + "?environment=sandbox", app.token);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.json().at("customer");
}

bool active(suite& s, const test_app& app, const std::string& user, const std::string& name) {
  return customer(s, app, user).at("entitlements").at(name).at("is_active") == true;
}

} // namespace

TEST_CASE("a family-shared StoreKit 2 transaction grants as family_shared",
          "[purchases][storekit2][family]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("family"));
  entitle(s, app, "premium", "monthly", "\\.monthly$");
  const auto user = unique("user");
  const auto now = now_ms();
  const auto id = fresh_transaction_id();
  auto t = transaction(app, id, id, "monthly", now - day, now + 29 * day);
  t.in_app_ownership_type = "FAMILY_SHARED";
  auto answer = upload(s, app, signed_and_known(s, t), user);
  const auto& iap = answer.at("in_app_purchase");
  CHECK(str(iap.at("ownership")) == "family_shared");
  CHECK(iap.at("is_active") == true);
  const auto purchase_id = str(iap.at("id"));
  auto premium = customer(s, app, user).at("entitlements").at("premium");
  CHECK(premium.at("is_active") == true);
  CHECK(str(premium.at("ownership")) == "family_shared");
  CHECK(str(premium.at("in_app_purchase_id")) == purchase_id);

  // The family organizer stops sharing (REVOKE): no longer granted.
  auto revoked = t;
  revoked.revocation_date = now - 60000;
  revoked.revocation_reason = 0;
  revoked.signed_date = now - 50000;
  notify(s, app, "REVOKE", "", test_support::transaction_payload_json(revoked));
  auto p = purchase(s, app, purchase_id);
  CHECK(p.at("is_active") == false);
  CHECK(p.at("revoked_at").at("ms") == now - 60000);
  CHECK(str(p.at("ownership")) == "family_shared");
  CHECK_FALSE(active(s, app, user, "premium"));
}

TEST_CASE("an upgrade within a subscription group: the upgraded period grants no more",
          "[purchases][storekit2][upgrade]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("upgrade"));
  entitle(s, app, "standard", "monthly", "\\.basic$");
  entitle(s, app, "premium", "monthly", "\\.pro$");
  const auto user = unique("user");
  const auto now = now_ms();
  // Basic since ten days; upgraded to pro an hour ago. Within one subscription
  // group the original transaction id stays: one purchase.
  const auto original = fresh_transaction_id();
  const auto basic = transaction(app, original, original, "basic", now - 10 * day, now + 20 * day);
  const auto upgrade_id = fresh_transaction_id();
  const auto pro = transaction(app, upgrade_id, original, "pro", now - hour, now + 30 * day - hour);
  // Apple's word on the old transaction once replaced: isUpgraded.
  auto replaced = basic;
  replaced.signed_date = now - hour + 1000;
  auto upgraded_payload = json::parse(test_support::transaction_payload_json(replaced));
  upgraded_payload.as_object()["isUpgraded"] = true;
  const auto upgraded = json::serialize(upgraded_payload);

  const auto first = upload(s, app, signed_and_known(s, basic), user);
  const auto id = str(first.at("in_app_purchase").at("id"));
  REQUIRE(active(s, app, user, "standard"));

  SECTION("the upgraded transaction is known first: nothing grants until the new one is") {
    notify(s, app, "DID_CHANGE_RENEWAL_PREF", "UPGRADE", upgraded);
    auto p = purchase(s, app, id);
    CHECK(p.at("is_upgraded") == true);
    CHECK(p.at("is_active") == false);
    CHECK(str(p.at("product_id")) == app.bundle_id + ".basic");
    CHECK_FALSE(active(s, app, user, "standard"));
    CHECK_FALSE(active(s, app, user, "premium"));

    auto answer = upload(s, app, signed_and_known(s, pro), user);
    CHECK(str(answer.at("in_app_purchase").at("id")) == id);
  }
  SECTION("the new transaction is known first: the upgraded one changes nothing") {
    auto answer = upload(s, app, signed_and_known(s, pro), user);
    CHECK(str(answer.at("in_app_purchase").at("id")) == id);
    const auto versions = purchase(s, app, id).at("versions");
    notify(s, app, "DID_CHANGE_RENEWAL_PREF", "UPGRADE", upgraded);
    CHECK(purchase(s, app, id).at("versions") == versions);
  }

  // Either way: the purchase is the pro subscription, which grants premium.
  auto p = purchase(s, app, id);
  CHECK(str(p.at("product_id")) == app.bundle_id + ".pro");
  CHECK(p.at("is_upgraded") == false);
  CHECK(p.at("is_active") == true);
  CHECK(p.at("current_period_end_at").at("ms") == now + 30 * day - hour);
  CHECK(p.at("entitlements") == json::array{"premium/monthly"});
  auto answer = customer(s, app, user);
  CHECK(answer.at("entitlements").at("premium").at("is_active") == true);
  CHECK(str(answer.at("entitlements").at("premium").at("in_app_purchase_id")) == id);
  CHECK(answer.at("entitlements").at("standard").at("is_active") == false);
}

TEST_CASE("a unified receipt with three purchases: each its own resource, the customer their "
          "entitlements",
          "[purchases][receipts]") {
  auto& s = the_suite();
  auto bundle = unique_package("receipt3");
  auto app = create_store_a_app(s, bundle);
  entitle(s, app, "premium", "monthly", "\\.monthly$");
  entitle(s, app, "premium", "yearly", "\\.yearly$");
  entitle(s, app, "pro", "lifetime", "\\.lifetime$");
  const auto user = unique("user");
  const auto now = now_ms() / 1000 * 1000; // a receipt's dates are whole seconds

  // A monthly subscription renewed once, a lifetime unlock, and a yearly
  // subscription that ended a month ago.
  auto entry
    = [&](const std::string& product, const std::string& id, const std::string& original,
          std::int64_t bought, std::int64_t first_bought, std::optional<std::int64_t> expires) {
        auto p = test_support::purchase(bundle + "." + product, id, bought);
        p.original_transaction_id = original;
        p.original_purchase_date = first_bought;
        p.expires_date = expires;
        return p;
      };
  const auto monthly = fresh_transaction_id();
  const auto lifetime = fresh_transaction_id();
  const auto yearly = fresh_transaction_id();
  test_support::unified_receipt_params params;
  params.bundle_id = bundle;
  params.creation_date = now - hour;
  params.in_app
    = {entry("monthly", monthly, monthly, now - 40 * day, now - 40 * day, now - 10 * day),
       entry("lifetime", lifetime, lifetime, now - 30 * day, now - 30 * day, std::nullopt),
       entry("monthly", fresh_transaction_id(), monthly, now - 10 * day, now - 40 * day,
             now + 20 * day),
       entry("yearly", yearly, yearly, now - 400 * day, now - 400 * day, now - 35 * day)};
  auto receipt = model::base64_encode(
    test_support::make_unified_receipt(params, test_support::apple_like_signer(s.pki)));

  auto r = s.service.post(
    "/client/store_a/receipts",
    json::serialize(json::object{{"receipt", receipt}, {"user_identifier", user}}), app.token);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  const auto items = r.json().at("in_app_purchases").as_array();
  REQUIRE(items.size() == 4);
  // Each entry carries the resource of its purchase: the two monthly periods
  // one purchase, three purchases in all.
  CHECK(items[0].at("id") == items[2].at("id"));
  std::set<std::string> ids;
  for (const auto& item : items) {
    CHECK(str(item.at("marketplace")) == "store_a");
    CHECK(str(item.at("user_identifier")) == user);
    CHECK(str(item.at("environment")) == "sandbox");
    ids.insert(str(item.at("id")));
  }
  CHECK(ids.size() == 3);
  CHECK(items[0].at("entitlements") == json::array{"premium/monthly"});
  CHECK(items[0].at("is_active") == true);
  CHECK(str(items[0].at("type")) == "subscription");
  CHECK(items[0].at("current_period_end_at").at("ms") == now + 20 * day);
  CHECK(items[1].at("entitlements") == json::array{"pro/lifetime"});
  CHECK(items[1].at("is_active") == true);
  CHECK(items[1].at("type").is_null()); // a receipt names no type: never guessed
  CHECK(items[3].at("entitlements") == json::array{"premium/yearly"});
  CHECK(items[3].at("is_active") == false);
  CHECK(items[3].at("current_period_end_at").at("ms") == now - 35 * day);
  for (const auto& item : items)
    CHECK(purchase(s, app, str(item.at("id"))).at("sources")
          == json::array{json::object{{"kind", "receipt"}, {"id", r.json().at("id")}}});

  // The customer: premium by the monthly subscription, pro by the lifetime
  // unlock, and those two purchases (the expired yearly one grants nothing
  // and no entitlement names it).
  auto answer = customer(s, app, user);
  const auto& premium = answer.at("entitlements").at("premium");
  CHECK(premium.at("is_active") == true);
  CHECK(premium.at("in_app_purchase_id") == items[0].at("id"));
  CHECK(str(premium.at("offering")) == "monthly");
  CHECK(premium.at("expires_at").at("ms") == now + 20 * day);
  const auto& pro = answer.at("entitlements").at("pro");
  CHECK(pro.at("is_active") == true);
  CHECK(pro.at("in_app_purchase_id") == items[1].at("id"));
  CHECK(pro.at("expires_at").is_null());
  std::set<std::string> listed;
  for (const auto& p : answer.at("in_app_purchases").as_array())
    listed.insert(str(p.at("id")));
  CHECK(listed == std::set<std::string>{str(items[0].at("id")), str(items[1].at("id"))});
}

// The In-App Purchase resource: what each source says (observe), the fold by
// store time, activity at a given time, the customer answer, Mbaasy's event
// payload, and the stored form.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <tuple>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/purchases/activity.hpp"
#include "model/purchases/customer.hpp"
#include "model/purchases/events.hpp"
#include "model/purchases/fold.hpp"
#include "model/purchases/observation.hpp"
#include "model/purchases/ownership.hpp"
#include "model/purchases/requests.hpp"
#include "model/purchases/resource_json.hpp"

using namespace receiptd::model;
using namespace receiptd::model::purchases;
namespace json = boost::json;

namespace {

constexpr unix_ms day = 24LL * 3600 * 1000;
constexpr unix_ms t0 = 1'750'000'000'000;

// A validated StoreKit 2 auto-renewable subscription transaction.
transaction_record subscription_transaction(std::string transaction_id, unix_ms bought,
                                            unix_ms signed_at) {
  transaction_record r;
  r.id = "rec-" + transaction_id;
  r.app_id = "app";
  r.state = validation_state::validated;
  r.env = environment::production;
  r.said_at = signed_at;
  r.updated_at = signed_at;
  r.echo.user_identifier = "alice";
  auto& t = r.transaction;
  t.transaction_id = transaction_id;
  t.original_transaction_id = "1000";
  t.bundle_id = "com.example";
  t.product_id = "premium.monthly";
  t.type = "Auto-Renewable Subscription";
  t.purchase_date = bought;
  t.original_purchase_date = t0;
  t.expires_date = bought + 30 * day;
  t.quantity = 1;
  t.storefront = "DEU";
  t.currency = "EUR";
  t.price = 4990;
  return r;
}

purchase folded(const std::vector<observation>& all) {
  REQUIRE(!all.empty());
  auto p = start(all.front(), "p1", t0);
  for (std::size_t i = 1; i < all.size(); ++i)
    fold(p, all[i]);
  return p;
}

class premium_rules final : public entitlement_rules {
public:
  std::vector<std::string> names() const override { return {"premium", "pro"}; }
  std::vector<std::string> tags(std::string_view product) const override {
    if (product.starts_with("premium."))
      return {"premium/monthly"};
    if (product == "lifetime")
      return {"premium/lifetime", "pro/lifetime"};
    return {};
  }
};

// A verified notification about a transaction of the subscription.
store_a::verified_notification notification(std::string type, std::string transaction_id,
                                            unix_ms bought, unix_ms signed_at) {
  store_a::verified_notification v;
  v.n.notification_uuid = "n-" + type;
  v.n.type = std::move(type);
  v.n.signed_date = signed_at;
  v.n.bundle_id = "com.example";
  store_a::signed_transaction t;
  t.transaction_id = std::move(transaction_id);
  t.original_transaction_id = "1000";
  t.bundle_id = "com.example";
  t.product_id = "premium.monthly";
  t.type = "Auto-Renewable Subscription";
  t.purchase_date = bought;
  t.expires_date = bought + 30 * day;
  t.signed_date = signed_at;
  v.transaction = t;
  return v;
}

} // namespace

TEST_CASE("a StoreKit 2 transaction says its purchase in the resource's terms", "[purchases]") {
  auto all = observe(subscription_transaction("1000", t0, t0 + 1000), {});
  REQUIRE(all.size() == 1);
  const auto& o = all.front();
  CHECK(o.key == "1000");
  CHECK(o.market == marketplace::store_a);
  CHECK(o.type == std::optional<purchase_type>(purchase_type::subscription));
  CHECK(o.country_code == std::optional<std::string>("DE")); // storefront alpha-3 → alpha-2
  CHECK(o.current_period_end_at == std::optional<unix_ms>(t0 + 30 * day));
  CHECK(o.binds_user);
  CHECK(o.proves);
}

TEST_CASE("renewals are one purchase; an older transaction changes no current fact",
          "[purchases]") {
  auto first = subscription_transaction("1000", t0, t0 + 1000);
  auto renewal = subscription_transaction("1001", t0 + 30 * day, t0 + 30 * day + 1000);
  renewal.transaction.price = 5990;
  auto p = folded({observe(first, {}).front(), observe(renewal, {}).front()});
  CHECK(p.unit == "1001");
  CHECK(p.price.value == std::optional<std::int64_t>(5990));
  CHECK(p.current_period_end_at.value == std::optional<unix_ms>(t0 + 60 * day));
  CHECK(p.sources.size() == 2);
  // The first transaction uploaded again, its answer newer: still an earlier period.
  auto late = first;
  late.said_at = t0 + 90 * day;
  late.transaction.price = 1;
  fold(p, observe(late, {}).front()); // it may say when the store last answered, no more
  CHECK(p.price.value == std::optional<std::int64_t>(5990));
  CHECK(p.current_period_end_at.value == std::optional<unix_ms>(t0 + 60 * day));
}

TEST_CASE("within one period a fact moves only to a value said later", "[purchases]") {
  auto newer = subscription_transaction("1000", t0, t0 + 5000);
  auto older = subscription_transaction("1000", t0, t0 + 1000);
  older.id = "other-record";
  older.transaction.expires_date = t0 + 2 * day;
  auto p = folded({observe(newer, {}).front(), observe(older, {}).front()});
  CHECK(p.current_period_end_at.value == std::optional<unix_ms>(t0 + 30 * day));
}

TEST_CASE("a refund is undone only by a reversal said after it", "[purchases]") {
  auto bought = subscription_transaction("1000", t0, t0 + 1000);
  auto p = folded({observe(bought, {}).front()});
  fold(p, *observe("app", notification("REFUND", "1000", t0, t0 + 10 * day), {}));
  // REFUND carries no revocationDate in this fixture: nothing is revoked.
  CHECK_FALSE(p.revoked_at.value);

  auto refund = notification("REFUND", "1000", t0, t0 + 10 * day);
  refund.transaction->revocation_date = t0 + 9 * day;
  refund.transaction->revocation_reason = 0;
  fold(p, *observe("app", refund, {}));
  CHECK(p.revoked_at.value == std::optional<unix_ms>(t0 + 9 * day));
  CHECK_FALSE(activity_at(p, t0 + 11 * day).active);

  // An older, genuine notification that does not mention the refund.
  fold(p, *observe("app", notification("DID_RENEW", "1000", t0, t0 + 2 * day), {}));
  CHECK(p.revoked_at.value == std::optional<unix_ms>(t0 + 9 * day));
  // A newer upload answer without revocationDate is no reversal either.
  auto reupload = bought;
  reupload.said_at = t0 + 20 * day;
  fold(p, observe(reupload, {}).front());
  CHECK(p.revoked_at.value);
  // A replayed REFUND_REVERSED signed before the refund.
  fold(p, *observe("app", notification("REFUND_REVERSED", "1000", t0, t0 + 8 * day), {}));
  CHECK(p.revoked_at.value);
  // The real reversal.
  fold(p, *observe("app", notification("REFUND_REVERSED", "1000", t0, t0 + 12 * day), {}));
  CHECK_FALSE(p.revoked_at.value);
  CHECK(activity_at(p, t0 + 12 * day).active);
}

TEST_CASE("a renewal after a refunded period starts clean", "[purchases]") {
  auto refunded = subscription_transaction("1000", t0, t0 + 1000);
  refunded.transaction.revocation_date = t0 + day;
  auto p = folded({observe(refunded, {}).front()});
  CHECK_FALSE(activity_at(p, t0 + 2 * day).active);
  fold(p, observe(subscription_transaction("1001", t0 + 30 * day, t0 + 30 * day), {}).front());
  CHECK_FALSE(p.revoked_at.value);
  CHECK(activity_at(p, t0 + 31 * day).active);
}

TEST_CASE("activity: period end, grace period, billing retry, hold, upgrade, consumables",
          "[purchases]") {
  auto p = folded(observe(subscription_transaction("1000", t0, t0), {}));
  CHECK(activity_at(p, t0 + day).active);
  CHECK(activity_at(p, t0 + day).until == std::optional<unix_ms>(t0 + 30 * day));
  CHECK(next_change(p, t0 + day) == std::optional<unix_ms>(t0 + 30 * day));
  CHECK_FALSE(activity_at(p, t0 + 30 * day).active);

  SECTION("in billing retry past the period, without grace: inactive") {
    p.in_billing_retry = {true, t0};
    CHECK_FALSE(activity_at(p, t0 + 31 * day).active);
  }
  SECTION("in a grace period: active until it ends") {
    p.in_billing_retry = {true, t0};
    p.in_grace_period = {true, t0};
    p.grace_period_end_at = {t0 + 36 * day, t0};
    CHECK(activity_at(p, t0 + 31 * day).active);
    CHECK(next_change(p, t0 + 31 * day) == std::optional<unix_ms>(t0 + 36 * day));
    CHECK_FALSE(activity_at(p, t0 + 36 * day).active);
  }
  SECTION("on hold, paused, pending, upgraded: never") {
    for (auto* f : {&p.is_on_hold, &p.is_paused, &p.is_pending, &p.is_upgraded}) {
      *f = {true, t0};
      CHECK_FALSE(activity_at(p, t0 + day).active);
      *f = {false, t0};
    }
    CHECK(activity_at(p, t0 + day).active);
  }
  SECTION("a consumable grants nothing lasting; a non-consumable until revoked") {
    p.type = {purchase_type::consumable, t0};
    CHECK_FALSE(activity_at(p, t0 + day).active);
    p.type = {purchase_type::non_consumable, t0};
    CHECK(activity_at(p, t0 + 5000 * day).active);
    CHECK_FALSE(next_change(p, t0 + day));
  }
  SECTION("a purchase nothing proves grants nothing") {
    p.sources.clear();
    CHECK_FALSE(activity_at(p, t0 + day).active);
  }
}

namespace {

// Purchases of every kind of activity: subscriptions running, lapsed, in grace
// (with and without an end), in billing retry, not confirmed yet; consumables,
// non-consumables, revoked, on hold, non-renewing.
std::vector<purchase> purchases_of_every_kind() {
  const auto sub = folded(observe(subscription_transaction("1000", t0, t0), {}));
  std::vector<purchase> out;
  auto add = [&](std::string id, std::string product, unix_ms created, auto&& change) {
    auto p = sub;
    p.id = std::move(id);
    p.product_id = {std::move(product), t0};
    p.created_at = created;
    change(p);
    out.push_back(std::move(p));
  };
  auto none = [](purchase&) {};
  add("s1", "premium.monthly", t0, none);
  add("s2", "premium.monthly", t0 + 40 * day, [](purchase& p) {
    p.current_period_end_at = {t0 + 70 * day, t0};
  });
  add("g1", "premium.grace", t0 + 15 * day, [](purchase& p) {
    p.current_period_end_at = {t0 + 45 * day, t0};
    p.in_grace_period = {true, t0};
    p.grace_period_end_at = {t0 + 50 * day, t0};
  });
  add("g2", "premium.grace", t0 + 16 * day, [](purchase& p) {
    p.current_period_end_at = {t0 + 44 * day, t0};
    p.in_grace_period = {true, t0}; // no end said
  });
  add("b1", "premium.retry", t0 + 17 * day, [](purchase& p) {
    p.in_billing_retry = {true, t0};
  });
  add("u1", "premium.unconfirmed", t0 + 18 * day, [](purchase& p) {
    p.current_period_end_at = {};
    p.sources.front().validated = false;
    p.purchased_at = t0 + 18 * day;
  });
  add("h1", "premium.hold", t0 + 19 * day, [](purchase& p) { p.is_on_hold = {true, t0}; });
  // Two as recent as each other: the newest read (id "t2") is the one shown.
  for (const char* id : {"t1", "t2"})
    add(id, "premium.tie", t0 + 20 * day, none);
  for (int k = 0; k < 5; ++k)
    add("c" + std::to_string(k), "gems", t0 + k * day, [](purchase& p) {
      p.type = {purchase_type::consumable, t0};
      p.current_period_end_at = {};
    });
  add("l0", "lifetime", t0 + 10 * day, [](purchase& p) {
    p.type = {purchase_type::non_consumable, t0};
    p.current_period_end_at = {};
    p.revoked_at = {t0 + 12 * day, t0};
  });
  add("l1", "lifetime", t0 + 100 * day, [](purchase& p) {
    p.type = {purchase_type::non_consumable, t0};
    p.current_period_end_at = {};
  });
  add("n1", "pass", t0 + 2 * day, [](purchase& p) {
    p.type = {purchase_type::non_renewing_subscription, t0};
    p.current_period_end_at = {t0 + 60 * day, t0};
  });
  // Newest first, as a customer's purchases are read.
  std::sort(out.begin(), out.end(), [](const purchase& a, const purchase& b) {
    return std::tie(b.created_at, b.id) < std::tie(a.created_at, a.id);
  });
  return out;
}

std::vector<unix_ms> times_around_every_change() {
  std::vector<unix_ms> out;
  for (unix_ms d : {-1, 0, 1, 3, 17, 20, 29, 30, 31, 44, 45, 46, 49, 50, 51, 59, 60, 69, 70, 71,
                    101, 400, 5000})
    for (unix_ms delta : {-1LL, 0LL, 1LL})
      out.push_back(t0 + d * day + delta);
  return out;
}

} // namespace

TEST_CASE("a purchase is active exactly before active_until", "[purchases]") {
  auto all = purchases_of_every_kind();
  for (const auto& p : all) {
    auto until = active_until(p);
    for (auto now : times_around_every_change()) {
      INFO(p.id << " at t0 + " << (now - t0) << " ms");
      CHECK(activity_at(p, now).active == (until && now < *until));
    }
  }
  auto by_id = [&](std::string_view id) {
    return active_until(*std::find_if(all.begin(), all.end(), [&](auto& p) { return p.id == id; }));
  };
  CHECK(by_id("s1") == std::optional<unix_ms>(t0 + 30 * day));
  CHECK(by_id("g1") == std::optional<unix_ms>(t0 + 50 * day));
  CHECK(by_id("g2") == std::optional<unix_ms>(active_forever));
  CHECK(by_id("u1") == std::optional<unix_ms>(t0 + 18 * day + provisional_grant));
  CHECK(by_id("l1") == std::optional<unix_ms>(active_forever));
  CHECK_FALSE(by_id("l0"));
  CHECK_FALSE(by_id("c0"));
  CHECK_FALSE(by_id("h1"));
}

TEST_CASE("a purchase not confirmed yet is granted from any purchase time without overflow",
          "[purchases]") {
  // Play's purchaseTimeMillis and Apple's purchaseDate are whatever int64 the
  // store signed: the provisional grant after one saturates at active_forever.
  auto p = purchases_of_every_kind();
  auto u1 = *std::find_if(p.begin(), p.end(), [](const purchase& x) { return x.id == "u1"; });
  for (unix_ms bought : {INT64_MAX, INT64_MAX - provisional_grant + 1, INT64_MAX - provisional_grant}) {
    INFO(bought);
    u1.purchased_at = bought;
    CHECK(activity_at(u1, t0).active);
    CHECK(active_until(u1) == std::optional<unix_ms>(active_forever));
  }
  u1.purchased_at = INT64_MAX - provisional_grant - 1;
  CHECK(active_until(u1) == std::optional<unix_ms>(INT64_MAX - 1));
}

TEST_CASE("the customer answer from answer_purchases is the answer from all purchases",
          "[purchases]") {
  premium_rules rules;
  auto all = purchases_of_every_kind();
  grant g{"g1", "app", "alice", environment::production, "pro", t0, t0 + 40 * day, t0};
  for (auto now : times_around_every_change()) {
    INFO("at t0 + " << (now - t0) << " ms");
    auto read = answer_purchases(all, now);
    CHECK(read.size() < all.size());
    CHECK(json::serialize(customer_json("alice", environment::production, read, {g}, rules, now))
          == json::serialize(customer_json("alice", environment::production, all, {g}, rules, now)));
  }
  // At t0 + 31 days: the active ones and the most recent of each product, newest first.
  std::vector<std::string> ids;
  for (const auto& p : answer_purchases(all, t0 + 31 * day))
    ids.push_back(p.id);
  CHECK(ids == std::vector<std::string>{"l1", "s2", "t2", "h1", "u1", "b1", "g2", "g1", "c4", "n1"});
}

TEST_CASE("a customer answer stays the same but for requested_at until answer_same_until",
          "[purchases]") {
  premium_rules rules;
  auto all = purchases_of_every_kind();
  std::vector<grant> grants{
    {"g1", "app", "alice", environment::production, "pro", t0, t0 + 40 * day, t0},
    {"g2", "app", "alice", environment::production, "pro", t0 + 45 * day, t0 + 47 * day, t0}};
  auto head_at = [&](unix_ms now) {
    auto body = json::serialize(
      customer_json("alice", environment::production, answer_purchases(all, now), grants, rules, now));
    auto head = answer_head(body, now);
    REQUIRE(head);
    CHECK(answer_at(*head, now) == body); // the head completed again is the answer
    return *head;
  };
  const auto times = times_around_every_change();
  for (auto now : times) {
    INFO("asked at t0 + " << (now - t0) << " ms");
    auto until = answer_same_until(answer_purchases(all, now), grants, now);
    if (until)
      CHECK(*until > now);
    const auto head = head_at(now);
    for (auto later : times) {
      if (later < now)
        continue;
      INFO("again at t0 + " << (later - t0) << " ms");
      if (!until || later < *until)
        CHECK(head_at(later) == head);
    }
  }
  // The earliest change ahead: u1's provisional grant ends at t0 + 21 days, then
  // s1's period at 30 (g1 ends at 40).
  CHECK(answer_same_until(answer_purchases(all, t0 + 20 * day), grants, t0 + 20 * day)
        == std::optional<unix_ms>(t0 + 18 * day + provisional_grant));
  CHECK(answer_same_until(answer_purchases(all, t0 + 22 * day), grants, t0 + 22 * day)
        == std::optional<unix_ms>(t0 + 30 * day));
  // A grant not started yet starts a change; nothing left to change: none.
  CHECK(answer_same_until({}, grants, t0 + 41 * day) == std::optional<unix_ms>(t0 + 45 * day));
  CHECK_FALSE(answer_same_until({}, grants, t0 + 47 * day));
  // Not a customer answer for that time: nothing to give again.
  CHECK_FALSE(answer_head(R"({"errors":[]})", t0));
  CHECK_FALSE(answer_head(json::serialize(customer_json("alice", environment::production, {}, {},
                                                        rules, t0)),
                          t0 + 1));
}

TEST_CASE("a store-rejected record leaves the purchase's sources", "[purchases]") {
  auto r = subscription_transaction("1000", t0, t0);
  auto p = folded(observe(r, {}));
  REQUIRE(proven(p));
  r.state = validation_state::rejected;
  r.fraud = fraud_reason::store_rejected;
  fold(p, observe(r, {}).front());
  CHECK(p.sources.empty());
  CHECK_FALSE(activity_at(p, t0 + day).active);
}

TEST_CASE("a unified receipt gives one purchase per original transaction", "[purchases]") {
  receipt_record r;
  r.id = "receipt";
  r.app_id = "app";
  r.bundle_id = "com.example";
  r.state = validation_state::validated;
  r.said_at = t0;
  auto item = [](std::string id, std::string original, std::string product, unix_ms bought,
                 std::optional<unix_ms> expires) {
    apple_in_app_purchase p;
    p.transaction_id = std::move(id);
    p.original_transaction_id = std::move(original);
    p.product_id = std::move(product);
    p.purchase_date = bought;
    p.expires_date = expires;
    return p;
  };
  r.in_app_purchases = {item("1", "1", "premium.monthly", t0, t0 + 30 * day),
                        item("2", "1", "premium.monthly", t0 + 30 * day, t0 + 60 * day),
                        item("3", "3", "lifetime", t0, std::nullopt),
                        item("4", "4", "coins", t0, std::nullopt)};
  auto all = observe(r, {});
  REQUIRE(all.size() == 3);
  CHECK(all[0].key == "1");
  CHECK(all[0].unit == "2"); // the newest renewal
  CHECK(all[0].type == std::optional<purchase_type>(purchase_type::subscription));
  CHECK(all[0].original_purchase_date == std::optional<unix_ms>(t0));
  CHECK(all[1].key == "3");
  CHECK_FALSE(all[1].type); // a receipt names no type: never guessed
}

TEST_CASE("Play: subscription states, pending, voided, the token chain", "[purchases]") {
  purchase_order_record r;
  r.id = "po";
  r.app_id = "app";
  r.package_name = "com.example";
  r.purchase_token = "token-2";
  r.state = validation_state::validated;
  r.said_at = t0;
  r.purchase.product_id = "premium.monthly";
  r.purchase.kind = product_kind::subscription;
  r.purchase.purchase_time = t0;
  r.purchase.expiry_time = t0 + 30 * day;
  r.purchase.subscription_state = "SUBSCRIPTION_STATE_PAUSED";
  r.purchase.linked_purchase_token = "token-1";
  auto o = observe(r, {}).front();
  CHECK(o.linked_key == std::optional<std::string>("token-1"));
  CHECK(o.is_paused == std::optional<std::optional<bool>>(true));
  auto p = start(o, "p", t0);
  CHECK(p.keys == std::vector<std::string>{"token-1", "token-2"});
  CHECK_FALSE(activity_at(p, t0 + day).active);

  r.said_at = t0 + day;
  r.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
  fold(p, observe(r, {}).front());
  CHECK(activity_at(p, t0 + 2 * day).active);

  SECTION("a legacy upload proves nothing until Play confirms it") {
    r.is_legacy = true;
    r.state = validation_state::pending;
    CHECK_FALSE(observe(r, {}).front().proves);
  }
  SECTION("in its grace period: the line item's expiry is the grace period's end") {
    // Play extends expiryTime through the grace period; it names no grace end of its own.
    r.said_at = t0 + 31 * day;
    r.purchase.expiry_time = t0 + 37 * day;
    r.purchase.subscription_state = "SUBSCRIPTION_STATE_IN_GRACE_PERIOD";
    fold(p, observe(r, {}).front());
    CHECK(p.in_grace_period.value == std::optional<bool>(true));
    CHECK(p.grace_period_end_at.value == std::optional<unix_ms>(t0 + 37 * day));
    CHECK(activity_at(p, t0 + 36 * day).active);
    CHECK_FALSE(activity_at(p, t0 + 37 * day).active);
    // Recovered: no grace period, no end of one.
    r.said_at = t0 + 32 * day;
    r.purchase.expiry_time = t0 + 62 * day;
    r.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
    fold(p, observe(r, {}).front());
    CHECK(p.in_grace_period.value == std::optional<bool>(false));
    CHECK_FALSE(p.grace_period_end_at.value);
  }
  SECTION("voided: revoked") {
    r.purchase.voided_time = t0 + 3 * day;
    r.said_at = t0 + 3 * day;
    fold(p, observe(r, {}).front());
    CHECK(p.revoked_at.value == std::optional<unix_ms>(t0 + 3 * day));
    CHECK_FALSE(activity_at(p, t0 + 4 * day).active);
  }
  SECTION("the app's account id names the customer when the app opts in") {
    r.purchase.account_id = "acct-7";
    CHECK(observe(r, {.customer_from_account_token = true}).front().user_identifier
          == std::optional<std::string>("acct-7"));
    CHECK(observe(r, {}).front().user_identifier != std::optional<std::string>("acct-7"));
  }
}

TEST_CASE("Play: a quantity-based partial refund revokes that share only", "[purchases]") {
  purchase_order_record r;
  r.id = "po";
  r.app_id = "app";
  r.package_name = "com.example";
  r.purchase_token = "token-coins";
  r.state = validation_state::validated;
  r.said_at = t0;
  r.purchase.product_id = "coins.pack";
  r.purchase.kind = product_kind::product;
  r.purchase.purchase_state = purchase_state::purchased;
  r.purchase.purchase_time = t0;
  r.purchase.quantity = 4;
  auto p = start(observe(r, {}).front(), "p", t0);
  CHECK(activity_at(p, t0 + day).active);

  // One of four refunded: revoked at the voided time, a 25% share, still active.
  r.said_at = t0 + 2 * day;
  r.purchase.voided_time = t0 + 2 * day;
  r.purchase.voided_quantity = 1;
  r.purchase.purchase_state = purchase_state::refunded;
  auto o = observe(r, {}).front();
  CHECK(o.revocation == revocation_said::revoked);
  CHECK(o.revocation_type == std::optional<std::string>("refund_partial_quantity"));
  CHECK(o.revocation_percentage == std::optional<int>(25000));
  fold(p, o);
  CHECK(p.revoked_at.value == std::optional<unix_ms>(t0 + 2 * day));
  CHECK(p.revocation_type == std::optional<std::string>("refund_partial_quantity"));
  CHECK(p.revocation_percentage == std::optional<int>(25000));
  CHECK_FALSE(revoked_whole(p));
  CHECK(activity_at(p, t0 + 3 * day).active);
  auto json = purchase_json(p, {}, t0 + 3 * day);
  CHECK(json.at("revocation_type") == "refund_partial_quantity");
  CHECK(json.at("revocation_percentage") == 25000);

  // The rest refunded later: revoked whole.
  r.said_at = t0 + 4 * day;
  r.purchase.voided_time = t0 + 4 * day;
  r.purchase.voided_quantity.reset();
  fold(p, observe(r, {}).front());
  CHECK(p.revoked_at.value == std::optional<unix_ms>(t0 + 4 * day));
  CHECK_FALSE(p.revocation_type);
  CHECK(revoked_whole(p));
  CHECK_FALSE(activity_at(p, t0 + 5 * day).active);
}

TEST_CASE("Play: a prepaid or installment plan as the purchase's terms", "[purchases]") {
  purchase_order_record r;
  r.id = "po";
  r.app_id = "app";
  r.package_name = "com.example";
  r.purchase_token = "token-plan";
  r.state = validation_state::validated;
  r.said_at = t0;
  r.purchase.product_id = "premium";
  r.purchase.kind = product_kind::subscription;
  r.purchase.purchase_time = t0;
  r.purchase.expiry_time = t0 + 30 * day;
  r.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";

  SECTION("before subscriptionsv2 said the plan: nothing said of it") {
    auto o = observe(r, {}).front();
    CHECK_FALSE(o.billing_plan_type);
    CHECK_FALSE(o.commitment);
  }
  SECTION("prepaid") {
    r.purchase.prepaid = true;
    r.purchase.auto_renewing = false;
    auto p = start(observe(r, {}).front(), "p", t0);
    CHECK(p.billing_plan_type.value == std::optional<std::string>("prepaid"));
    CHECK(p.is_auto_renewing.value == std::optional<bool>(false));
    CHECK_FALSE(p.commitment.value);
  }
  SECTION("installments: the commitment, and a pending cancellation cancels it") {
    r.purchase.prepaid = false;
    r.purchase.auto_renewing = true;
    r.purchase.installments = play_installments{12, 12, 9, false};
    auto o = observe(r, {}).front();
    CHECK(o.billing_plan_type == std::optional<std::optional<std::string>>("installments"));
    REQUIRE(o.commitment);
    REQUIRE(*o.commitment);
    CHECK((*o.commitment)->total_billing_periods == 12);
    CHECK((*o.commitment)->billing_period_number == 3);
    CHECK(o.canceled == std::optional<bool>(false));
    auto p = start(o, "p", t0);
    CHECK_FALSE(p.canceled_at.value);

    r.said_at = t0 + day;
    r.purchase.installments->pending_cancellation = true;
    fold(p, observe(r, {}).front());
    CHECK(p.canceled_at.value == std::optional<unix_ms>(t0 + day));
    CHECK(activity_at(p, t0 + 2 * day).active); // until its period ends
    auto json = purchase_json(p, {}, t0 + 2 * day);
    CHECK(json.at("billing_plan_type") == "installments");
    CHECK(json.at("commitment").at("total_billing_periods") == 12);
  }
  SECTION("a plain auto-renewing plan says it has no other terms") {
    r.purchase.prepaid = false;
    auto o = observe(r, {}).front();
    REQUIRE(o.billing_plan_type); // said: none
    CHECK_FALSE(*o.billing_plan_type);
    REQUIRE(o.commitment);
    CHECK_FALSE(*o.commitment);
  }
}

TEST_CASE("transfers follow the purchase, under the app's policy", "[purchases]") {
  auto p = folded(observe(subscription_transaction("1000", t0, t0), {}));
  REQUIRE(p.user_identifier == std::optional<std::string>("alice"));
  transfer_policy keep{transfer_policy::kind::keep};
  CHECK(transfer_refusal(p, std::string("bob"), keep));
  CHECK_FALSE(transfer_refusal(p, std::string("alice"), keep));
  CHECK_FALSE(transfer_refusal(p, std::nullopt, keep));
  CHECK_FALSE(transfer_refusal(p, std::string("bob"), transfer_policy{}));
  auto moved = observe(subscription_transaction("1000", t0, t0), {}).front();
  moved.user_identifier = "bob";
  fold(p, moved);
  CHECK(p.user_identifier == std::optional<std::string>("bob"));
  CHECK(p.previous_users == std::vector<std::string>{"alice"});
}

TEST_CASE("the customer answer lists every entitlement, active or not", "[purchases]") {
  premium_rules rules;
  auto sub = folded(observe(subscription_transaction("1000", t0, t0), {}));
  auto json_at = [&](unix_ms now, const std::vector<grant>& grants = {}) {
    return customer_json("alice", environment::production, {sub}, grants, rules, now);
  };
  auto active = json_at(t0 + day);
  const auto& c = active.at("customer").as_object();
  const auto& premium = c.at("entitlements").at("premium").as_object();
  CHECK(premium.at("is_active").as_bool());
  CHECK(premium.at("expires_at").at("ms").as_int64() == t0 + 30 * day);
  CHECK(premium.at("offering").as_string() == "monthly");
  CHECK(premium.at("in_app_purchase_id").as_string() == "p1");
  CHECK(premium.at("ownership").as_string() == "purchased");
  CHECK_FALSE(c.at("entitlements").at("pro").at("is_active").as_bool());
  CHECK(c.at("in_app_purchases").as_array().size() == 1);

  auto expired = json_at(t0 + 31 * day);
  const auto& gone = expired.at("customer").at("entitlements").at("premium").as_object();
  CHECK_FALSE(gone.at("is_active").as_bool());
  CHECK(gone.at("in_app_purchase_id").as_string() == "p1"); // its last purchase

  grant g{"g1", "app", "alice", environment::production, "pro", t0, t0 + 40 * day, t0};
  auto granted = json_at(t0 + 31 * day, {g});
  const auto& pro = granted.at("customer").at("entitlements").at("pro").as_object();
  CHECK(pro.at("is_active").as_bool());
  CHECK(pro.at("ownership").as_string() == "granted");
  CHECK(active_entitlements({sub}, {g}, rules, t0 + day) == std::vector<std::string>{"premium", "pro"});
  CHECK(active_entitlements({sub}, {}, rules, t0 + 31 * day).empty());
}

TEST_CASE("events carry Mbaasy's payload: name, versions, data, changed attributes",
          "[purchases]") {
  auto p = folded(observe(subscription_transaction("1000", t0, t0), {}));
  p.versions = 1;
  auto before = purchase_json(p, {"premium/monthly"}, t0 + day);
  auto created = purchase_event(nullptr, before, p, t0 + day);
  REQUIRE(created);
  auto body = json::parse(created->body).as_object();
  CHECK(body.at("type").as_string() == "in_app_purchase");
  CHECK(body.at("name").as_string() == "in_app_purchase.created");
  CHECK(body.at("previous_attributes").as_object().empty()); // {} on created, never null
  CHECK(body.at("data").at("product_id").as_string() == "premium.monthly");
  CHECK(body.at("data").at("current_period_end_at").at("ms").as_int64() == t0 + 30 * day);

  fold(p, observe(subscription_transaction("1001", t0 + 30 * day, t0 + 30 * day), {}).front());
  p.versions = 2;
  auto after = purchase_json(p, {"premium/monthly"}, t0 + 31 * day);
  auto updated = purchase_event(&before, after, p, t0 + 31 * day);
  REQUIRE(updated);
  auto u = json::parse(updated->body).as_object();
  CHECK(u.at("name").as_string() == "in_app_purchase.updated");
  CHECK(u.at("versions").as_int64() == 2);
  CHECK(u.at("new_attributes").as_object().contains("current_period_end_at"));
  CHECK_FALSE(u.at("new_attributes").as_object().contains("product_id"));
  CHECK_FALSE(purchase_event(&after, after, p, t0 + 31 * day));
}

TEST_CASE("a new version's resource restamped is the resource made again", "[purchases]") {
  auto p = folded(observe(subscription_transaction("1000", t0, t0), {}));
  p.versions = 3;
  auto resource = purchase_json(p, {"premium/monthly"}, t0 + day);
  ++p.versions;
  p.updated_at = t0 + day;
  CHECK(resource != purchase_json(p, {"premium/monthly"}, t0 + day));
  restamp(resource, p);
  CHECK(resource == purchase_json(p, {"premium/monthly"}, t0 + day));
  CHECK(json::serialize(resource) == json::serialize(purchase_json(p, {"premium/monthly"}, t0 + day)));
}

TEST_CASE("the stored facts come back exactly", "[purchases]") {
  auto p = folded(observe(subscription_transaction("1000", t0, t0), {}));
  fold(p, *observe("app", notification("DID_RENEW", "1001", t0 + 30 * day, t0 + 30 * day), {}));
  purchase back;
  back.id = p.id;
  back.app_id = p.app_id;
  back.market = p.market;
  back.env = p.env;
  back.user_identifier = p.user_identifier;
  back.versions = p.versions;
  back.created_at = p.created_at;
  back.updated_at = p.updated_at;
  REQUIRE(read_facts(back, facts_json(p)));
  CHECK(back == p);
  CHECK_FALSE(read_facts(back, "[]"));
  CHECK_FALSE(read_facts(back, R"({"product_id": {"v": 3}})"));
  // A number the fact cannot hold is malformed: never thrown (Boost.JSON's
  // to_number on a uint64 beyond INT64_MAX), never wrapped.
  for (auto [fact, number] : {std::pair{"price", "18446744073709551615"},
                              std::pair{"quantity", "4294967297"},
                              std::pair{"current_period_end_at", "9223372036854775808"}}) {
    INFO(fact << " = " << number);
    auto doc = json::parse(facts_json(p)).as_object();
    doc[fact].as_object()["v"] = json::parse(number);
    purchase q;
    result<bool> read = true;
    CHECK_NOTHROW(read = read_facts(q, json::serialize(doc)));
    CHECK_FALSE(read);
  }
  auto doc = json::parse(facts_json(p)).as_object();
  doc["price"].as_object()["at"] = json::parse("18446744073709551615");
  doc["purchased_at"] = json::parse("18446744073709551615");
  doc["revocation_reason"] = json::parse("4294967297");
  purchase q;
  result<bool> read = true;
  CHECK_NOTHROW(read = read_facts(q, json::serialize(doc)));
  REQUIRE(read);
  CHECK_FALSE(q.price.at);
  CHECK_FALSE(q.purchased_at);
  CHECK_FALSE(q.revocation_reason);
}

TEST_CASE("a prorated refund revokes only its share of the purchase", "[purchases]") {
  auto bought = subscription_transaction("1000", t0, t0 + 1000);
  auto refund = [](std::optional<std::string> type, std::optional<int> percentage) {
    auto v = notification("REFUND", "1000", t0, t0 + 10 * day);
    v.transaction->revocation_date = t0 + 9 * day;
    v.transaction->revocation_reason = 0;
    v.transaction->revocation_type = std::move(type);
    v.transaction->revocation_percentage = percentage;
    return *observe("app", v, {});
  };
  const auto during = t0 + 11 * day; // within the 30-day period, after the refund

  auto p = folded({observe(bought, {}).front(), refund("REFUND_PRORATED", 40000)});
  CHECK(p.revoked_at.value == std::optional<unix_ms>(t0 + 9 * day));
  CHECK(p.revocation_type == std::string("refund_prorated"));
  CHECK(p.revocation_percentage == 40000);
  CHECK_FALSE(revoked_whole(p));
  CHECK(activity_at(p, during).active);
  auto o = purchase_json(p, {"premium/monthly"}, during);
  CHECK(o.at("is_active") == true);
  CHECK(o.at("revoked_at").at("ms") == t0 + 9 * day);
  CHECK(o.at("revocation_type") == "refund_prorated");
  CHECK(o.at("revocation_percentage") == 40000);
  // The period still ends when it ends.
  CHECK_FALSE(activity_at(p, t0 + 31 * day).active);

  // A source of the same revocation that does not tell its type (a receipt's
  // cancellation date, say) leaves it.
  observation silent = refund(std::nullopt, std::nullopt);
  silent.at = t0 + 11 * day;
  fold(p, silent);
  CHECK(p.revocation_type == std::string("refund_prorated"));
  CHECK(activity_at(p, during).active);

  // Everything else revokes it all.
  for (auto [type, percentage] : std::vector<std::pair<std::optional<std::string>, std::optional<int>>>{
         {"REFUND_PRORATED", 100000},
         {"REFUND_PRORATED", std::nullopt},
         {"REFUND_FULL", 100000},
         {"FAMILY_REVOKE", std::nullopt},
         {std::nullopt, std::nullopt}}) {
    INFO(type.value_or("(none)") << " " << percentage.value_or(-1));
    auto whole = folded({observe(bought, {}).front(), refund(type, percentage)});
    CHECK(revoked_whole(whole));
    CHECK_FALSE(activity_at(whole, during).active);
    CHECK_FALSE(active_until(whole));
  }

  // A reversal clears the revocation with its type and share.
  fold(p, *observe("app", notification("REFUND_REVERSED", "1000", t0, t0 + 12 * day), {}));
  CHECK_FALSE(p.revoked_at.value);
  CHECK_FALSE(p.revocation_type);
  CHECK_FALSE(p.revocation_percentage);
}

TEST_CASE("the offer, plan, commitment and app download of the current period", "[purchases]") {
  auto bought = subscription_transaction("1000", t0, t0 + 1000);
  auto& t = bought.transaction;
  t.offer_type = 4;
  t.offer_discount_type = "ONE_TIME";
  t.offer_period = "P1M";
  t.billing_plan_type = "MONTHLY";
  t.commitment = commitment_info{3, 12, t0 + 300 * day, 99990};
  t.app_transaction_id = "704289572311513217";
  auto p = folded({observe(bought, {}).front()});
  auto o = purchase_json(p, {}, t0 + day);
  CHECK(o.at("offer_type") == "win_back");
  CHECK(o.at("offer_discount_type") == "one_time");
  CHECK(o.at("offer_period") == "P1M");
  CHECK(o.at("billing_plan_type") == "monthly");
  CHECK(o.at("app_transaction_id") == "704289572311513217");
  const auto& c = o.at("commitment");
  CHECK(c.at("billing_period_number") == 3);
  CHECK(c.at("total_billing_periods") == 12);
  CHECK(c.at("expires_at").at("ms") == t0 + 300 * day);
  CHECK(c.at("price") == 99990);
  // Stored and read back, the facts are the same.
  purchase back = p;
  REQUIRE(read_facts(back, facts_json(p)));
  CHECK(back == p);

  // The next period, bought without an offer: no offer, the plan as it says.
  auto renewal = subscription_transaction("1001", t0 + 30 * day, t0 + 30 * day);
  renewal.transaction.billing_plan_type = "MONTHLY";
  renewal.transaction.commitment = commitment_info{4, 12, t0 + 300 * day, 99990};
  renewal.transaction.app_transaction_id = t.app_transaction_id;
  fold(p, observe(renewal, {}).front());
  o = purchase_json(p, {}, t0 + 31 * day);
  CHECK(o.at("offer_type").is_null());
  CHECK(o.at("offer_discount_type").is_null());
  CHECK(o.at("offer_period").is_null());
  CHECK(o.at("commitment").at("billing_period_number") == 4);
  // An older period's transaction arriving late changes none of it.
  fold(p, observe(bought, {}).front());
  CHECK(purchase_json(p, {}, t0 + 31 * day).at("offer_type").is_null());
}

TEST_CASE("facts stored before the 2026 fields read as never said", "[purchases]") {
  auto p = folded(observe(subscription_transaction("1000", t0, t0), {}));
  auto stored = json::parse(facts_json(p)).as_object();
  for (const char* later : {"offer_type", "offer_discount_type", "offer_period",
                            "billing_plan_type", "commitment", "app_transaction_id",
                            "revocation_type", "revocation_percentage"})
    stored.erase(later);
  purchase back;
  REQUIRE(read_facts(back, json::serialize(stored)));
  CHECK_FALSE(back.offer_type.value);
  CHECK_FALSE(back.offer_type.at);
  CHECK_FALSE(back.commitment.value);
  CHECK_FALSE(back.revocation_type);
  CHECK(back.product_id.value == "premium.monthly");
  stored["commitment"] = json::object{{"v", "twelve"}};
  CHECK_FALSE(read_facts(back, json::serialize(stored)));
}

TEST_CASE("customer and grant parameters are checked", "[purchases]") {
  CHECK(user_identifier_param("alice%40example.com").value() == "alice@example.com");
  CHECK_FALSE(user_identifier_param("bad%zz"));
  CHECK_FALSE(user_identifier_param("%0a"));
  CHECK_FALSE(user_identifier_param(std::string(1025, 'a')));
  // What an upload's JSON string can hold: UTF-8, percent-encoded in the path.
  CHECK(user_identifier_param("%C3%A9l%C3%A8ve").value() == "\u00e9l\u00e8ve");
  for (auto not_utf8 : {"%FF", "caf%E9", "%C0%AF", "%ED%A0%80", "%F4%90%80%80", "%C3"}) {
    INFO(not_utf8);
    auto refused = user_identifier_param(not_utf8);
    REQUIRE_FALSE(refused);
    CHECK(refused.err().fields().front().field == "user_identifier");
  }
  CHECK(environment_param(std::nullopt).value() == environment::production);
  CHECK(environment_param(std::string_view("sandbox")).value() == environment::sandbox);
  CHECK_FALSE(environment_param(std::string_view("test")));
  CHECK_FALSE(limit_param(std::string_view("0")));
  CHECK(limit_param(std::string_view("10")).value() == 10);
  auto c = cursor_param(std::string_view("1750000000000.abc")).value();
  CHECK(c->created_at == 1750000000000);
  CHECK_FALSE(cursor_param(std::string_view("nope")));
  CHECK(parse_grant_request(R"({"duration":"30d"})", t0).value().expires_at == t0 + 30 * day);
  CHECK(parse_grant_request(R"({"expires_at":{"ms":1760000000000}})", t0).value().expires_at
        == 1760000000000);
  CHECK_FALSE(parse_grant_request(R"({})", t0));
  CHECK_FALSE(parse_grant_request(R"({"duration":"30d","expires_at":1})", t0));
  CHECK_FALSE(parse_grant_request(R"({"expires_at":1})", t0)); // in the past
  CHECK_FALSE(parse_grant_request(R"({"duration":"5y"})", t0));
  CHECK_FALSE(parse_grant_request("not json", t0));
}

TEST_CASE("a restore names one transaction: its id or its signed form", "[purchases][restore]") {
  auto id = parse_restore_request(R"({"transaction_id":"2000000000000001"})");
  REQUIRE(id);
  CHECK(id->transaction_id == std::string("2000000000000001"));
  CHECK_FALSE(id->signed_transaction);
  auto jws = parse_restore_request(R"({"signed_transaction":"eyJh.eyJi.c2ln"})");
  REQUIRE(jws);
  CHECK(jws->signed_transaction == std::string("eyJh.eyJi.c2ln"));
  struct bad {
    const char* body;
    const char* field;
    const char* code;
  };
  for (const auto& b : {bad{"{}", "transaction_id", "missing"},
                        bad{R"({"transaction_id":"1","signed_transaction":"a.b.c"})",
                            "transaction_id", "missing"},
                        bad{R"({"transaction_id":1})", "transaction_id", "invalid"},
                        bad{R"({"transaction_id":""})", "transaction_id", "invalid"},
                        bad{R"({"transaction_id":"a b"})", "transaction_id", "invalid"},
                        bad{R"({"signed_transaction":"no dots"})", "signed_transaction",
                            "invalid_jws"},
                        bad{R"({"signed_transaction":7})", "signed_transaction", "invalid_jws"},
                        bad{"[1]", "", "invalid_json"}, bad{"", "", "invalid_json"}}) {
    INFO(b.body);
    auto r = parse_restore_request(b.body);
    REQUIRE_FALSE(r);
    REQUIRE(r.err().fields().size() == 1);
    CHECK(r.err().fields()[0].field == b.field);
    CHECK(r.err().fields()[0].code == b.code);
  }
  CHECK_FALSE(parse_restore_request(
    R"({"transaction_id":")" + std::string(65, '1') + R"("})"));
}

TEST_CASE("a receipt's purchase Apple's history contradicts proves nothing", "[purchases]") {
  receipt_record r;
  r.id = "r1";
  r.app_id = "app";
  r.bundle_id = "com.example";
  r.state = validation_state::validated;
  apple_in_app_purchase kept, contradicted, renewal;
  kept.product_id = "com.example.lifetime";
  kept.transaction_id = kept.original_transaction_id = "1";
  contradicted.product_id = "com.example.coins";
  contradicted.transaction_id = contradicted.original_transaction_id = "2";
  contradicted.store_contradiction = "absent from the App Store's transaction history";
  // A subscription whose newest renewal is contradicted: its older one is the unit.
  renewal.product_id = "com.example.monthly";
  renewal.transaction_id = renewal.original_transaction_id = "3";
  renewal.purchase_date = 1000;
  auto newest = renewal;
  newest.transaction_id = "4";
  newest.purchase_date = 2000;
  newest.store_contradiction = "the App Store's transaction history names another product";
  r.in_app_purchases = {kept, contradicted, renewal, newest};
  std::map<std::string, observation> by_key;
  for (auto& o : observe(r, {}))
    by_key[o.key] = o;
  REQUIRE(by_key.size() == 3);
  CHECK(by_key["1"].proves);
  CHECK_FALSE(by_key["2"].proves);
  CHECK(by_key["3"].proves);
  CHECK(by_key["3"].unit == "3");
}

TEST_CASE("a product id too long for an index entry is grouped by its digest", "[purchases]") {
  CHECK(product_key("com.example.premium.monthly") == "com.example.premium.monthly");
  std::string at_limit(max_plain_product_key, 'p');
  CHECK(product_key(at_limit) == at_limit);
  std::string longer(758088, '\x01');
  auto key = product_key(longer);
  CHECK(key.size() == 7 + 64);
  CHECK(key.rfind("sha256:", 0) == 0);
  CHECK(key == product_key(longer));
  CHECK(key != product_key(longer + "x"));
}

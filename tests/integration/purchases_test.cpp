// The purchase layer on the database under test: a saved record builds its
// purchase in the same transaction, a customer sees it, a period end passes
// without any message from the store (expire_due at an injected time) and is
// announced, grants start and end, and one app never sees another's.
#include <algorithm>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/identifiers.hpp"
#include "model/purchases/customer.hpp"
#include "model/purchases/resource_json.hpp"
#include "model/purchases/rules.hpp"
#include "tests/integration/fixture.hpp"
#include "tests/support/db/raw_sql.hpp"

namespace receiptd::test {

namespace {

namespace json = boost::json;
using model::event_type;
constexpr model::unix_ms day = 86'400'000;

const char* const premium_rules = R"({"premium":{"monthly":{"product_id":["^premium_monthly$"]}}})";

model::app with_rules(db::database& d, model::app app) {
  app.entitlement_rules = premium_rules;
  REQUIRE(REQUIRE_OK(d.update_app(app)));
  return app;
}

void add_endpoint(db::database& d, const model::app& app) {
  model::webhook_endpoint e;
  e.app_id = app.id;
  e.url = "https://hooks.example.com/receiptd";
  e.events = {event_type::in_app_purchase_created, event_type::in_app_purchase_updated,
              event_type::customer_entitlements_changed};
  e.created_at = t0;
  REQUIRE_OK(d.add_webhook_endpoint(e));
}

// The bodies of the app's deliveries of type `t`, oldest first.
std::vector<json::value> events_of(db::database& d, const model::app& app, event_type t) {
  auto deliveries = REQUIRE_OK(d.list_deliveries(app.id, 1000));
  std::vector<json::value> out;
  for (auto it = deliveries.rbegin(); it != deliveries.rend(); ++it)
    if (it->type == t)
      out.push_back(json::parse(it->body));
  return out;
}

std::vector<std::string> entitlements_now(db::database& d, const model::app& app,
                                          const std::string& user, model::unix_ms now) {
  auto view = REQUIRE_OK(
    d.find_customer(app.id, user, model::environment::production, db::purchase_cursor{}, 100));
  return model::purchases::active_entitlements(view.purchases, view.grants, *view.rules, now);
}

} // namespace

TEST_CASE("a saved transaction builds its purchase; its period end is noticed and announced",
          "[purchases]") {
  database_fixture f;
  auto& d = *f.db;
  auto app = with_rules(d, f.app);
  add_endpoint(d, app);

  auto incoming = signed_transaction_record(app.id, "2000000000000001", "2000000000000001");
  incoming.echo.user_identifier = "alice";
  const auto period_end = *incoming.transaction.expires_date;
  auto saved = REQUIRE_OK(d.save_transaction(incoming, t0 + 100));
  REQUIRE(saved.created);

  auto set = REQUIRE_OK(d.purchases_of(model::any_record{saved.record}, t0 + 1));
  REQUIRE(set);
  REQUIRE(set->items.size() == 1);
  const auto& p = set->items.front();
  CHECK(p.product_id.value == "premium_monthly");
  CHECK(p.user_identifier == "alice");
  CHECK(p.current_period_end_at.value == period_end);

  CHECK(entitlements_now(d, app, "alice", t0 + 1) == std::vector<std::string>{"premium"});
  CHECK(entitlements_now(d, app, "bob", t0 + 1).empty());
  auto created = events_of(d, app, event_type::in_app_purchase_created);
  REQUIRE(created.size() == 1);
  CHECK(created[0].at("name") == "in_app_purchase.created");
  CHECK(created[0].at("type") == "in_app_purchase");
  CHECK(created[0].at("data").at("product_id") == "premium_monthly");
  CHECK(created[0].at("previous_attributes").as_object().empty());
  auto changed = events_of(d, app, event_type::customer_entitlements_changed);
  REQUIRE(changed.size() == 1);

  SECTION("nothing is due before the period ends") {
    CHECK(REQUIRE_OK(d.expire_due(period_end - 1, 256)) == 0);
    CHECK(events_of(d, app, event_type::in_app_purchase_updated).empty());
  }

  SECTION("the period end passes: the purchase turns inactive and the customer loses premium") {
    CHECK(REQUIRE_OK(d.expire_due(period_end + 1, 256)) >= 1);
    CHECK(entitlements_now(d, app, "alice", period_end + 1).empty());
    auto updated = events_of(d, app, event_type::in_app_purchase_updated);
    REQUIRE(updated.size() == 1);
    CHECK(updated[0].at("data").at("is_active") == false);
    CHECK(updated[0].at("previous_attributes").at("is_active") == true);
    auto after = events_of(d, app, event_type::customer_entitlements_changed);
    REQUIRE(after.size() == 2);
    // Announced once: the timer moved on.
    CHECK(REQUIRE_OK(d.expire_due(period_end + 2, 256)) == 0);
    CHECK(events_of(d, app, event_type::in_app_purchase_updated).size() == 1);
  }

  SECTION("another app never sees the purchase") {
    auto other = make_app(d, "other-app");
    auto view = REQUIRE_OK(d.find_customer(other.id, "alice", model::environment::production,
                                           db::purchase_cursor{}, 100));
    CHECK(view.purchases.empty());
  }
}

TEST_CASE("a grant gives an entitlement until it expires, then is announced as ended",
          "[purchases][grants]") {
  database_fixture f;
  auto& d = *f.db;
  auto app = with_rules(d, f.app);
  add_endpoint(d, app);

  model::purchases::grant g;
  g.id = model::make_uuid();
  g.app_id = app.id;
  g.user_identifier = "carol";
  g.entitlement = "premium";
  g.starts_at = t0;
  g.expires_at = t0 + 7 * day;
  g.created_at = t0;
  auto stored = REQUIRE_OK(d.add_grant(g, t0));
  REQUIRE_FALSE(stored.id.empty());
  CHECK(entitlements_now(d, app, "carol", t0 + 1) == std::vector<std::string>{"premium"});
  auto changed = events_of(d, app, event_type::customer_entitlements_changed);
  REQUIRE(changed.size() == 1);

  SECTION("time passes beyond its end") {
    CHECK(REQUIRE_OK(d.expire_due(g.expires_at + 1, 256)) >= 1);
    auto after = events_of(d, app, event_type::customer_entitlements_changed);
    REQUIRE(after.size() == 2);
    CHECK(entitlements_now(d, app, "carol", g.expires_at + 1).empty());
  }

  SECTION("removed") {
    CHECK(REQUIRE_OK(d.remove_grant(app.id, model::environment::production, "carol", "premium",
                                    stored.id, t0 + 2)));
    CHECK(entitlements_now(d, app, "carol", t0 + 3).empty());
    CHECK(events_of(d, app, event_type::customer_entitlements_changed).size() == 2);
    CHECK_FALSE(REQUIRE_OK(d.remove_grant(app.id, model::environment::production, "carol",
                                          "premium", stored.id, t0 + 4)));
  }
}

namespace {

// A validated StoreKit 2 transaction of `user`: product, Apple type, bought at
// `bought`, its period (or a non-renewing subscription's end) ending at `ends`.
model::transaction_record bought(const model::app& app, const std::string& user, int n,
                                 const std::string& product, const std::string& type,
                                 model::unix_ms at, std::optional<model::unix_ms> ends) {
  auto r = signed_transaction_record(app.id, "30000000000" + std::to_string(n),
                                     "30000000000" + std::to_string(n));
  r.echo.user_identifier = user;
  r.transaction.product_id = product;
  r.transaction.type = type;
  r.transaction.purchase_date = at;
  r.transaction.original_purchase_date = at;
  r.transaction.expires_date = ends;
  r.said_at = at;
  return r;
}

std::vector<std::string> ids_of(const std::vector<model::purchases::purchase>& purchases) {
  std::vector<std::string> out;
  for (const auto& p : purchases)
    out.push_back(p.id);
  return out;
}

// The customer answer at each of `times` from what the lookup reads is the
// answer from every purchase, and the lookup reads exactly what
// model::purchases::answer_purchases keeps.
void check_lookup(db::database& d, const model::app& app, const std::string& user,
                  const std::vector<model::unix_ms>& times) {
  namespace mp = model::purchases;
  const auto env = model::environment::production;
  auto all = REQUIRE_OK(d.find_customer(app.id, user, env, db::purchase_cursor{}, 10000));
  for (auto now : times) {
    INFO("at t0 + " << (now - t0) << " ms");
    auto read = REQUIRE_OK(d.find_customer_answer(app.id, user, env, now));
    CHECK(ids_of(read.purchases) == ids_of(mp::answer_purchases(all.purchases, now)));
    CHECK(read.purchases.size() < all.purchases.size());
    CHECK(json::serialize(mp::customer_json(user, env, read.purchases, read.grants, *all.rules, now))
          == json::serialize(
            mp::customer_json(user, env, all.purchases, all.grants, *all.rules, now)));
  }
}

} // namespace

TEST_CASE("a customer lookup reads only the purchases its answer shows, answering the same",
          "[purchases]") {
  database_fixture f;
  auto& d = *f.db;
  auto app = f.app;
  app.entitlement_rules = R"({"premium":{"monthly":{"product_id":["^premium_monthly$"]},)"
                          R"("yearly":{"product_id":["^premium_yearly$"]}},)"
                          R"("no_ads":{"lifetime":{"product_id":["^remove_ads$"]}},)"
                          R"("pass":{"season":{"product_id":["^season_pass$"]}}})";
  REQUIRE(REQUIRE_OK(d.update_app(app)));
  int n = 0;
  auto save = [&](const model::transaction_record& r) {
    REQUIRE(REQUIRE_OK(d.save_transaction(r, t0)).created);
  };
  // Years of subscriptions, lapsed and running, consumables of three products,
  // a refunded and a kept non-consumable, a season pass; and another customer.
  for (int k = 0; k < 6; ++k)
    save(bought(app, "erin", ++n, "premium_monthly", "Auto-Renewable Subscription",
                t0 + k * 40 * day, t0 + k * 40 * day + 30 * day));
  save(bought(app, "erin", ++n, "premium_yearly", "Auto-Renewable Subscription", t0 + 100 * day,
              t0 + 465 * day));
  for (int k = 0; k < 12; ++k)
    save(bought(app, "erin", ++n, k % 3 == 0 ? "gems_100" : (k % 3 == 1 ? "gems_500" : "coins"),
                "Consumable", t0 + k * day, std::nullopt));
  auto refunded = bought(app, "erin", ++n, "remove_ads", "Non-Consumable", t0 + 2 * day, {});
  refunded.transaction.revocation_date = t0 + 3 * day;
  save(refunded);
  save(bought(app, "erin", ++n, "remove_ads", "Non-Consumable", t0 + 50 * day, {}));
  save(bought(app, "erin", ++n, "season_pass", "Non-Renewing Subscription", t0 + 10 * day,
              t0 + 100 * day));
  save(bought(app, "frank", ++n, "premium_monthly", "Auto-Renewable Subscription", t0,
              t0 + 30 * day));

  std::vector<model::unix_ms> times;
  for (model::unix_ms days : {0, 1, 29, 30, 31, 49, 50, 99, 100, 101, 229, 230, 231, 464, 465, 466})
    times.push_back(t0 + days * day);
  check_lookup(d, app, "erin", times);

  SECTION("another customer, another app, another environment see none of them") {
    auto read = REQUIRE_OK(d.find_customer_answer(app.id, "frank", model::environment::production,
                                                  t0 + day));
    CHECK(read.purchases.size() == 1);
    auto other = make_app(d, "other-app");
    CHECK(REQUIRE_OK(d.find_customer_answer(other.id, "erin", model::environment::production,
                                            t0 + day))
            .purchases.empty());
    CHECK(REQUIRE_OK(d.find_customer_answer(app.id, "erin", model::environment::sandbox, t0 + day))
            .purchases.empty());
  }

  SECTION("a customer's grants come with the lookup, with purchases or without, and only "
          "theirs") {
    auto grant_to = [&](const std::string& user, const std::string& entitlement) {
      model::purchases::grant g;
      g.id = model::make_uuid();
      g.app_id = app.id;
      g.user_identifier = user;
      g.entitlement = entitlement;
      g.starts_at = t0;
      g.expires_at = t0 + 500 * day;
      g.created_at = t0;
      REQUIRE_OK(d.add_grant(g, t0));
    };
    grant_to("erin", "pro");
    grant_to("erin", "premium");
    grant_to("gina", "pro"); // no purchase at all
    const auto env = model::environment::production;
    auto erin = REQUIRE_OK(d.find_customer_answer(app.id, "erin", env, t0 + day));
    CHECK(erin.grants.size() == 2);
    CHECK_FALSE(erin.purchases.empty());
    auto gina = REQUIRE_OK(d.find_customer_answer(app.id, "gina", env, t0 + day));
    CHECK(gina.purchases.empty());
    REQUIRE(gina.grants.size() == 1);
    CHECK(gina.grants[0].entitlement == "pro");
    auto frank = REQUIRE_OK(d.find_customer_answer(app.id, "frank", env, t0 + day));
    CHECK(frank.purchases.size() == 1);
    CHECK(frank.grants.empty());
    CHECK(REQUIRE_OK(d.find_customer_answer(app.id, "erin", model::environment::sandbox, t0 + day))
            .grants.empty());
    check_lookup(d, app, "erin", times);
  }

  SECTION("purchases stored before the lookup's columns get them when receiptd starts") {
    execute_sql(f.url, "UPDATE purchases SET active_until = NULL, recency = 0");
    execute_sql(f.url, "DELETE FROM data_backfills WHERE name = 'purchase_lookup_columns'");
    auto all = REQUIRE_OK(
      d.find_customer(app.id, "erin", model::environment::production, db::purchase_cursor{}, 100));
    auto stale = REQUIRE_OK(
      d.find_customer_answer(app.id, "erin", model::environment::production, t0 + 40 * day));
    CHECK(ids_of(stale.purchases)
          != ids_of(model::purchases::answer_purchases(all.purchases, t0 + 40 * day)));
    REQUIRE_OK(d.migrate());
    check_lookup(d, app, "erin", times);
  }
}

} // namespace receiptd::test

namespace receiptd::test {

namespace {

const model::purchases::purchase_set& purchases_in(const db::batch_saved& saved) {
  const auto* set = std::visit([](const auto& r) { return r.purchases.get(); }, saved.value());
  REQUIRE(set);
  return *set;
}

// A purchase's resource as its answer shows it, with its ids and app's taken
// from `like`: the same purchase made for another app, compared field by field.
std::string shown(model::purchases::purchase p, const std::vector<std::string>& entitlements,
                  const model::purchases::purchase* like = nullptr) {
  if (like) {
    p.id = like->id;
    p.app_id = like->app_id;
    REQUIRE(p.sources.size() == like->sources.size());
    for (std::size_t i = 0; i < p.sources.size(); ++i)
      p.sources[i].id = like->sources[i].id;
  }
  return json::serialize(model::purchases::purchase_json(p, entitlements, t0 + 1));
}

} // namespace

// On PostgreSQL a batch's first Play uploads whose app wants no purchase events
// are written with their purchases in one statement; an app that wants them folds
// each the usual way. Both store and answer the same purchases.
TEST_CASE("a batch's first uploads start their purchases as the usual fold does",
          "[purchases][batch]") {
  database_fixture f;
  auto& d = *f.db;
  auto quiet = with_rules(d, f.app);
  auto heard = with_rules(d, make_app(d, "heard-app"));
  add_endpoint(d, heard);
  auto uploads = [&](const model::app& app) {
    auto play = validated(minimal_purchase_order(app.id, "first-token"));
    play.purchase.acknowledged = true;
    play.echo.user_identifier = "alice";
    auto first = signed_transaction_record(app.id, "2000000000000001", "2000000000000001");
    first.echo.user_identifier = "alice";
    // The same purchase's next transaction, and the same proof again, in the
    // same batch: each folds into the purchase the first started.
    auto renewal = signed_transaction_record(app.id, "2000000000000002", "2000000000000001");
    auto again = play;
    again.echo.metadata = R"({"again":true})";
    return std::vector<db::batch_save>{{play, t0}, {first, t0}, {renewal, t0}, {again, t0}};
  };
  auto got = save_all(d, uploads(quiet));
  auto want = save_all(d, uploads(heard));
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("upload " << i);
    const auto& g = purchases_in(got[i]);
    const auto& w = purchases_in(want[i]);
    REQUIRE(g.items.size() == 1);
    REQUIRE(w.items.size() == 1);
    CHECK(g.entitlements == w.entitlements);
    CHECK(shown(w.items[0], w.entitlements[0], &g.items[0])
          == shown(g.items[0], g.entitlements[0]));
  }
  // What the last answer of each purchase shows is what is stored.
  for (std::size_t i : {2, 3}) {
    INFO("upload " << i);
    const auto& g = purchases_in(got[i]);
    auto stored = REQUIRE_OK(d.find_purchase(g.items[0].id, t0 + 1));
    REQUIRE(stored);
    CHECK(shown(stored->items[0], stored->entitlements[0])
          == shown(g.items[0], g.entitlements[0]));
  }
  CHECK(purchases_in(got[0]).items[0].id == purchases_in(got[3]).items[0].id);
  CHECK(purchases_in(got[1]).items[0].id == purchases_in(got[2]).items[0].id);
  CHECK(purchases_in(got[2]).items[0].versions == 2);
  CHECK(entitlements_now(d, quiet, "alice", t0 + 1) == std::vector<std::string>{"premium"});
  CHECK(events_of(d, quiet, event_type::in_app_purchase_created).empty());
  CHECK(events_of(d, heard, event_type::in_app_purchase_created).size() == 2);

  SECTION("a later batch's first upload of a purchase already made folds into it") {
    auto later = signed_transaction_record(quiet.id, "2000000000000003", "2000000000000001");
    auto again = save_all(d, {{later, t0 + 10}});
    const auto& p = purchases_in(again[0]);
    REQUIRE(p.items.size() == 1);
    CHECK(p.items[0].id == purchases_in(got[1]).items[0].id);
    CHECK(p.items[0].versions == 3);
  }
}

// A session keeps each app's terms and endpoints between batches while the auth
// revision stays; a change another session makes (another persistence worker,
// another instance, receiptctl) is seen by the next batch, whichever way it is
// saved.
TEST_CASE("a batch sees the app's endpoints and rules as another session just changed them",
          "[purchases][batch]") {
  database_fixture f;
  auto& d = *f.db;
  auto app = with_rules(d, f.app);
  auto other = f.second_connection();
  int n = 0;
  // A Play order and a StoreKit 2 transaction, each of a new purchase: each
  // table's one statement on PostgreSQL.
  auto batch = [&] {
    auto play = validated(minimal_purchase_order(app.id, "token-" + std::to_string(++n)));
    play.purchase.product_id = "premium_monthly";
    play.purchase.acknowledged = true;
    play.echo.user_identifier = "alice";
    auto id = std::to_string(2000000000000100 + n);
    auto storekit = signed_transaction_record(app.id, id, id);
    storekit.echo.user_identifier = "alice";
    return save_all(d, {{play, t0}, {storekit, t0}});
  };
  auto first = batch();
  CHECK(purchases_in(first[0]).entitlements[0] == std::vector<std::string>{"premium/monthly"});
  CHECK(purchases_in(first[1]).entitlements[0] == std::vector<std::string>{"premium/monthly"});
  CHECK(events_of(d, app, event_type::in_app_purchase_created).empty());

  add_endpoint(*other, app);
  batch();
  CHECK(events_of(d, app, event_type::in_app_purchase_created).size() == 2);

  auto renamed = app;
  renamed.entitlement_rules = R"({"gold":{"monthly":{"product_id":["^premium_monthly$"]}}})";
  REQUIRE(REQUIRE_OK(other->update_app(renamed)));
  auto after = batch();
  CHECK(purchases_in(after[0]).entitlements[0] == std::vector<std::string>{"gold/monthly"});
  CHECK(purchases_in(after[1]).entitlements[0] == std::vector<std::string>{"gold/monthly"});
  CHECK(events_of(d, app, event_type::in_app_purchase_created).size() == 4);

  // A removed endpoint takes its undelivered events with it; the next batch
  // writes none (one for it would fail the batch: its endpoint is gone).
  for (const auto& e : REQUIRE_OK(other->list_webhook_endpoints(app.id)))
    REQUIRE(REQUIRE_OK(other->remove_webhook_endpoint(e.id)));
  batch();
  CHECK(REQUIRE_OK(d.list_deliveries(app.id, 100)).empty());
  CHECK(entitlements_now(d, app, "alice", t0 + 1) == std::vector<std::string>{"gold"});
}

} // namespace receiptd::test

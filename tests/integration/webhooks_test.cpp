// Webhooks out: endpoints, the outbox written with the changes that
// cause events, the claim's order per record, fencing and redelivery.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <boost/json/parse.hpp>

#include "model/identifiers.hpp"
#include "tests/integration/fixture.hpp"

namespace receiptd::test {

namespace {

constexpr model::unix_ms lease = 10'000;

model::webhook_endpoint endpoint_of(const model::app& app,
                                    std::vector<model::event_type> events = {}) {
  model::webhook_endpoint e;
  e.app_id = app.id;
  e.url = "https://hooks.example.com/receiptd";
  e.events = std::move(events);
  e.created_at = t0;
  return e;
}

template <class Record>
Record announced(Record r) {
  r.terms.announce = true;
  return r;
}

std::vector<model::webhook_delivery> deliveries_of(db::database& d, const model::app& app) {
  return REQUIRE_OK(d.list_deliveries(app.id, 1000));
}

boost::json::object body_of(const std::string& body) {
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec);
  REQUIRE_FALSE(ec);
  REQUIRE(v.is_object());
  return v.get_object();
}

bool has_change(const boost::json::object& body, std::string_view word) {
  const auto& changes = body.at("changes").as_array();
  return std::find(changes.begin(), changes.end(), boost::json::value(word)) != changes.end();
}

model::webhook_delivery finished(model::webhook_delivery d, model::delivery_state state,
                                 model::unix_ms at) {
  d.state = state;
  d.attempts += 1;
  if (state == model::delivery_state::delivered)
    d.delivered_at = at;
  else
    d.last_error = "HTTP 500";
  return d;
}

} // namespace

TEST_CASE("webhook endpoints are added, listed and removed", "[webhooks]") {
  database_fixture f;
  auto& d = *f.db;
  auto other = make_app(d, "other app");
  auto first = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  auto second = REQUIRE_OK(d.add_webhook_endpoint(
    endpoint_of(f.app, {model::event_type::receipt_created, model::event_type::receipt_updated})));
  auto given = endpoint_of(other);
  given.id = model::make_uuid();
  given.secret = "whsec_" + std::string(64, 'a');
  auto third = REQUIRE_OK(d.add_webhook_endpoint(given));

  CHECK(model::is_uuid(first.id));
  CHECK(first.secret.starts_with("whsec_")); // made when empty
  CHECK(first.secret != second.secret);
  CHECK(third.id == given.id); // kept when given
  CHECK(third.secret == given.secret);

  auto listed = REQUIRE_OK(d.list_webhook_endpoints(f.app.id));
  REQUIRE(listed.size() == 2);
  auto by_id = [&](const std::string& id) {
    auto found = std::find_if(listed.begin(), listed.end(), [&](auto& e) { return e.id == id; });
    REQUIRE(found != listed.end());
    return *found;
  };
  for (const auto& want : {first, second}) {
    auto got = by_id(want.id);
    CHECK(got.app_id == f.app.id);
    CHECK(got.url == want.url);
    CHECK(got.secret == want.secret);
    CHECK(got.events == want.events);
    CHECK(got.created_at == t0);
  }
  CHECK(REQUIRE_OK(d.list_webhook_endpoints("")).size() == 3);

  CHECK(REQUIRE_OK(d.remove_webhook_endpoint(first.id)));
  CHECK_FALSE(REQUIRE_OK(d.remove_webhook_endpoint(first.id)));
  listed = REQUIRE_OK(d.list_webhook_endpoints(f.app.id));
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].id == second.id);

  auto orphan = endpoint_of(f.app);
  orphan.app_id = model::make_uuid();
  CHECK_FALSE(d.add_webhook_endpoint(orphan).ok()); // the app must exist
}

TEST_CASE("an app has webhooks while it has an endpoint, and each change bumps the auth revision",
          "[webhooks][apps][auth_revision]") {
  database_fixture f;
  auto& d = *f.db;
  const std::string hash(64, 'c');
  REQUIRE_OK(d.add_token(f.app.id, hash, t0));
  auto reader = f.second_connection(); // another instance's token cache
  auto has_webhooks_everywhere = [&](bool want) {
    CHECK(REQUIRE_OK(reader->find_app(f.app.id)).value().has_webhooks == want);
    CHECK(REQUIRE_OK(reader->find_app(f.app.name)).value().has_webhooks == want);
    CHECK(REQUIRE_OK(reader->app_by_token_hash(hash)).value().has_webhooks == want);
    CHECK(REQUIRE_OK(reader->apps_by_token_hashes({hash})).owners.at(0).value().app.has_webhooks
          == want);
    for (const auto& a : REQUIRE_OK(reader->list_apps()))
      if (a.id == f.app.id)
        CHECK(a.has_webhooks == want);
  };
  has_webhooks_everywhere(false);
  auto before = REQUIRE_OK(reader->auth_revision());

  auto one = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  auto two = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  has_webhooks_everywhere(true);
  auto added = REQUIRE_OK(reader->auth_revision());
  CHECK(added > before);

  REQUIRE(REQUIRE_OK(d.remove_webhook_endpoint(one.id)));
  has_webhooks_everywhere(true);
  auto removed_one = REQUIRE_OK(reader->auth_revision());
  CHECK(removed_one > added);

  REQUIRE(REQUIRE_OK(d.remove_webhook_endpoint(two.id)));
  has_webhooks_everywhere(false);
  CHECK(REQUIRE_OK(reader->auth_revision()) > removed_one);

  // has_webhooks is read, never written: updating the app does not store it
  auto app = f.app;
  app.has_webhooks = true;
  REQUIRE(REQUIRE_OK(d.update_app(app)));
  has_webhooks_everywhere(false);
}

TEST_CASE("a save that announces writes one event and a delivery per endpoint that wants it",
          "[webhooks][outbox]") {
  database_fixture f;
  auto& d = *f.db;
  auto other = make_app(d, "other app");
  auto every = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app, {model::event_type::receipt_created})));
  REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(other)));

  auto order
    = REQUIRE_OK(d.save_purchase_order(announced(minimal_purchase_order(f.app.id, "token")), t0))
        .record;
  auto after_order = deliveries_of(d, f.app);
  REQUIRE(after_order.size() == 1);
  auto delivery = after_order[0];
  CHECK(delivery.endpoint_id == every.id);
  CHECK(delivery.record_id == order.id);
  CHECK(delivery.app_id == f.app.id);
  CHECK(delivery.type == model::event_type::purchase_order_created);
  CHECK(delivery.state == model::delivery_state::pending);
  CHECK(delivery.attempts == 0);
  CHECK(delivery.next_attempt_at == order.updated_at);
  CHECK_FALSE(delivery.delivered_at.has_value());
  CHECK(delivery.url == every.url);

  auto event = REQUIRE_OK(d.find_webhook_event(delivery.event_id)).value();
  CHECK(event.id == delivery.event_id);
  CHECK(event.app_id == f.app.id);
  CHECK(event.type == model::event_type::purchase_order_created);
  CHECK(event.subject == "store_b_purchase_order");
  CHECK(event.record_id == order.id);
  CHECK(event.body == delivery.body);
  auto body = body_of(event.body);
  CHECK(body.at("id") == boost::json::value(event.id));
  CHECK(body.at("type") == boost::json::value("purchase_order.created"));
  CHECK(body.at("data").at("id") == boost::json::value(order.id));
  CHECK(body.at("previous_attributes").is_null());
  CHECK_FALSE(REQUIRE_OK(d.find_webhook_event("evt_" + std::string(32, '0'))).has_value());

  auto receipt
    = REQUIRE_OK(d.save_receipt(announced(minimal_receipt(f.app.id, std::string(64, 'r'))), t0))
        .record;
  auto for_receipt = deliveries_of(d, f.app);
  for_receipt.erase(std::remove_if(for_receipt.begin(), for_receipt.end(),
                                   [&](auto& x) { return x.record_id != receipt.id; }),
                    for_receipt.end());
  REQUIRE(for_receipt.size() == 2); // both endpoints want receipt.created
  CHECK(for_receipt[0].event_id == for_receipt[1].event_id);
  CHECK(for_receipt[0].endpoint_id != for_receipt[1].endpoint_id);
  CHECK(for_receipt[0].type == model::event_type::receipt_created);

  SECTION("a save that does not announce writes none") {
    REQUIRE_OK(d.save_purchase_order(minimal_purchase_order(f.app.id, "quiet"), t0));
    CHECK(deliveries_of(d, f.app).size() == 3);
  }
  SECTION("a re-upload that changes nothing writes none; one that does, an updated event") {
    REQUIRE_OK(d.save_purchase_order(announced(minimal_purchase_order(f.app.id, "token")), t0 + 5));
    CHECK(deliveries_of(d, f.app).size() == 3);

    auto changed = announced(minimal_purchase_order(f.app.id, "token"));
    changed.echo.metadata = R"({"level":2})";
    changed.updated_at = t0 + 10;
    REQUIRE_OK(d.save_purchase_order(changed, t0 + 10));
    auto now = deliveries_of(d, f.app);
    REQUIRE(now.size() == 4);
    auto updated = std::find_if(now.begin(), now.end(), [](auto& x) {
      return x.type == model::event_type::purchase_order_updated;
    });
    REQUIRE(updated != now.end());
    CHECK(updated->record_id == order.id);
    CHECK(updated->endpoint_id == every.id);
    auto updated_body = body_of(updated->body);
    CHECK(updated_body.at("previous_attributes").at("metadata").is_null());
    CHECK(updated_body.at("new_attributes").at("metadata").at("level") == 2);
  }
  SECTION("an app without endpoints gets none") {
    REQUIRE_OK(d.save_purchase_order(announced(minimal_purchase_order(other.id, "t")), t0));
    auto lonely = make_app(d, "no endpoints");
    REQUIRE_OK(d.save_purchase_order(announced(minimal_purchase_order(lonely.id, "t")), t0));
    CHECK(deliveries_of(d, lonely).empty());
    CHECK(deliveries_of(d, other).size() == 1);
    CHECK(REQUIRE_OK(d.list_deliveries("", 1000)).size() == 4);
    CHECK(REQUIRE_OK(d.list_deliveries("", 2)).size() == 2);
  }
}

TEST_CASE("a batch writes the events of the saves that announce, in its one transaction",
          "[webhooks][outbox]") {
  database_fixture f;
  auto& d = *f.db;
  REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  auto settled = minimal_purchase_order(f.app.id, "settled");
  settled.state = model::validation_state::validated;

  SECTION("alone: a settled order that announces is not inserted on its own") {
    auto saved = REQUIRE_OK(d.save_batch({{announced(settled), t0}}));
    REQUIRE(saved.size() == 1);
    auto id = std::get<model::purchase_order_record>(REQUIRE_OK(saved[0])).id;
    auto all = deliveries_of(d, f.app);
    REQUIRE(all.size() == 1);
    CHECK(all[0].record_id == id);
  }
  SECTION("several, one of them failing alone") {
    auto broken = announced(minimal_purchase_order(model::make_uuid(), "no such app"));
    auto saved = REQUIRE_OK(d.save_batch({{announced(settled), t0},
                                          {broken, t0},
                                          {minimal_purchase_order(f.app.id, "quiet"), t0},
                                          {announced(minimal_receipt(f.app.id, "h")), t0}}));
    REQUIRE(saved.size() == 4);
    CHECK_FALSE(saved[1].ok());
    auto all = deliveries_of(d, f.app);
    REQUIRE(all.size() == 2);
    std::vector<std::string> records{all[0].record_id, all[1].record_id};
    std::sort(records.begin(), records.end());
    std::vector<std::string> want{std::get<model::purchase_order_record>(REQUIRE_OK(saved[0])).id,
                                  std::get<model::receipt_record>(REQUIRE_OK(saved[3])).id};
    std::sort(want.begin(), want.end());
    CHECK(records == want);
  }
}

TEST_CASE("a record's events reach an endpoint one after the other", "[webhooks][claim]") {
  database_fixture f;
  auto& d = *f.db;
  auto endpoint = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  auto first = announced(minimal_purchase_order(f.app.id, "token"));
  auto record = REQUIRE_OK(d.save_purchase_order(first, t0)).record;
  auto second = first;
  second.echo.user_identifier = "alice";
  second.updated_at = t0 + 1;
  REQUIRE_OK(d.save_purchase_order(second, t0));
  auto other = REQUIRE_OK(d.save_receipt(announced(minimal_receipt(f.app.id, "h")), t0)).record;
  REQUIRE(deliveries_of(d, f.app).size() == 3);

  auto claimed = REQUIRE_OK(d.claim_deliveries("w1", t0 + 1, t0 + 1 + lease, 10, 10));
  REQUIRE(claimed.size() == 2); // the order's first event and the receipt's
  auto created = std::find_if(claimed.begin(), claimed.end(),
                              [&](auto& x) { return x.record_id == record.id; });
  REQUIRE(created != claimed.end());
  CHECK(created->type == model::event_type::purchase_order_created);
  CHECK(created->version == 1);
  CHECK(created->url == endpoint.url);
  CHECK(created->secret == endpoint.secret);
  CHECK(body_of(created->body).at("type") == boost::json::value("purchase_order.created"));
  CHECK(
    std::any_of(claimed.begin(), claimed.end(), [&](auto& x) { return x.record_id == other.id; }));

  // The second event of the order waits while the first is pending, leased or not.
  CHECK(REQUIRE_OK(d.claim_deliveries("w2", t0 + 2, t0 + 2 + lease, 10, 10)).empty());
  auto retry = *created;
  retry.attempts = 1;
  retry.next_attempt_at = t0 + 5000;
  retry.last_error = "HTTP 503";
  REQUIRE(REQUIRE_OK(d.finish_delivery(retry)));
  CHECK(REQUIRE_OK(d.claim_deliveries("w2", t0 + 4999, t0 + 4999 + lease, 10, 10)).empty());

  SECTION("claimable once the first is delivered") {
    auto again = REQUIRE_OK(d.claim_deliveries("w2", t0 + 5000, t0 + 5000 + lease, 10, 10));
    REQUIRE(again.size() == 1);
    CHECK(again[0].event_id == created->event_id);
    CHECK(again[0].attempts == 1);
    CHECK(again[0].last_error == "HTTP 503");
    REQUIRE(REQUIRE_OK(
      d.finish_delivery(finished(again[0], model::delivery_state::delivered, t0 + 5001))));
    auto next = REQUIRE_OK(d.claim_deliveries("w2", t0 + 5002, t0 + 5002 + lease, 10, 10));
    REQUIRE(next.size() == 1);
    CHECK(next[0].record_id == record.id);
    CHECK(next[0].type == model::event_type::purchase_order_updated);
  }
  SECTION("claimable once the first is dead") {
    auto again = REQUIRE_OK(d.claim_deliveries("w2", t0 + 5000, t0 + 5000 + lease, 10, 10));
    REQUIRE(again.size() == 1);
    REQUIRE(
      REQUIRE_OK(d.finish_delivery(finished(again[0], model::delivery_state::dead, t0 + 5001))));
    auto next = REQUIRE_OK(d.claim_deliveries("w2", t0 + 5002, t0 + 5002 + lease, 10, 10));
    REQUIRE(next.size() == 1);
    CHECK(next[0].type == model::event_type::purchase_order_updated);
  }
  SECTION("another endpoint's deliveries are not held back") {
    auto late = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
    REQUIRE(REQUIRE_OK(d.redeliver_event(created->event_id, t0 + 3)));
    auto fresh = REQUIRE_OK(d.claim_deliveries("w3", t0 + 3, t0 + 3 + lease, 10, 10));
    REQUIRE(fresh.size() == 2); // the redelivered first event, to both endpoints
    CHECK(std::all_of(fresh.begin(), fresh.end(),
                      [&](auto& x) { return x.event_id == created->event_id; }));
    CHECK(
      std::any_of(fresh.begin(), fresh.end(), [&](auto& x) { return x.endpoint_id == late.id; }));
  }
}

TEST_CASE("a claim takes turns between endpoints, each at most its room: one that hangs holds "
          "only its own places",
          "[webhooks][claim]") {
  database_fixture f;
  auto& d = *f.db;
  // A busy app whose endpoint hangs (its deliveries stay claimed), and another.
  auto busy = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  auto other_app = make_app(d, "other " + model::make_uuid());
  auto quiet = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(other_app)));
  for (int i = 0; i < 10; ++i)
    REQUIRE_OK(d.save_purchase_order(
      announced(minimal_purchase_order(f.app.id, "t" + std::to_string(i))), t0 + i));
  auto late = announced(minimal_purchase_order(other_app.id, "late"));
  late.created_at = late.updated_at = t0 + 50;
  REQUIRE_OK(d.save_purchase_order(late, t0 + 50));
  auto count = [](const std::vector<model::webhook_delivery>& v, const std::string& endpoint) {
    return std::count_if(v.begin(), v.end(), [&](auto& x) { return x.endpoint_id == endpoint; });
  };

  // Oldest first across endpoints would be three of the busy one's; in turns,
  // each gets one before either gets a second, and the busy one at most its two.
  auto now = t0 + 100;
  auto first = REQUIRE_OK(d.claim_deliveries("w1", now, now + lease, 3, 2));
  CHECK(first.size() == 3);
  CHECK(count(first, busy.id) == 2);
  CHECK(count(first, quiet.id) == 1);

  // The busy endpoint's two are out (it hangs): w1 claims none of its eight others,
  // while the other endpoint's new event goes at once.
  CHECK(REQUIRE_OK(d.claim_deliveries("w1", now + 1, now + 1 + lease, 10, 2)).empty());
  auto next = announced(minimal_purchase_order(other_app.id, "next"));
  REQUIRE_OK(d.save_purchase_order(next, now + 2));
  auto more = REQUIRE_OK(d.claim_deliveries("w1", now + 3, now + 3 + lease, 10, 2));
  REQUIRE(more.size() == 1);
  CHECK(more[0].endpoint_id == quiet.id);

  // Another instance has places of its own there, and never one w1 holds.
  auto second = REQUIRE_OK(d.claim_deliveries("w2", now + 4, now + 4 + lease, 10, 2));
  CHECK(count(second, busy.id) == 2);
  for (const auto& x : second)
    for (const auto& y : first)
      CHECK(x.event_id != y.event_id);

  // A delivery finished frees its place; one whose lease ran out is no one's.
  auto done = first.front().endpoint_id == busy.id ? first.front() : first.back();
  REQUIRE(REQUIRE_OK(d.finish_delivery(finished(done, model::delivery_state::dead, now + 5))));
  CHECK(count(REQUIRE_OK(d.claim_deliveries("w1", now + 6, now + 6 + lease, 10, 2)), busy.id) == 1);
  auto expired = REQUIRE_OK(d.claim_deliveries("w1", now + 6 + lease, now + 7 + lease, 10, 2));
  CHECK(count(expired, busy.id) == 2);
}

TEST_CASE("finishing a delivery is fenced by its claim's version", "[webhooks][claim]") {
  database_fixture f;
  auto& d = *f.db;
  auto endpoint = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  REQUIRE_OK(d.save_purchase_order(announced(minimal_purchase_order(f.app.id, "t")), t0));
  auto stale = REQUIRE_OK(d.claim_deliveries("w1", t0, t0 + lease, 10, 10)).at(0);
  CHECK(REQUIRE_OK(d.claim_deliveries("w2", t0 + lease - 1, t0 + 2 * lease, 10, 10)).empty());
  auto current = REQUIRE_OK(d.claim_deliveries("w2", t0 + lease, t0 + 2 * lease, 10, 10)).at(0);
  CHECK(current.event_id == stale.event_id);
  CHECK(current.version == stale.version + 1);

  CHECK_FALSE(
    REQUIRE_OK(d.finish_delivery(finished(stale, model::delivery_state::delivered, t0 + 1))));
  CHECK(deliveries_of(d, f.app).at(0).state == model::delivery_state::pending);

  auto done = finished(current, model::delivery_state::delivered, t0 + lease + 7);
  CHECK(REQUIRE_OK(d.finish_delivery(done)));
  auto stored = deliveries_of(d, f.app).at(0);
  CHECK(stored.state == model::delivery_state::delivered);
  CHECK(stored.attempts == 1);
  CHECK(stored.delivered_at == t0 + lease + 7);
  CHECK(stored.version == current.version);
  CHECK_FALSE(REQUIRE_OK(d.finish_delivery(done))); // once per claim
  CHECK(REQUIRE_OK(d.claim_deliveries("w3", t0 + 99 * lease, t0 + 100 * lease, 10, 10)).empty());

  SECTION("a removed endpoint's delivery cannot be finished, its delivered history stays") {
    REQUIRE_OK(d.save_purchase_order(announced(minimal_purchase_order(f.app.id, "u")), t0));
    auto in_flight = REQUIRE_OK(d.claim_deliveries("w1", t0 + 1, t0 + 1 + lease, 10, 10)).at(0);
    REQUIRE(REQUIRE_OK(d.remove_webhook_endpoint(endpoint.id)));
    CHECK_FALSE(
      REQUIRE_OK(d.finish_delivery(finished(in_flight, model::delivery_state::delivered, t0 + 2))));
    auto left = deliveries_of(d, f.app);
    REQUIRE(left.size() == 1);
    CHECK(left[0].event_id == done.event_id);
    CHECK(left[0].url.empty()); // the endpoint is gone
  }
}

TEST_CASE("an event is redelivered on demand", "[webhooks][redeliver]") {
  database_fixture f;
  auto& d = *f.db;
  auto endpoint = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  REQUIRE_OK(d.save_purchase_order(announced(minimal_purchase_order(f.app.id, "t")), t0));
  auto claimed = REQUIRE_OK(d.claim_deliveries("w1", t0, t0 + lease, 10, 10)).at(0);
  auto dead = finished(claimed, model::delivery_state::dead, t0 + 1);
  REQUIRE(REQUIRE_OK(d.finish_delivery(dead)));
  CHECK(REQUIRE_OK(d.claim_deliveries("w1", t0 + 2, t0 + 2 + lease, 10, 10)).empty());

  auto added_since = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  REQUIRE_OK(
    d.add_webhook_endpoint(endpoint_of(f.app, {model::event_type::receipt_updated}))); // unwanted
  CHECK(REQUIRE_OK(d.redeliver_event(claimed.event_id, t0 + 100)));
  auto all = deliveries_of(d, f.app);
  REQUIRE(all.size() == 2);
  for (const auto& x : all) {
    CHECK(x.event_id == claimed.event_id);
    CHECK(x.state == model::delivery_state::pending);
    CHECK(x.attempts == 0);
    CHECK(x.next_attempt_at == t0 + 100);
    CHECK(x.last_error.empty());
    CHECK((x.endpoint_id == endpoint.id || x.endpoint_id == added_since.id));
  }
  CHECK(REQUIRE_OK(d.claim_deliveries("w1", t0 + 99, t0 + 99 + lease, 10, 10)).empty());
  auto again = REQUIRE_OK(d.claim_deliveries("w1", t0 + 100, t0 + 100 + lease, 10, 10));
  CHECK(again.size() == 2);

  // A send still in flight when the event is redelivered cannot finish it.
  REQUIRE(REQUIRE_OK(d.redeliver_event(claimed.event_id, t0 + 200)));
  CHECK_FALSE(REQUIRE_OK(
    d.finish_delivery(finished(again.at(0), model::delivery_state::delivered, t0 + 201))));

  CHECK_FALSE(REQUIRE_OK(d.redeliver_event("evt_" + std::string(32, 'f'), t0)));
}

TEST_CASE("a completed job writes an updated event for the app's endpoints", "[webhooks][jobs]") {
  database_fixture f;
  auto& d = *f.db;
  auto quiet = make_app(d, "no endpoints");
  REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  // Saved without announce (the app's cache did not know of the endpoint yet).
  auto record = REQUIRE_OK(d.save_purchase_order(minimal_purchase_order(f.app.id, "t"), t0)).record;
  auto unheard
    = REQUIRE_OK(d.save_purchase_order(minimal_purchase_order(quiet.id, "t"), t0)).record;
  REQUIRE(deliveries_of(d, f.app).empty());

  for (const auto& job : REQUIRE_OK(d.claim_due_jobs("w", t0, t0 + lease, 10))) {
    auto verdict = job.record_id == record.id ? record : unheard;
    verdict.state = model::validation_state::validated;
    verdict.purchase.acknowledged = true;
    verdict.store_detail = "Play 200";
    verdict.updated_at = t0 + 50;
    REQUIRE(REQUIRE_OK(d.complete_job(job, verdict)));
  }
  auto all = deliveries_of(d, f.app);
  REQUIRE(all.size() == 1);
  CHECK(all[0].type == model::event_type::purchase_order_updated);
  CHECK(all[0].record_id == record.id);
  auto body = body_of(all[0].body);
  CHECK(has_change(body, "validated"));
  CHECK(has_change(body, "acknowledged"));
  CHECK(body.at("previous_attributes").at("validation_state") == boost::json::value("pending"));
  CHECK(body.at("data").at("validation_state") == boost::json::value("validated"));
  CHECK(deliveries_of(d, quiet).empty());
}

TEST_CASE("a completed receipt job's event shows the stored in-app purchases", "[webhooks][jobs]") {
  database_fixture f;
  auto& d = *f.db;
  REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app, {model::event_type::receipt_updated})));
  auto record = REQUIRE_OK(d.save_receipt(minimal_receipt(f.app.id, "h"), t0)).record;
  auto job = REQUIRE_OK(d.claim_due_jobs("w", t0, t0 + lease, 10)).at(0);
  auto verdict = full_receipt(f.app.id, record.receipt_hash, 2);
  verdict.id = record.id;
  verdict.fraud = model::fraud_reason::none;
  verdict.state = model::validation_state::validated;
  REQUIRE(REQUIRE_OK(d.complete_job(job, verdict)));
  auto all = deliveries_of(d, f.app);
  REQUIRE(all.size() == 1);
  auto body = body_of(all[0].body);
  CHECK(body.at("type") == boost::json::value("receipt.updated"));
  CHECK(body.at("data").at("in_app_purchases").as_array().size() == 2);
  CHECK(body.at("data").at("id") == boost::json::value(record.id));
  CHECK(body.at("previous_attributes").at("in_app_purchases").as_array().size() == 1);
}

// Sessions re-uploading one record at once: each change gets the next number
// of the record's events (no collision fails a save), and the claim hands them
// out one at a time in that order: each event's previous_attributes are the
// new_attributes of the one before.
TEST_CASE("concurrent saves of one record announce every change, in order",
          "[webhooks][concurrency]") {
  database_fixture f;
  REQUIRE_OK(f.db->add_webhook_endpoint(endpoint_of(f.app)));
  constexpr int workers = 3;
  constexpr int per_worker = 15;
  std::vector<std::unique_ptr<db::database>> sessions;
  for (int w = 0; w < workers; ++w)
    sessions.push_back(f.second_connection());
  std::mutex error_mutex;
  std::vector<std::string> errors;
  std::barrier start(workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      start.arrive_and_wait();
      for (int i = 0; i < per_worker; ++i) {
        auto receipt = announced(full_receipt(f.app.id, std::string(64, 'c'), 2));
        receipt.echo.user_identifier = "worker " + std::to_string(w) + " " + std::to_string(i);
        if (auto saved = sessions[w]->save_receipt(receipt, t0); !saved) {
          std::lock_guard lock(error_mutex);
          errors.push_back(saved.err().message());
        }
      }
    });
  for (auto& t : threads)
    t.join();
  INFO("first error: " << (errors.empty() ? std::string("none") : errors.front()));
  CHECK(errors.empty());
  auto& d = *f.db;
  REQUIRE(deliveries_of(d, f.app).size() == workers * per_worker); // every save changed it

  boost::json::value last_user; // null: before the record was created
  for (int n = 0; n < workers * per_worker; ++n) {
    INFO("delivery " << n);
    auto now = t0 + 1000 + n; // full_receipt's updated_at is past t0
    auto claimed = REQUIRE_OK(d.claim_deliveries("w", now, now + lease, 10, 10));
    REQUIRE(claimed.size() == 1);
    auto body = body_of(claimed[0].body);
    if (n == 0)
      CHECK(body.at("type") == boost::json::value("receipt.created"));
    else
      CHECK(body.at("previous_attributes").at("user_identifier") == last_user);
    last_user = body.at("data").at("user_identifier");
    REQUIRE(
      REQUIRE_OK(d.finish_delivery(finished(claimed[0], model::delivery_state::delivered, now))));
  }
  CHECK(REQUIRE_OK(d.claim_deliveries("w", t0 + 9999, t0 + 9999 + lease, 10, 10)).empty());
}

TEST_CASE("concurrent claimers never share a delivery nor hold two of one record",
          "[webhooks][concurrency]") {
  database_fixture f;
  auto& d = *f.db;
  REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  constexpr int records = 40;
  for (int i = 0; i < records; ++i) {
    auto order = announced(minimal_purchase_order(f.app.id, "t" + std::to_string(i)));
    REQUIRE_OK(d.save_purchase_order(order, t0));
    order.echo.user_identifier = "changed";
    REQUIRE_OK(d.save_purchase_order(order, t0));
  }
  constexpr int total = 2 * records;
  REQUIRE(deliveries_of(d, f.app).size() == total);

  constexpr int workers = 3;
  std::vector<std::unique_ptr<db::database>> sessions;
  for (int w = 0; w < workers; ++w)
    sessions.push_back(f.second_connection());
  std::mutex mutex;                      // guards what follows
  std::set<std::string> delivered_first; // records whose created event was delivered
  std::map<std::string, std::vector<model::event_type>> sent; // per record, in claim order
  std::multiset<std::string> claimed;                         // event ids
  std::vector<std::string> problems;
  int finished_count = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::barrier start(workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      start.arrive_and_wait();
      auto& s = *sessions[w];
      for (;;) {
        {
          std::lock_guard lock(mutex);
          if (finished_count == total || !problems.empty()
              || std::chrono::steady_clock::now() > deadline)
            return;
        }
        auto batch = s.claim_deliveries("w" + std::to_string(w), t0 + 1, t0 + 3'600'000, 3, 3);
        // Each delivery is finished under the lock and noted before it is released:
        // a record's second event claimed here must find its first noted as delivered.
        std::lock_guard lock(mutex);
        if (!batch) {
          problems.push_back(batch.err().message());
          return;
        }
        for (auto& x : *batch) {
          claimed.insert(x.event_id);
          sent[x.record_id].push_back(x.type);
          if (x.type == model::event_type::purchase_order_updated
              && !delivered_first.contains(x.record_id))
            problems.push_back("record " + x.record_id
                               + ": second event claimed before the first was delivered");
        }
        for (auto& x : *batch) {
          auto done = s.finish_delivery(finished(x, model::delivery_state::delivered, t0 + 2));
          if (!done || !*done)
            problems.push_back("finishing " + x.event_id + " failed");
          if (x.type == model::event_type::purchase_order_created)
            delivered_first.insert(x.record_id);
          ++finished_count;
        }
      }
    });
  for (auto& t : threads)
    t.join();
  INFO("first problem: " << (problems.empty() ? std::string("none") : problems.front()));
  CHECK(problems.empty());
  CHECK(claimed.size() == total);
  CHECK(std::set<std::string>(claimed.begin(), claimed.end()).size() == total);
  REQUIRE(sent.size() == records);
  for (const auto& [record, types] : sent)
    CHECK(types
          == std::vector<model::event_type>{model::event_type::purchase_order_created,
                                            model::event_type::purchase_order_updated});
}

} // namespace receiptd::test

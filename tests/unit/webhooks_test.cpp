// Webhooks out, the pure part: event bodies and what they say
// changed, their signatures, endpoint URLs and event lists, and what a send's
// outcome does to a delivery.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/resource_json.hpp"
#include "model/store_b/acknowledgement.hpp"
#include "model/store_b/refresh.hpp"
#include "model/store_b/voided.hpp"
#include "model/webhooks.hpp"

using namespace receiptd::model;
namespace json = boost::json;

namespace {

constexpr unix_ms now = 1700000000000; // 2023-11-14 22:13:20 UTC
const std::string app_id = "11111111-2222-4333-8444-555555555555";

purchase_order_record pending_order() {
  purchase_order_record r;
  r.id = "0b7c3f2e-4a5d-4c1e-9a8b-1c2d3e4f5a6b";
  r.app_id = app_id;
  r.package_name = "my.package";
  r.purchase_token = "tok";
  r.order_id = "GPA.1";
  r.purchase.product_id = "p1";
  r.purchase.kind = product_kind::product;
  r.purchase.purchase_state = purchase_state::purchased;
  r.purchase.purchase_time = 1437564796303;
  r.purchase.acknowledged = false;
  r.echo.metadata = R"({"campaign":"spring"})";
  r.state = validation_state::pending;
  r.created_at = 1699999990000;
  r.updated_at = 1699999990000;
  return r;
}

transaction_record subscription_transaction() {
  transaction_record r;
  r.id = "7e0e8a52-5e5b-4b0e-8d63-0c2b7c1d9e10";
  r.app_id = app_id;
  r.state = validation_state::validated;
  r.transaction.transaction_id = "2000000000000001";
  r.transaction.original_transaction_id = "2000000000000001";
  r.transaction.bundle_id = "com.example";
  r.transaction.product_id = "pro.monthly";
  r.transaction.type = "Auto-Renewable Subscription";
  r.transaction.purchase_date = 1690000000000;
  r.transaction.expires_date = 1692592000000;
  r.created_at = 1690000001000;
  r.updated_at = 1690000001000;
  return r;
}

receipt_record receipt_with_two_purchases() {
  receipt_record r;
  r.id = "5d6f0f3c-7d3e-4f55-9f55-1d2f3a4b5c6d";
  r.app_id = app_id;
  r.state = validation_state::validated;
  r.bundle_id = "com.example";
  for (const char* id : {"1000000000000001", "1000000000000002"}) {
    apple_in_app_purchase p;
    p.product_id = "gems";
    p.transaction_id = id;
    p.original_transaction_id = id;
    p.quantity = 1;
    p.purchase_date = 1690000000000;
    r.in_app_purchases.push_back(p);
  }
  r.created_at = 1690000001000;
  r.updated_at = 1690000001000;
  return r;
}

json::object parse_body(const webhook_event& e) {
  return json::parse(e.body).as_object();
}

std::vector<std::string> keys_of(const json::object& o) {
  std::vector<std::string> keys;
  for (const auto& kv : o)
    keys.emplace_back(kv.key());
  return keys;
}

std::vector<std::string> words_of(const json::object& body) {
  std::vector<std::string> words;
  for (const auto& w : body.at("changes").as_array())
    words.emplace_back(w.as_string());
  return words;
}

// The words of the update from `before` to `after` (both resources).
std::vector<std::string> changes(const json::object& before, const json::object& after,
                                 record_kind kind) {
  auto e = record_event(before, after, kind, app_id, "r1", now);
  REQUIRE(e);
  return words_of(parse_body(*e));
}

using words = std::vector<std::string>;

} // namespace

TEST_CASE("a created record's event: the resource, no previous or new attributes", "[webhooks]") {
  auto r = pending_order();
  r.state = validation_state::validated;
  auto after = purchase_order_json(r);
  auto e
    = record_event(std::nullopt, after, record_kind::store_b_purchase_order, app_id, r.id, now);
  REQUIRE(e);
  CHECK(e->type == event_type::purchase_order_created);
  CHECK(e->subject == "store_b_purchase_order");
  CHECK(e->app_id == app_id);
  CHECK(e->record_id == r.id);
  CHECK(e->created_at == now);
  // "evt_", 12 hex digits of the time, 20 random ones.
  REQUIRE(e->id.size() == 36);
  CHECK(e->id.substr(0, 16) == "evt_018bcfe56800");
  CHECK(e->id.find_first_not_of("0123456789abcdef", 4) == std::string::npos);

  auto body = parse_body(*e);
  CHECK(keys_of(body)
        == std::vector<std::string>{"id", "type", "created_at", "data", "previous_attributes",
                                    "new_attributes", "changes"});
  CHECK(body.at("id") == e->id.c_str());
  CHECK(body.at("type") == "purchase_order.created");
  CHECK(body.at("created_at").at("ms") == now);
  CHECK(body.at("created_at").at("utc") == "2023-11-14 22:13:20 UTC");
  CHECK(body.at("data") == after);
  CHECK(body.at("previous_attributes").is_null());
  CHECK(body.at("new_attributes").is_null());
  // On *.created the words say what the new record already is.
  CHECK(words_of(body) == words{"validated"});

  auto t = transaction_json(subscription_transaction());
  auto te = record_event(std::nullopt, t, record_kind::store_a_transaction, app_id, "t", now);
  REQUIRE(te);
  CHECK(parse_body(*te).at("type") == "transaction.created");
  auto re = record_event(std::nullopt, receipt_json(receipt_with_two_purchases()),
                         record_kind::store_a_receipt, app_id, "r", now);
  REQUIRE(re);
  CHECK(parse_body(*re).at("type") == "receipt.created");
}

TEST_CASE("an updated record's event names only the keys that changed", "[webhooks]") {
  auto r = pending_order();
  auto before = purchase_order_json(r);
  r.state = validation_state::validated;
  r.purchase.acknowledged = true;
  r.updated_at = now;
  auto after = purchase_order_json(r);

  auto e = record_event(before, after, record_kind::store_b_purchase_order, app_id, r.id, now);
  REQUIRE(e);
  CHECK(e->type == event_type::purchase_order_updated);
  auto body = parse_body(*e);
  CHECK(body.at("type") == "purchase_order.updated");
  CHECK(body.at("data") == after);
  // updated_at changed too, and never counts; metadata and the rest stayed.
  CHECK(body.at("previous_attributes")
        == json::object{{"validation_state", "pending"},
                        {"in_app_purchase", before.at("in_app_purchase")}});
  CHECK(body.at("new_attributes")
        == json::object{{"validation_state", "validated"},
                        {"in_app_purchase", after.at("in_app_purchase")}});
  CHECK(words_of(body) == words{"validated", "acknowledged"});
}

TEST_CASE("an update that changed nothing but updated_at is no event", "[webhooks]") {
  auto r = pending_order();
  auto before = purchase_order_json(r);
  r.updated_at = now;
  CHECK_FALSE(record_event(before, purchase_order_json(r), record_kind::store_b_purchase_order,
                           app_id, r.id, now));
  CHECK_FALSE(record_event(before, before, record_kind::store_b_purchase_order, app_id, r.id, now));

  // Any other change is one, even without a word for it.
  r.echo.metadata = R"({"campaign":"autumn"})";
  auto e = record_event(before, purchase_order_json(r), record_kind::store_b_purchase_order, app_id,
                        r.id, now);
  REQUIRE(e);
  auto body = parse_body(*e);
  CHECK(keys_of(body.at("new_attributes").as_object()) == std::vector<std::string>{"metadata"});
  CHECK(words_of(body).empty());
}

TEST_CASE("a key that appears or goes counts as changed (absent is null)", "[webhooks]") {
  json::object before{{"id", "x"}, {"validation_state", "validated"}, {"gone", 1}};
  json::object after{{"id", "x"}, {"validation_state", "validated"}, {"added", true}};
  auto e = record_event(before, after, record_kind::store_a_transaction, app_id, "x", now);
  REQUIRE(e);
  auto body = parse_body(*e);
  CHECK(body.at("previous_attributes") == json::object{{"added", nullptr}, {"gone", 1}});
  CHECK(body.at("new_attributes") == json::object{{"added", true}, {"gone", nullptr}});

  // A new nullable key is no change at all.
  json::object with_null = before;
  with_null["added"] = nullptr;
  CHECK_FALSE(record_event(before, with_null, record_kind::store_a_transaction, app_id, "x", now));
}

TEST_CASE("changes: validation states and fraud", "[webhooks]") {
  auto r = pending_order();
  auto pending = purchase_order_json(r);
  r.state = validation_state::failed;
  CHECK(changes(pending, purchase_order_json(r), record_kind::store_b_purchase_order)
        == words{"failed"});

  r.state = validation_state::rejected;
  r.fraud = fraud_reason::store_rejected;
  CHECK(changes(pending, purchase_order_json(r), record_kind::store_b_purchase_order)
        == words{"fraud"});

  auto t = subscription_transaction();
  auto validated = transaction_json(t);
  t.state = validation_state::pending;
  CHECK(changes(validated, transaction_json(t), record_kind::store_a_transaction)
        == words{"pending"});
}

TEST_CASE("changes: refunds of a StoreKit 2 transaction and of a receipt's purchase",
          "[webhooks]") {
  auto t = subscription_transaction();
  auto before = transaction_json(t);
  t.transaction.revocation_date = 1691000000000;
  t.transaction.revocation_reason = 0;
  auto refunded = transaction_json(t);
  CHECK(changes(before, refunded, record_kind::store_a_transaction) == words{"refunded"});
  CHECK(changes(refunded, before, record_kind::store_a_transaction) == words{"refund_reversed"});

  auto r = receipt_with_two_purchases();
  auto receipt_before = receipt_json(r);
  r.in_app_purchases[1].cancellation_date = 1691000000000;
  auto receipt_after = receipt_json(r);
  CHECK(changes(receipt_before, receipt_after, record_kind::store_a_receipt) == words{"refunded"});
  CHECK(changes(receipt_after, receipt_before, record_kind::store_a_receipt)
        == words{"refund_reversed"});
  // A purchase already refunded gaining another field: no new refund.
  auto later = r;
  later.in_app_purchases[1].expires_date = 1692000000000;
  CHECK(changes(receipt_after, receipt_json(later), record_kind::store_a_receipt).empty());
  // A receipt that newly holds a refunded purchase.
  auto grown = r;
  apple_in_app_purchase extra = r.in_app_purchases[0];
  extra.transaction_id = "1000000000000003";
  extra.cancellation_date = 1691000000000;
  grown.in_app_purchases.push_back(extra);
  CHECK(changes(receipt_after, receipt_json(grown), record_kind::store_a_receipt)
        == words{"refunded"});

  auto order = pending_order();
  order.state = validation_state::validated;
  auto order_before = purchase_order_json(order);
  order.purchase.purchase_state = purchase_state::refunded;
  CHECK(changes(order_before, purchase_order_json(order), record_kind::store_b_purchase_order)
        == words{"refunded"});
}

TEST_CASE("changes: renewals, expiry and subscription status", "[webhooks]") {
  auto t = subscription_transaction();
  auto before = transaction_json(t);
  t.transaction.expires_date = *t.transaction.expires_date + 30LL * 86400000;
  CHECK(changes(before, transaction_json(t), record_kind::store_a_transaction) == words{"renewed"});
  // An expiry moved earlier is no renewal.
  CHECK(changes(transaction_json(t), before, record_kind::store_a_transaction).empty());

  // The notification fields, as the resource spells them.
  auto status = [&](const char* s, unix_ms expires) {
    auto o = transaction_json(subscription_transaction());
    o["subscription_status"] = s;
    o["subscription_expires_date"] = timestamp_json(expires);
    return o;
  };
  auto active = status("active", 1692592000000);
  CHECK(changes(active, status("active", 1695184000000), record_kind::store_a_transaction)
        == words{"renewed"});
  CHECK(changes(active, status("expired", 1692592000000), record_kind::store_a_transaction)
        == words{"expired"});
  CHECK(changes(active, status("billing_retry", 1692592000000), record_kind::store_a_transaction)
        == words{"subscription_status"});
  CHECK(changes(status("expired", 1692592000000), status("active", 1695184000000),
                record_kind::store_a_transaction)
        == words{"renewed", "subscription_status"});

  // Store A receipts: a renewal adds a purchase expiring later.
  auto r = receipt_with_two_purchases();
  r.in_app_purchases[0].expires_date = 1692592000000;
  auto receipt_before = receipt_json(r);
  auto renewal = r.in_app_purchases[0];
  renewal.transaction_id = "1000000000000009";
  renewal.expires_date = 1695184000000;
  r.in_app_purchases.push_back(renewal);
  CHECK(changes(receipt_before, receipt_json(r), record_kind::store_a_receipt) == words{"renewed"});

  // Store B: expires_at later, subscription_state expired.
  auto order = pending_order();
  order.state = validation_state::validated;
  order.purchase.kind = product_kind::subscription;
  order.purchase.expiry_time = 1692592000000;
  order.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
  auto order_before = purchase_order_json(order);
  order.purchase.expiry_time = 1695184000000;
  CHECK(changes(order_before, purchase_order_json(order), record_kind::store_b_purchase_order)
        == words{"renewed"});
  order.purchase.expiry_time = 1692592000000;
  order.purchase.subscription_state = "SUBSCRIPTION_STATE_EXPIRED";
  CHECK(changes(order_before, purchase_order_json(order), record_kind::store_b_purchase_order)
        == words{"expired"});
}

TEST_CASE("event types by name and by record kind", "[webhooks]") {
  for (auto t : {event_type::receipt_created, event_type::receipt_updated,
                 event_type::purchase_order_created, event_type::purchase_order_updated,
                 event_type::transaction_created, event_type::transaction_updated})
    CHECK(parse_event_type(to_string(t)) == t);
  CHECK(to_string(event_type::transaction_updated) == "transaction.updated");
  CHECK_FALSE(parse_event_type("receipt"));
  CHECK_FALSE(parse_event_type("Receipt.Created"));
  CHECK(event_for(record_kind::store_a_receipt, true) == event_type::receipt_created);
  CHECK(event_for(record_kind::store_a_receipt, false) == event_type::receipt_updated);
  CHECK(event_for(record_kind::store_b_purchase_order, true) == event_type::purchase_order_created);
  CHECK(event_for(record_kind::store_a_transaction, false) == event_type::transaction_updated);
}

TEST_CASE("event ids sort by time and do not repeat", "[webhooks]") {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i)
    ids.insert(make_event_id(now));
  CHECK(ids.size() == 100);
  CHECK(make_event_id(now) < make_event_id(now + 1));
  CHECK(make_event_id(now + 1).substr(0, 16) == "evt_018bcfe56801");
}

TEST_CASE("HMAC-SHA256 matches RFC 4231", "[webhooks]") {
  // Test case 2.
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?")
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 1: key 0x0b × 20, "Hi There".
  CHECK(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There")
        == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // Empty key and data (Python's hmac module).
  CHECK(hmac_sha256_hex("", "")
        == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

TEST_CASE("a delivery's headers, exactly", "[webhooks]") {
  // Digests computed independently (Python's hmac module).
  auto headers = delivery_headers("whsec_test", R"({"id":"evt_1"})", "evt_1", 1700000000);
  CHECK(headers
        == std::vector<std::string>{
          "Content-Type: application/json",
          "X-SHA256-Digest: 030fa3b2413d1993c551364bd53bb9b3edb5c0c34d55dba6ada6041245632811",
          "Receiptd-Signature: "
          "t=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925",
          "Receiptd-Event-Id: evt_1",
        });
  // Mbaasy's digest is the plain HMAC of the body.
  auto jefe = delivery_headers("Jefe", "what do ya want for nothing?", "evt_2", 1);
  CHECK(jefe[1]
        == "X-SHA256-Digest: 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("webhook secrets: whsec_ and 64 hex digits, each new", "[webhooks]") {
  auto a = make_webhook_secret();
  auto b = make_webhook_secret();
  CHECK(a.size() == 70);
  CHECK(a.rfind("whsec_", 0) == 0);
  CHECK(a.find_first_not_of("0123456789abcdef", 6) == std::string::npos);
  CHECK(a != b);
}

TEST_CASE("webhook URLs: https, http to loopback, nothing else unless allowed", "[webhooks]") {
  auto accepted = [](const std::string& url, bool allow_http = false) {
    auto r = check_webhook_url(url, allow_http);
    INFO(url << ": " << (r ? std::string("ok") : r.err().message()));
    CHECK(r.ok());
    if (r)
      CHECK(*r == url);
  };
  auto refused = [](const std::string& url, const std::string& code, bool allow_http = false) {
    auto r = check_webhook_url(url, allow_http);
    INFO(url);
    REQUIRE_FALSE(r.ok());
    CHECK(r.errors().front().field == "url");
    CHECK(r.errors().front().code == code);
  };
  accepted("https://hooks.example.com/receiptd");
  accepted("https://hooks.example.com:8443/a/b?x=1&y=%20");
  accepted("HTTPS://Hooks.Example.COM");
  accepted("https://[2001:db8::1]:443/hook");
  accepted("https://10.0.0.7/hook");
  accepted("http://127.0.0.1:9/x");
  accepted("http://127.1.2.3/x");
  accepted("http://localhost:8080/hook");
  accepted("http://[::1]:8080/hook");
  accepted("http://example.com/hook", true);

  refused("http://example.com/hook", "https_required");
  refused("http://10.0.0.7/hook", "https_required");
  refused("http://[2001:db8::1]/hook", "https_required");
  refused("http://localhost.example.com/", "https_required");

  refused("https://user:pass@example.com/hook", "invalid_url");
  refused("https://user@example.com/hook", "invalid_url");
  refused("http://user:pass@127.0.0.1/hook", "invalid_url", true);
  refused("https://example.com/hook#frag", "invalid_url");
  refused("", "invalid_url");
  refused("not a url", "invalid_url");
  refused("example.com/hook", "invalid_url");
  refused("ftp://example.com/hook", "invalid_url");
  refused("https://", "invalid_url");
  refused("https:///path", "invalid_url");
  refused("https://:443/path", "invalid_url");
  refused("https://exa mple.com/", "invalid_url");
  refused("https://example.com/a b", "invalid_url");
  refused("https://example..com/", "invalid_url");
  refused("https://exa%6dple.com/", "invalid_url");
  refused("https://example.com:0/", "invalid_url");
  refused("https://example.com:65536/", "invalid_url");
  refused("https://example.com:/", "invalid_url");
  refused("https://example.com:http/", "invalid_url");
  refused("https://[::1/", "invalid_url");
  refused("https://[not-v6]/", "invalid_url");
  refused("https://[::1]x/", "invalid_url");
  refused("https://ex\xc3\xa4mple.com/", "invalid_url");
  refused("https://example.com/" + std::string(2030, 'a'), "invalid_url");
  accepted("https://example.com/" + std::string(2028, 'a')); // 2048 bytes
}

TEST_CASE("event lists: names separated by commas, empty means every event", "[webhooks]") {
  auto all = parse_events("");
  REQUIRE(all);
  CHECK(all->empty());

  auto two = parse_events("receipt.created,transaction.updated");
  REQUIRE(two);
  CHECK(*two
        == std::vector<event_type>{event_type::receipt_created, event_type::transaction_updated});
  CHECK(events_text(*two) == "receipt.created,transaction.updated");
  CHECK(events_text({}) == "");

  auto repeated = parse_events("receipt.created,receipt.created");
  REQUIRE(repeated);
  CHECK(repeated->size() == 1);

  for (const char* bad :
       {"receipt.created,,receipt.updated", ",receipt.created", "receipt.created,",
        "receipt.deleted", "receipt.created, receipt.updated", "*"}) {
    auto r = parse_events(bad);
    INFO(bad);
    REQUIRE_FALSE(r);
    CHECK(r.errors().front().field == "events");
    CHECK(r.errors().front().code == "unknown_event");
  }

  webhook_endpoint every;
  CHECK(wants(every, event_type::purchase_order_updated));
  webhook_endpoint some;
  some.events = *two;
  CHECK(wants(some, event_type::receipt_created));
  CHECK(wants(some, event_type::transaction_updated));
  CHECK_FALSE(wants(some, event_type::receipt_updated));
}

TEST_CASE("delivery states by name", "[webhooks]") {
  for (auto s : {delivery_state::pending, delivery_state::delivered, delivery_state::dead})
    CHECK(parse_delivery_state(to_string(s)) == s);
  CHECK(to_string(delivery_state::dead) == "dead");
  CHECK_FALSE(parse_delivery_state("failed"));
}

TEST_CASE("settling a send: 2xx delivers, anything else backs off until dead", "[webhooks]") {
  retry_policy policy;
  policy.initial_ms = 1000;
  policy.max_ms = 60000;
  policy.multiplier = 2.0;
  policy.max_attempts = 3;

  webhook_delivery d;
  d.next_attempt_at = now;
  settle_delivery(d, 500, "", now, policy, 0.5);
  CHECK(d.state == delivery_state::pending);
  CHECK(d.attempts == 1);
  CHECK(d.next_attempt_at == now + backoff_delay_ms(policy, 0, 0.5));
  CHECK(d.next_attempt_at == now + 500); // the first retry: under the initial backoff
  CHECK(d.last_error == "HTTP 500");
  CHECK_FALSE(d.delivered_at);

  settle_delivery(d, 0, "connection refused", now + 1000, policy, 0.5);
  CHECK(d.state == delivery_state::pending);
  CHECK(d.attempts == 2);
  CHECK(d.next_attempt_at == now + 1000 + 1000); // cap 2000 × 0.5
  CHECK(d.last_error == "connection refused");

  settle_delivery(d, 503, "busy", now + 3000, policy, 0.5);
  CHECK(d.state == delivery_state::dead);
  CHECK(d.attempts == 3);
  CHECK(d.last_error == "HTTP 503: busy");
  CHECK_FALSE(d.delivered_at);

  webhook_delivery ok;
  ok.last_error = "HTTP 500";
  ok.attempts = 1;
  settle_delivery(ok, 204, "", now, policy, 0.5);
  CHECK(ok.state == delivery_state::delivered);
  CHECK(ok.attempts == 2);
  CHECK(ok.delivered_at == now);
  CHECK(ok.last_error.empty());

  webhook_delivery redirected;
  settle_delivery(redirected, 301, "", now, policy, 0.0);
  CHECK(redirected.state == delivery_state::pending);
  CHECK(redirected.last_error == "HTTP 301");
  CHECK(redirected.next_attempt_at == now);

  webhook_delivery silent;
  settle_delivery(silent, 0, "", now, policy, 0.0);
  CHECK(silent.last_error == "no answer");
}

TEST_CASE("changes: a voided Play purchase is refunded, once", "[webhooks][voided]") {
  auto order = pending_order();
  order.state = validation_state::validated;
  auto before = purchase_order_json(order);
  store_b::voided_purchase v;
  v.purchase_token = order.purchase_token;
  v.voided_time = now - 60000;
  v.voided_reason = 7;
  v.voided_source = 2;
  REQUIRE(store_b::apply_voided(order, v));
  auto after = purchase_order_json(order);
  auto e = record_event(before, after, record_kind::store_b_purchase_order, app_id, order.id, now);
  REQUIRE(e);
  auto body = parse_body(*e);
  CHECK(words_of(body) == words{"refunded"});
  CHECK(keys_of(body.at("new_attributes").as_object())
        == std::vector<std::string>{"in_app_purchase"});
  CHECK(body.at("new_attributes").at("in_app_purchase").at("voided_reason") == 7);
  CHECK(body.at("previous_attributes").at("in_app_purchase").at("voided_at").is_null());

  // The same entry read again: no change, no event.
  REQUIRE_FALSE(store_b::apply_voided(order, v));
  CHECK_FALSE(record_event(after, purchase_order_json(order), record_kind::store_b_purchase_order,
                           app_id, order.id, now));
  // A later voiding of a purchase already refunded: an event, but no new refund.
  v.voided_time = now;
  REQUIRE(store_b::apply_voided(order, v));
  CHECK(changes(after, purchase_order_json(order), record_kind::store_b_purchase_order).empty());
}

TEST_CASE("changes: receiptd acknowledging a Play purchase", "[webhooks][acknowledgement]") {
  auto order = pending_order();
  order.state = validation_state::validated;
  order.acknowledgement = acknowledgement_state::pending;
  auto before = purchase_order_json(order);
  store_b::apply_acknowledgement(order, store_b::classify_acknowledge_response(204, "", ""), now,
                                 false);
  auto after = purchase_order_json(order);
  auto e = record_event(before, after, record_kind::store_b_purchase_order, app_id, order.id, now);
  REQUIRE(e);
  auto body = parse_body(*e);
  CHECK(words_of(body) == words{"acknowledged"});
  CHECK(body.at("previous_attributes").at("acknowledgement_state") == "pending");
  CHECK(body.at("new_attributes").at("acknowledgement_state") == "acknowledged");
  CHECK(body.at("new_attributes").at("in_app_purchase").at("acknowledged") == true);

  // Receiptd's state alone (Play's flag not yet read) is enough for the word.
  auto flag_unread = purchase_order_json(order);
  flag_unread["in_app_purchase"].as_object()["acknowledged"] = false;
  CHECK(changes(before, flag_unread, record_kind::store_b_purchase_order) == words{"acknowledged"});

  // Giving up is an event without a word.
  order = pending_order();
  order.state = validation_state::validated;
  order.acknowledgement = acknowledgement_state::pending;
  before = purchase_order_json(order);
  store_b::apply_acknowledgement(order, {store_b::acknowledge_outcome::refused, "HTTP 400"}, now,
                                 false);
  e = record_event(before, purchase_order_json(order), record_kind::store_b_purchase_order, app_id,
                   order.id, now);
  REQUIRE(e);
  body = parse_body(*e);
  CHECK(words_of(body).empty());
  CHECK(body.at("new_attributes") == json::object{{"acknowledgement_state", "failed"}});
}

TEST_CASE("changes: a refresh that finds the subscription gone expires it", "[webhooks][refresh]") {
  auto order = pending_order();
  order.state = validation_state::validated;
  order.purchase.kind = product_kind::subscription;
  order.purchase.expiry_time = 1692592000000;
  order.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
  auto before = purchase_order_json(order);
  store_verdict gone;
  gone.outcome = store_outcome::rejected;
  gone.detail = "HTTP 404";
  REQUIRE(store_b::apply_refresh(order, gone, order.purchase));
  CHECK(changes(before, purchase_order_json(order), record_kind::store_b_purchase_order)
        == words{"expired"});
}

TEST_CASE("a claim's shares: one per endpoint in turn, none beyond its room", "[webhooks][claim]") {
  using shares = std::vector<int>;
  // Room for 4 each, 6 to give: the first two endpoints listed get a second one.
  CHECK(claim_shares({4, 4, 4, 4}, 6) == shares{2, 2, 1, 1});
  // An endpoint with no room (its places all held, e.g. it hangs) gets none, and
  // what it cannot take goes to the others.
  CHECK(claim_shares({0, 4, 1}, 6) == shares{0, 4, 1});
  CHECK(claim_shares({0, 4, 1}, 3) == shares{0, 2, 1});
  CHECK(claim_shares({2, 2}, 100) == shares{2, 2});
  CHECK(claim_shares({3, 3}, 0) == shares{0, 0});
  CHECK(claim_shares({}, 5).empty());
}

TEST_CASE("a receiver refuses a delivery signed too long ago: a replay", "[webhooks][replay]") {
  const std::string secret = "whsec_test", body = R"({"id":"evt_1"})";
  const std::int64_t sent = 1700000000;
  auto header = delivery_headers(secret, body, "evt_1", sent)[2].substr(20); // "t=…,v1=…"
  REQUIRE(header.starts_with("t=1700000000,v1="));
  auto check = [&](std::int64_t now, const std::string& h = {}) {
    return check_delivery_signature(secret, body, h.empty() ? header : h, now);
  };
  CHECK(check(sent) == signature_check::valid);
  CHECK(check(sent + 300) == signature_check::valid); // the window's edge
  CHECK(check(sent - 300) == signature_check::valid); // a receiver's clock behind ours
  CHECK(check(sent + 301) == signature_check::stale); // the same bytes, captured and sent later
  CHECK(check(sent + 86400) == signature_check::stale);
  CHECK(check(sent - 301) == signature_check::stale);
  // Mbaasy's digest of the same delivery still matches then: it cannot tell a replay.
  CHECK(delivery_headers(secret, body, "evt_1", sent + 86400)[1]
        == delivery_headers(secret, body, "evt_1", sent)[1]);
  // A t moved forward to pass the window no longer matches v1.
  auto moved = "t=" + std::to_string(sent + 86400) + header.substr(header.find(','));
  CHECK(check(sent + 86400, moved) == signature_check::mismatch);
  CHECK(check_delivery_signature("whsec_other", body, header, sent) == signature_check::mismatch);
  CHECK(check_delivery_signature(secret, body + " ", header, sent) == signature_check::mismatch);
  // Items in any order, spaces after commas, a second v1 (a rotated secret).
  auto v1 = header.substr(header.find("v1="));
  CHECK(check(sent, v1 + ", t=1700000000") == signature_check::valid);
  CHECK(check(sent, "t=1700000000,v1=00," + v1) == signature_check::valid);
  for (const std::string& bad :
       std::vector<std::string>{"v1=ab", "t=,v1=ab", "t=17e8,v1=ab", "t=-1,v1=ab", "t=1700000000",
                                "t=1,t=2," + v1, "t=1234567890123456789," + v1, "garbage"})
    CHECK(check(sent, bad) == signature_check::malformed);
}

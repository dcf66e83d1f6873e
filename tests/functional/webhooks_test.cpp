// Webhooks out through the real binary: endpoints added with
// receiptctl, events written with the change that causes them, delivered to the
// emulator's webhook receiver (PROTOCOL.md) with Mbaasy's digest and receiptd's
// replay-safe signature, retried while the endpoint fails, in order per record,
// and never lost to kill -9.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "harness.hpp"
#include "model/encoding.hpp"
#include "model/webhooks.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* transactions = "/client/store_a/transactions";
constexpr std::int64_t june_2024 = 1717243200000;
constexpr std::int64_t day = 86400000;

using endpoint = hook_endpoint;

// The deliveries the endpoint answered with a 2xx, once at least `n` have come
// (or 20 s have passed).
json::array wait_for(suite& s, const endpoint& e, std::size_t n) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  json::array ok;
  while (std::chrono::steady_clock::now() < deadline) {
    ok.clear();
    for (auto& d : received(s, e)) {
      auto status = d.at("status_answered").to_number<int>();
      if (status >= 200 && status < 300)
        ok.push_back(d);
    }
    if (ok.size() >= n)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return ok;
}

// A REFUND notification for transaction `id`, signed by the suite's trusted test chain.
int refund(suite& s, const test_app& app, const std::string& id) {
  test_support::transaction_fields t;
  t.transaction_id = t.original_transaction_id = id;
  t.bundle_id = app.bundle_id;
  t.product_id = app.bundle_id + ".monthly";
  t.purchase_date = t.original_purchase_date = june_2024;
  t.expires_date = june_2024 + 30 * day;
  t.revocation_date = june_2024 + 5 * day;
  t.revocation_reason = 0;
  t.signed_date = june_2024 + 5 * day;
  json::object payload{{"notificationType", "REFUND"},
                       {"notificationUUID", model::hex_encode(model::random_bytes(16))},
                       {"data",
                        json::object{{"bundleId", app.bundle_id},
                                     {"environment", "Sandbox"},
                                     {"signedTransactionInfo",
                                      test_support::make_storekit_jws(
                                        test_support::transaction_payload_json(t), s.jws_pki)}}},
                       {"version", "2.0"},
                       {"signedDate", june_2024 + 5 * day}};
  auto jws = test_support::make_storekit_jws(json::serialize(payload), s.jws_pki);
  auto r = s.service.post("/notifications/store_a/" + app.id,
                          json::serialize(json::object{{"signedPayload", jws}}), "");
  INFO(r.body);
  return r.status;
}

void check_signed(const json::value& d, const endpoint& e) {
  auto body = str(d.at("body"));
  auto event = json::parse(body);
  CHECK(delivery_header(d, "Content-Type").starts_with("application/json"));
  CHECK(delivery_header(d, "X-SHA256-Digest") == hmac_sha256_hex(e.secret, body));
  CHECK(delivery_header(d, "Receiptd-Event-Id") == str(event.at("id")));
  auto sig = delivery_header(d, "Receiptd-Signature");
  REQUIRE(sig.starts_with("t="));
  auto comma = sig.find(",v1=");
  REQUIRE(comma != std::string::npos);
  auto t = sig.substr(2, comma - 2);
  CHECK(sig.substr(comma + 4) == hmac_sha256_hex(e.secret, t + "." + body));
  auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  CHECK(std::abs(now_s - std::stoll(t)) < 120);
}

} // namespace

TEST_CASE("an upload and a refund notification each fire one signed webhook", "[webhooks]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("hooks"));
  auto e = add_endpoint(s, app);
  auto id = fresh_transaction_id();
  std::string jws;
  auto record = upload_confirmed_transaction(s, app, id, &jws);
  auto record_id = str(record.at("id"));

  auto got = wait_for(s, e, 1);
  REQUIRE(got.size() == 1);
  check_signed(got[0], e);
  auto created = json::parse(str(got[0].at("body")));
  CHECK(str(created.at("type")) == "transaction.created");
  CHECK(str(created.at("data").at("id")) == record_id);
  CHECK(str(created.at("data").at("transaction_id")) == id);
  CHECK(created.at("previous_attributes").is_null());
  CHECK(created.at("new_attributes").is_null());
  CHECK(created.at("created_at").at("ms").is_int64());

  REQUIRE(refund(s, app, id) == 200);
  got = wait_for(s, e, 2);
  REQUIRE(got.size() == 2);
  check_signed(got[1], e);
  auto updated = json::parse(str(got[1].at("body")));
  CHECK(str(updated.at("type")) == "transaction.updated");
  CHECK(str(updated.at("data").at("id")) == record_id);
  CHECK(updated.at("previous_attributes").at("revocation_date").is_null());
  CHECK(updated.at("new_attributes").at("revocation_date").at("ms") == june_2024 + 5 * day);
  CHECK_FALSE(updated.at("new_attributes").as_object().contains("updated_at"));
  bool refunded = false;
  for (auto& c : updated.at("changes").as_array())
    refunded = refunded || str(c) == "refunded";
  CHECK(refunded);
  CHECK(str(updated.at("id")) != str(created.at("id")));

  // Nothing more comes: one event per change, and a re-upload that changes nothing is none.
  auto again = s.service.post(transactions, transaction_body(jws), app.token);
  CHECK(again.status == 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  CHECK(wait_for(s, e, 3).size() == 2);

  auto listed = s.ctl({"webhook", "deliveries", app.id});
  INFO(listed.out << listed.err);
  REQUIRE(listed.code == 0);
  CHECK(listed.json.as_array().size() == 2);
}

TEST_CASE("a delivery replayed later is refused by the documented check, its retries are not",
          "[webhooks][replay]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("hooks-replay"));
  auto e = add_endpoint(s, app);
  // Two failed attempts, then the endpoint takes it: three sends of one event.
  s.emulator.control("POST", "/control/webhooks/" + e.name + "/mode",
                     json::object{{"status", 503}, {"times", 2}});
  upload_confirmed_transaction(s, app, fresh_transaction_id());
  REQUIRE(wait_for(s, e, 1).size() == 1);
  auto attempts = received(s, e);
  REQUIRE(attempts.size() == 3);
  for (auto& d : attempts) {
    auto body = str(d.at("body"));
    auto signature = delivery_header(d, "Receiptd-Signature");
    auto arrived_s = d.at("at_ms").to_number<std::int64_t>() / 1000;
    INFO(signature);
    // Each attempt is signed when it is sent: what the endpoint got passes then …
    CHECK(model::check_delivery_signature(e.secret, body, signature, arrived_s)
          == model::signature_check::valid);
    // … and the same bytes sent again past the tolerance are a replay.
    CHECK(model::check_delivery_signature(e.secret, body, signature,
                                          arrived_s + model::signature_tolerance_s + 2)
          == model::signature_check::stale);
    // Mbaasy's digest is the same on every attempt, and would be on a replay.
    CHECK(delivery_header(d, "X-SHA256-Digest") == hmac_sha256_hex(e.secret, body));
  }
}

TEST_CASE("an endpoint that only wants some events gets only those", "[webhooks]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("hooks-filter"));
  auto e = add_endpoint(s, app, "transaction.updated");
  auto id = fresh_transaction_id();
  upload_confirmed_transaction(s, app, id);
  REQUIRE(refund(s, app, id) == 200);
  auto got = wait_for(s, e, 1);
  REQUIRE(got.size() == 1);
  CHECK(str(json::parse(str(got[0].at("body"))).at("type")) == "transaction.updated");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(wait_for(s, e, 2).size() == 1);
}

TEST_CASE("an endpoint that fails for a while receives every event once it is back, in order",
          "[webhooks][resilience]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("hooks-down"));
  auto e = add_endpoint(s, app);
  // The first 4 deliveries get a 503, then the endpoint is back.
  s.emulator.control("POST", "/control/webhooks/" + e.name + "/mode",
                     json::object{{"status", 503}, {"times", 4}});
  std::vector<std::string> ids{fresh_transaction_id(), fresh_transaction_id()};
  for (auto& id : ids) {
    upload_confirmed_transaction(s, app, id);
    REQUIRE(refund(s, app, id) == 200);
  }
  auto got = wait_for(s, e, 4);
  REQUIRE(got.size() == 4);
  // Each record: created, then updated, never the other way round.
  for (auto& id : ids) {
    std::vector<std::string> types;
    for (auto& d : got) {
      auto event = json::parse(str(d.at("body")));
      if (str(event.at("data").at("transaction_id")) == id)
        types.push_back(str(event.at("type")));
    }
    REQUIRE(types.size() == 2);
    CHECK(types[0] == "transaction.created");
    CHECK(types[1] == "transaction.updated");
  }
  // The failures were real: 503s answered before the 2xx.
  int failed = 0;
  for (auto& d : received(s, e))
    failed += d.at("status_answered").to_number<int>() == 503;
  CHECK(failed == 4);
}

TEST_CASE("kill -9 while a delivery is in flight loses nothing", "[webhooks][resilience]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("hooks-kill"));
  auto e = add_endpoint(s, app);
  // The endpoint answers slowly: the delivery is still in flight when receiptd dies.
  s.emulator.control("POST", "/control/webhooks/" + e.name + "/mode",
                     json::object{{"status", 200}, {"delay_ms", 1500}, {"times", 1}});
  auto id = fresh_transaction_id();
  upload_confirmed_transaction(s, app, id);
  // Wait until the endpoint has the delivery in hand, then kill the sender and
  // start it again.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (received(s, e).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE_FALSE(received(s, e).empty());
  s.service.kill9();
  s.service.start();
  // Once the dead instance's lease has run out (webhooks.lease, 3 s here) the
  // event is claimed and sent again: at least once, with the same event id.
  auto got = wait_for(s, e, 2);
  REQUIRE(got.size() >= 2);
  auto first = json::parse(str(got[0].at("body")));
  auto again = json::parse(str(got[1].at("body")));
  CHECK(str(first.at("type")) == "transaction.created");
  CHECK(str(first.at("data").at("transaction_id")) == id);
  CHECK(again.at("id") == first.at("id"));
}

namespace {

// A Store B app whose every upload is a new purchase order (one
// purchase_order.created event each).
struct play_app {
  test_app app;
  std::string package;
};

play_app make_play_app(suite& s, const std::string& name) {
  auto package = unique_package(name);
  return {create_store_b_app(s, package, test_licence_key()), package};
}

void upload_order(suite& s, service_process& svc, const play_app& p) {
  auto token = unique("tok");
  register_purchase(s, p.package, "gold", token);
  auto data = purchase_data_json(p.package, "gold", token);
  auto r = svc.post("/client/store_b/purchase_orders", store_b_body(data, sign_purchase(data)),
                    p.app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
}

// The receiver's endpoint answers nothing (each delivery waits for receiptd's
// webhooks.timeout) until the case ends; then it and its endpoint are gone.
struct hanging_endpoint {
  suite& s;
  endpoint e;
  hanging_endpoint(suite& s, const test_app& app) : s(s), e(add_endpoint(s, app)) {
    s.emulator.control("POST", "/control/webhooks/" + e.name + "/mode",
                       json::object{{"hang", true}});
  }
  ~hanging_endpoint() {
    s.ctl({"webhook", "remove", e.id});
    s.emulator.control("DELETE", "/control/webhooks/" + e.name);
  }
};

} // namespace

TEST_CASE("an endpoint that hangs delays no other app's events", "[webhooks][fairness]") {
  auto& s = the_suite();
  auto slow = make_play_app(s, "hooks-hang");
  auto quick = make_play_app(s, "hooks-quick");
  hanging_endpoint hang(s, slow.app);
  auto healthy = add_endpoint(s, quick.app);
  // A second instance on the same database shares the deliveries: leases keep
  // each delivery with one of them at a time.
  std::unique_ptr<service_process> second;
  SECTION("one instance") {}
  SECTION("two instances on one database") {
    second = std::make_unique<service_process>(make_temp_dir("receiptd-hooks-second"), s.db_url,
                                               standard_service_args(s));
    second->start();
  }
  // More events for the hanging endpoint than webhooks.batch (100): each of them
  // held by an instance would leave no room for anyone else's.
  for (int i = 0; i < 130; ++i)
    upload_order(s, s.service, slow);
  // The hanging endpoint has deliveries in hand (each waits webhooks.timeout, 2 s).
  REQUIRE(eventually([&] { return received(s, hang.e).size() >= 4; }));

  auto sent = std::chrono::steady_clock::now();
  upload_order(s, second ? *second : s.service, quick);
  auto got = wait_for(s, healthy, 1);
  auto took = std::chrono::steady_clock::now() - sent;
  REQUIRE(got.size() == 1);
  CHECK(str(json::parse(str(got[0].at("body"))).at("type")) == "purchase_order.created");
  // Claimed within a poll interval (100 ms here) or two, not after the hanging
  // endpoint's backlog.
  CHECK(took < std::chrono::seconds(3));
  // The hanging endpoint still hangs: nothing of it was delivered meanwhile.
  for (auto& d : received(s, hang.e))
    CHECK(d.at("status_answered").is_null());
  if (second)
    CHECK(second->stop() == 0);
}

// The validator's jobs on records that are not pending, claimed by
// the retry scheduler: Play acknowledgements and subscription refreshes.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "actors/retry_scheduler.hpp"
#include "actors/store_a_client.hpp"
#include "actors/validator_steps.hpp"
#include "fixture.hpp"
#include "model/store_a/trust.hpp"
#include "model/store_b/acknowledgement.hpp"
#include "tests/support/crypto/test_ca.hpp"
#include "tests/support/crypto/test_jws.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

constexpr model::unix_ms day = 86'400'000;

struct upkeep_job_bench : actor_fixture {
  std::shared_ptr<persistence_log> log = std::make_shared<persistence_log>();
  validator_deps_ptr deps;
  store_b_client_actor store;
  config::retry_settings settings;

  explicit upkeep_job_bench(std::optional<model::store_verdict> answer) {
    store = keep(sys->spawn(fake_store_b, answer, &clock));
    auto d = std::make_shared<validator_deps>();
    d->persistence = keep(sys->spawn(fake_persistence, log));
    d->store_b = store;
    d->settings.store_deadline = std::chrono::seconds(5);
    d->settings.retry = {.initial_ms = 1000, .max_ms = 8000, .multiplier = 2.0, .max_attempts = 4};
    d->clock = &clock;
    d->random = &random;
    deps = d;
    settings.poll_interval = std::chrono::seconds(1);
    settings.batch = 10;
  }

  store_b_fake_state& store_state() {
    auto* ptr = caf::actor_cast<caf::abstract_actor*>(store);
    auto* fake = dynamic_cast<store_b_client_actor::stateful_base<store_b_fake_state>*>(ptr);
    REQUIRE(fake != nullptr);
    return fake->state;
  }

  // A validated Play purchase order of app-1, as the claim reads it.
  model::purchase_order_record validated(model::product_kind kind) const {
    model::purchase_order_record r;
    r.id = "po-1";
    r.app_id = "app-1";
    r.is_legacy = false;
    r.package_name = "com.example";
    r.purchase_token = "tok";
    r.purchase.product_id = "gold";
    r.purchase.kind = kind;
    r.purchase.purchase_state = model::purchase_state::purchased;
    r.purchase.purchase_time = clock.now_ms() - day; // two days before Google's deadline
    r.state = model::validation_state::validated;
    r.created_at = clock.now_ms() - day;
    r.updated_at = r.created_at;
    return r;
  }

  void add_job(model::purchase_order_record r, int attempts) {
    claimed_job c;
    c.job.id = "job-1";
    c.job.record_id = r.id;
    c.job.app_id = r.app_id;
    c.job.attempts = attempts;
    c.job.version = 7;
    c.record = std::move(r);
    model::app a;
    a.id = "app-1";
    a.package_name = "com.example";
    a.acknowledge_purchases = true;
    c.app = a;
    log->to_claim.push_back(c);
  }

  // A validated product whose acknowledgement is pending: the job acknowledges it.
  void add_acknowledgement_job(int attempts) {
    auto r = validated(model::product_kind::product);
    r.purchase.acknowledged = false;
    r.acknowledgement = model::acknowledgement_state::pending;
    add_job(std::move(r), attempts);
  }

  void start() { keep(spawn_retry_scheduler(*sys, settings, {}, "test", deps)); }
};

} // namespace

TEST_CASE("an acknowledgement job acknowledges the purchase and completes",
          "[actors][upkeep][validator]") {
  upkeep_job_bench b(std::nullopt); // a check would never be answered
  b.add_acknowledgement_job(2);
  b.start();
  b.run();
  CHECK(b.store_state().acknowledgements == 1);
  CHECK(b.store_state().checks == 0);
  CHECK(b.log->rescheduled.empty());
  REQUIRE(b.log->completed.size() == 1);
  const auto& [job, r] = b.log->completed[0];
  CHECK(job.id == "job-1");
  CHECK(job.version == 7); // fenced by the claim
  CHECK(r.id == "po-1");
  CHECK(r.acknowledgement == model::acknowledgement_state::acknowledged);
  CHECK(r.purchase.acknowledged == true);
  CHECK(r.state == model::validation_state::validated);
  CHECK_FALSE(r.is_fraud());
  CHECK(r.store_detail.find("HTTP 204") != std::string::npos);
  CHECK(r.updated_at == b.clock.now_ms());
  CHECK_FALSE(model::needs_job(r)); // the database removes the job
}

TEST_CASE("an acknowledgement Play asks to retry is rescheduled with backoff",
          "[actors][upkeep][validator]") {
  upkeep_job_bench b(std::nullopt);
  b.store_state().acknowledged = {model::store_b::acknowledge_outcome::retry, "HTTP 503"};
  b.random.set(0.5);
  b.add_acknowledgement_job(1);
  b.start();
  b.run();
  CHECK(b.store_state().acknowledgements == 1);
  CHECK(b.log->completed.empty());
  REQUIRE(b.log->rescheduled.size() == 1);
  const auto& job = b.log->rescheduled[0];
  CHECK(job.id == "job-1");
  CHECK(job.version == 7);
  CHECK(job.attempts == 2);
  CHECK(job.last_error == "HTTP 503");
  // Attempt 2 draws its delay from [0, 1000·2² = 4000) ms: a draw of 0.5 is 2000 ms.
  CHECK(job.next_attempt_at == manual_time::start_ms + 2000);
}

TEST_CASE("an acknowledgement Play refuses, or one past Google's deadline, completes as failed",
          "[actors][upkeep][validator]") {
  upkeep_job_bench b(std::nullopt);
  SECTION("refused") {
    b.store_state().acknowledged
      = {model::store_b::acknowledge_outcome::refused, "HTTP 400: productNotOwnedByUser"};
    b.add_acknowledgement_job(0);
  }
  SECTION("to retry, but the three days are over") {
    b.store_state().acknowledged = {model::store_b::acknowledge_outcome::retry, "HTTP 503"};
    auto r = b.validated(model::product_kind::product);
    r.purchase.acknowledged = false;
    r.acknowledgement = model::acknowledgement_state::pending;
    r.purchase.purchase_time = b.clock.now_ms() - model::store_b::acknowledgement_window_ms - 1;
    b.add_job(std::move(r), 3);
  }
  b.start();
  b.run();
  CHECK(b.store_state().acknowledgements == 1);
  CHECK(b.log->rescheduled.empty());
  REQUIRE(b.log->completed.size() == 1);
  const auto& r = b.log->completed[0].second;
  CHECK(r.acknowledgement == model::acknowledgement_state::failed);
  CHECK(r.purchase.acknowledged == false);
  CHECK(r.state == model::validation_state::validated); // still a genuine purchase
  CHECK_FALSE(r.is_fraud());
  CHECK_FALSE(model::needs_job(r));
}

TEST_CASE("a refresh job asks Play again and never downgrades the subscription",
          "[actors][upkeep][validator]") {
  auto lapsed = [](const upkeep_job_bench& b) {
    auto r = b.validated(model::product_kind::subscription);
    r.purchase.acknowledged = true;
    r.purchase.auto_renewing = true;
    r.purchase.expiry_time = b.clock.now_ms() - 1000;
    r.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
    return r;
  };
  SECTION("Play no longer knows the token: expired, not fraud") {
    upkeep_job_bench b(verdict(model::store_outcome::rejected, "HTTP 410"));
    b.add_job(lapsed(b), 0);
    b.start();
    b.run();
    CHECK(b.store_state().checks == 1);
    CHECK(b.store_state().acknowledgements == 0);
    CHECK(b.log->rescheduled.empty());
    REQUIRE(b.log->completed.size() == 1);
    const auto& [job, r] = b.log->completed[0];
    CHECK(job.version == 7);
    CHECK(r.state == model::validation_state::validated);
    CHECK_FALSE(r.is_fraud());
    CHECK(r.fraud == model::fraud_reason::none);
    CHECK(r.purchase.subscription_state == "SUBSCRIPTION_STATE_EXPIRED");
    CHECK(r.purchase.purchase_state == model::purchase_state::cancelled);
    CHECK(r.store_detail == "HTTP 410");
    CHECK(r.updated_at == b.clock.now_ms());
  }
  SECTION("Play unreachable: rescheduled, the record untouched") {
    upkeep_job_bench b(verdict(model::store_outcome::unreachable, "HTTP 503"));
    b.add_job(lapsed(b), 1);
    b.start();
    b.run();
    CHECK(b.store_state().checks == 1);
    CHECK(b.log->completed.empty());
    REQUIRE(b.log->rescheduled.size() == 1);
    CHECK(b.log->rescheduled[0].attempts == 2);
    CHECK(b.log->rescheduled[0].last_error == "HTTP 503");
  }
}

// ---- StoreKit 2 subscription refresh -----------------------------------

namespace {

const std::string bundle = "com.example.receiptd";
const std::string subscription = "2000000000000001";

const test_support::test_pki& apple_pki() {
  static const auto pki = test_support::make_jws_pki("receiptd refresh job test");
  return pki;
}

// The validator's real Store A client, against a transport the test answers,
// and Apple's (test) chain as the trust anchors.
struct transaction_refresh_bench : upkeep_job_bench {
  fake_transport transport;
  store_a_client_actor client;

  transaction_refresh_bench() : upkeep_job_bench(std::nullopt) {
    config::store_a_settings s;
    s.server_api_url = "https://api.example.test";
    s.server_api_sandbox_url = "https://sandbox-api.example.test";
    client = keep(spawn_store_a_client(*sys, s, transport, tracer::off(), clock));
    auto anchors = model::store_a::load_trust_anchors({{apple_pki().root.pem()}, {}, {}});
    REQUIRE(anchors);
    auto d = std::make_shared<validator_deps>(*deps);
    d->store_a = client;
    d->trust = *anchors;
    deps = d;
  }

  // A validated sandbox subscription transaction whose month ended a day ago.
  void add_transaction_job(int attempts) {
    model::transaction_record r;
    r.id = "tx-1";
    r.app_id = "app-1";
    r.env = model::environment::sandbox;
    r.state = model::validation_state::validated;
    auto& t = r.transaction;
    t.transaction_id = t.original_transaction_id = subscription;
    t.bundle_id = bundle;
    t.product_id = bundle + ".monthly";
    t.type = "Auto-Renewable Subscription";
    t.purchase_date = clock.now_ms() - 31 * day;
    t.expires_date = clock.now_ms() - day;
    claimed_job c;
    c.job.id = "job-1";
    c.job.kind = model::record_kind::store_a_transaction;
    c.job.record_id = r.id;
    c.job.app_id = r.app_id;
    c.job.attempts = attempts;
    c.job.version = 3;
    c.record = std::move(r);
    model::app a;
    a.id = "app-1";
    a.bundle_id = bundle;
    a.app_store_issuer_id = "57246542-96fe-1a63-e053-0824d011072a";
    a.app_store_key_id = "2X9R4HXF34";
    test_support::cert_options o;
    o.key_algorithm = "EC";
    a.app_store_private_key = test_support::make_cert(o).key_pem();
    c.app = a;
    log->to_claim.push_back(c);
  }

  // Apple's StatusResponse naming the renewal (status `status`), signed by `pki`.
  std::string statuses(int status, const test_support::test_pki& pki) const {
    test_support::transaction_fields f;
    f.transaction_id = "2000000000000077";
    f.original_transaction_id = subscription;
    f.bundle_id = bundle;
    f.product_id = bundle + ".monthly";
    f.purchase_date = clock.now_ms() - day;
    f.original_purchase_date = clock.now_ms() - 31 * day;
    f.expires_date = clock.now_ms() + 29 * day;
    f.signed_date = clock.now_ms();
    f.environment = "Sandbox";
    auto info = test_support::make_storekit_jws(test_support::transaction_payload_json(f), pki);
    return boost::json::serialize(boost::json::object{
      {"environment", "Sandbox"},
      {"data",
       boost::json::array{boost::json::object{
         {"subscriptionGroupIdentifier", "21000000"},
         {"lastTransactions",
          boost::json::array{boost::json::object{{"originalTransactionId", subscription},
                                                 {"status", status},
                                                 {"signedTransactionInfo", info}}}}}}}});
  }
};

} // namespace

TEST_CASE("a StoreKit 2 refresh job asks Get All Subscription Statuses and completes with the "
          "subscription as Apple says",
          "[actors][upkeep][validator][refresh]") {
  transaction_refresh_bench b;
  b.add_transaction_job(0);
  b.start();
  b.run();
  REQUIRE(b.transport.size() == 1);
  CHECK(b.transport[0].url
        == "https://sandbox-api.example.test/inApps/v1/subscriptions/" + subscription);
  b.transport.answer(0, 200, b.statuses(1, apple_pki()));
  b.run();
  CHECK(b.log->rescheduled.empty());
  REQUIRE(b.log->completed_transactions.size() == 1);
  const auto& [job, r] = b.log->completed_transactions[0];
  CHECK(job.version == 3);
  CHECK(r.transaction.subscription_status == "active");
  CHECK(r.transaction.subscription_expires_date == b.clock.now_ms() + 29 * day);
  CHECK(r.transaction.expires_date == b.clock.now_ms() - day);
  CHECK(r.state == model::validation_state::validated);
  CHECK_FALSE(r.is_fraud());
}

TEST_CASE("a StoreKit 2 refresh Apple cannot answer usably is rescheduled, then given up",
          "[actors][upkeep][validator][refresh]") {
  transaction_refresh_bench b;
  SECTION("503: rescheduled with backoff") {
    b.add_transaction_job(0);
    b.start();
    b.run();
    REQUIRE(b.transport.size() == 1);
    b.transport.answer(0, 503, R"({"errorCode":5000000,"errorMessage":"x"})");
    b.run();
    CHECK(b.log->completed_transactions.empty());
    REQUIRE(b.log->rescheduled.size() == 1);
    CHECK(b.log->rescheduled[0].attempts == 1);
    CHECK(b.log->rescheduled[0].last_error.find("503") != std::string::npos);
  }
  SECTION("an answer under another chain is unusable: rescheduled, nothing applied") {
    b.add_transaction_job(0);
    b.start();
    b.run();
    REQUIRE(b.transport.size() == 1);
    b.transport.answer(0, 200,
                       b.statuses(1, test_support::make_jws_pki("receiptd refresh stranger")));
    b.run();
    CHECK(b.log->completed_transactions.empty());
    REQUIRE(b.log->rescheduled.size() == 1);
    CHECK(b.log->rescheduled[0].last_error.find("does not verify") != std::string::npos);
  }
  SECTION("the last attempt: completed as it was, for the next sweep") {
    b.add_transaction_job(3); // max_attempts 4
    b.start();
    b.run();
    REQUIRE(b.transport.size() == 1);
    b.transport.answer(0, 503, "");
    b.run();
    CHECK(b.log->rescheduled.empty());
    REQUIRE(b.log->completed_transactions.size() == 1);
    const auto& r = b.log->completed_transactions[0].second;
    CHECK_FALSE(r.transaction.subscription_status);
    CHECK(r.state == model::validation_state::validated);
  }
}

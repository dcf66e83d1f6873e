// The Store A client's App Store Server API check on the deterministic
// scheduler, against a transport the test answers: Get Transaction Info at the
// transaction's host, the ES256 JWT (claims, cached per app and key, renewed 5
// minutes before its 30-minute expiry, dropped after a 401), the one flip on
// 404 TransactionIdNotFound, and the answers that never reach Apple (no key, a
// deadline passed).
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>

#include <memory>
#include <string>
#include <vector>

#include "actors/app_context.hpp"
#include "actors/store_a_client.hpp"
#include "fixture.hpp"
#include "model/encoding.hpp"
#include "tests/support/crypto/test_ca.hpp"
#include "tests/support/crypto/test_jws.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* api_url = "https://api.example.test";
constexpr const char* sandbox_api_url = "https://sandbox-api.example.test/"; // '/' dropped
constexpr const char* transaction_id = "2000000000000042";
const std::string production_call
  = "https://api.example.test/inApps/v1/transactions/2000000000000042";
const std::string sandbox_call
  = "https://sandbox-api.example.test/inApps/v1/transactions/2000000000000042";
constexpr const char* issuer = "57246542-96fe-1a63-e053-0824d011072a";
constexpr const char* not_found
  = R"({"errorCode":4040010,"errorMessage":"Transaction id not found."})";
constexpr const char* info_answer = R"({"signedTransactionInfo":"x"})";

// An App Store Connect in-app purchase key (EC P-256, PKCS#8 PEM like a .p8).
const test_support::test_cert& api_key(int which = 0) {
  static const auto keys = [] {
    std::vector<test_support::test_cert> out;
    test_support::cert_options o;
    o.key_algorithm = "EC";
    for (int i = 0; i < 2; ++i)
      out.push_back(test_support::make_cert(o));
    return out;
  }();
  return keys.at(which);
}

model::app app_with_key(std::string id, std::string bundle_id, std::string key_id = "2X9R4HXF34",
                        int key = 0) {
  model::app a;
  a.id = std::move(id);
  a.bundle_id = std::move(bundle_id);
  a.app_store_issuer_id = issuer;
  a.app_store_key_id = std::move(key_id);
  a.app_store_private_key = api_key(key).key_pem();
  return a;
}

// ES256 (raw r ‖ s) over "<header>.<claims>" with `key`'s public half.
bool signed_by(const std::string& jwt, EVP_PKEY* key) {
  auto parts = test_support::split_compact(jwt);
  return parts.size() == 3
    && test_support::es256_verifies(parts[0] + "." + parts[1],
                                    test_support::base64url_decode(parts[2]), key);
}

struct server_api_bench : actor_fixture {
  fake_transport transport;
  config::store_a_settings settings;
  store_a_client_actor client;
  app_context_ptr app;

  server_api_bench() {
    settings.server_api_url = api_url;
    settings.server_api_sandbox_url = sandbox_api_url;
    app = make_app_context(app_with_key("app-1", "com.example.receiptd"));
    REQUIRE(app->server_api_key);
  }

  void start() {
    client = keep(spawn_store_a_client(*sys, settings, transport, tracer::off(), clock));
  }

  auto check(bool sandbox_first = false, store_deadline deadline = std::nullopt,
             app_context_ptr for_app = nullptr) {
    store_a_transaction_check c;
    c.trace = {"t1", 0};
    c.app = for_app ? for_app : app;
    c.transaction_id = transaction_id;
    c.sandbox_first = sandbox_first;
    c.deadline = deadline;
    auto answer = ask<store_a_transaction_answer>(client, std::move(c));
    run();
    return answer;
  }

  void answer(std::size_t i, int status, const std::string& body) {
    transport.answer(i, status, body);
    run();
  }

  // The bearer token of call i (fails the test when there is none).
  std::string jwt(std::size_t i) const {
    const std::string prefix = "Authorization: Bearer ";
    for (const auto& h : transport[i].headers)
      if (h.rfind(prefix, 0) == 0)
        return h.substr(prefix.size());
    FAIL("call " << i << " has no bearer token");
    return {};
  }

  json::value claims(std::size_t i) const {
    return json::parse(test_support::base64url_decode(test_support::split_compact(jwt(i))[1]));
  }

  // The clock's now as a JWT's iat: whole seconds.
  std::int64_t iat_now() const { return clock.now_ms() / 1000; }
};

using answer_slot = std::shared_ptr<std::optional<store_a_transaction_answer>>;

model::store_outcome outcome_of(const answer_slot& a) {
  REQUIRE(a->has_value());
  return (*a)->verdict.outcome;
}

} // namespace

TEST_CASE("Get Transaction Info at production, with a JWT that says who asks",
          "[actors][server_api]") {
  server_api_bench b;
  b.clock.advance(std::chrono::milliseconds(1234)); // iat is whole seconds
  b.start();
  auto answer = b.check(false);
  REQUIRE(b.transport.size() == 1);
  CHECK(b.transport[0].method == "GET");
  CHECK(b.transport[0].url == production_call);
  CHECK(b.transport[0].body.empty());
  CHECK(has_header(b.transport[0], "Accept: application/json"));

  const auto jwt = b.jwt(0);
  auto parts = test_support::split_compact(jwt);
  REQUIRE(parts.size() == 3);
  auto header = json::parse(test_support::base64url_decode(parts[0]));
  CHECK(header.at("alg") == "ES256");
  CHECK(header.at("kid") == "2X9R4HXF34");
  CHECK(header.at("typ") == "JWT");
  auto claims = json::parse(test_support::base64url_decode(parts[1]));
  CHECK(claims.at("iss") == issuer);
  CHECK(claims.at("aud") == "appstoreconnect-v1");
  CHECK(claims.at("bid") == "com.example.receiptd");
  CHECK(claims.at("iat") == manual_time::start_ms / 1000 + 1);
  CHECK(claims.at("iat") == b.iat_now());
  CHECK(claims.at("exp") == b.iat_now() + 1800);
  CHECK(signed_by(jwt, api_key(0).key()));
  CHECK_FALSE(signed_by(jwt, api_key(1).key()));

  CHECK_FALSE(answer->has_value());
  b.answer(0, 200, info_answer);
  REQUIRE(outcome_of(answer) == model::store_outcome::confirmed);
  CHECK((*answer)->signed_transaction_info == "x");
  CHECK((*answer)->verdict.env == model::environment::production);
  CHECK_FALSE((*answer)->verdict.operator_problem);
  CHECK(b.transport.size() == 1);
}

TEST_CASE("a sandbox transaction is asked at the sandbox host; the env is that host's",
          "[actors][server_api]") {
  server_api_bench b;
  b.start();
  auto answer = b.check(true);
  REQUIRE(b.transport.size() == 1);
  CHECK(b.transport[0].url == sandbox_call);
  b.answer(0, 200, info_answer);
  REQUIRE(outcome_of(answer) == model::store_outcome::confirmed);
  CHECK((*answer)->verdict.env == model::environment::sandbox);
  CHECK((*answer)->signed_transaction_info == "x");
}

TEST_CASE("the JWT is reused, and made afresh 5 minutes before its 30 minutes end",
          "[actors][server_api]") {
  server_api_bench b;
  b.start();
  auto first = b.check();
  b.answer(0, 200, info_answer);
  CHECK(outcome_of(first) == model::store_outcome::confirmed);
  const auto made_at = b.iat_now();

  b.clock.advance(std::chrono::minutes(10));
  auto second = b.check();
  REQUIRE(b.transport.size() == 2);
  // ECDSA draws a fresh nonce: an equal string is the cached token itself.
  CHECK(b.jwt(1) == b.jwt(0));
  b.answer(1, 200, info_answer);
  CHECK(outcome_of(second) == model::store_outcome::confirmed);

  b.clock.advance(std::chrono::minutes(15) - std::chrono::milliseconds(1)); // 24:59.999
  auto third = b.check();
  REQUIRE(b.transport.size() == 3);
  CHECK(b.jwt(2) == b.jwt(0));
  b.answer(2, 200, info_answer);
  CHECK(outcome_of(third) == model::store_outcome::confirmed);

  b.clock.advance(std::chrono::milliseconds(1)); // 25:00: 5 minutes before exp
  auto fourth = b.check();
  REQUIRE(b.transport.size() == 4);
  CHECK(b.jwt(3) != b.jwt(0));
  CHECK(b.claims(3).at("iat") == made_at + 25 * 60);
  CHECK(b.claims(3).at("exp") == made_at + 25 * 60 + 1800);
  CHECK(signed_by(b.jwt(3), api_key(0).key()));
  b.answer(3, 200, info_answer);
  CHECK(outcome_of(fourth) == model::store_outcome::confirmed);

  auto fifth = b.check(); // the new one is cached in turn
  REQUIRE(b.transport.size() == 5);
  CHECK(b.jwt(4) == b.jwt(3));
  b.answer(4, 200, info_answer);
  CHECK(outcome_of(fifth) == model::store_outcome::confirmed);
}

TEST_CASE("JWTs are cached per app and per key", "[actors][server_api]") {
  server_api_bench b;
  b.start();
  auto other_app = make_app_context(app_with_key("app-2", "com.example.other"));
  auto rotated = make_app_context(app_with_key("app-1", "com.example.receiptd", "NEWKEY0001", 1));
  REQUIRE(other_app->server_api_key);
  REQUIRE(rotated->server_api_key);

  b.check();
  b.check(false, std::nullopt, other_app);
  b.check(false, std::nullopt, rotated);
  b.check(); // the first app's own, still cached
  REQUIRE(b.transport.size() == 4);
  CHECK(b.claims(1).at("bid") == "com.example.other");
  CHECK(b.jwt(1) != b.jwt(0));
  CHECK(
    json::parse(test_support::base64url_decode(test_support::split_compact(b.jwt(2))[0])).at("kid")
    == "NEWKEY0001");
  CHECK(signed_by(b.jwt(2), api_key(1).key()));
  CHECK(b.jwt(3) == b.jwt(0));
  for (std::size_t i = 0; i < 4; ++i)
    b.answer(i, 200, info_answer);
}

TEST_CASE("404 TransactionIdNotFound: asked once at the other host, then rejected",
          "[actors][server_api]") {
  server_api_bench b;
  b.start();
  SECTION("production first, unknown at both") {
    auto answer = b.check(false);
    b.answer(0, 404, not_found);
    CHECK_FALSE(answer->has_value());
    REQUIRE(b.transport.size() == 2);
    CHECK(b.transport[1].url == sandbox_call);
    CHECK(b.jwt(1) == b.jwt(0));
    b.answer(1, 404, not_found);
    REQUIRE(outcome_of(answer) == model::store_outcome::rejected);
    CHECK((*answer)->verdict.detail.find("4040010") != std::string::npos);
    CHECK((*answer)->signed_transaction_info.empty());
    CHECK(b.transport.size() == 2); // no third call
  }
  SECTION("sandbox first, found at production: confirmed there") {
    auto answer = b.check(true);
    REQUIRE(b.transport.size() == 1);
    CHECK(b.transport[0].url == sandbox_call);
    b.answer(0, 404, not_found);
    REQUIRE(b.transport.size() == 2);
    CHECK(b.transport[1].url == production_call);
    b.answer(1, 200, info_answer);
    REQUIRE(outcome_of(answer) == model::store_outcome::confirmed);
    CHECK((*answer)->verdict.env == model::environment::production);
    CHECK((*answer)->signed_transaction_info == "x");
  }
  SECTION("unknown, then the other host fails: unreachable, not rejected") {
    auto answer = b.check(false);
    b.answer(0, 404, not_found);
    REQUIRE(b.transport.size() == 2);
    b.answer(1, 503, "");
    CHECK(outcome_of(answer) == model::store_outcome::unreachable);
    CHECK(b.transport.size() == 2);
  }
}

TEST_CASE("a 404 that is not TransactionIdNotFound is unreachable, without a flip",
          "[actors][server_api]") {
  server_api_bench b;
  b.start();
  for (const char* body : {R"({"errorCode":4040001,"errorMessage":"Account not found."})",
                           "<html>Not Found</html>", ""}) {
    INFO(body);
    auto before = b.transport.size();
    auto answer = b.check(false);
    REQUIRE(b.transport.size() == before + 1);
    b.answer(before, 404, body);
    CHECK(outcome_of(answer) == model::store_outcome::unreachable);
    CHECK_FALSE((*answer)->verdict.operator_problem);
    CHECK(b.transport.size() == before + 1);
  }
}

TEST_CASE("401: an operator problem, and the next check makes a new JWT", "[actors][server_api]") {
  server_api_bench b;
  b.start();
  auto answer = b.check();
  const auto refused = b.jwt(0);
  b.answer(0, 401, "");
  REQUIRE(outcome_of(answer) == model::store_outcome::unreachable);
  CHECK((*answer)->verdict.operator_problem);
  CHECK(b.transport.size() == 1); // not retried within the check

  auto next = b.check(); // same instant: only the dropped cache explains a new token
  REQUIRE(b.transport.size() == 2);
  CHECK(b.jwt(1) != refused);
  CHECK(b.claims(1).at("iat") == b.iat_now());
  CHECK(signed_by(b.jwt(1), api_key(0).key()));
  b.answer(1, 200, info_answer);
  CHECK(outcome_of(next) == model::store_outcome::confirmed);

  auto third = b.check(); // and that one is cached again
  REQUIRE(b.transport.size() == 3);
  CHECK(b.jwt(2) == b.jwt(1));
  b.answer(2, 200, info_answer);
  CHECK(outcome_of(third) == model::store_outcome::confirmed);
}

TEST_CASE("an answer other than 401 keeps the JWT", "[actors][server_api]") {
  server_api_bench b;
  b.start();
  auto first = b.check();
  b.answer(0, 500, R"({"errorCode":5000000})");
  CHECK(outcome_of(first) == model::store_outcome::unreachable);
  CHECK_FALSE((*first)->verdict.operator_problem);
  auto second = b.check();
  REQUIRE(b.transport.size() == 2);
  CHECK(b.jwt(1) == b.jwt(0));
  b.answer(1, 200, info_answer);
  CHECK(outcome_of(second) == model::store_outcome::confirmed);
}

TEST_CASE("an app without a usable key: operator problem, no HTTP call", "[actors][server_api]") {
  server_api_bench b;
  b.start();
  SECTION("no credentials") {
    model::app a;
    a.id = "app-9";
    a.bundle_id = "com.example.receiptd";
    auto answer = b.check(false, std::nullopt, make_app_context(a));
    REQUIRE(outcome_of(answer) == model::store_outcome::unreachable);
    CHECK((*answer)->verdict.operator_problem);
    CHECK((*answer)->verdict.detail.find("app-9") != std::string::npos);
    CHECK((*answer)->signed_transaction_info.empty());
  }
  SECTION("credentials that do not parse: the detail says why") {
    auto a = app_with_key("app-9", "com.example.receiptd");
    a.app_store_private_key = "not a key";
    auto ctx = make_app_context(a);
    REQUIRE_FALSE(ctx->server_api_key);
    auto answer = b.check(true, std::nullopt, ctx);
    REQUIRE(outcome_of(answer) == model::store_outcome::unreachable);
    CHECK((*answer)->verdict.operator_problem);
    CHECK((*answer)->verdict.detail.find("app_store_private_key") != std::string::npos);
  }
  CHECK(b.transport.size() == 0);
}

TEST_CASE("a deadline passed before the call could go: unreachable, never sent",
          "[actors][server_api]") {
  server_api_bench b;
  b.settings.max_concurrent = 1;
  b.start();
  SECTION("waiting for the only slot") {
    auto first = b.check();
    auto second = b.check(false, b.clock.steady_now() + std::chrono::seconds(5));
    REQUIRE(b.transport.size() == 1);
    b.clock.advance(std::chrono::seconds(5));
    b.answer(0, 200, info_answer);
    CHECK(outcome_of(first) == model::store_outcome::confirmed);
    REQUIRE(outcome_of(second) == model::store_outcome::unreachable);
    CHECK((*second)->verdict.detail
          == "store unreachable: deadline passed while waiting for the store; not sent");
    CHECK(b.transport.size() == 1);
  }
  SECTION("already passed when asked") {
    auto answer = b.check(false, b.clock.steady_now());
    REQUIRE(outcome_of(answer) == model::store_outcome::unreachable);
    CHECK(b.transport.size() == 0);
  }
  SECTION("passed before the flip: the unknown transaction is not called rejected") {
    auto answer = b.check(false, b.clock.steady_now() + std::chrono::seconds(5));
    REQUIRE(b.transport.size() == 1);
    b.clock.advance(std::chrono::seconds(5));
    b.answer(0, 404, not_found);
    REQUIRE(outcome_of(answer) == model::store_outcome::unreachable);
    CHECK(b.transport.size() == 1);
  }
}

// ---- Get All Subscription Statuses (the StoreKit 2 refresh) ----------

TEST_CASE("Get All Subscription Statuses at the transaction's host, once at the other on 404, "
          "with the same JWT",
          "[actors][server_api][refresh]") {
  server_api_bench b;
  b.start();
  auto statuses = [&](bool sandbox_first, app_context_ptr for_app = nullptr) {
    store_a_transaction_check c;
    c.trace = {"t1", 0};
    c.app = for_app ? for_app : b.app;
    c.transaction_id = transaction_id;
    c.sandbox_first = sandbox_first;
    auto answer = b.ask<store_a_statuses_answer, refresh_atom>(b.client, std::move(c));
    b.run();
    return answer;
  };
  const std::string statuses_body = R"({"environment":"Production","data":[
    {"subscriptionGroupIdentifier":"21000000","lastTransactions":[
      {"originalTransactionId":"2000000000000001","status":3,
       "signedTransactionInfo":"a.b.c","signedRenewalInfo":"d.e.f"}]}]})";
  SECTION("found at the first host asked") {
    auto answer = statuses(true);
    REQUIRE(b.transport.size() == 1);
    CHECK(b.transport[0].url
          == "https://sandbox-api.example.test/inApps/v1/subscriptions/2000000000000042");
    CHECK(b.transport[0].method == "GET");
    CHECK(b.claims(0).at("bid") == "com.example.receiptd");
    b.answer(0, 200, statuses_body);
    REQUIRE(answer->has_value());
    CHECK((*answer)->verdict.outcome == model::store_outcome::confirmed);
    CHECK((*answer)->verdict.env == model::environment::sandbox);
    REQUIRE((*answer)->entries.size() == 1);
    CHECK((*answer)->entries[0].status == 3);
    CHECK((*answer)->entries[0].signed_renewal_info == "d.e.f");
  }
  SECTION("unknown there: the other host, once; the same JWT") {
    auto answer = statuses(false);
    REQUIRE(b.transport.size() == 1);
    CHECK(b.transport[0].url
          == "https://api.example.test/inApps/v1/subscriptions/2000000000000042");
    b.answer(0, 404, not_found);
    REQUIRE(b.transport.size() == 2);
    CHECK(b.transport[1].url
          == "https://sandbox-api.example.test/inApps/v1/subscriptions/2000000000000042");
    CHECK(b.jwt(1) == b.jwt(0));
    b.answer(1, 404, not_found);
    REQUIRE(answer->has_value());
    CHECK((*answer)->verdict.outcome == model::store_outcome::rejected);
    CHECK((*answer)->entries.empty());
    CHECK(b.transport.size() == 2);
  }
  SECTION("a 200 of another shape is unreachable") {
    auto answer = statuses(false);
    b.answer(0, 200, info_answer);
    REQUIRE(answer->has_value());
    CHECK((*answer)->verdict.outcome == model::store_outcome::unreachable);
  }
  SECTION("an app without credentials: operator problem, no HTTP call") {
    model::app a;
    a.id = "app-9";
    a.bundle_id = "com.example.receiptd";
    auto answer = statuses(false, make_app_context(a));
    REQUIRE(answer->has_value());
    CHECK((*answer)->verdict.outcome == model::store_outcome::unreachable);
    CHECK((*answer)->verdict.operator_problem);
    CHECK(b.transport.size() == 0);
  }
}

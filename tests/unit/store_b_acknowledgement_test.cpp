// Play acknowledgement: when receiptd acknowledges a purchase, the
// acknowledge URLs, what Play's answers mean and how they land on the record;
// what a record's job is for.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "model/store_b/acknowledgement.hpp"
#include "test_files.hpp"

using namespace receiptd::model;
using namespace receiptd::model::store_b;
using receiptd::test::data_file;

namespace {

constexpr unix_ms purchased_at = 1700000000000;             // 2023-11-14 22:13:20 UTC
constexpr unix_ms deadline = purchased_at + 259200000;      // three days later
static_assert(acknowledgement_window_ms == 3LL * 86400000); // Google's three days

// A validated, unacknowledged product purchase, as the API answered it.
purchase_order_record validated_order() {
  purchase_order_record r;
  r.id = "0b7c3f2e-4a5d-4c1e-9a8b-1c2d3e4f5a6b";
  r.app_id = "app";
  r.package_name = "com.example.app";
  r.purchase_token = "tok";
  r.purchase.product_id = "gems_100";
  r.purchase.kind = product_kind::product;
  r.purchase.purchase_state = purchase_state::purchased;
  r.purchase.purchase_time = purchased_at;
  r.purchase.acknowledged = false;
  r.state = validation_state::validated;
  r.created_at = purchased_at + 5000;
  r.updated_at = purchased_at + 5000;
  return r;
}

std::optional<acknowledgement_state> settled(purchase_order_record r, bool app_acknowledges,
                                             unix_ms now = purchased_at + 60000) {
  settle_acknowledgement(r, app_acknowledges, now);
  return r.acknowledgement;
}

constexpr auto pending = acknowledgement_state::pending;
constexpr auto acknowledged = acknowledgement_state::acknowledged;
constexpr auto failed = acknowledgement_state::failed;

} // namespace

TEST_CASE("acknowledgement states by name", "[acknowledgement]") {
  CHECK(to_string(pending) == "pending");
  CHECK(to_string(acknowledged) == "acknowledged");
  CHECK(to_string(failed) == "failed");
  for (auto s : {pending, acknowledged, failed})
    CHECK(parse_acknowledgement_state(to_string(s)) == s);
  CHECK_FALSE(parse_acknowledgement_state(""));
  CHECK_FALSE(parse_acknowledgement_state("Pending"));
  CHECK_FALSE(parse_acknowledgement_state("none"));
}

TEST_CASE("an unacknowledged validated purchase of an app that enables it is pending",
          "[acknowledgement]") {
  auto r = validated_order();
  CHECK(settled(r, true) == pending);
  // The app acknowledges its purchases itself: receiptd keeps out.
  CHECK(settled(r, false) == std::nullopt);

  // A subscription that is not pending is acknowledged too, even cancelled
  // (auto-renewal off: the period paid for still runs).
  r.purchase.kind = product_kind::subscription;
  for (auto s : {purchase_state::purchased, purchase_state::cancelled}) {
    r.purchase.purchase_state = s;
    CHECK(settled(r, true) == pending);
  }
  // An unknown kind is asked as a product.
  r = validated_order();
  r.purchase.kind = product_kind::unknown;
  CHECK(settled(r, true) == pending);
}

TEST_CASE("Google's deadline: purchase time + three days exactly", "[acknowledgement]") {
  auto r = validated_order();
  CHECK(settled(r, true, deadline - 1) == pending);
  CHECK(settled(r, true, deadline) == pending);
  CHECK(settled(r, true, deadline + 1) == failed);

  // Without a purchase time the upload's creation stands in for it.
  r.purchase.purchase_time.reset();
  r.created_at = purchased_at + 5000;
  CHECK(settled(r, true, deadline + 5000) == pending);
  CHECK(settled(r, true, deadline + 5001) == failed);
  // Neither: no deadline to judge by; the job's attempts bound it.
  r.created_at = 0;
  CHECK(settled(r, true, deadline * 2) == pending);
}

// tests/fuzz/regressions/store_server_answers/acknowledge-deadline-purchase-time-int64-max:
// the Play API's purchaseTimeMillis is any int64; the deadline arithmetic must
// not overflow on the largest (signed overflow: undefined behaviour).
TEST_CASE("Google's deadline for the largest and smallest purchase times the API can say",
          "[acknowledgement]") {
  auto r = validated_order();
  r.purchase.purchase_time = std::numeric_limits<std::int64_t>::max();
  CHECK(settled(r, true) == pending); // made "in the future": not past its deadline
  r.acknowledgement = pending;
  CHECK_FALSE(apply_acknowledgement(r, {acknowledge_outcome::retry, "HTTP 503"},
                                    purchased_at + 60000, false));
  CHECK(r.acknowledgement == pending);

  r = validated_order();
  r.purchase.purchase_time = std::numeric_limits<std::int64_t>::min();
  CHECK(settled(r, true) == failed);
}

TEST_CASE("what is never acknowledged leaves the state as it was", "[acknowledgement]") {
  struct variant {
    const char* what;
    void (*change)(purchase_order_record&);
  };
  const variant variants[] = {
    {"pending record", [](purchase_order_record& r) { r.state = validation_state::pending; }},
    {"failed record", [](purchase_order_record& r) { r.state = validation_state::failed; }},
    {"fraud",
     [](purchase_order_record& r) {
       r.state = validation_state::rejected;
       r.fraud = fraud_reason::store_rejected;
     }},
    {"pending product",
     [](purchase_order_record& r) { r.purchase.purchase_state = purchase_state::pending; }},
    {"cancelled product",
     [](purchase_order_record& r) { r.purchase.purchase_state = purchase_state::cancelled; }},
    {"unknown state",
     [](purchase_order_record& r) { r.purchase.purchase_state = purchase_state::unknown; }},
    {"pending subscription",
     [](purchase_order_record& r) {
       r.purchase.kind = product_kind::subscription;
       r.purchase.purchase_state = purchase_state::pending;
     }},
    {"refunded subscription",
     [](purchase_order_record& r) {
       r.purchase.kind = product_kind::subscription;
       r.purchase.purchase_state = purchase_state::refunded;
     }},
    {"voided product",
     [](purchase_order_record& r) { r.purchase.voided_time = purchased_at + 1000; }},
    {"API silent on acknowledgement",
     [](purchase_order_record& r) { r.purchase.acknowledged.reset(); }},
  };
  for (const auto& v : variants) {
    INFO(v.what);
    auto r = validated_order();
    v.change(r);
    CHECK(settled(r, true) == std::nullopt);
    for (auto s : {pending, acknowledged, failed}) {
      r.acknowledgement = s;
      CHECK(settled(r, true) == s);
    }
  }
  // An app that stopped acknowledging: a pending acknowledgement stays pending.
  auto r = validated_order();
  r.acknowledgement = pending;
  CHECK(settled(r, false) == pending);
}

TEST_CASE("Play saying acknowledged settles it, when receiptd tracks it", "[acknowledgement]") {
  auto r = validated_order();
  r.purchase.acknowledged = true;
  CHECK(settled(r, true) == acknowledged);
  CHECK(settled(r, false) == std::nullopt);
  for (auto s : {pending, failed, acknowledged}) {
    r.acknowledgement = s;
    CHECK(settled(r, false) == acknowledged);
    CHECK(settled(r, true) == acknowledged);
  }
  // Past the deadline too: Play's word is what it is.
  r.acknowledgement.reset();
  CHECK(settled(r, true, deadline + 86400000) == acknowledged);
}

TEST_CASE("a settled acknowledgement is not put back to pending", "[acknowledgement]") {
  // Play may read unacknowledged for a moment after taking one, and answers a
  // second acknowledgement 400 invalidPurchaseState.
  auto r = validated_order();
  r.acknowledgement = acknowledged;
  CHECK(settled(r, true) == acknowledged);
  r.acknowledgement = failed;
  CHECK(settled(r, true) == failed);
  // A pending one is judged again against the deadline.
  r.acknowledgement = pending;
  CHECK(settled(r, true, deadline) == pending);
  CHECK(settled(r, true, deadline + 1) == failed);
}

TEST_CASE("acknowledge URLs by kind, every path segment escaped", "[acknowledgement]") {
  auto r = validated_order();
  r.purchase_token = "a/b+c=:d";
  r.purchase.product_id = "gems 100";
  CHECK(acknowledge_url("https://androidpublisher.googleapis.com", r)
        == "https://androidpublisher.googleapis.com/androidpublisher/v3/applications/"
           "com.example.app/purchases/products/gems%20100/tokens/a%2Fb%2Bc%3D%3Ad:acknowledge");
  r.purchase.kind = product_kind::unknown;
  CHECK(acknowledge_url("http://127.0.0.1:9//", r)
        == "http://127.0.0.1:9/androidpublisher/v3/applications/com.example.app/purchases/"
           "products/gems%20100/tokens/a%2Fb%2Bc%3D%3Ad:acknowledge");
  r.purchase.kind = product_kind::subscription;
  r.purchase_token = "tok";
  r.purchase.product_id = "pro.monthly";
  CHECK(acknowledge_url("http://127.0.0.1:9/", r)
        == "http://127.0.0.1:9/androidpublisher/v3/applications/com.example.app/purchases/"
           "subscriptions/pro.monthly/tokens/tok:acknowledge");
}

TEST_CASE("acknowledge answers: done, retry, refused, token_401", "[acknowledgement]") {
  for (int s : {200, 204}) {
    auto a = classify_acknowledge_response(s, "", "");
    CHECK(a.outcome == acknowledge_outcome::done);
    CHECK(a.detail == "HTTP " + std::to_string(s));
  }
  for (int s : {408, 429, 500, 502, 503, 504, 599, 302, 100}) {
    INFO(s);
    CHECK(classify_acknowledge_response(s, "", "").outcome == acknowledge_outcome::retry);
  }
  for (int s : {400, 403, 404, 409, 410, 499}) {
    INFO(s);
    CHECK(classify_acknowledge_response(s, "", "").outcome == acknowledge_outcome::refused);
  }
  auto none = classify_acknowledge_response(0, "", "Connection refused");
  CHECK(none.outcome == acknowledge_outcome::retry);
  CHECK(none.detail == "no answer: Connection refused");

  auto denied = classify_acknowledge_response(
    401,
    data_file("responses/google-play-developer-api/candy_check-purchases.get-401-"
              "permission_denied.json"),
    "");
  CHECK(denied.outcome == acknowledge_outcome::token_401);
  CHECK(denied.detail
        == "HTTP 401: The current user has insufficient permissions to perform the requested "
           "operation.");
}

TEST_CASE("a refused acknowledgement says Google's message", "[acknowledgement]") {
  const std::string dir = "responses/google-play-developer-api/";
  auto again = classify_acknowledge_response(
    400, data_file(dir + "candy_check-products.acknowledge-400-already_acknowledged.json"), "");
  CHECK(again.outcome == acknowledge_outcome::refused);
  CHECK(again.detail
        == "HTTP 400: The purchase is not in a valid state to perform the desired operation.");
  auto refunded = classify_acknowledge_response(
    400, data_file(dir + "candy_check-products.acknowledge-400-refunded.json"), "");
  CHECK(refunded.detail == "HTTP 400: The product purchase is not owned by the user.");

  // No envelope, or not Google's: the status alone.
  for (const char* body : {"", "<html>Bad Request</html>", "[]", R"({"error":"bad"})",
                           R"({"error":{"message":42}})", R"({"message":"not in error"})"}) {
    INFO(body);
    CHECK(classify_acknowledge_response(400, body, "").detail == "HTTP 400");
  }
  // Too deep for the reader: no message, no crash.
  std::string deep = R"({"error":{"message":"m","x":)" + std::string(10000, '[');
  CHECK(classify_acknowledge_response(503, deep, "").detail == "HTTP 503");
  // Cut to 200 characters, printable ASCII only.
  auto long_message = R"({"error":{"message":")" + std::string(300, 'x') + R"("}})";
  CHECK(classify_acknowledge_response(404, long_message, "").detail
        == "HTTP 404: " + std::string(200, 'x'));
  auto odd = classify_acknowledge_response(409, R"({"error":{"message":"a\nb\u00e9c"}})", "");
  CHECK(odd.detail == "HTTP 409: a?b??c");
  CHECK(classify_acknowledge_response(0, "", "line\r\n" + std::string(300, 'y')).detail
        == "no answer: line??" + std::string(194, 'y'));
}

TEST_CASE("an acknowledge answer lands on the record", "[acknowledgement]") {
  auto r = validated_order();
  r.acknowledgement = pending;
  const auto now = purchased_at + 3600000;

  SECTION("done: acknowledged, and the purchase says so") {
    CHECK(apply_acknowledgement(r, classify_acknowledge_response(204, "", ""), now, false));
    CHECK(r.acknowledgement == acknowledged);
    CHECK(r.purchase.acknowledged == true);
    CHECK(r.store_detail == "acknowledged: HTTP 204");
    CHECK(r.state == validation_state::validated);
    CHECK_FALSE(needs_job(r));
  }
  SECTION("done wins over give_up and the deadline") {
    CHECK(apply_acknowledgement(r, {acknowledge_outcome::done, "HTTP 200"}, deadline + 1, true));
    CHECK(r.acknowledgement == acknowledged);
  }
  SECTION("refused: failed at once") {
    CHECK(apply_acknowledgement(r, {acknowledge_outcome::refused, "HTTP 400: no"}, now, false));
    CHECK(r.acknowledgement == failed);
    CHECK(r.purchase.acknowledged == false);
    CHECK(r.store_detail == "acknowledgement refused: HTTP 400: no");
    CHECK_FALSE(needs_job(r));
  }
  SECTION("retry: still pending, asked again") {
    CHECK_FALSE(apply_acknowledgement(r, {acknowledge_outcome::retry, "HTTP 503"}, now, false));
    CHECK(r.acknowledgement == pending);
    CHECK(r.store_detail == "acknowledgement to retry: HTTP 503");
    CHECK(needs_job(r));
    CHECK(purpose_of(r) == job_purpose::acknowledge);
  }
  SECTION("a token_401 that lands here counts as a retry") {
    CHECK_FALSE(apply_acknowledgement(r, {acknowledge_outcome::token_401, "HTTP 401"}, now, false));
    CHECK(r.acknowledgement == pending);
  }
  SECTION("retry once the attempts ran out: failed") {
    CHECK(apply_acknowledgement(r, {acknowledge_outcome::retry, "no answer: timeout"}, now, true));
    CHECK(r.acknowledgement == failed);
    CHECK(r.store_detail == "acknowledgement failed: attempts ran out (last: no answer: timeout)");
  }
  SECTION("retry past the deadline: failed; at the deadline: pending") {
    CHECK_FALSE(
      apply_acknowledgement(r, {acknowledge_outcome::retry, "HTTP 500"}, deadline, false));
    CHECK(r.acknowledgement == pending);
    CHECK(apply_acknowledgement(r, {acknowledge_outcome::retry, "HTTP 500"}, deadline + 1, false));
    CHECK(r.acknowledgement == failed);
    CHECK(r.store_detail == "acknowledgement failed: Google's deadline passed (last: HTTP 500)");
  }
  // Never a fraud or a validation matter.
  CHECK_FALSE(r.is_fraud());
  CHECK(r.state == validation_state::validated);
}

TEST_CASE("what a record's job is for, and whether it keeps one", "[acknowledgement][jobs]") {
  auto r = validated_order();
  r.state = validation_state::pending;
  for (auto s :
       {std::optional<acknowledgement_state>{}, std::optional{pending}, std::optional{failed}}) {
    r.acknowledgement = s;
    CHECK(purpose_of(r) == job_purpose::revalidate);
    CHECK(needs_job(r));
  }
  r.state = validation_state::validated;
  r.acknowledgement = pending;
  CHECK(purpose_of(r) == job_purpose::acknowledge);
  CHECK(needs_job(r));
  for (auto s : {std::optional<acknowledgement_state>{}, std::optional{acknowledged},
                 std::optional{failed}}) {
    r.acknowledgement = s;
    CHECK(purpose_of(r) == job_purpose::refresh);
    CHECK_FALSE(needs_job(r));
  }
  for (auto state : {validation_state::rejected, validation_state::failed}) {
    r.state = state;
    r.acknowledgement = pending;
    CHECK(purpose_of(r) == job_purpose::refresh);
    CHECK_FALSE(needs_job(r));
  }

  receipt_record receipt;
  transaction_record transaction;
  CHECK(purpose_of(receipt) == job_purpose::revalidate);
  CHECK(needs_job(receipt));
  CHECK(purpose_of(transaction) == job_purpose::revalidate);
  CHECK(needs_job(transaction));
  for (auto state :
       {validation_state::validated, validation_state::rejected, validation_state::failed}) {
    receipt.state = state;
    transaction.state = state;
    CHECK(purpose_of(receipt) == job_purpose::refresh);
    CHECK_FALSE(needs_job(receipt));
    CHECK(purpose_of(transaction) == job_purpose::refresh);
    CHECK_FALSE(needs_job(transaction));
  }
}

TEST_CASE("an acknowledgement lands only what it did on the record as stored now",
          "[store_b][acknowledgement]") {
  purchase_order_record claimed; // as its job read it
  claimed.state = validation_state::validated;
  claimed.purchase.kind = product_kind::subscription;
  claimed.purchase.purchase_state = purchase_state::purchased;
  claimed.purchase.acknowledged = false;
  claimed.purchase.auto_renewing = true;
  claimed.acknowledgement = acknowledgement_state::pending;
  auto acknowledged = claimed;
  acknowledged.acknowledgement = acknowledgement_state::acknowledged;
  acknowledged.purchase.acknowledged = true;
  acknowledged.store_detail = "acknowledged: HTTP 204";
  acknowledged.updated_at = 2000;

  auto now = claimed; // an RTDN wrote since: the subscription was cancelled
  now.purchase.auto_renewing = false;
  now.purchase.purchase_state = purchase_state::cancelled;
  now.updated_at = 1000;
  auto out = land_acknowledgement(now, acknowledged);
  CHECK(out.acknowledgement == acknowledgement_state::acknowledged);
  CHECK(out.purchase.acknowledged == true);
  CHECK(out.store_detail == "acknowledged: HTTP 204");
  CHECK(out.updated_at == 2000);
  CHECK(out.purchase.auto_renewing == false);
  CHECK(out.purchase.purchase_state == purchase_state::cancelled);

  auto failed = claimed; // refused: Play's acknowledged stays as stored
  failed.acknowledgement = acknowledgement_state::failed;
  CHECK(land_acknowledgement(now, failed).acknowledgement == acknowledgement_state::failed);
  CHECK(land_acknowledgement(now, failed).purchase.acknowledged == false);
}

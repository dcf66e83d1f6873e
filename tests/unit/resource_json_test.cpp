// JSON shapes of the resources (SPEC §2) and of errors (DESIGN.md §2).
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/json_out.hpp"
#include "model/purchases/purchase.hpp"
#include "model/resource_json.hpp"

using namespace receiptd::model;
namespace json = boost::json;

namespace {

purchase_order_record sample_order() {
  purchase_order_record r;
  r.id = "0b7c3f2e-4a5d-4c1e-9a8b-1c2d3e4f5a6b";
  r.app_id = "11111111-2222-4333-8444-555555555555";
  r.package_name = "my.package";
  r.purchase_token = "tok";
  r.order_id = "GPA.1";
  r.purchase.product_id = "p1";
  r.purchase.kind = product_kind::product;
  r.purchase.purchase_state = purchase_state::purchased;
  r.purchase.purchase_time = 1437564796303;
  r.echo.user_identifier = "user-7";
  r.echo.metadata = R"({"campaign":"spring"})";
  r.echo.ip_address = "10.0.0.1";
  r.state = validation_state::validated;
  r.created_at = 1700000000000;
  r.updated_at = 1700000000500;
  return r;
}

} // namespace

TEST_CASE("purchase order resource carries every SPEC §2.2 field", "[json]") {
  auto o = purchase_order_json(sample_order());
  for (auto key : {"id", "app_family_id", "package_name", "is_legacy", "is_fraud", "fraud_reason",
                   "environment", "purchase_token", "order_id", "user_identifier", "metadata",
                   "ip_address", "in_app_purchase", "created_at", "updated_at", "validation_state"})
    CHECK(o.contains(key));
  CHECK(o.at("is_fraud") == false);
  CHECK(o.at("fraud_reason").is_null());
  CHECK(o.at("environment") == "production");
  CHECK(o.at("metadata").at("campaign") == "spring");
  CHECK(o.at("in_app_purchase").is_object());
  CHECK(o.at("in_app_purchase").at("product_id") == "p1");
  CHECK(o.at("in_app_purchase").at("purchased_at").at("ms") == 1437564796303);
  CHECK(o.at("created_at").at("utc") == "2023-11-14 22:13:20 UTC");
  CHECK(o.at("updated_at").at("ms") == 1700000000500);
}

TEST_CASE("receipt resource carries every SPEC §2.1 field", "[json]") {
  receipt_record r;
  r.id = "id";
  r.app_id = "app";
  r.style = receipt_style::transaction;
  r.bundle_id = "com.example";
  r.env = environment::sandbox;
  apple_in_app_purchase p;
  p.product_id = "monthly";
  p.transaction_id = "1000";
  p.purchase_date = 1000;
  r.in_app_purchases = {p, p};
  auto o = receipt_json(r);
  for (auto key : {"id", "style", "app_family_id", "bundle_id", "is_fraud", "fraud_reason",
                   "environment", "user_identifier", "metadata", "ip_address", "in_app_purchases",
                   "created_at", "updated_at"})
    CHECK(o.contains(key));
  CHECK(o.at("style") == "transaction");
  CHECK(o.at("environment") == "sandbox");
  CHECK(o.at("in_app_purchases").as_array().size() == 2);
  CHECK(o.at("in_app_purchases").at(0).at("expires_date").is_null());
  CHECK(o.at("ip_address").is_null());
  CHECK(o.at("metadata").is_null());
}

TEST_CASE("an in-app purchase carries its cancellation date and reason, null when not cancelled",
          "[json]") {
  apple_in_app_purchase p;
  p.product_id = "monthly";
  p.transaction_id = "1000";
  auto o = in_app_purchase_json(p);
  REQUIRE(o.contains("cancellation_date"));
  REQUIRE(o.contains("cancellation_reason"));
  CHECK(o.at("cancellation_date").is_null());
  CHECK(o.at("cancellation_reason").is_null());
  p.cancellation_date = 1760591999000;
  p.cancellation_reason = 0;
  o = in_app_purchase_json(p);
  CHECK(o.at("cancellation_date")
        == json::parse(R"({"ms":1760591999000,"utc":"2025-10-16 05:19:59 UTC"})"));
  CHECK(o.at("cancellation_reason") == 0);
  // Next to cancellation_date in the resource.
  std::vector<std::string> keys;
  for (const auto& kv : o)
    keys.emplace_back(kv.key());
  auto at = std::find(keys.begin(), keys.end(), "cancellation_date");
  REQUIRE(at != keys.end());
  REQUIRE(at + 1 != keys.end());
  CHECK(*(at + 1) == "cancellation_reason");
}

TEST_CASE("a transaction resource carries the subscription a notification told, null before",
          "[json]") {
  transaction_record r;
  r.id = "id";
  r.app_id = "app";
  r.transaction.transaction_id = "2000001027701928";
  r.transaction.original_transaction_id = "2000001024993299";
  auto o = transaction_json(r);
  for (auto key : {"subscription_status", "subscription_expires_date", "auto_renew",
                   "auto_renew_product_id"}) {
    INFO(key);
    REQUIRE(o.contains(key));
    CHECK(o.at(key).is_null());
  }
  r.transaction.subscription_status = "expired";
  r.transaction.subscription_expires_date = 1759727970000;
  r.transaction.auto_renew = false;
  r.transaction.auto_renew_product_id = "com.example.monthly";
  r.transaction.notified_at = 1759727985799;
  o = transaction_json(r);
  CHECK(o.at("subscription_status") == "expired");
  CHECK(o.at("subscription_expires_date")
        == json::parse(R"({"ms":1759727970000,"utc":"2025-10-06 05:19:30 UTC"})"));
  CHECK(o.at("auto_renew") == false);
  CHECK(o.at("auto_renew_product_id") == "com.example.monthly");
  // notified_at orders notifications; it is not part of the resource.
  CHECK_FALSE(o.contains("notified_at"));
  CHECK(json::serialize(o).find("1759727985799") == std::string::npos);
}

TEST_CASE("error payload shape", "[json]") {
  auto body = json::parse(error_body({{"receipt", "invalid_base64", "receipt is not valid base64"},
                                      {"", "invalid_json", "not JSON"}}));
  auto& errors = body.at("errors").as_array();
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].at("field") == "receipt");
  CHECK(errors[0].at("code") == "invalid_base64");
  CHECK(errors[0].at("message") == "receipt is not valid base64");
  CHECK_FALSE(errors[1].as_object().contains("field"));
}

TEST_CASE("a 402 carries the error and the stored record", "[json]") {
  auto r = sample_order();
  r.fraud = fraud_reason::invalid_signature;
  r.state = validation_state::rejected;
  auto body = json::parse(upload_response_body(r));
  CHECK(body.at("errors").at(0).at("code") == "invalid_signature");
  CHECK(body.at("purchase_order").at("id").as_string() == r.id);
  CHECK(body.at("purchase_order").at("is_fraud") == true);
  CHECK(body.at("purchase_order").at("fraud_reason") == "invalid_signature");
  r.state = validation_state::pending;
  r.fraud = fraud_reason::none;
  CHECK(json::parse(upload_response_body(r)).at("validation_state") == "pending");
}

TEST_CASE("status decisions", "[status]") {
  CHECK(http_status_for(validation_state::validated) == 200);
  CHECK(http_status_for(validation_state::pending) == 206);
  CHECK(http_status_for(validation_state::rejected) == 402);
  for (auto r : {fraud_reason::invalid_signature, fraud_reason::untrusted_certificate,
                 fraud_reason::malformed_receipt, fraud_reason::bundle_id_mismatch,
                 fraud_reason::package_name_mismatch, fraud_reason::device_hash_mismatch,
                 fraud_reason::store_rejected}) {
    CHECK(parse_fraud_reason(to_string(r)) == r);
    CHECK_FALSE(to_string(r).empty());
  }
}

TEST_CASE("re-upload merge rules", "[merge]") {
  auto old = sample_order();
  auto now = sample_order();
  now.id = "other";
  now.created_at = 1800000000000;
  now.updated_at = 1800000000000;
  now.echo.user_identifier.reset();
  now.echo.metadata = R"({"campaign":"summer"})";
  now.echo.ip_address.reset();

  SECTION("keeps id and created_at; latest echo fields win where sent") {
    auto m = merge_reupload(old, now);
    CHECK(m.id == old.id);
    CHECK(m.created_at == old.created_at);
    CHECK(m.updated_at == now.updated_at);
    CHECK(m.echo.user_identifier == std::string("user-7"));
    CHECK(m.echo.metadata == std::string(R"({"campaign":"summer"})"));
    CHECK_FALSE(m.echo.ip_address);
  }
  SECTION("pending never downgrades validated") {
    now.state = validation_state::pending;
    auto m = merge_reupload(old, now);
    CHECK(m.state == validation_state::validated);
  }
  SECTION("a pending record becomes validated") {
    old.state = validation_state::pending;
    now.state = validation_state::validated;
    now.env = environment::sandbox;
    auto m = merge_reupload(old, now);
    CHECK(m.state == validation_state::validated);
    CHECK(m.env == environment::sandbox);
  }
  SECTION("a forged re-upload leaves a validated record untouched, and is still a 402") {
    now.state = validation_state::rejected;
    now.fraud = fraud_reason::invalid_signature;
    auto m = merge_reupload(old, now);
    CHECK(m.state == validation_state::validated);
    CHECK_FALSE(m.is_fraud());
    CHECK(m.echo.metadata == old.echo.metadata);
    CHECK(m.updated_at == old.updated_at);
    auto a = answer_for(m, fraud_reason::invalid_signature);
    CHECK(a.status == 402);
    auto body = json::parse(a.body);
    CHECK(body.at("errors").at(0).at("code") == "invalid_signature");
    CHECK(body.at("purchase_order").at("is_fraud") == false);
  }
  SECTION("the store rejecting a re-upload does not downgrade a validated record") {
    now.state = validation_state::rejected;
    now.fraud = fraud_reason::store_rejected;
    auto m = merge_reupload(old, now);
    CHECK(m.state == validation_state::validated);
    CHECK_FALSE(m.is_fraud());
    CHECK(answer_for(m, fraud_reason::store_rejected).status == 402);
  }
  SECTION("the store's rejection does settle a pending record") {
    old.state = validation_state::pending;
    now.state = validation_state::rejected;
    now.fraud = fraud_reason::store_rejected;
    auto m = merge_reupload(old, now);
    CHECK(m.state == validation_state::rejected);
    CHECK(answer_for(m, fraud_reason::store_rejected).status == 402);
  }
  SECTION("a genuine upload clears an earlier forged one") {
    old.state = validation_state::rejected;
    old.fraud = fraud_reason::invalid_signature;
    now.state = validation_state::validated;
    auto m = merge_reupload(old, now);
    CHECK(m.state == validation_state::validated);
    CHECK_FALSE(m.is_fraud());
    CHECK(answer_for(m, fraud_reason::none).status == 200);
  }
  SECTION("a legacy re-upload keeps the signed proof") {
    old.purchase_data = "{...}";
    old.purchase_signature = "sig";
    now.is_legacy = true;
    now.purchase_data.clear();
    auto m = merge_reupload(old, now);
    CHECK_FALSE(m.is_legacy);
    CHECK(m.purchase_data == "{...}");
  }
}

#include "model/retry_policy.hpp"

TEST_CASE("exponential backoff with full jitter", "[retry]") {
  retry_policy p{1000, 60000, 2.0, 5};
  CHECK(backoff_cap_ms(p, 0) == 1000);
  CHECK(backoff_cap_ms(p, 1) == 2000);
  CHECK(backoff_cap_ms(p, 3) == 8000);
  CHECK(backoff_cap_ms(p, 10) == 60000);
  CHECK(backoff_delay_ms(p, 3, 0.0) == 0);
  CHECK(backoff_delay_ms(p, 3, 0.5) == 4000);
  CHECK(backoff_delay_ms(p, 3, 0.999999) < 8000);
  CHECK(backoff_delay_ms(p, 3, 7.0) == 8000);
  CHECK_FALSE(attempts_exhausted(p, 4));
  CHECK(attempts_exhausted(p, 5));
}

TEST_CASE("a purchase order carries receiptd's acknowledgement state, null when none",
          "[json][acknowledgement]") {
  auto r = sample_order();
  auto o = purchase_order_json(r);
  REQUIRE(o.contains("acknowledgement_state"));
  CHECK(o.at("acknowledgement_state").is_null());
  for (auto [state, name] : {std::pair{acknowledgement_state::pending, "pending"},
                             std::pair{acknowledgement_state::acknowledged, "acknowledged"},
                             std::pair{acknowledgement_state::failed, "failed"}}) {
    r.acknowledgement = state;
    CHECK(purchase_order_json(r).at("acknowledgement_state") == name);
  }
}

TEST_CASE("a Play purchase carries what the voided list said, null when not voided",
          "[json][voided]") {
  auto r = sample_order();
  auto p = purchase_order_json(r).at("in_app_purchase").as_object();
  for (auto key : {"voided_at", "voided_reason", "voided_source", "voided_quantity"}) {
    INFO(key);
    REQUIRE(p.contains(key));
    CHECK(p.at(key).is_null());
  }
  r.purchase.purchase_state = purchase_state::refunded;
  r.purchase.voided_time = 1760591999000;
  r.purchase.voided_reason = 7;
  r.purchase.voided_source = 2;
  r.purchase.voided_quantity = 1;
  p = purchase_order_json(r).at("in_app_purchase").as_object();
  CHECK(p.at("purchase_state") == "refunded");
  CHECK(p.at("voided_at")
        == json::parse(R"({"ms":1760591999000,"utc":"2025-10-16 05:19:59 UTC"})"));
  CHECK(p.at("voided_reason") == 7);
  CHECK(p.at("voided_source") == 2);
  CHECK(p.at("voided_quantity") == 1);
  // After expires_at, before acknowledged … is_test.
  std::vector<std::string> keys;
  for (const auto& kv : p)
    keys.emplace_back(kv.key());
  CHECK(keys
        == std::vector<std::string>{"product_id", "type", "purchase_state", "quantity",
                                    "refundable_quantity", "purchased_at", "expires_at",
                                    "voided_at", "voided_reason",
                                    "voided_source", "voided_quantity", "acknowledged",
                                    "auto_renewing", "subscription_state", "is_test",
                                    "latest_order_id", "offer_phase", "prepaid",
                                    "allow_extend_after", "installments",
                                    "deferred_replacement_product_id"});
}

namespace {

// A purchase that fills every kind of field the resource writes: strings that
// need escaping, set and unset optionals, nested objects, lists, stored JSON.
receiptd::model::purchases::purchase sample_purchase(std::vector<std::string> keys) {
  receiptd::model::purchases::purchase p;
  p.id = "9f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
  p.app_id = "11111111-2222-4333-8444-555555555555";
  p.market = receiptd::model::purchases::marketplace::store_b;
  p.keys = std::move(keys);
  p.app_identifier = "my.package";
  p.user_identifier = "user \"7\"\n\\ \x01";
  p.previous_users = {"user-5", "user-6"};
  p.metadata = R"({"campaign":"spring","n":[1,2.5,{"x":null}]})";
  p.product_id.value = "p1";
  p.quantity.value = 2;
  p.type.value = receiptd::model::purchases::purchase_type::subscription;
  p.price.value = 4990;
  p.is_auto_renewing.value = true;
  p.current_period_end_at.value = 1800000000000;
  p.offer_type.value = "introductory";
  p.commitment.value = commitment_info{3, 12, 1830000000000, 59880};
  p.revoked_at.value = 1790000000000;
  p.revocation_reason = 1;
  p.revocation_type = "refund_prorated";
  p.revocation_percentage = 50000;
  p.purchased_at = 1700000000000;
  p.sources = {{record_kind::store_b_purchase_order, "0b7c3f2e", true}};
  p.refund_request = R"({"state":"answered","sent":true})";
  p.created_at = 1700000000000;
  p.updated_at = 1700000001000;
  p.versions = 4;
  return p;
}

std::shared_ptr<const receiptd::model::purchases::purchase_set>
set_of(receiptd::model::purchases::purchase p) {
  auto set = std::make_shared<receiptd::model::purchases::purchase_set>();
  set->items.push_back(std::move(p));
  set->entitlements.push_back({"premium/monthly", "ads \"off\""});
  set->at = 1750000000000;
  return set;
}

} // namespace

TEST_CASE("a resource written as text is its document, byte for byte", "[json]") {
  SECTION("a purchase order with its purchase merged in") {
    auto r = sample_order();
    r.echo.metadata = R"({"note":"tab\there","deep":{"a":[true,false,null]}})";
    r.previous_users = {"old \"owner\""};
    r.purchase.quantity = 2;
    r.purchase.installments = play_installments{12, 12, 9, true};
    r.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
    r.purchases = set_of(sample_purchase({"tok"}));
    auto text = resource_text(r);
    CHECK(text == json::serialize(purchase_order_json(r)));
    // The record's own fields stay where the purchase has the same key.
    auto doc = json::parse(text).as_object();
    CHECK(doc.at("in_app_purchase").at("type") == "product");
    CHECK(doc.at("in_app_purchase").at("marketplace") == "store_b");
    CHECK(doc.at("in_app_purchase").at("entitlements").as_array().size() == 2);
    CHECK(upload_response_body(r) == text);
  }
  SECTION("a receipt with two in-app purchases, one of them a kept purchase") {
    receipt_record r;
    r.id = "id";
    r.app_id = "app";
    r.bundle_id = "com.example";
    r.country_code = "US";
    apple_in_app_purchase first;
    first.product_id = "monthly";
    first.transaction_id = "1000";
    first.original_transaction_id = "1000";
    first.purchase_date = 1700000000000;
    first.is_trial_period = false;
    apple_in_app_purchase second;
    second.product_id = "coins";
    second.transaction_id = "2000";
    r.in_app_purchases = {first, second};
    r.purchases = set_of(sample_purchase({"1000"}));
    CHECK(resource_text(r) == json::serialize(receipt_json(r)));
  }
  SECTION("a transaction with and without its purchase") {
    transaction_record r;
    r.id = "id";
    r.transaction.transaction_id = "2000";
    r.transaction.original_transaction_id = "1000";
    r.transaction.price = 9990;
    r.transaction.commitment = commitment_info{1, 12, std::nullopt, 1000};
    CHECK(resource_text(r) == json::serialize(transaction_json(r)));
    r.purchases = set_of(sample_purchase({"1000"}));
    CHECK(resource_text(r) == json::serialize(transaction_json(r)));
    CHECK(json::parse(resource_text(r)).at("in_app_purchase").at("id").as_string() == sample_purchase({}).id);
  }
  SECTION("a rejected record's 402 and an error list") {
    auto r = sample_order();
    r.state = validation_state::rejected;
    r.fraud = fraud_reason::store_rejected;
    r.store_detail = "the store said \"no\"";
    auto body = json::parse(rejection_body(r)).as_object();
    CHECK(body.at("errors").at(0).at("message")
          == "the store says this purchase is not genuine: the store said \"no\"");
    CHECK(json::serialize(body.at("purchase_order")) == json::serialize(purchase_order_json(r)));
    CHECK(error_body({{"a\"b", "invalid", "line\nbreak"}, {"", "x", "y"}})
          == R"({"errors":[{"field":"a\"b","code":"invalid","message":"line\nbreak"},)"
             R"({"code":"x","message":"y"}]})");
  }
}

TEST_CASE("a string is written as Boost.JSON's serializer spells it, every byte", "[json]") {
  // Each byte at each place of a 17-byte string among plain and high bytes
  // (strings are scanned eight bytes at a time).
  for (char fill : {'x', '\xff', '\x80'})
    for (int c = 0; c < 256; ++c)
      for (std::size_t at = 0; at < 17; ++at) {
        std::string s(17, fill);
        s[at] = static_cast<char>(c);
        std::string out;
        receiptd::model::json_out::append_string(out, s);
        INFO("byte " << c << " at " << at);
        REQUIRE(out == json::serialize(json::string_view(s)));
      }
}

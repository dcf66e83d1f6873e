// What a re-upload may change, product checks of Play
// answers, transfer policies and the Xcode opt-in; pure model rules.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include "model/resource_json.hpp"
#include "model/store_b/play_api.hpp"
#include "model/transfer_policy.hpp"
#include "model/url_policy.hpp"

using namespace receiptd::model;
namespace json = boost::json;

namespace {

purchase_order_record order(validation_state state, fraud_reason fraud = fraud_reason::none) {
  purchase_order_record r;
  r.id = "0b7c3f2e-4a5d-4c1e-9a8b-1c2d3e4f5a6b";
  r.app_id = "app";
  r.package_name = "my.package";
  r.purchase_token = "tok";
  r.purchase.product_id = "gold";
  r.purchase_data = R"({"productId":"gold"})";
  r.purchase_signature = "genuine";
  r.echo.user_identifier = "alice";
  r.echo.metadata = R"({"a":1})";
  r.state = state;
  r.fraud = fraud;
  r.created_at = 1700000000000;
  r.updated_at = 1700000000000;
  return r;
}

receipt_record receipt(validation_state state, fraud_reason fraud = fraud_reason::none) {
  receipt_record r;
  r.id = "r1";
  r.app_id = "app";
  r.receipt_hash = "abc";
  r.receipt_data = "genuine";
  r.identifier_for_vendor = "A";
  r.echo.user_identifier = "alice";
  r.state = state;
  r.fraud = fraud;
  r.in_app_purchases.resize(2);
  return r;
}

} // namespace

TEST_CASE("a re-upload failing its own proof never touches a record that passed its own",
          "[merge][hostile]") {
  for (auto stored_state :
       {validation_state::pending, validation_state::validated, validation_state::failed}) {
    for (auto reason : {fraud_reason::invalid_signature, fraud_reason::untrusted_certificate,
                        fraud_reason::malformed_receipt, fraud_reason::package_name_mismatch,
                        fraud_reason::bundle_id_mismatch, fraud_reason::device_hash_mismatch}) {
      auto old = order(stored_state);
      auto forged = order(validation_state::rejected, reason);
      forged.purchase_signature = "AAAA";
      forged.echo.user_identifier = "mallory";
      forged.updated_at = 1800000000000;
      auto m = merge_reupload(old, forged);
      CHECK(m.state == stored_state);
      CHECK(m.purchase_signature == "genuine");
      CHECK(m.echo.user_identifier == std::string("alice"));
      CHECK(m.updated_at == old.updated_at);
      CHECK_FALSE(m.is_fraud());
      auto a = answer_for(m, reason);
      CHECK(a.status == 402);
      CHECK(json::parse(a.body).at("errors").at(0).at("code").as_string() == to_string(reason));

      auto r = receipt(stored_state);
      auto wrong_device = receipt(validation_state::rejected, reason);
      wrong_device.identifier_for_vendor = "B";
      wrong_device.in_app_purchases.clear();
      auto mr = merge_reupload(r, wrong_device);
      CHECK(mr.state == stored_state);
      CHECK(mr.identifier_for_vendor == std::string("A"));
      CHECK(mr.in_app_purchases.size() == 2);
    }
  }
}

TEST_CASE("a forged first upload binds nothing: the genuine one takes over", "[merge][hostile]") {
  auto forged = order(validation_state::rejected, fraud_reason::invalid_signature);
  forged.echo.user_identifier = "mallory";
  forged.purchase.product_id = "cheap";
  auto genuine = order(validation_state::validated);
  auto m = merge_reupload(forged, genuine);
  CHECK(m.state == validation_state::validated);
  CHECK(m.purchase.product_id == "gold");
  CHECK(m.echo.user_identifier == std::string("alice"));
  CHECK(m.previous_users.empty()); // not a transfer: the forged owner never owned it
  CHECK_FALSE(m.terms.refused);
}

TEST_CASE("a purchase order's product id never changes", "[merge][hostile]") {
  auto old = order(validation_state::pending);
  auto other = order(validation_state::pending);
  other.is_legacy = true;
  other.purchase.product_id = "platinum";
  auto m = merge_reupload(old, other);
  REQUIRE(m.terms.refused);
  CHECK(m.terms.refused->code == "product_id_mismatch");
  CHECK(m.purchase.product_id == "gold");
  auto a = answer_for(m, fraud_reason::none);
  CHECK(a.status == 409);
  CHECK(json::parse(a.body).at("errors").at(0).at("field") == "product_id");
}

TEST_CASE("transfer policies", "[merge][transfer]") {
  auto old = order(validation_state::validated);
  auto bob = order(validation_state::validated);
  bob.echo.user_identifier = "bob";

  SECTION("transfer (default): moves, and the previous owner is recorded") {
    auto m = merge_reupload(old, bob);
    CHECK_FALSE(m.terms.refused);
    CHECK(m.echo.user_identifier == std::string("bob"));
    CHECK(m.previous_users == previous_owners{"alice"});
    auto body = json::parse(answer_for(m, fraud_reason::none).body);
    CHECK(body.at("previous_user_identifiers") == json::parse(R"(["alice"])"));
  }
  SECTION("keep: 409 bound_to_other_user, the record stays") {
    bob.terms.transfers = *parse_transfer_policy("keep");
    auto m = merge_reupload(old, bob);
    REQUIRE(m.terms.refused);
    CHECK(m.terms.refused->code == "bound_to_other_user");
    CHECK(m.echo.user_identifier == std::string("alice"));
    CHECK(answer_for(m, fraud_reason::none).status == 409);
    // The same user, or no user named, is no transfer.
    auto again = order(validation_state::validated);
    again.terms.transfers = bob.terms.transfers;
    CHECK_FALSE(merge_reupload(old, again).terms.refused);
    again.echo.user_identifier.reset();
    CHECK_FALSE(merge_reupload(old, again).terms.refused);
  }
  SECTION("reject_after=1: one move, then 409") {
    bob.terms.transfers = *parse_transfer_policy("reject_after=1");
    auto m = merge_reupload(old, bob);
    REQUIRE_FALSE(m.terms.refused);
    auto carol = order(validation_state::validated);
    carol.echo.user_identifier = "carol";
    carol.terms.transfers = bob.terms.transfers;
    m.terms = {};
    auto m2 = merge_reupload(m, carol);
    REQUIRE(m2.terms.refused);
    CHECK(m2.echo.user_identifier == std::string("bob"));
  }
  SECTION("Store A receipts follow the same policy") {
    auto r = receipt(validation_state::validated);
    auto r2 = receipt(validation_state::validated);
    r2.echo.user_identifier = "bob";
    r2.terms.transfers = *parse_transfer_policy("keep");
    CHECK(merge_reupload(r, r2).terms.refused);
    r2.terms.transfers = *parse_transfer_policy("transfer");
    CHECK(merge_reupload(r, r2).previous_users == previous_owners{"alice"});
  }
}

TEST_CASE("transfer policy text", "[transfer]") {
  CHECK(parse_transfer_policy("transfer")->mode == transfer_policy::kind::transfer);
  CHECK(parse_transfer_policy("keep")->mode == transfer_policy::kind::keep);
  auto n = parse_transfer_policy("reject_after=3");
  REQUIRE(n);
  CHECK(n->limit == 3);
  CHECK(to_string(*n) == "reject_after=3");
  CHECK(n->allows(2));
  CHECK_FALSE(n->allows(3));
  for (auto bad : {"", "Keep", "reject_after=", "reject_after=-1", "reject_after=1x",
                   "reject_after=99999999999", "move"})
    CHECK_FALSE(parse_transfer_policy(bad));
}

TEST_CASE("a Play answer for another product is no proof of the claimed one",
          "[store_b][api][hostile]") {
  using namespace receiptd::model::store_b;
  play_purchase p;
  p.product_id = "premium_yearly";
  auto v = classify_purchase_response(
    purchase_api::subscriptions_v2, 200,
    R"({"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"productId":"cheap_monthly","expiryTime":"2030-01-01T00:00:00Z"}]})",
    "", p);
  CHECK(v.outcome == store_outcome::rejected);
  CHECK(v.detail.find("cheap_monthly") != std::string::npos);
  CHECK_FALSE(p.expiry_time);

  play_purchase none;
  none.product_id = "premium_yearly";
  CHECK(classify_purchase_response(purchase_api::subscriptions_v2, 200,
                                   R"({"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE"})", "", none)
          .outcome
        == store_outcome::rejected);

  play_purchase ok;
  ok.product_id = "premium_yearly";
  auto good = classify_purchase_response(
    purchase_api::subscriptions_v2, 200,
    R"({"lineItems":[{"productId":"cheap_monthly"},{"productId":"premium_yearly","expiryTime":"2030-01-01T00:00:00Z"}]})",
    "", ok);
  CHECK(good.outcome == store_outcome::confirmed);
  CHECK(ok.expiry_time == 1893456000000);

  play_purchase product;
  product.product_id = "gold";
  CHECK(classify_purchase_response(purchase_api::products, 200,
                                   R"({"productId":"copper","purchaseState":0})", "", product)
          .outcome
        == store_outcome::rejected);
  product.product_id = "gold";
  CHECK(classify_purchase_response(purchase_api::products, 200,
                                   R"({"productId":"gold","purchaseState":0})", "", product)
          .outcome
        == store_outcome::confirmed);
}

TEST_CASE("store URLs must be https, http only to loopback or when allowed", "[config][hostile]") {
  CHECK(store_url_allowed("https://buy.itunes.apple.com/verifyReceipt", false));
  CHECK(store_url_allowed("HTTPS://oauth2.googleapis.com/token", false));
  CHECK(store_url_allowed("http://127.0.0.1:8080/token", false));
  CHECK(store_url_allowed("http://127.5.0.1/token", false));
  CHECK(store_url_allowed("http://localhost:9/x", false));
  CHECK(store_url_allowed("http://[::1]:9/x", false));
  CHECK_FALSE(store_url_allowed("http://oauth2.googleapis.com/token", false));
  CHECK_FALSE(store_url_allowed("http://127.0.0.1.evil.example/token", false));
  CHECK_FALSE(store_url_allowed("http://user@10.0.0.1/token", false));
  CHECK_FALSE(store_url_allowed("http://localhost.evil.example/x", false));
  CHECK_FALSE(store_url_allowed("ftp://127.0.0.1/x", true));
  CHECK_FALSE(store_url_allowed("https://", false));
  CHECK(store_url_allowed("http://proxy.internal/verifyReceipt", true));
}

TEST_CASE("loopback addresses to listen on", "[config][hostile]") {
  for (auto host : {"127.0.0.1", "127.3.2.1", "::1", "localhost"})
    CHECK(is_loopback_host(host));
  for (auto host : {"0.0.0.0", "::", "10.1.2.3", "192.168.0.1", "[::1]", "127.0.0.1.example.com",
                    "localhost.example.com", "", "::ffff:10.0.0.1"})
    CHECK_FALSE(is_loopback_host(host));
}

TEST_CASE("an outbound URL is written by its origin only", "[config][hostile]") {
  CHECK(url_origin("https://hooks.example.com/receipts?key=SECRET")
        == "https://hooks.example.com");
  CHECK(url_origin("http://127.0.0.1:8080/webhooks/a#frag") == "http://127.0.0.1:8080");
  CHECK(url_origin("https://user:SECRET@proxy.internal:8443/verifyReceipt")
        == "https://proxy.internal:8443");
  CHECK(url_origin("https://[::1]:9/x") == "https://[::1]:9");
  CHECK(url_origin("https://hooks.example.com?key=SECRET") == "https://hooks.example.com");
  // What does not read as a host keeps nothing: a password with an unencoded '/'.
  CHECK(url_origin("https://user:SEC/RET@host/x") == "https://…");
  CHECK(url_origin("hooks.example.com/SECRET") == "…");
  // Only a scheme is shown before "://": a later "://" follows a path or a query.
  CHECK(url_origin("hooks.example.com/x?key=SECRET&next=https://h") == "…");
  CHECK(url_origin("user:SECRET@host/?r=ftp://h") == "…");
  CHECK(url_origin(" https://host") == "…");
  CHECK(url_origin("svn+ssh://host.example:22/x") == "svn+ssh://host.example:22");
  CHECK(url_scheme("HTTPS://h") == std::optional<std::string_view>("HTTPS"));
  CHECK_FALSE(url_scheme("mailto:someone@example.com"));
  CHECK_FALSE(url_scheme("1http://h"));
}

TEST_CASE("a store URL is sent as its origin and a request target curl keeps as given",
          "[transport]") {
  auto split = [](std::string_view url) -> std::pair<std::string, std::string> {
    auto s = split_request_target(url);
    if (!s)
      return {};
    return {std::string(s->origin), std::string(s->target)};
  };
  using parts = std::pair<std::string, std::string>;
  // Play's purchase URL: a token of letters, digits, '.', '-' and '_'.
  CHECK(split("https://androidpublisher.googleapis.com/androidpublisher/v3/applications/"
              "com.example.app/purchases/products/gold/tokens/abc.DEF-123_x%2B")
        == parts{"https://androidpublisher.googleapis.com",
                 "/androidpublisher/v3/applications/com.example.app/purchases/products/gold/"
                 "tokens/abc.DEF-123_x%2B"});
  CHECK(split("http://127.0.0.1:4000/inApps/v1/history/123?revision=a%3Db&sort=ASCENDING")
        == parts{"http://127.0.0.1:4000", "/inApps/v1/history/123?revision=a%3Db&sort=ASCENDING"});
  CHECK(split("https://[::1]:9/x/y") == parts{"https://[::1]:9", "/x/y"});
  CHECK(split("HTTPS://Host.Example/a:b@c") == parts{"HTTPS://Host.Example", "/a:b@c"});
  CHECK(split("http://h/..x/.y/a.") == parts{"http://h", "/..x/.y/a."});
  // What curl would change or refuse to send as written stays curl's to parse.
  for (auto url : {"https://user:pw@host/x",     // user info
                   "https://host/x#fragment",    // a fragment is not sent
                   "https://host/a b",           // a space curl encodes
                   "https://host/caf\xc3\xa9",   // bytes above 0x7e
                   "https://host/%zz", "https://host/50%", "https://host/%4",
                   "https://host/a/./b", "https://host/a/../b", "https://host/a/.",
                   "https://host/a/..", "https://host/a/..?x=1", "https://host/\"x\"",
                   "https://host", "https://host?x=1", "host/x", "https://ho st/x",
                   "https://host:80a/x"})
    CHECK_FALSE(split_request_target(url));
}

TEST_CASE("outbound.store-http-version text", "[config][transport]") {
  CHECK(parse_http_version("auto") == http_version::automatic);
  CHECK(parse_http_version("1.1") == http_version::http1_1);
  // No h2c: Debian 12's libcurl fails every second call on such a connection.
  for (auto refused : {"2", "h2c", "2.0", "", "AUTO", "1.0"})
    CHECK_FALSE(parse_http_version(refused).has_value());
}

TEST_CASE("an unproven record binds neither product nor user", "[merge][hostile]") {
  // A legacy claim the store rejected, or one the store has not judged yet.
  for (auto squat : {order(validation_state::rejected, fraud_reason::store_rejected),
                     order(validation_state::pending)}) {
    squat.is_legacy = true;
    squat.purchase.product_id = "premium_yearly";
    squat.echo.user_identifier = "mallory";
    auto genuine = order(validation_state::validated);
    genuine.is_legacy = true;
    genuine.purchase.product_id = "cheap_monthly";
    genuine.terms.transfers = *parse_transfer_policy("keep");
    auto m = merge_reupload(squat, genuine);
    CHECK_FALSE(m.terms.refused);
    CHECK(m.purchase.product_id == "cheap_monthly");
    CHECK(m.echo.user_identifier == std::string("alice"));
    CHECK(m.state == validation_state::validated);
  }
}

TEST_CASE("what notifications told survives a re-upload that does not say it",
          "[merge][notification]") {
  transaction_record existing;
  existing.id = "t1";
  existing.app_id = "a1";
  existing.state = validation_state::validated;
  existing.transaction.transaction_id = "100";
  existing.transaction.revocation_date = 1700000000000;
  existing.transaction.revocation_reason = 1;
  existing.transaction.subscription_status = "expired";
  existing.transaction.subscription_expires_date = 1700000500000;
  existing.transaction.auto_renew = false;
  existing.transaction.notified_at = 1700000600000;
  auto incoming = existing;
  incoming.id.clear();
  incoming.transaction = apple_transaction{};
  incoming.transaction.transaction_id = "100"; // a JWS the device signed before the refund
  auto merged = merge_reupload(existing, incoming);
  CHECK(merged.transaction.revocation_date == 1700000000000);
  CHECK(merged.transaction.revocation_reason == 1);
  CHECK(merged.transaction.subscription_status == std::string("expired"));
  CHECK(merged.transaction.subscription_expires_date == 1700000500000);
  CHECK(merged.transaction.auto_renew == false);
  CHECK(merged.transaction.notified_at == 1700000600000);

  receipt_record receipt;
  receipt.id = "r1";
  receipt.app_id = "a1";
  receipt.state = validation_state::validated;
  apple_in_app_purchase refunded, kept;
  refunded.transaction_id = "200";
  refunded.cancellation_date = 1700000000000;
  refunded.cancellation_reason = 0;
  kept.transaction_id = "201";
  receipt.in_app_purchases = {refunded, kept};
  auto again = receipt;
  again.id.clear();
  again.in_app_purchases[0].cancellation_date.reset();
  again.in_app_purchases[0].cancellation_reason.reset();
  auto merged_receipt = merge_reupload(receipt, again);
  REQUIRE(merged_receipt.in_app_purchases.size() == 2);
  CHECK(merged_receipt.in_app_purchases[0].cancellation_date == 1700000000000);
  CHECK(merged_receipt.in_app_purchases[0].cancellation_reason == 0);
  CHECK_FALSE(merged_receipt.in_app_purchases[1].cancellation_date);
}

TEST_CASE("a re-upload keeps what Play's voided list told", "[merge][voided]") {
  auto existing = order(validation_state::validated);
  existing.purchase.purchase_state = purchase_state::refunded;
  existing.purchase.voided_time = 1700000000000;
  existing.purchase.voided_reason = 7;
  existing.purchase.voided_source = 2;
  existing.purchase.voided_quantity = 1;
  // The API still says purchased (it does not read the voided list).
  auto incoming = order(validation_state::validated);
  incoming.purchase.purchase_state = purchase_state::purchased;
  incoming.updated_at = 1800000000000;
  auto m = merge_reupload(existing, incoming);
  CHECK(m.updated_at == 1800000000000);
  CHECK(m.purchase.purchase_state == purchase_state::refunded);
  CHECK(m.purchase.voided_time == 1700000000000);
  CHECK(m.purchase.voided_reason == 7);
  CHECK(m.purchase.voided_source == 2);
  CHECK(m.purchase.voided_quantity == 1);
  CHECK(
    json::parse(answer_for(m, fraud_reason::none).body).at("in_app_purchase").at("purchase_state")
    == "refunded");

  // Nothing voided: the upload's state stands.
  auto plain = order(validation_state::validated);
  plain.purchase.purchase_state = purchase_state::cancelled;
  CHECK(merge_reupload(order(validation_state::validated), plain).purchase.purchase_state
        == purchase_state::cancelled);
}

TEST_CASE("a re-upload keeps receiptd's acknowledgement", "[merge][acknowledgement]") {
  using s = acknowledgement_state;
  auto merged = [](std::optional<s> stored, std::optional<s> upload) {
    auto existing = order(validation_state::validated);
    existing.acknowledgement = stored;
    auto incoming = order(validation_state::validated);
    incoming.acknowledgement = upload;
    incoming.updated_at = 1800000000000;
    return merge_reupload(existing, incoming).acknowledgement;
  };
  // An upload that says nothing of it keeps the stored state.
  for (auto stored : {std::optional<s>{}, std::optional{s::pending}, std::optional{s::acknowledged},
                      std::optional{s::failed}})
    CHECK(merged(stored, std::nullopt) == stored);
  // An upload that settled it anew wins (a fresh pending retries a failed one) ...
  CHECK(merged(std::nullopt, s::pending) == s::pending);
  CHECK(merged(s::failed, s::pending) == s::pending);
  CHECK(merged(s::pending, s::acknowledged) == s::acknowledged);
  CHECK(merged(s::pending, s::failed) == s::failed);
  // ... but an acknowledged purchase is never pending again.
  CHECK(merged(s::acknowledged, s::pending) == s::acknowledged);
  CHECK(merged(s::acknowledged, s::failed) == s::acknowledged);
}

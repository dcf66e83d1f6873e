// Play's voided purchases list: the URL, pages read from hostile
// answers, the poll's cursor over pages and windows, and what a voided entry
// does to a purchase order.
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "model/store_b/play_api.hpp"
#include "model/store_b/voided.hpp"

using namespace receiptd::model;
using namespace receiptd::model::store_b;

namespace {

constexpr unix_ms now = 1700000000000;      // 2023-11-14 22:13:20 UTC
constexpr unix_ms thirty_days = 2592000000; // Google keeps this much
static_assert(voided_lookback_ms == thirty_days);

voided_page page_of(std::string_view body) {
  auto p = parse_voided_page(200, body, "");
  REQUIRE(p.ok());
  return *p;
}

std::string entry(const std::string& fields) {
  return R"({"voidedPurchases":[)" + fields + "]}";
}

// The one entry of a page, or none when it was skipped.
std::optional<voided_purchase> only(const std::string& fields) {
  auto p = page_of(entry(fields));
  REQUIRE(p.purchases.size() <= 1);
  if (p.purchases.empty())
    return std::nullopt;
  return p.purchases.front();
}

const std::string valid_fields
  = R"("purchaseToken":"tok","voidedTimeMillis":"1699990000000","purchaseTimeMillis":"1699000000000")";

purchase_order_record validated_order() {
  purchase_order_record r;
  r.id = "0b7c3f2e-4a5d-4c1e-9a8b-1c2d3e4f5a6b";
  r.app_id = "app";
  r.package_name = "com.example.app";
  r.purchase_token = "tok";
  r.purchase.product_id = "gems_100";
  r.purchase.kind = product_kind::product;
  r.purchase.purchase_state = purchase_state::purchased;
  r.purchase.acknowledged = true;
  r.state = validation_state::validated;
  return r;
}

voided_purchase voided(unix_ms at, int reason = 1, int source = 0,
                       std::optional<int> quantity = std::nullopt) {
  voided_purchase v;
  v.purchase_token = "tok";
  v.order_id = "GPA.1";
  v.voided_time = at;
  v.voided_reason = reason;
  v.voided_source = source;
  v.voided_quantity = quantity;
  return v;
}

} // namespace

TEST_CASE("voided purchases URL: subscriptions too, the page token escaped", "[voided]") {
  CHECK(voided_purchases_url("https://androidpublisher.googleapis.com/", "com.example.app",
                             1697408000000, 1700000000000, 1000, "")
        == "https://androidpublisher.googleapis.com/androidpublisher/v3/applications/"
           "com.example.app/purchases/voidedpurchases?startTime=1697408000000&endTime="
           "1700000000000&maxResults=1000&type=1&includeQuantityBasedPartialRefund=true");
  CHECK(voided_purchases_url("http://127.0.0.1:9//", "com.ex app", 1, 2, 50, "a/b+c=&d")
        == "http://127.0.0.1:9/androidpublisher/v3/applications/com.ex%20app/purchases/"
           "voidedpurchases?startTime=1&endTime=2&maxResults=50&type=1"
           "&includeQuantityBasedPartialRefund=true&token=a%2Fb%2Bc%3D%26d");
}

TEST_CASE("a voided purchases page as Google writes it", "[voided]") {
  // developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases:
  // int64 fields are JSON strings, voidedSource / voidedReason int32.
  auto p = page_of(R"({
    "tokenPagination": {"nextPageToken": "next-1"},
    "voidedPurchases": [
      {"kind": "androidpublisher#voidedPurchase", "purchaseToken": "tok-a",
       "purchaseTimeMillis": "1699000000000", "voidedTimeMillis": "1699990000000",
       "orderId": "GPA.3344-5566-7788-99001", "voidedSource": 2, "voidedReason": 7},
      {"kind": "androidpublisher#voidedPurchase", "purchaseToken": "tok-b",
       "purchaseTimeMillis": "1699000000001", "voidedTimeMillis": "1699990000001",
       "orderId": "GPA.3344-5566-7788-99002", "voidedSource": 1, "voidedReason": 1,
       "voidedQuantity": 2}
    ]})");
  CHECK(p.next_page_token == "next-1");
  REQUIRE(p.purchases.size() == 2);
  const auto& a = p.purchases[0];
  CHECK(a.purchase_token == "tok-a");
  CHECK(a.order_id == "GPA.3344-5566-7788-99001");
  CHECK(a.voided_time == 1699990000000);
  CHECK(a.purchase_time == 1699000000000);
  CHECK(a.voided_source == 2);
  CHECK(a.voided_reason == 7);
  CHECK_FALSE(a.voided_quantity);
  const auto& b = p.purchases[1];
  CHECK(b.purchase_token == "tok-b");
  CHECK(b.voided_time == 1699990000001);
  CHECK(b.voided_source == 1);
  CHECK(b.voided_reason == 1);
  CHECK(b.voided_quantity == 2);

  // Google leaves empty fields out: nothing voided is {}, the last page.
  auto empty = page_of("{}");
  CHECK(empty.purchases.empty());
  CHECK(empty.next_page_token.empty());
  CHECK(page_of(R"({"voidedPurchases":[],"tokenPagination":{}})").next_page_token.empty());
}

TEST_CASE("voided entries: numbers as numbers or digit strings, zeros left out", "[voided]") {
  auto v = only(R"({"purchaseToken":"t","voidedTimeMillis":1699990000000,)"
                R"("purchaseTimeMillis":1699000000000,"voidedSource":"2","voidedReason":"3",)"
                R"("voidedQuantity":"4"})");
  REQUIRE(v);
  CHECK(v->voided_time == 1699990000000);
  CHECK(v->purchase_time == 1699000000000);
  CHECK(v->voided_source == 2);
  CHECK(v->voided_reason == 3);
  CHECK(v->voided_quantity == 4);

  // proto3 JSON leaves 0 out: user-voided for "other" reasons; no order id,
  // purchase time or quantity.
  v = only(R"({"purchaseToken":"t","voidedTimeMillis":"5"})");
  REQUIRE(v);
  CHECK(v->voided_source == 0);
  CHECK(v->voided_reason == 0);
  CHECK(v->order_id.empty());
  CHECK_FALSE(v->purchase_time);
  CHECK_FALSE(v->voided_quantity);
}

TEST_CASE("voided entries receiptd cannot use are skipped", "[voided][hostile]") {
  const char* skipped[] = {
    // missing or unusable token
    R"({"voidedTimeMillis":"5"})",
    R"({"purchaseToken":"","voidedTimeMillis":"5"})",
    R"({"purchaseToken":7,"voidedTimeMillis":"5"})",
    R"({"purchaseToken":"a\u0000b","voidedTimeMillis":"5"})",
    R"({"purchaseToken":"a\nb","voidedTimeMillis":"5"})",
    // missing, negative, zero, huge or non-numeric voided time
    R"({"purchaseToken":"t"})",
    R"({"purchaseToken":"t","voidedTimeMillis":null})",
    R"({"purchaseToken":"t","voidedTimeMillis":"abc"})",
    R"({"purchaseToken":"t","voidedTimeMillis":"-5"})",
    R"({"purchaseToken":"t","voidedTimeMillis":-5})",
    R"({"purchaseToken":"t","voidedTimeMillis":0})",
    R"({"purchaseToken":"t","voidedTimeMillis":"99999999999999999999"})",
    R"({"purchaseToken":"t","voidedTimeMillis":18446744073709551615})",
    R"({"purchaseToken":"t","voidedTimeMillis":1e30})",
    R"({"purchaseToken":"t","voidedTimeMillis":1699990000000.5})",
    R"({"purchaseToken":"t","voidedTimeMillis":true})",
    R"({"purchaseToken":"t","voidedTimeMillis":{"ms":5}})",
    // source, reason, quantity that are not small non-negative integers
    R"({"purchaseToken":"t","voidedTimeMillis":"5","voidedSource":"user"})",
    R"({"purchaseToken":"t","voidedTimeMillis":"5","voidedSource":-1})",
    R"({"purchaseToken":"t","voidedTimeMillis":"5","voidedSource":4294967296})",
    R"({"purchaseToken":"t","voidedTimeMillis":"5","voidedReason":"seven"})",
    R"({"purchaseToken":"t","voidedTimeMillis":"5","voidedReason":null})",
    R"({"purchaseToken":"t","voidedTimeMillis":"5","voidedReason":2.5})",
    R"({"purchaseToken":"t","voidedTimeMillis":"5","voidedQuantity":"many"})",
    R"({"purchaseToken":"t","voidedTimeMillis":"5","voidedQuantity":null})",
    R"({"purchaseToken":"t","voidedTimeMillis":"5","voidedQuantity":99999999999})",
    // not an object
    R"(1)",
    R"("tok")",
    R"(null)",
    R"([])",
  };
  for (const char* fields : skipped) {
    INFO(fields);
    CHECK_FALSE(only(fields));
  }
  // The rest of the page is still read.
  auto p = page_of(entry(std::string(skipped[0]) + ",{" + valid_fields + "}," + skipped[7]));
  REQUIRE(p.purchases.size() == 1);
  CHECK(p.purchases[0].purchase_token == "tok");

  // Optional fields gone wrong lose the field, not the entry.
  auto v = only(R"({"purchaseToken":"t","voidedTimeMillis":"5","purchaseTimeMillis":"x",)"
                R"("orderId":"GPA.\u0007"})");
  REQUIRE(v);
  CHECK_FALSE(v->purchase_time);
  CHECK(v->order_id.empty());
  v = only(R"({"purchaseToken":"t","voidedTimeMillis":"5","orderId":")" + std::string(300, 'G')
           + R"("})");
  REQUIRE(v);
  CHECK(v->order_id.empty());
}

TEST_CASE("a page holds at most 1000 entries", "[voided][hostile]") {
  std::string list;
  for (int i = 0; i < 1001; ++i)
    list += (i ? "," : "") + std::string(R"({"purchaseToken":"t)") + std::to_string(i)
      + R"(","voidedTimeMillis":")" + std::to_string(1000 + i) + R"("})";
  auto p = page_of(entry(list));
  REQUIRE(p.purchases.size() == 1000);
  CHECK(p.purchases.front().purchase_token == "t0");
  CHECK(p.purchases.back().purchase_token == "t999");
  CHECK(p.purchases.back().voided_time == 1999);
}

TEST_CASE("a voided purchases answer that is no page is an error", "[voided][hostile]") {
  auto message = [](int status, std::string_view body, std::string_view transport = "") {
    auto p = parse_voided_page(status, body, transport);
    REQUIRE_FALSE(p.ok());
    CHECK(p.err().code() == errc::store_unavailable);
    return p.err().message();
  };
  CHECK(message(0, "", "Connection refused")
        == "Play voided purchases list: no answer: Connection refused");
  CHECK(message(403, R"({"error":{"code":403}})")
        == R"(Play voided purchases list: HTTP 403 {"error":{"code":403}})");
  CHECK(message(500, "") == "Play voided purchases list: HTTP 500");
  // The first 200 characters of the body, printable.
  CHECK(message(502, "<html>\n" + std::string(300, 'x'))
        == "Play voided purchases list: HTTP 502 <html>?" + std::string(193, 'x'));
  CHECK(message(204, "") == "Play voided purchases list: HTTP 204");

  for (std::string body :
       {"", "null", "[]", "42", R"("page")", "<html>oops</html>", "{", R"({"voidedPurchases":[)"}) {
    INFO(body);
    CHECK(message(200, body) == "Play voided purchases list: HTTP 200 without a JSON object");
  }
  // Deeper than any page: refused by the reader, whether in an entry or around it.
  CHECK(message(200, std::string(100000, '[') + std::string(100000, ']'))
        == "Play voided purchases list: HTTP 200 without a JSON object");
  CHECK(message(200,
                entry(R"({"purchaseToken":"t","voidedTimeMillis":"5","x":)" + std::string(5000, '[')
                      + std::string(5000, ']') + "}"))
        == "Play voided purchases list: HTTP 200 without a JSON object");

  // A shape that is not Google's: better no page than a page misread.
  CHECK(message(200, R"({"voidedPurchases":{"purchaseToken":"t"}})")
        == "Play voided purchases list: voidedPurchases is not an array");
  CHECK(message(200, R"({"voidedPurchases":[],"tokenPagination":"next"})")
        == R"(Play voided purchases list: tokenPagination is not {"nextPageToken": string})");
  CHECK(message(200, R"({"tokenPagination":{"nextPageToken":7}})")
        == R"(Play voided purchases list: tokenPagination is not {"nextPageToken": string})");
  CHECK(message(200, R"({"tokenPagination":{"nextPageToken":")" + std::string(2049, 'n') + "\"}}")
        == "Play voided purchases list: nextPageToken is not printable ASCII of at most 2048 "
           "bytes");
  CHECK(message(200, R"({"tokenPagination":{"nextPageToken":"a\u0000b"}})")
        == "Play voided purchases list: nextPageToken is not printable ASCII of at most 2048 "
           "bytes");
  CHECK(page_of(R"({"tokenPagination":{"nextPageToken":")" + std::string(2048, 'n') + "\"}}")
          .next_page_token.size()
        == 2048);
}

TEST_CASE("the poll's first window starts as far back as Google allows", "[voided]") {
  auto c = first_voided_cursor(now);
  CHECK(c.window_start == now - thirty_days);
  CHECK(c.page_token.empty());
  CHECK(c.high_water == now - thirty_days);
  // Asked with a minute of slack against Google's clock.
  CHECK(voided_start_time(c, now) == now - thirty_days + 60000);
  // A window that starts later is asked from its start.
  c.window_start = now - thirty_days + 60000;
  CHECK(voided_start_time(c, now) == now - thirty_days + 60000);
  c.window_start = now - thirty_days + 60001;
  CHECK(voided_start_time(c, now) == now - thirty_days + 60001);
  c.window_start = now - 1000;
  CHECK(voided_start_time(c, now) == now - 1000);
  // A cursor left behind by a long outage is clamped, not refused by Google.
  c.window_start = now - 90LL * 86400000;
  CHECK(voided_start_time(c, now) == now - thirty_days + 60000);
  CHECK(voided_start_time(c, now + 5000) == now - thirty_days + 65000);
}

TEST_CASE("the cursor advances over pages, then windows", "[voided]") {
  const unix_ms start = now - thirty_days;
  auto c = first_voided_cursor(now);

  voided_page first;
  first.purchases = {voided(start + 300), voided(start + 100)};
  first.next_page_token = "p2";
  c = advance_voided_cursor(c, first, now);
  CHECK(c.window_start == start);
  CHECK(c.page_token == "p2");
  CHECK(c.high_water == start + 300);

  voided_page second;
  second.purchases = {voided(start + 200)};
  second.next_page_token = "p3";
  c = advance_voided_cursor(c, second, now);
  CHECK(c.window_start == start);
  CHECK(c.page_token == "p3");
  CHECK(c.high_water == start + 300); // the latest seen, not the last

  voided_page last;
  last.purchases = {voided(start + 250)};
  c = advance_voided_cursor(c, last, now);
  // A new window from the latest voided time seen (read again: harmless).
  CHECK(c.window_start == start + 300);
  CHECK(c.page_token.empty());
  CHECK(c.high_water == start + 300);

  // An empty last page: the window stays where it is.
  c = advance_voided_cursor(c, voided_page{}, now);
  CHECK(c.window_start == start + 300);
  CHECK(c.page_token.empty());
  CHECK(c.high_water == start + 300);

  // An entry older than the window (Google's clock, a late listing) never
  // moves it back.
  voided_page old;
  old.purchases = {voided(start + 10)};
  c = advance_voided_cursor(c, old, now);
  CHECK(c.window_start == start + 300);

  // The next window's pages.
  voided_page more;
  more.purchases = {voided(start + 900)};
  more.next_page_token = "q2";
  c = advance_voided_cursor(c, more, now);
  CHECK(c.window_start == start + 300);
  CHECK(c.page_token == "q2");
  CHECK(c.high_water == start + 900);
  c = advance_voided_cursor(c, voided_page{}, now);
  CHECK(c.window_start == start + 900);
  CHECK(c.page_token.empty());
}

TEST_CASE("a voided time past the window's end never starts the next window in the future",
          "[voided]") {
  // Play answers for startTime..endTime; an entry dated later (its clock ahead,
  // or an answer out of its window) must not make the next poll skip what is
  // voided between endTime and that date.
  const unix_ms end = now - 1000;
  auto c = first_voided_cursor(now - 5000);
  voided_page page;
  page.purchases
    = {voided(end - 100), voided(end + 86400000), voided(std::numeric_limits<unix_ms>::max())};
  page.next_page_token = "p2";
  c = advance_voided_cursor(c, page, end);
  CHECK(c.high_water == end);
  c = advance_voided_cursor(c, voided_page{}, end);
  CHECK(c.window_start == end);
  CHECK(c.high_water == end);
  CHECK(voided_start_time(c, now) == end);
}

TEST_CASE("a voided entry marks the purchase refunded, once", "[voided]") {
  auto r = validated_order();
  CHECK(apply_voided(r, voided(1699990000000, 7, 2)));
  CHECK(r.purchase.purchase_state == purchase_state::refunded);
  CHECK(r.purchase.voided_time == 1699990000000);
  CHECK(r.purchase.voided_reason == 7);
  CHECK(r.purchase.voided_source == 2);
  CHECK_FALSE(r.purchase.voided_quantity);
  // Not fraud, not a validation matter.
  CHECK(r.state == validation_state::validated);
  CHECK(r.fraud == fraud_reason::none);
  CHECK(r.purchase.acknowledged == true);

  // The same entry again (the next window reads it again): nothing changes.
  auto before = r;
  CHECK_FALSE(apply_voided(r, voided(1699990000000, 7, 2)));
  CHECK(r.purchase.purchase_state == purchase_state::refunded);
  CHECK(r.purchase.voided_reason == before.purchase.voided_reason);

  // Another entry of the same instant that says more: taken.
  CHECK(apply_voided(r, voided(1699990000000, 7, 2, 1)));
  CHECK(r.purchase.voided_quantity == 1);
  // A later voiding: taken.
  CHECK(apply_voided(r, voided(1699990005000, 1, 1)));
  CHECK(r.purchase.voided_time == 1699990005000);
  CHECK(r.purchase.voided_reason == 1);
  CHECK(r.purchase.voided_source == 1);
  CHECK_FALSE(r.purchase.voided_quantity);
  // An older one read after it: the later one holds.
  CHECK_FALSE(apply_voided(r, voided(1699990000000, 7, 2)));
  CHECK(r.purchase.voided_time == 1699990005000);
  CHECK(r.purchase.voided_reason == 1);

  // A record whose state lost the refund gets it back, whatever the entry's age.
  r.purchase.purchase_state = purchase_state::purchased;
  CHECK(apply_voided(r, voided(1699990000000)));
  CHECK(r.purchase.purchase_state == purchase_state::refunded);
  CHECK(r.purchase.voided_time == 1699990005000);
  r.purchase.purchase_state = purchase_state::cancelled;
  CHECK(apply_voided(r, voided(1699990005000, 1, 1)));
  CHECK(r.purchase.purchase_state == purchase_state::refunded);

  // A fraud record keeps its verdict; the refund is noted all the same.
  auto forged = validated_order();
  forged.state = validation_state::rejected;
  forged.fraud = fraud_reason::store_rejected;
  CHECK(apply_voided(forged, voided(1699990000000)));
  CHECK(forged.state == validation_state::rejected);
  CHECK(forged.fraud == fraud_reason::store_rejected);
  CHECK(forged.purchase.purchase_state == purchase_state::refunded);
}

TEST_CASE("a voided Play purchase stays voided (keep_notified)", "[voided]") {
  play_purchase before;
  before.purchase_state = purchase_state::refunded;
  before.voided_time = 1699990000000;
  before.voided_reason = 7;
  before.voided_source = 2;
  before.voided_quantity = 3;

  // The API's answer knows nothing of the list: it takes the voided fields.
  play_purchase now;
  now.purchase_state = purchase_state::purchased;
  now.expiry_time = 1702592000000;
  keep_notified(now, before);
  CHECK(now.purchase_state == purchase_state::refunded);
  CHECK(now.voided_time == 1699990000000);
  CHECK(now.voided_reason == 7);
  CHECK(now.voided_source == 2);
  CHECK(now.voided_quantity == 3);
  CHECK(now.expiry_time == 1702592000000);

  // Its own voided entry is kept whole: fields are not mixed from two entries.
  play_purchase own;
  own.purchase_state = purchase_state::cancelled;
  own.voided_time = 1699995000000;
  own.voided_reason = 1;
  own.voided_source = 0;
  keep_notified(own, before);
  CHECK(own.purchase_state == purchase_state::refunded);
  CHECK(own.voided_time == 1699995000000);
  CHECK(own.voided_reason == 1);
  CHECK(own.voided_source == 0);
  CHECK_FALSE(own.voided_quantity);

  // Nothing voided on either side: nothing changes.
  play_purchase plain;
  plain.purchase_state = purchase_state::cancelled;
  keep_notified(plain, play_purchase{});
  CHECK(plain.purchase_state == purchase_state::cancelled);
  CHECK_FALSE(plain.voided_time);
}

TEST_CASE("the API's answer does not undo a voided purchase", "[voided][store_b][api]") {
  play_purchase p;
  p.product_id = "gems_100";
  p.voided_time = 1699990000000;
  auto v = classify_purchase_response(
    purchase_api::products, 200,
    R"({"productId":"gems_100","purchaseState":0,"acknowledgementState":1,)"
    R"("purchaseTimeMillis":"1699000000000"})",
    "", p);
  CHECK(v.outcome == store_outcome::confirmed);
  CHECK(p.purchase_state == purchase_state::refunded);
  CHECK(p.acknowledged == true);

  play_purchase s;
  s.product_id = "pro.monthly";
  s.voided_time = 1699990000000;
  v = classify_purchase_response(
    purchase_api::subscriptions_v2, 200,
    R"({"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"productId":"pro.monthly",)"
    R"("expiryTime":"2023-12-14T22:13:20Z"}]})",
    "", s);
  CHECK(v.outcome == store_outcome::confirmed);
  CHECK(s.purchase_state == purchase_state::refunded);
  CHECK(s.subscription_state == std::string("SUBSCRIPTION_STATE_ACTIVE"));

  // Not voided: the API's state.
  play_purchase q;
  q.product_id = "gems_100";
  classify_purchase_response(purchase_api::products, 200,
                             R"({"productId":"gems_100","purchaseState":0})", "", q);
  CHECK(q.purchase_state == purchase_state::purchased);
}

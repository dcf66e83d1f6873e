// What the stores answer receiptd's own calls (a hostile or broken network path
// can put any bytes there): the App Store Server API's Get Transaction Info and
// Get All Subscription Statuses (classify_*, the signed transactions and renewal
// info in them verified under the shipped roots, apply_server_answer,
// status_of, apply_refresh), Play's voided purchases list (parse_voided_page,
// the poll's cursor, apply_voided) and Play's acknowledge answer
// (classify_acknowledge_response, settle_acknowledgement, apply_acknowledgement).
//
// The first byte picks the HTTP status (bits 0-3) and the call (bits 4-5: Get
// Transaction Info, Get All Subscription Statuses, voided purchases,
// acknowledge); the rest is the body, "|@|", the Retry-After header (for the
// acknowledge call: the Play Developer API's products answer that landed on the
// purchase before, which sets Google's deadline).

#include <algorithm>

#include "model/resource_json.hpp"
#include "model/store_a/refresh.hpp"
#include "model/store_a/server_api.hpp"
#include "model/store_a/transaction_record.hpp"
#include "model/store_b/acknowledgement.hpp"
#include "model/store_b/play_api.hpp"
#include "model/purchases/observation.hpp"
#include "model/store_b/voided.hpp"
#include "tests/fuzz/jws_checks.hpp"

namespace {

using namespace receiptd;
namespace sa = model::store_a;
namespace sb = model::store_b;

// Details and errors go to logs and to a job's last_error: what an answer puts
// there is a printable ASCII excerpt.
bool printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// A record's store_detail may also hold receiptd's own words about a JWS, which
// are UTF-8 ("ES256 r ‖ s"): no control character is what holds there
// (regressions/store_server_answers/transaction-info-unusable-jws-detail-utf8).
bool no_control_characters(std::string_view text) {
  return std::none_of(text.begin(), text.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// What every classification of an Apple answer keeps: only a 200 confirms, only
// 404 TransactionIdNotFound rejects, only 429 has a retry hint, only 401/403
// blame the operator, and a kept body is JSON.
void check_apple_verdict(int status, const model::store_verdict& v, bool not_found,
                         const std::optional<std::int64_t>& retry_after_ms) {
  FUZZ_CHECK(!v.detail.empty() && printable(v.detail));
  if (status != 200)
    FUZZ_CHECK(v.outcome != model::store_outcome::confirmed);
  FUZZ_CHECK(not_found == (v.outcome == model::store_outcome::rejected));
  if (not_found)
    FUZZ_CHECK(status == 404);
  if (retry_after_ms)
    FUZZ_CHECK(status == 429 && *retry_after_ms >= 0);
  FUZZ_CHECK(v.operator_problem == (status == 401 || status == 403));
  if (!v.body.empty())
    fuzz::parses_as_json(v.body);
}

// A StoreKit 2 record waiting for Apple's word, naming what `signed_info`
// claims (unverified), so a genuine answer lands instead of contradicting it.
model::transaction_record pending_transaction(std::string_view signed_info) {
  model::transaction_record r;
  r.id = "00000000-0000-4000-8000-000000000002";
  r.app_id = "00000000-0000-4000-8000-000000000001";
  r.signed_transaction = "a.b.c";
  r.env = model::environment::sandbox;
  auto& a = r.transaction;
  a.transaction_id = a.original_transaction_id = "2000000000000001";
  a.bundle_id = "com.example.receiptd";
  a.product_id = "com.example.receiptd.monthly";
  if (auto payload = fuzz::claimed_payload(signed_info))
    if (auto t = sa::parse_signed_transaction(*payload)) {
      a.transaction_id = t->transaction_id;
      a.original_transaction_id = t->original_transaction_id;
      a.bundle_id = t->bundle_id;
      a.product_id = t->product_id;
      r.env = t->env;
    }
  r.transaction_key = a.transaction_id;
  return r;
}

void transaction_info(int status, std::string_view body, std::string_view retry_after) {
  auto a = sa::classify_transaction_info(status, body, status == 0 ? "timeout\n" : "", retry_after,
                                         fuzz::fixed_now);
  check_apple_verdict(status, a.verdict, a.transaction_not_found, a.retry_after_ms);
  if (a.verdict.outcome == model::store_outcome::confirmed)
    FUZZ_CHECK(!a.signed_transaction_info.empty());
  else
    FUZZ_CHECK(a.signed_transaction_info.empty());

  auto r = pending_transaction(a.signed_transaction_info);
  auto unusable
    = sa::apply_server_answer(r, a.verdict, a.signed_transaction_info, fuzz::apple_anchors());
  FUZZ_CHECK(no_control_characters(r.store_detail));
  if (a.verdict.outcome == model::store_outcome::confirmed) {
    const bool verified
      = fuzz::checked_verify_jws(a.signed_transaction_info).reason == model::fraud_reason::none;
    // Apple's word counts only when it is Apple's: else the record waits.
    if (!verified)
      FUZZ_CHECK(!unusable.empty() && r.state == model::validation_state::pending);
    if (r.state == model::validation_state::validated)
      FUZZ_CHECK(verified && unusable.empty());
  }
  fuzz::parses_as_json(boost::json::serialize(model::transaction_json(r)));
}

void subscription_statuses(int status, std::string_view body, std::string_view retry_after) {
  auto a = sa::classify_subscription_statuses(status, body, "", retry_after, fuzz::fixed_now);
  check_apple_verdict(status, a.verdict, a.transaction_not_found, a.retry_after_ms);
  if (a.verdict.outcome != model::store_outcome::confirmed)
    FUZZ_CHECK(a.entries.empty());
  for (const auto& e : a.entries)
    FUZZ_CHECK(!e.signed_transaction_info.empty() && e.status >= 0);

  // The record of the first entry's subscription (or none of them), validated.
  auto r = pending_transaction(a.entries.empty() ? "" : a.entries.front().signed_transaction_info);
  if (!a.entries.empty())
    r.transaction.original_transaction_id = a.entries.front().original_transaction_id;
  r.state = model::validation_state::validated;
  std::optional<sa::subscription_status> s;
  if (a.verdict.outcome == model::store_outcome::confirmed) {
    auto found = sa::status_of(r, a.entries, fuzz::apple_anchors());
    if (!found) {
      FUZZ_CHECK(found.err().code() == model::errc::internal_error);
      FUZZ_CHECK(!found.err().message().empty());
      return; // unusable: asked again later, the record untouched
    }
    s = *found;
  }
  if (s) {
    // Only what Apple signed names the subscription's state.
    const auto& e = *std::find_if(a.entries.begin(), a.entries.end(), [&](const auto& x) {
      return x.original_transaction_id == r.transaction.original_transaction_id;
    });
    FUZZ_CHECK(fuzz::checked_verify_jws(e.signed_transaction_info).reason
               == model::fraud_reason::none);
    FUZZ_CHECK(s->transaction.bundle_id == r.transaction.bundle_id);
  }
  const auto before = r;
  const bool settled = sa::apply_refresh(r, a.verdict, s);
  FUZZ_CHECK(settled == (a.verdict.outcome != model::store_outcome::unreachable));
  FUZZ_CHECK(r.state == before.state && r.fraud == before.fraud);
  auto once = model::transaction_json(r);
  sa::apply_refresh(r, a.verdict, s);
  FUZZ_CHECK(model::transaction_json(r) == once);
  fuzz::parses_as_json(boost::json::serialize(once));
}

void voided_purchases(int status, std::string_view body) {
  auto page = sb::parse_voided_page(status, body, status == 0 ? "timeout" : "");
  if (!page) {
    FUZZ_CHECK(page.err().code() == model::errc::store_unavailable);
    FUZZ_CHECK(printable(page.err().message()));
    return;
  }
  FUZZ_CHECK(status == 200);
  FUZZ_CHECK(page->purchases.size() <= 1000);
  FUZZ_CHECK(page->next_page_token.size() <= 2048 && printable(page->next_page_token));
  for (const auto& v : page->purchases) {
    FUZZ_CHECK(!v.purchase_token.empty() && v.purchase_token.size() <= 4096);
    FUZZ_CHECK(printable(v.purchase_token) && printable(v.order_id) && v.order_id.size() <= 256);
    FUZZ_CHECK(v.voided_time > 0 && v.voided_source >= 0 && v.voided_reason >= 0);
  }

  // The poll goes on from where the page leaves it, never further back.
  const auto c = sb::first_voided_cursor(fuzz::fixed_now);
  const auto next = sb::advance_voided_cursor(c, *page, fuzz::fixed_now);
  FUZZ_CHECK(next.window_start >= c.window_start && next.high_water >= next.window_start);
  FUZZ_CHECK(next.high_water <= fuzz::fixed_now); // never a window in the future
  FUZZ_CHECK(next.page_token == page->next_page_token);
  auto url = sb::voided_purchases_url("https://androidpublisher.googleapis.com", "com.example.app",
                                      sb::voided_start_time(next, fuzz::fixed_now), fuzz::fixed_now,
                                      1000, next.page_token);
  FUZZ_CHECK(std::all_of(url.begin(), url.end(), [](char c) { return c > 0x20 && c < 0x7f; }));

  // Each entry marks its purchase order once; a second reading changes nothing.
  for (const auto& v : page->purchases) {
    model::purchase_order_record r;
    r.id = "00000000-0000-4000-8000-000000000002";
    r.package_name = "com.example.app";
    r.purchase_token = v.purchase_token;
    r.state = model::validation_state::validated;
    r.purchase.purchase_state = model::purchase_state::purchased;
    FUZZ_CHECK(sb::apply_voided(r, v));
    FUZZ_CHECK(!sb::apply_voided(r, v));
    FUZZ_CHECK(r.purchase.purchase_state == model::purchase_state::refunded && !r.is_fraud());
    fuzz::parses_as_json(boost::json::serialize(model::purchase_order_json(r)));
    // The purchase it revokes: all of it, or a quantity-based partial refund's
    // share of three (below all of it, the rest still the customer's).
    r.purchase.product_id = "coins";
    r.purchase.kind = model::product_kind::product;
    r.purchase.quantity = 3;
    auto seen = model::purchases::observe(r, {});
    FUZZ_CHECK(seen.size() == 1 && seen[0].revocation == model::purchases::revocation_said::revoked
               && seen[0].revoked_at == v.voided_time);
    const bool partial = v.voided_quantity && *v.voided_quantity > 0 && *v.voided_quantity < 3;
    FUZZ_CHECK(seen[0].revocation_type.has_value() == partial);
    if (partial)
      FUZZ_CHECK(seen[0].revocation_percentage && *seen[0].revocation_percentage > 0
                 && *seen[0].revocation_percentage < 100000);
  }
}

// `purchase_answer`: the Play Developer API's products answer that landed on
// the record before (its purchase time sets Google's deadline).
void acknowledge(int status, std::string_view body, std::string_view purchase_answer) {
  auto a = sb::classify_acknowledge_response(status, body, status == 0 ? "timeout" : "");
  FUZZ_CHECK(!a.detail.empty() && printable(a.detail));
  using o = sb::acknowledge_outcome;
  if (status >= 200 && status < 300)
    FUZZ_CHECK(a.outcome == o::done);
  else if (status == 401)
    FUZZ_CHECK(a.outcome == o::token_401);
  else if (status >= 400 && status < 500 && status != 408 && status != 429)
    FUZZ_CHECK(a.outcome == o::refused);
  else
    FUZZ_CHECK(a.outcome == o::retry);

  model::purchase_order_record r;
  r.id = "00000000-0000-4000-8000-000000000002";
  r.package_name = "com.example.app";
  r.purchase_token = "tok-1";
  r.state = model::validation_state::validated;
  r.created_at = fuzz::fixed_now;
  r.purchase.product_id = "coins_100";
  r.purchase.kind = model::product_kind::product;
  r.purchase.purchase_state = model::purchase_state::purchased;
  r.purchase.purchase_time = fuzz::fixed_now;
  auto verdict = sb::classify_purchase_response(sb::purchase_api::products, 200, purchase_answer,
                                                "", r.purchase);
  if (verdict.outcome == model::store_outcome::confirmed)
    r.purchase.acknowledged = false; // what makes receiptd acknowledge it
  sb::settle_acknowledgement(r, true, fuzz::fixed_now);
  if (r.acknowledgement != model::acknowledgement_state::pending)
    return;
  const bool settled = sb::apply_acknowledgement(r, a, fuzz::fixed_now, false);
  FUZZ_CHECK(settled == (r.acknowledgement != model::acknowledgement_state::pending));
  if (a.outcome == o::done || a.outcome == o::refused)
    FUZZ_CHECK(settled);
  if (a.outcome == o::done)
    FUZZ_CHECK(r.acknowledgement == model::acknowledgement_state::acknowledged
               && r.purchase.acknowledged == true);
  FUZZ_CHECK(printable(r.store_detail));
  fuzz::parses_as_json(boost::json::serialize(model::purchase_order_json(r)));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  static constexpr int statuses[]
    = {200, 0, 404, 429, 401, 403, 500, 503, 204, 400, 408, 409, 410, 302, 100, 599};
  const int status = statuses[data[0] & 15];
  auto fields = fuzz::split_fields(fuzz::as_text(data + 1, size - 1), 2);
  switch ((data[0] >> 4) & 3) {
    case 0:
      transaction_info(status, fields[0], fields[1]);
      break;
    case 1:
      subscription_statuses(status, fields[0], fields[1]);
      break;
    case 2:
      voided_purchases(status, fields[0]);
      break;
    default:
      acknowledge(status, fields[0], fields[1]);
      break;
  }
  return 0;
}

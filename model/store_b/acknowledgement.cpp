#include "model/store_b/acknowledgement.hpp"

#include <boost/json/parse.hpp>

#include "model/store_b/service_account.hpp" // url_encode

namespace receiptd::model::store_b {

namespace {

constexpr std::size_t detail_chars = 200;
// Google's error envelopes are a few hundred bytes; a larger body is not read
// for its message.
constexpr std::size_t max_error_body = 64 * 1024;

// Details go to logs and to store_detail: printable ASCII only, at most `max`.
std::string excerpt(std::string_view text, std::size_t max = detail_chars) {
  std::string out;
  for (unsigned char c : text.substr(0, max))
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  return out;
}

// error.message of Google's JSON error envelope
// ({"error":{"code":400,"message":"…","errors":[…]}}), "" when there is none.
std::string google_message(std::string_view body) {
  if (body.empty() || body.size() > max_error_body)
    return {};
  boost::system::error_code ec;
  boost::json::parse_options opts;
  opts.max_depth = 16;
  auto doc = boost::json::parse(body, ec, {}, opts);
  if (ec || !doc.is_object())
    return {};
  auto* error = doc.get_object().if_contains("error");
  if (!error || !error->is_object())
    return {};
  auto* message = error->get_object().if_contains("message");
  if (!message || !message->is_string())
    return {};
  return excerpt(message->get_string());
}

// Whether Play takes an acknowledgement of this purchase: a product that is
// purchased, a subscription that is not pending. A refunded one is not worth
// acknowledging (Play answers 400 productNotOwnedByUser).
bool acknowledgeable(const play_purchase& p) {
  if (p.purchase_state == purchase_state::refunded || p.voided_time)
    return false;
  if (p.kind == product_kind::subscription)
    return p.purchase_state != purchase_state::pending;
  return p.purchase_state == purchase_state::purchased;
}

// Google's deadline has passed at `now`. Without a purchase time the upload's
// creation stands in: the purchase was made no later than that. The purchase
// time is the Play API's int64 (purchaseTimeMillis), any value up to INT64_MAX:
// the window is taken from `now` (a clock reading) instead of added to it.
bool deadline_passed(const purchase_order_record& r, unix_ms now) {
  auto made = r.purchase.purchase_time ? r.purchase.purchase_time
    : r.created_at > 0                 ? std::optional<unix_ms>(r.created_at)
                                       : std::nullopt;
  return made && now - acknowledgement_window_ms > *made;
}

} // namespace

void settle_acknowledgement(purchase_order_record& r, bool app_acknowledges, unix_ms now) {
  const auto& p = r.purchase;
  if (p.acknowledged == true) {
    if (app_acknowledges || r.acknowledgement)
      r.acknowledgement = acknowledgement_state::acknowledged;
    return;
  }
  if (!app_acknowledges || r.state != validation_state::validated || r.is_fraud()
      || p.acknowledged != false || !acknowledgeable(p))
    return;
  // A settled acknowledgement stays settled: Play may still read unacknowledged
  // for a moment after it took one, and a refused one would only be refused again.
  if (r.acknowledgement && r.acknowledgement != acknowledgement_state::pending)
    return;
  r.acknowledgement
    = deadline_passed(r, now) ? acknowledgement_state::failed : acknowledgement_state::pending;
}

std::string acknowledge_url(std::string_view api_base, const purchase_order_record& r) {
  std::string url(api_base);
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  url += "/androidpublisher/v3/applications/";
  url += url_encode(r.package_name);
  url += r.purchase.kind == product_kind::subscription ? "/purchases/subscriptions/"
                                                       : "/purchases/products/";
  url += url_encode(r.purchase.product_id);
  url += "/tokens/";
  url += url_encode(r.purchase_token);
  url += ":acknowledge";
  return url;
}

acknowledge_answer classify_acknowledge_response(int http_status, std::string_view body,
                                                 std::string_view transport_error) {
  acknowledge_answer a;
  if (http_status == 0) {
    a.outcome = acknowledge_outcome::retry;
    a.detail = "no answer: " + excerpt(transport_error);
    return a;
  }
  a.detail = "HTTP " + std::to_string(http_status);
  if (http_status >= 200 && http_status < 300) {
    a.outcome = acknowledge_outcome::done;
    return a;
  }
  if (auto message = google_message(body); !message.empty())
    a.detail += ": " + message;
  if (http_status == 401)
    a.outcome = acknowledge_outcome::token_401;
  else if (http_status == 408 || http_status == 429 || http_status >= 500)
    a.outcome = acknowledge_outcome::retry;
  else if (http_status >= 400)
    a.outcome = acknowledge_outcome::refused;
  else // 1xx, 3xx: not an answer to act on
    a.outcome = acknowledge_outcome::retry;
  return a;
}

bool apply_acknowledgement(purchase_order_record& r, const acknowledge_answer& a, unix_ms now,
                           bool give_up) {
  switch (a.outcome) {
    case acknowledge_outcome::done:
      r.acknowledgement = acknowledgement_state::acknowledged;
      r.purchase.acknowledged = true;
      r.store_detail = "acknowledged: " + a.detail;
      return true;
    case acknowledge_outcome::refused:
      r.acknowledgement = acknowledgement_state::failed;
      r.store_detail = "acknowledgement refused: " + a.detail;
      return true;
    case acknowledge_outcome::retry:
    case acknowledge_outcome::token_401:
      break;
  }
  if (deadline_passed(r, now)) {
    r.acknowledgement = acknowledgement_state::failed;
    r.store_detail = "acknowledgement failed: Google's deadline passed (last: " + a.detail + ")";
    return true;
  }
  if (give_up) {
    r.acknowledgement = acknowledgement_state::failed;
    r.store_detail = "acknowledgement failed: attempts ran out (last: " + a.detail + ")";
    return true;
  }
  r.acknowledgement = acknowledgement_state::pending;
  r.store_detail = "acknowledgement to retry: " + a.detail;
  return false;
}

purchase_order_record land_acknowledgement(const purchase_order_record& stored,
                                           const purchase_order_record& acknowledged) {
  auto out = stored;
  out.acknowledgement = acknowledged.acknowledgement;
  if (acknowledged.purchase.acknowledged == true)
    out.purchase.acknowledged = true;
  out.store_detail = acknowledged.store_detail;
  out.updated_at = acknowledged.updated_at;
  return out;
}

} // namespace receiptd::model::store_b

// Play Developer API v3 purchases.products.get and purchases.subscriptionsv2.get
// (developers.google.com/android-publisher/api-ref/rest/v3/purchases.*), with
// bodies shaped like tests/data/responses/google-play-developer-api/.

#include "store_b.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <tuple>
#include <vector>

#include <boost/json/array.hpp>

#include "model/encoding.hpp"
#include "model/timestamp.hpp"
#include "state.hpp"

namespace receiptd::emulator {

namespace {

struct error_kind {
  int code;
  std::string_view status;
  std::string_view message;
  std::string_view domain;
  std::string_view reason;
};

// What Google answers for each status, as observed from the API.
error_kind error_for(int code) {
  switch (code) {
    case 400:
      return {400, "INVALID_ARGUMENT", "Invalid Value", "global", "invalid"};
    case 401:
      return {
        401, "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
        "cookie or other valid authentication credential. See "
        "https://developers.google.com/identity/sign-in/web/devconsole-project.",
        "global", "authError"};
    case 403:
      return {403, "PERMISSION_DENIED",
              "The current user has insufficient permissions to perform the requested operation.",
              "androidpublisher", "permissionDenied"};
    case 404:
      return {404, "NOT_FOUND", "The purchase token was not found.", "androidpublisher",
              "purchaseTokenNotFound"};
    case 410:
      return {410, "GONE",
              "The subscription purchase is no longer available for query because it has been "
              "expired for too long.",
              "androidpublisher", "subscriptionPurchaseNoLongerAvailable"};
    case 429:
      return {429, "RESOURCE_EXHAUSTED", "Rate Limit Exceeded", "global", "rateLimitExceeded"};
    case 500:
      return {500, "INTERNAL", "Internal error encountered.", "global", "backendError"};
    case 502:
      return {502, "UNAVAILABLE", "Bad Gateway", "global", "backendError"};
    case 503:
      return {503, "UNAVAILABLE", "The service is currently unavailable.", "global",
              "backendError"};
    case 504:
      return {504, "DEADLINE_EXCEEDED", "Deadline exceeded.", "global", "backendError"};
    default:
      return {code, "UNKNOWN", "Error", "global", "unknown"};
  }
}

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// "2023-09-26T15:11:54.434Z", as subscriptionsv2 writes times.
std::string rfc3339(std::int64_t ms) {
  auto text = model::format_utc(ms); // "YYYY-MM-DD hh:mm:ss UTC"
  text.resize(text.size() - 4);
  text[10] = 'T';
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(((ms % 1000) + 1000) % 1000));
  return text + frac;
}

boost::json::object product_body(const play_purchase& p) {
  boost::json::object o{{"kind", "androidpublisher#productPurchase"},
                        {"purchaseTimeMillis", std::to_string(p.purchase_time_ms)},
                        {"purchaseState", p.purchase_state},
                        {"consumptionState", p.consumption_state},
                        {"developerPayload", p.developer_payload},
                        {"orderId", p.order_id},
                        {"acknowledgementState", p.acknowledged ? 1 : 0}};
  if (p.test)
    o["purchaseType"] = 0; // "Test (i.e. purchased from a license testing account)"
  o["regionCode"] = p.region_code;
  if (p.quantity) {
    o["quantity"] = *p.quantity;
    o["refundableQuantity"]
      = p.refundable_quantity.value_or(p.purchase_state == 1 ? 0 : *p.quantity);
  }
  return o;
}

// androidpublisher#productPurchaseV2 (purchases.productsv2): purchase_state 0
// PURCHASED, 1 CANCELLED, 2 PENDING; one line item of the registered product
// unless product_line_items are registered.
boost::json::object product_v2_body(const play_purchase& p) {
  boost::json::array items;
  if (p.product_line_items) {
    items = *p.product_line_items;
  } else {
    boost::json::object details{{"quantity", p.quantity.value_or(1)},
                                {"consumptionState", p.consumption_state == 1
                                                       ? "CONSUMPTION_STATE_CONSUMED"
                                                       : "CONSUMPTION_STATE_YET_TO_BE_CONSUMED"}};
    if (p.quantity)
      details["refundableQuantity"]
        = p.refundable_quantity.value_or(p.purchase_state == 1 ? 0 : *p.quantity);
    if (p.offer_id)
      details["offerId"] = *p.offer_id;
    if (p.purchase_option_id)
      details["purchaseOptionId"] = *p.purchase_option_id;
    items.push_back(
      boost::json::object{{"productId", p.product_id}, {"productOfferDetails", std::move(details)}});
  }
  auto state = p.purchase_state == 0 ? "PURCHASED"
    : p.purchase_state == 1          ? "CANCELLED"
    : p.purchase_state == 2          ? "PENDING"
                                     : "PURCHASE_STATE_UNSPECIFIED";
  boost::json::object o{
    {"kind", "androidpublisher#productPurchaseV2"},
    {"productLineItem", std::move(items)},
    {"purchaseStateContext", {{"purchaseState", state}}},
    {"orderId", p.order_id},
    {"regionCode", p.region_code},
    {"acknowledgementState",
     p.acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING"}};
  if (p.purchase_state == 0)
    o["purchaseCompletionTime"] = rfc3339(p.purchase_time_ms);
  if (p.test)
    o["testPurchaseContext"] = {{"fopType", "TEST"}};
  return o;
}

std::string subscription_state(const play_purchase& p) {
  if (p.subscription_state)
    return *p.subscription_state;
  if (p.purchase_state == 2 || p.purchase_state == 4)
    return "SUBSCRIPTION_STATE_PENDING";
  if (p.expiry_ms <= now_ms())
    return "SUBSCRIPTION_STATE_EXPIRED";
  if (p.purchase_state == 1 || !p.auto_renewing)
    return "SUBSCRIPTION_STATE_CANCELED";
  return "SUBSCRIPTION_STATE_ACTIVE";
}

boost::json::object subscription_body(const play_purchase& p) {
  auto state = subscription_state(p);
  boost::json::object line{{"productId", p.product_id},
                           {"expiryTime", rfc3339(p.expiry_ms)},
                           {"autoRenewingPlan", {{"autoRenewEnabled", p.auto_renewing}}},
                           {"offerDetails", {{"basePlanId", "p1m"}}},
                           {"latestSuccessfulOrderId", p.order_id}};
  if (p.line_item)
    for (const auto& [key, value] : *p.line_item) {
      if (value.is_null())
        line.erase(key);
      else
        line[key] = value;
    }
  boost::json::object o{
    {"kind", "androidpublisher#subscriptionPurchaseV2"},
    {"startTime", rfc3339(p.purchase_time_ms)},
    {"regionCode", p.region_code},
    {"subscriptionState", state},
    {"latestOrderId", p.order_id},
    {"acknowledgementState",
     p.acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING"},
    {"lineItems", boost::json::array{std::move(line)}}};
  if (state == "SUBSCRIPTION_STATE_CANCELED")
    o["canceledStateContext"] = {{"userInitiatedCancellation", boost::json::object{}}};
  if (p.test)
    o["testPurchase"] = boost::json::object{};
  return o;
}

reply error_reply(int code) {
  return json_reply(code, google_error(code));
}

// A token nobody registered, under a package that accepts them: a purchased,
// acknowledged purchase made now, its order id derived from the token (the
// same token always gets the same one).
std::optional<play_purchase> unregistered_purchase(const emulator_state& state,
                                                   const purchase_query& query) {
  auto policy = state.unregistered(query.package_name);
  if (!policy || (policy->kind == "subscription") != query.subscription)
    return std::nullopt;
  play_purchase p;
  p.package_name = query.package_name;
  p.product_id = query.subscription ? policy->product_id : query.product_id;
  p.token = query.token;
  p.kind = policy->kind;
  p.test = policy->test;
  p.purchase_time_ms = now_ms();
  p.expiry_ms = p.purchase_time_ms + 30LL * 86400 * 1000;
  auto h = model::sha256_hex(query.token);
  std::string digits;
  for (char c : h)
    digits.push_back(static_cast<char>('0' + static_cast<unsigned char>(c) % 10));
  p.order_id = "GPA.33" + digits.substr(0, 2) + "-" + digits.substr(2, 4) + "-"
    + digits.substr(6, 4) + "-" + digits.substr(10, 5);
  return p;
}

// RFC 6750 §2.1: "Bearer" then a live issued token; the scheme is case-insensitive.
bool bearer_is_live(const emulator_state& state, std::string_view authorization) {
  constexpr std::string_view bearer = "bearer ";
  bool is_bearer = authorization.size() > bearer.size();
  for (std::size_t i = 0; is_bearer && i < bearer.size(); ++i)
    is_bearer = std::tolower(static_cast<unsigned char>(authorization[i])) == bearer[i];
  return is_bearer && state.token_is_live(std::string(authorization.substr(bearer.size())));
}

reply invalid_argument(std::string_view message) {
  return json_reply(400, google_error(400, message, "invalid"));
}

// Google refuses to acknowledge what is not (yet) a purchase: a product whose
// purchaseState is not 0, a subscription still pending.
bool acknowledgeable(const play_purchase& p) {
  if (p.kind == "subscription")
    return subscription_state(p) != "SUBSCRIPTION_STATE_PENDING";
  return p.purchase_state == 0;
}

// ---- voidedpurchases.list

constexpr std::int64_t voided_window_ms = 30LL * 86400 * 1000; // Google: at most 30 days back
constexpr std::int64_t voided_window_slack_ms = 60 * 1000;
constexpr std::int64_t voided_default_page = 1000;

std::optional<std::int64_t> parse_int64(std::string_view text) {
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return n;
}

// What one listing is about; a page token carries all of it (Google ignores
// startTime and endTime once a token is given) plus where the last page ended.
struct voided_listing {
  std::int64_t start = 0;
  std::int64_t end = 0;
  int type = 0; // 0: products only; 1: products and subscriptions
  std::optional<std::pair<std::int64_t, std::string>> after; // (voided ms, token) last sent
};

// Opaque to clients: hex of "v1|start|end|type|last voided ms|last token".
std::string page_token(const voided_listing& l) {
  auto text = "v1|" + std::to_string(l.start) + "|" + std::to_string(l.end) + "|"
    + std::to_string(l.type) + "|" + std::to_string(l.after->first) + "|" + l.after->second;
  return model::hex_encode(text);
}

std::optional<voided_listing> parse_page_token(std::string_view hex) {
  if (hex.size() % 2 != 0)
    return std::nullopt;
  std::string text;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    int hi = model::hex_digit_value(hex[i]), lo = model::hex_digit_value(hex[i + 1]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    text.push_back(static_cast<char>(hi * 16 + lo));
  }
  std::vector<std::string_view> fields; // the last field, the token, may hold '|'
  std::string_view rest = text;
  while (fields.size() < 5) {
    auto bar = rest.find('|');
    if (bar == std::string_view::npos)
      return std::nullopt;
    fields.push_back(rest.substr(0, bar));
    rest.remove_prefix(bar + 1);
  }
  auto start = parse_int64(fields[1]), end = parse_int64(fields[2]), type = parse_int64(fields[3]),
       last = parse_int64(fields[4]);
  if (fields[0] != "v1" || !start || !end || !type || (*type != 0 && *type != 1) || !last)
    return std::nullopt;
  return voided_listing{*start, *end, static_cast<int>(*type), std::pair{*last, std::string(rest)}};
}

boost::json::object voided_body(const play_voided& v) {
  // Google encodes int64 fields as JSON strings; voidedSource and voidedReason are int32.
  boost::json::object o{{"kind", "androidpublisher#voidedPurchase"},
                        {"purchaseToken", v.token},
                        {"purchaseTimeMillis", std::to_string(v.purchase_time_ms)},
                        {"voidedTimeMillis", std::to_string(v.voided_time_ms)},
                        {"orderId", v.order_id},
                        {"voidedSource", v.voided_source},
                        {"voidedReason", v.voided_reason}};
  if (v.voided_quantity)
    o["voidedQuantity"] = *v.voided_quantity;
  return o;
}

} // namespace

boost::json::object google_error(int http_status, std::string_view message,
                                 std::string_view reason) {
  auto e = error_for(http_status);
  if (!message.empty())
    e.message = message;
  if (!reason.empty())
    e.reason = reason;
  boost::json::object detail{{"message", e.message}, {"domain", e.domain}, {"reason", e.reason}};
  if (http_status == 401) {
    detail["location"] = "Authorization";
    detail["locationType"] = "header";
  } else if (http_status == 404) {
    detail["location"] = "token";
    detail["locationType"] = "parameter";
  }
  return {{"error",
           {{"code", e.code},
            {"message", e.message},
            {"errors", boost::json::array{std::move(detail)}},
            {"status", e.status}}}};
}

reply purchase_endpoint(const emulator_state& state, const purchase_query& query,
                        std::string_view authorization) {
  if (!bearer_is_live(state, authorization))
    return error_reply(401);

  auto purchase = state.purchase(query.token);
  if (query.v2) {
    // productsv2 knows one-time products only; a purchase registered without
    // it (productsv2: false, or a products.get body) is one only products.get
    // knows; unregistered tokens are left to products.get too.
    if (!purchase || purchase->kind != "product" || !purchase->productsv2
        || (purchase->body && purchase->http_status.value_or(200) == 200))
      return error_reply(404);
    if (purchase->package_name != query.package_name)
      return error_reply(400);
    if (purchase->http_status && *purchase->http_status != 200) {
      auto r = purchase->body ? json_reply(*purchase->http_status, *purchase->body)
                              : error_reply(*purchase->http_status);
      r.retry_after = purchase->retry_after;
      return r;
    }
    return json_reply(200, product_v2_body(*purchase));
  }
  if (!purchase)
    purchase = unregistered_purchase(state, query);
  if (!purchase || (!query.subscription && !purchase->products))
    return error_reply(404);
  const bool is_subscription = purchase->kind == "subscription";
  if (purchase->package_name != query.package_name || is_subscription != query.subscription
      || (!query.subscription && purchase->product_id != query.product_id))
    return error_reply(400);

  if (purchase->http_status || purchase->body) {
    int code = purchase->http_status.value_or(200);
    if (purchase->body)
      return json_reply(code, *purchase->body);
    if (code != 200) {
      auto r = error_reply(code);
      r.retry_after = purchase->retry_after;
      return r;
    }
  }
  return json_reply(200,
                    query.subscription ? subscription_body(*purchase) : product_body(*purchase));
}

// orders.get answers the Order; orders.batchGet answers {"orders":[…]} in the
// order asked, and fails whole — 404 — when one of them is not this
// package's (Google: "If any order ID is not found or does not match the
// provided package, the entire request will fail"); 1–1000 distinct ids.
reply orders_endpoint(emulator_state& state, const std::string& package_name,
                      const std::vector<std::string>& order_ids, bool batch,
                      std::string_view authorization) {
  if (!bearer_is_live(state, authorization))
    return error_reply(401);
  if (auto failure = state.take_orders_failure())
    return error_reply(*failure);
  if (order_ids.empty() || order_ids.size() > 1000)
    return invalid_argument("orderIds must name between 1 and 1000 orders");
  for (std::size_t i = 0; i < order_ids.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (order_ids[i] == order_ids[j])
        return invalid_argument("orderIds must be distinct");
  boost::json::array orders;
  for (const auto& id : order_ids) {
    auto order = state.order(package_name, id);
    if (!order)
      return json_reply(404, google_error(404, "Order not found.", "notFound"));
    orders.push_back(order->body);
  }
  if (!batch)
    return json_reply(200, orders.front());
  return json_reply(200, boost::json::object{{"orders", std::move(orders)}});
}

// purchases.products.acknowledge / purchases.subscriptions.acknowledge: "If
// successful, the response body is empty." Acknowledging twice is not an error.
reply acknowledge_endpoint(emulator_state& state, const purchase_query& query,
                           std::string_view authorization, std::string_view body) {
  if (!bearer_is_live(state, authorization))
    return error_reply(401);
  // The request body: nothing, or {"developerPayload": "…"}.
  std::string payload;
  if (body.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    auto o = parse_object(body);
    if (!o)
      return invalid_argument("Invalid JSON payload received.");
    if (auto* v = o->if_contains("developerPayload"); v && !v->is_null()) {
      if (!v->is_string())
        return invalid_argument("Invalid value at 'developer_payload' (TYPE_STRING)");
      payload = std::string(v->as_string());
    }
  }

  // An injected failure answers whatever the purchase, and changes nothing
  // but the purchase's call count.
  const auto injected = state.take_acknowledge_failure();
  enum class outcome { not_found, invalid_state, acknowledged };
  auto result = outcome::not_found;
  state.update_purchase(query.token, [&](play_purchase& p) {
    if (p.package_name != query.package_name || (p.kind == "subscription") != query.subscription
        || p.product_id != query.product_id)
      return;
    ++p.acknowledge_calls;
    if (injected)
      return;
    if (!acknowledgeable(p)) {
      result = outcome::invalid_state;
      return;
    }
    p.acknowledged = true;
    if (!query.subscription)
      p.developer_payload = payload;
    result = outcome::acknowledged;
  });
  if (injected)
    return error_reply(*injected);
  // accept_unregistered purchases are purchased and already acknowledged.
  if (result == outcome::not_found && !state.purchase(query.token)
      && unregistered_purchase(state, query))
    result = outcome::acknowledged;
  switch (result) {
    case outcome::not_found:
      return error_reply(404);
    case outcome::invalid_state:
      return json_reply(
        400,
        google_error(400, "The purchase is not in a valid state to perform the desired operation.",
                     "invalidPurchaseState"));
    case outcome::acknowledged:
      break;
  }
  return empty_reply(200);
}

// purchases.voidedpurchases.list: the voided purchases of a package, oldest
// void first, one page of at most maxResults.
reply voided_purchases_endpoint(const emulator_state& state, const std::string& package_name,
                                const std::map<std::string, std::string>& params,
                                std::string_view authorization) {
  if (!bearer_is_live(state, authorization))
    return error_reply(401);
  auto param = [&params](const std::string& name) -> std::optional<std::string_view> {
    auto it = params.find(name);
    if (it == params.end() || it->second.empty())
      return std::nullopt;
    return std::string_view(it->second);
  };
  auto number = [&](const std::string& name, std::optional<std::int64_t>& out) {
    if (auto text = param(name)) {
      out = parse_int64(*text);
      return out.has_value();
    }
    return true;
  };

  std::optional<std::int64_t> max_results;
  if (!number("maxResults", max_results)
      || (max_results && (*max_results < 1 || *max_results > 1000)))
    return invalid_argument("maxResults must be between 1 and 1000");
  const auto page_size = max_results.value_or(voided_default_page);

  voided_listing listing;
  if (auto token = param("token")) {
    auto parsed = parse_page_token(*token);
    if (!parsed)
      return invalid_argument("Invalid pagination token.");
    listing = std::move(*parsed);
  } else {
    std::optional<std::int64_t> start, end, type;
    if (!number("startTime", start))
      return invalid_argument("Invalid value at 'start_time' (TYPE_INT64)");
    if (!number("endTime", end))
      return invalid_argument("Invalid value at 'end_time' (TYPE_INT64)");
    if (!number("type", type) || (type && *type != 0 && *type != 1))
      return invalid_argument("type must be 0 or 1");
    const auto now = now_ms();
    if (start && *start < now - voided_window_ms - voided_window_slack_ms)
      return invalid_argument("startTime is too far in the past");
    listing.start = start.value_or(now - voided_window_ms);
    listing.end = end.value_or(now);
    listing.type = static_cast<int>(type.value_or(0));
    if (listing.start > listing.end)
      return invalid_argument("startTime must not be after endTime");
  }

  // Google lists quantity-based partial refunds (voidedQuantity) only when
  // includeQuantityBasedPartialRefund is true; asked on every page.
  const bool partial_refunds = param("includeQuantityBasedPartialRefund") == "true";
  auto entries = state.voided(package_name);
  std::erase_if(entries, [&](const play_voided& v) {
    return (v.voided_quantity && !partial_refunds) || v.voided_time_ms < listing.start
      || v.voided_time_ms > listing.end
      || (listing.type == 0 && v.kind != "product")
      || (listing.after
          && std::tie(v.voided_time_ms, v.token)
            <= std::tie(listing.after->first, listing.after->second));
  });
  std::sort(entries.begin(), entries.end(), [](const play_voided& a, const play_voided& b) {
    return std::tie(a.voided_time_ms, a.token) < std::tie(b.voided_time_ms, b.token);
  });

  // Google leaves empty fields out: no voided purchase at all is "{}".
  boost::json::object answer;
  const auto shown = std::min<std::size_t>(entries.size(), static_cast<std::size_t>(page_size));
  if (shown < entries.size()) {
    listing.after = std::pair{entries[shown - 1].voided_time_ms, entries[shown - 1].token};
    answer["tokenPagination"] = {{"nextPageToken", page_token(listing)}};
  }
  if (shown > 0) {
    boost::json::array list;
    for (std::size_t i = 0; i < shown; ++i)
      list.push_back(voided_body(entries[i]));
    answer["voidedPurchases"] = std::move(list);
  }
  return json_reply(200, answer);
}

// orders.reviewrefund (Play Developer API): the bearer token, then the
// request's required fields — pendingRefundToken a non-empty string,
// sampleContentProvided a boolean, refundPreference DECLINE, APPROVE or
// NEUTRAL; consumptionPercentageMilliunits 0–100000 when given. Recorded,
// answered with an empty object.
reply review_refund_endpoint(emulator_state& state, const std::string& package_name,
                             const std::string& order_id, std::string_view authorization,
                             std::string_view body) {
  if (!bearer_is_live(state, authorization))
    return error_reply(401);
  if (auto failure = state.take_refund_failure()) {
    auto r = json_reply(failure->status, google_error(failure->status, "injected failure"));
    if (failure->retry_after)
      r.retry_after = *failure->retry_after;
    return r;
  }
  auto o = parse_object(body);
  if (!o)
    return invalid_argument("Invalid JSON payload received.");
  auto* token = o->if_contains("pendingRefundToken");
  if (!token || !token->is_string() || token->as_string().empty())
    return invalid_argument("pendingRefundToken is required.");
  auto* sample = o->if_contains("sampleContentProvided");
  if (!sample || !sample->is_bool())
    return invalid_argument("sampleContentProvided is required.");
  auto* pref = o->if_contains("refundPreference");
  if (!pref || !pref->is_string()
      || (pref->as_string() != "DECLINE" && pref->as_string() != "APPROVE"
          && pref->as_string() != "NEUTRAL"))
    return invalid_argument("Invalid value at 'refund_preference'.");
  if (auto* pct = o->if_contains("consumptionPercentageMilliunits"))
    if (!pct->is_int64() || pct->as_int64() < 0 || pct->as_int64() > 100000)
      return invalid_argument("Invalid value at 'consumption_percentage_milliunits'.");
  state.record_refund_answer({"store_b", order_id, package_name, std::string(body)});
  return json_reply(200, boost::json::object{});
}

} // namespace receiptd::emulator

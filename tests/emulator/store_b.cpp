// Play Developer API v3 purchases.products.get and purchases.subscriptionsv2.get
// (developers.google.com/android-publisher/api-ref/rest/v3/purchases.*), with
// bodies shaped like tests/data/responses/google-play-developer-api/.

#include "store_b.hpp"

#include <cctype>
#include <chrono>

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
                        {"developerPayload", ""},
                        {"orderId", p.order_id},
                        {"acknowledgementState", p.acknowledged ? 1 : 0}};
  if (p.test)
    o["purchaseType"] = 0; // "Test (i.e. purchased from a license testing account)"
  o["regionCode"] = p.region_code;
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

} // namespace

boost::json::object google_error(int http_status) {
  auto e = error_for(http_status);
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
  // RFC 6750 §2.1: "Bearer" then the token; the scheme is case-insensitive.
  constexpr std::string_view bearer = "bearer ";
  bool is_bearer = authorization.size() > bearer.size();
  for (std::size_t i = 0; is_bearer && i < bearer.size(); ++i)
    is_bearer = std::tolower(static_cast<unsigned char>(authorization[i])) == bearer[i];
  if (!is_bearer || !state.token_is_live(std::string(authorization.substr(bearer.size()))))
    return error_reply(401);

  auto purchase = state.purchase(query.token);
  if (!purchase)
    purchase = unregistered_purchase(state, query);
  if (!purchase)
    return error_reply(404);
  const bool is_subscription = purchase->kind == "subscription";
  if (purchase->package_name != query.package_name || is_subscription != query.subscription
      || (!query.subscription && purchase->product_id != query.product_id))
    return error_reply(400);

  if (purchase->http_status || purchase->body) {
    int code = purchase->http_status.value_or(200);
    if (purchase->body)
      return json_reply(code, *purchase->body);
    if (code != 200)
      return error_reply(code);
  }
  return json_reply(200,
                    query.subscription ? subscription_body(*purchase) : product_body(*purchase));
}

} // namespace receiptd::emulator

// App Store Server API, Get Transaction Info
// (developer.apple.com/documentation/appstoreserverapi/get_transaction_info):
// GET /inApps/v1/transactions/{transactionId}, and Get All Subscription Statuses
// (…/get_all_subscription_statuses): GET /inApps/v1/subscriptions/{transactionId},
// on api.storekit.apple.com and on api.storekit-sandbox.apple.com (the
// itunes.apple.com hosts before 2026-05-05),
// authenticated by an ES256 JWT ("Generating JSON Web Tokens for API requests").

#include <algorithm>
#include <cctype>
#include <chrono>
#include <tuple>

#include <boost/json/parse.hpp>

#include "jwt.hpp"
#include "renewal_info.hpp"
#include "state.hpp"
#include "store_a.hpp"

namespace receiptd::emulator {

namespace {

constexpr std::string_view audience = "appstoreconnect-v1";

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// Apple's error bodies ("Error codes" of the App Store Server API).
reply apple_error(int http_status, std::int64_t code, std::string_view message) {
  return json_reply(http_status,
                    boost::json::object{{"errorCode", code}, {"errorMessage", message}});
}

reply transaction_not_found() {
  return apple_error(404, 4040010, "Transaction id not found."); // TransactionIdNotFoundError
}

// The answer for a registered http_status without a body.
reply status_reply(int http_status) {
  switch (http_status) {
    case 401: // Apple answers a bad JWT with no body at all
      return empty_reply(401);
    case 404:
      return transaction_not_found();
    case 429: { // RateLimitExceededError
      auto r = apple_error(429, 4290000, "Rate limit exceeded.");
      r.retry_after = "2";
      return r;
    }
    case 400: // InvalidTransactionIdError
      return apple_error(400, 4000006, "Invalid transaction id.");
    default:
      if (http_status >= 500) // GeneralInternalError
        return apple_error(http_status, 5000000, "An unknown error occurred.");
      return empty_reply(http_status);
  }
}

// As status_reply, with the registered `retry_after` (when there is one) as the
// Retry-After header of whatever status it is.
reply status_reply(int http_status, const std::optional<std::string>& retry_after) {
  auto r = status_reply(http_status);
  if (retry_after)
    r.retry_after = *retry_after;
  return r;
}

// Authorization: Bearer <JWT>, the JWT as Apple requires it: header alg ES256,
// typ JWT, kid of a registered key; claims iss (its issuer id), aud
// "appstoreconnect-v1", bid (its bundle id), iat not in the future (60 s of
// skew), exp in the future and at most 60 minutes after iat.
// The bundle id of the key that signed it when it passes, else nullopt.
std::optional<std::string> authorized_bundle(const emulator_state& state,
                                             std::string_view authorization) {
  constexpr std::string_view bearer = "bearer "; // RFC 6750 §2.1; the scheme is case-insensitive
  if (authorization.size() <= bearer.size())
    return std::nullopt;
  for (std::size_t i = 0; i < bearer.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != bearer[i])
      return std::nullopt;
  auto token = parse_jwt(authorization.substr(bearer.size()));
  if (!token)
    return std::nullopt;
  if (get_string(token->header, "alg") != "ES256" || get_string(token->header, "typ") != "JWT")
    return std::nullopt;
  auto kid = get_string(token->header, "kid");
  auto key = kid ? state.server_api_key(*kid) : std::nullopt;
  if (!key || !verify_es256(*token, key->public_key.get()))
    return std::nullopt;
  if (get_string(token->claims, "iss") != key->issuer_id
      || get_string(token->claims, "aud") != audience
      || get_string(token->claims, "bid") != key->bundle_id)
    return std::nullopt;
  auto iat = get_int(token->claims, "iat");
  auto exp = get_int(token->claims, "exp");
  const std::int64_t now = now_ms() / 1000;
  if (!(iat && exp && *iat <= now + 60 && *exp > now && *exp > *iat && *exp - *iat <= 3600))
    return std::nullopt;
  return key->bundle_id;
}

bool authorized(const emulator_state& state, std::string_view authorization) {
  return authorized_bundle(state, authorization).has_value();
}

bool known_at(const apple_transaction& t, std::string_view host_environment) {
  if (t.known_in == "both")
    return true;
  if (t.known_in == "none")
    return false;
  return t.fields.environment == host_environment;
}

// A registered body (a string: its exact bytes) with `http_status` (default 200).
reply verbatim_reply(const boost::json::value& body, std::optional<int> http_status) {
  reply r = json_reply(http_status.value_or(200), body);
  if (body.is_string()) // e.g. not JSON at all
    r.body = std::string(body.as_string());
  return r;
}

constexpr std::int64_t day_ms = 86400LL * 1000;

// Apple's subscription status: 1 active, 2 expired, 3 billing retry, 4 grace
// period, 5 revoked. Registered, else derived from the transaction's dates.
int subscription_status(const apple_transaction& t, std::int64_t now) {
  if (t.subscription_status)
    return *t.subscription_status;
  if (t.fields.revocation_date)
    return 5;
  if (t.fields.expires_date && *t.fields.expires_date <= now)
    return 2;
  return 1;
}

// The transaction whose statuses_http_status / statuses_body answer a request
// naming `named`: its own, else the last registered of its original
// transaction id's that has one.
const apple_transaction* statuses_override(const apple_transaction& named,
                                           const std::vector<apple_transaction>& family) {
  auto has = [](const apple_transaction& t) { return t.statuses_http_status || t.statuses_body; };
  if (has(named))
    return &named;
  const apple_transaction* chosen = nullptr;
  for (const auto& t : family)
    if (has(t) && (!chosen || t.registered > chosen->registered))
      chosen = &t;
  return chosen;
}

// LastTransactionsItem for the subscription's latest transaction.
boost::json::object last_transaction(const emulator_state& state, const apple_transaction& latest,
                                     int status, std::string_view host_environment) {
  const auto& x = latest.fields;
  const auto now = now_ms();
  renewal_fields r;
  r.original_transaction_id = x.original_transaction_id;
  r.auto_renew_product_id = latest.auto_renew_product_id.value_or(x.product_id);
  r.product_id = x.product_id;
  r.auto_renew_status
    = latest.auto_renew_status.value_or(status == 1 || status == 3 || status == 4 ? 1 : 0);
  r.is_in_billing_retry_period = status == 3;
  if (status == 4 && x.expires_date) // Apple's grace periods run up to 16 days
    r.grace_period_expires_date = *x.expires_date + 16 * day_ms;
  r.signed_date = now;
  r.environment = std::string(host_environment);
  r.recent_subscription_start_date = x.original_purchase_date;
  r.renewal_date = x.expires_date;
  return {{"originalTransactionId", x.original_transaction_id},
          {"status", status},
          {"signedTransactionInfo", signed_transaction(state, latest, host_environment)},
          {"signedRenewalInfo",
           test_support::make_storekit_jws(renewal_payload_json(r), state.jws_pki())}};
}

// accept_unregistered: an id nobody registered, asked with a JWT of a bundle
// that accepts them, is a purchase of its product made now, known at both hosts.
std::optional<apple_transaction> unregistered_transaction(const emulator_state& state,
                                                          const std::string& bundle_id,
                                                          const std::string& transaction_id,
                                                          std::string_view host_environment) {
  auto policy = state.unregistered_transactions(bundle_id);
  if (!policy || transaction_id.empty())
    return std::nullopt;
  apple_transaction t;
  auto& x = t.fields;
  x.transaction_id = x.original_transaction_id = transaction_id;
  x.bundle_id = bundle_id;
  x.product_id = policy->product_id;
  x.type = policy->type;
  x.purchase_date = x.original_purchase_date = now_ms();
  if (x.type == "Auto-Renewable Subscription")
    x.expires_date = x.purchase_date + 30 * day_ms;
  x.environment = std::string(host_environment);
  t.known_in = "both";
  return t;
}

} // namespace

std::string signed_transaction(const emulator_state& state, const apple_transaction& transaction,
                               std::string_view environment) {
  auto fields = transaction.fields;
  fields.environment = std::string(environment);
  fields.signed_date = now_ms();
  return test_support::make_storekit_jws(test_support::transaction_payload_json(fields),
                                         state.jws_pki());
}

reply transaction_info(emulator_state& state, bool sandbox_host, const std::string& transaction_id,
                       std::string_view authorization) {
  auto bundle = authorized_bundle(state, authorization);
  if (!bundle) {
    state.count(call_kind::store_a_server_api_unauthorized);
    return empty_reply(401);
  }
  const std::string_view host_environment = sandbox_host ? "Sandbox" : "Production";
  auto t = state.transaction(transaction_id);
  if (!t)
    t = unregistered_transaction(state, *bundle, transaction_id, host_environment);
  if (!t || !known_at(*t, host_environment))
    return transaction_not_found();
  // Precedence: body, then http_status, then signed_transaction_info, then the
  // emulator's own signature.
  if (t->body)
    return verbatim_reply(*t->body, t->http_status);
  if (t->http_status && *t->http_status != 200)
    return status_reply(*t->http_status, t->retry_after);
  const std::string info = t->signed_transaction_info
    ? *t->signed_transaction_info
    : signed_transaction(state, *t, host_environment);
  return json_reply(200, boost::json::object{{"signedTransactionInfo", info}});
}

std::string signed_app_transaction(const emulator_state& state, const apple_app_transaction& t,
                                   std::string_view environment, bool device) {
  auto fields = t.fields;
  fields.receipt_type = std::string(environment);
  fields.receipt_creation_date = now_ms();
  if (!device) { // the Server API's answer is bound to no device
    fields.extra["deviceVerification"] = nullptr;
    fields.extra["deviceVerificationNonce"] = nullptr;
  }
  return test_support::make_storekit_jws(test_support::app_transaction_payload_json(fields),
                                         state.jws_pki());
}

reply app_transaction_info(emulator_state& state, bool sandbox_host, const std::string& any_id,
                           std::string_view authorization) {
  if (!authorized(state, authorization)) {
    state.count(call_kind::store_a_server_api_unauthorized);
    return empty_reply(401);
  }
  state.count(sandbox_host ? call_kind::store_a_app_transaction_sandbox
                           : call_kind::store_a_app_transaction_production);
  const std::string_view host_environment = sandbox_host ? "Sandbox" : "Production";
  auto t = state.app_transaction(any_id);
  const bool known = t
    && (t->known_in == "both"
        || (t->known_in == "own" && t->fields.receipt_type == host_environment));
  if (!known) // AppTransactionDoesNotExistError
    return apple_error(404, 4040019, "No app transaction exists for the customer.");
  // Precedence as Get Transaction Info's: body, http_status, the registered
  // signed info, the emulator's own signature.
  if (t->body)
    return verbatim_reply(*t->body, t->http_status);
  if (t->http_status && *t->http_status != 200)
    return status_reply(*t->http_status, t->retry_after);
  const std::string info = t->signed_app_transaction_info
    ? *t->signed_app_transaction_info
    : signed_app_transaction(state, *t, host_environment, false);
  return json_reply(200, boost::json::object{{"signedAppTransactionInfo", info}});
}

// Send Consumption Information (App Store Server API 1.19): the JWT, then the
// ConsumptionRequest's required fields as Apple checks them — customerConsented
// true (InvalidCustomerConsentedError otherwise), deliveryStatus one of the
// five, sampleContentProvided a boolean; consumptionPercentage 0–100000 and 0
// unless DELIVERED; refundPreference one of three. Recorded, answered 202.
reply consumption(emulator_state& state, bool sandbox_host, const std::string& transaction_id,
                  std::string_view authorization, std::string_view body) {
  if (!authorized(state, authorization)) {
    state.count(call_kind::store_a_server_api_unauthorized);
    return empty_reply(401);
  }
  if (auto failure = state.take_refund_failure())
    return status_reply(failure->status, failure->retry_after);
  boost::system::error_code ec;
  auto doc = boost::json::parse(body, ec);
  if (ec || !doc.is_object())
    return apple_error(400, 4000000, "Invalid request.");
  const auto& o = doc.as_object();
  auto* consented = o.if_contains("customerConsented");
  if (!consented || !consented->is_bool() || !consented->as_bool())
    return apple_error(400, 4000183, "Invalid request. The customer consented field is invalid.");
  static constexpr std::string_view statuses[] = {"DELIVERED", "UNDELIVERED_QUALITY_ISSUE",
                                                  "UNDELIVERED_WRONG_ITEM",
                                                  "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"};
  auto* delivery = o.if_contains("deliveryStatus");
  if (!delivery || !delivery->is_string()
      || std::find(std::begin(statuses), std::end(statuses), std::string_view(delivery->as_string()))
        == std::end(statuses))
    return apple_error(400, 4000182, "Invalid request. The delivery status field is invalid.");
  auto* sample = o.if_contains("sampleContentProvided");
  if (!sample || !sample->is_bool())
    return apple_error(400, 4000186, "Invalid request. The sample content provided field is invalid.");
  if (auto* pct = o.if_contains("consumptionPercentage")) {
    if (!pct->is_int64() || pct->as_int64() < 0 || pct->as_int64() > 100000
        || (pct->as_int64() != 0 && delivery->as_string() != "DELIVERED"))
      return apple_error(400, 4000187,
                         "Invalid request. The consumption percentage field is invalid.");
  }
  if (auto* pref = o.if_contains("refundPreference")) {
    static constexpr std::string_view prefs[] = {"DECLINE", "GRANT_FULL", "GRANT_PRORATED"};
    if (!pref->is_string()
        || std::find(std::begin(prefs), std::end(prefs), std::string_view(pref->as_string()))
          == std::end(prefs))
      return apple_error(400, 4000188, "Invalid request. The refund preference field is invalid.");
  }
  state.record_refund_answer(
    {"store_a", transaction_id, sandbox_host ? "Sandbox" : "Production", std::string(body)});
  return empty_reply(202);
}

reply subscription_statuses(emulator_state& state, bool sandbox_host,
                            const std::string& transaction_id, std::string_view authorization,
                            const std::vector<std::string>& status_filter) {
  if (!authorized(state, authorization)) {
    state.count(call_kind::store_a_server_api_unauthorized);
    return empty_reply(401);
  }
  state.count(sandbox_host ? call_kind::store_a_subscription_statuses_sandbox
                           : call_kind::store_a_subscription_statuses_production);
  const std::string_view host_environment = sandbox_host ? "Sandbox" : "Production";
  auto named = state.transaction(transaction_id);
  if (!named || !known_at(*named, host_environment))
    return transaction_not_found();
  const auto family = state.transactions_of(named->fields.original_transaction_id);
  if (const auto* o = statuses_override(*named, family)) {
    if (o->statuses_body)
      return verbatim_reply(*o->statuses_body, o->statuses_http_status);
    if (o->statuses_http_status && *o->statuses_http_status != 200)
      return status_reply(*o->statuses_http_status, o->retry_after);
  }

  boost::json::array data;
  if (named->fields.type == "Auto-Renewable Subscription") {
    // The latest: greatest purchase date, then expiry, then the last registered.
    auto order = [](const apple_transaction& t) {
      return std::make_tuple(t.fields.purchase_date, t.fields.expires_date.value_or(-1),
                             t.registered);
    };
    const apple_transaction* latest = &*named;
    for (const auto& t : family)
      if (known_at(t, host_environment) && order(t) > order(*latest))
        latest = &t;
    const int status = subscription_status(*latest, now_ms());
    const bool listed = status_filter.empty()
      || std::find(status_filter.begin(), status_filter.end(), std::to_string(status))
        != status_filter.end();
    if (listed)
      data.push_back(boost::json::object{
        {"subscriptionGroupIdentifier", latest->subscription_group_id},
        {"lastTransactions",
         boost::json::array{last_transaction(state, *latest, status, host_environment)}}});
  }
  return json_reply(200,
                    boost::json::object{{"environment", host_environment},
                                        {"bundleId", named->fields.bundle_id},
                                        {"appAppleId", 1234567890},
                                        {"data", std::move(data)}});
}

reply transaction_history(emulator_state& state, bool sandbox_host,
                          const std::string& transaction_id, std::string_view authorization,
                          const std::map<std::string, std::string>& query) {
  if (!authorized(state, authorization)) {
    state.count(call_kind::store_a_server_api_unauthorized);
    return empty_reply(401);
  }
  state.count(sandbox_host ? call_kind::store_a_history_sandbox
                           : call_kind::store_a_history_production);
  const std::string_view host_environment = sandbox_host ? "Sandbox" : "Production";
  auto named = state.transaction(transaction_id);
  if (!named || !known_at(*named, host_environment))
    return transaction_not_found();
  // The revision is the offset of the page it asks for: opaque to receiptd.
  constexpr std::string_view prefix = "emulator-revision-";
  std::size_t offset = 0;
  if (auto it = query.find("revision"); it != query.end()) {
    const auto& r = it->second;
    const auto digits = std::string_view(r).substr(std::min(r.size(), prefix.size()));
    if (!r.starts_with(prefix) || digits.empty() || digits.size() > 9
        || !std::all_of(digits.begin(), digits.end(),
                        [](char c) { return c >= '0' && c <= '9'; }))
      return apple_error(400, 4000005, "Invalid request revision."); // InvalidRequestRevisionError
    offset = std::stoul(std::string(digits));
  }
  const auto setting = state.history();
  const auto page_size = static_cast<std::size_t>(setting.page_size);
  if (setting.fail_page && offset / page_size == static_cast<std::size_t>(*setting.fail_page))
    return status_reply(setting.fail_status);
  std::vector<apple_transaction> history;
  for (auto& t : state.history_of(named->fields.bundle_id, named->customer))
    if (known_at(t, host_environment))
      history.push_back(std::move(t));
  boost::json::array page;
  for (std::size_t i = offset; i < history.size() && i < offset + page_size; ++i)
    page.push_back(boost::json::string(
      history[i].signed_transaction_info ? *history[i].signed_transaction_info
                                         : signed_transaction(state, history[i], host_environment)));
  const std::size_t next = std::min(history.size(), offset + page_size);
  return json_reply(200, boost::json::object{
                           {"revision", std::string(prefix) + std::to_string(next)},
                           {"bundleId", named->fields.bundle_id},
                           {"appAppleId", 1234567890},
                           {"environment", host_environment},
                           {"hasMore", next < history.size()},
                           {"signedTransactions", std::move(page)}});
}

} // namespace receiptd::emulator

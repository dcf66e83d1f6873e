// App Store Server API, Get Transaction Info
// (developer.apple.com/documentation/appstoreserverapi/get_transaction_info):
// GET /inApps/v1/transactions/{transactionId} on api.storekit.itunes.apple.com
// and on api.storekit-sandbox.itunes.apple.com, authenticated by an ES256 JWT
// ("Generating JSON Web Tokens for API requests").

#include <cctype>
#include <chrono>

#include "jwt.hpp"
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
      r.retry_after_seconds = 2;
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

// Authorization: Bearer <JWT>, the JWT as Apple requires it: header alg ES256,
// typ JWT, kid of a registered key; claims iss (its issuer id), aud
// "appstoreconnect-v1", bid (its bundle id), iat not in the future (60 s of
// skew), exp in the future and at most 60 minutes after iat.
bool authorized(const emulator_state& state, std::string_view authorization) {
  constexpr std::string_view bearer = "bearer "; // RFC 6750 §2.1; the scheme is case-insensitive
  if (authorization.size() <= bearer.size())
    return false;
  for (std::size_t i = 0; i < bearer.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != bearer[i])
      return false;
  auto token = parse_jwt(authorization.substr(bearer.size()));
  if (!token)
    return false;
  if (get_string(token->header, "alg") != "ES256" || get_string(token->header, "typ") != "JWT")
    return false;
  auto kid = get_string(token->header, "kid");
  auto key = kid ? state.server_api_key(*kid) : std::nullopt;
  if (!key || !verify_es256(*token, key->public_key.get()))
    return false;
  if (get_string(token->claims, "iss") != key->issuer_id
      || get_string(token->claims, "aud") != audience
      || get_string(token->claims, "bid") != key->bundle_id)
    return false;
  auto iat = get_int(token->claims, "iat");
  auto exp = get_int(token->claims, "exp");
  const std::int64_t now = now_ms() / 1000;
  return iat && exp && *iat <= now + 60 && *exp > now && *exp > *iat && *exp - *iat <= 3600;
}

bool known_at(const apple_transaction& t, std::string_view host_environment) {
  if (t.known_in == "both")
    return true;
  if (t.known_in == "none")
    return false;
  return t.fields.environment == host_environment;
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
  if (!authorized(state, authorization)) {
    state.count(call_kind::store_a_server_api_unauthorized);
    return empty_reply(401);
  }
  const std::string_view host_environment = sandbox_host ? "Sandbox" : "Production";
  auto t = state.transaction(transaction_id);
  if (!t || !known_at(*t, host_environment))
    return transaction_not_found();
  // Precedence: body, then http_status, then signed_transaction_info, then the
  // emulator's own signature.
  if (t->body) {
    reply r = json_reply(t->http_status.value_or(200), *t->body);
    if (t->body->is_string()) // a string is the body's exact bytes (e.g. not JSON at all)
      r.body = std::string(t->body->as_string());
    return r;
  }
  if (t->http_status && *t->http_status != 200)
    return status_reply(*t->http_status);
  const std::string info = t->signed_transaction_info
    ? *t->signed_transaction_info
    : signed_transaction(state, *t, host_environment);
  return json_reply(200, boost::json::object{{"signedTransactionInfo", info}});
}

} // namespace receiptd::emulator

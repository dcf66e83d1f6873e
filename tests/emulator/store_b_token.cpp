// POST /token — Google's OAuth 2.0 server for service accounts: a JWT signed
// with the account's key (RS256) is exchanged for a bearer access token
// (developers.google.com/identity/protocols/oauth2/service-account, "Making
// the access token request"; RFC 7523).

#include <chrono>

#include "jwt.hpp"
#include "state.hpp"
#include "store_b.hpp"

namespace receiptd::emulator {

namespace {

constexpr std::string_view jwt_bearer = "urn:ietf:params:oauth:grant-type:jwt-bearer";
constexpr std::string_view publisher_scope = "https://www.googleapis.com/auth/androidpublisher";
constexpr std::string_view bad_times
  = "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
    "Check your iat and exp values in the JWT claim.";

reply oauth_error(std::string_view error, std::string_view description) {
  return json_reply(400, boost::json::object{{"error", error}, {"error_description", description}});
}

bool has_scope(std::string_view scopes, std::string_view wanted) {
  while (!scopes.empty()) {
    auto space = scopes.find(' ');
    if (scopes.substr(0, space) == wanted)
      return true;
    if (space == std::string_view::npos)
      break;
    scopes.remove_prefix(space + 1);
  }
  return false;
}

} // namespace

reply token_endpoint(emulator_state& state, std::string_view body) {
  auto form = parse_form(body);
  auto grant = form.find("grant_type");
  if (grant == form.end() || grant->second != jwt_bearer)
    return oauth_error("unsupported_grant_type",
                       "Invalid grant_type: "
                         + (grant == form.end() ? std::string() : grant->second));
  auto assertion = form.find("assertion");
  if (assertion == form.end() || assertion->second.empty())
    return oauth_error("invalid_request", "Missing required parameter: assertion");

  auto token = parse_jwt(assertion->second);
  if (!token)
    return oauth_error("invalid_grant", "Invalid JWT: malformed");
  if (get_string(token->header, "alg").value_or("") != "RS256")
    return oauth_error("invalid_grant", "Invalid JWT Signature.");
  auto iss = get_string(token->claims, "iss");
  auto key = iss ? state.service_account_key(*iss) : nullptr;
  if (!key)
    return oauth_error("invalid_grant", "Invalid grant: account not found");
  if (!verify_rs256(*token, key.get()))
    return oauth_error("invalid_grant", "Invalid JWT Signature.");
  if (!has_scope(get_string(token->claims, "scope").value_or(""), publisher_scope))
    return oauth_error("invalid_grant", "Invalid OAuth scope or ID token audience provided.");
  auto aud = get_string(token->claims, "aud").value_or("");
  if (aud.size() < 6 || aud.compare(aud.size() - 6, 6, "/token") != 0)
    return oauth_error("invalid_grant", "Invalid JWT: Failed audience check.");

  auto iat = get_int(token->claims, "iat");
  auto exp = get_int(token->claims, "exp");
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  if (!iat || !exp || *iat < 0 || *exp < 0 || *iat > now + 60 || *exp <= now || *exp - *iat > 3600
      || *exp <= *iat)
    return oauth_error("invalid_grant", bad_times);

  auto issued = state.issue_token();
  return json_reply(200,
                    boost::json::object{{"access_token", issued.access_token},
                                        {"expires_in", issued.expires_in},
                                        {"token_type", "Bearer"}});
}

} // namespace receiptd::emulator

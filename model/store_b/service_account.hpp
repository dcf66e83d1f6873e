#pragma once
// Google service-account credentials and the OAuth 2.0 JWT bearer grant
// (RFC 7523) that trades them for an access token. DESIGN.md §4.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "model/result.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::store_b {

inline constexpr std::string_view androidpublisher_scope
  = "https://www.googleapis.com/auth/androidpublisher";
inline constexpr std::string_view default_token_uri = "https://oauth2.googleapis.com/token";

// A parsed service-account JSON file with its private key loaded. Parse once per
// app; thread-safe for concurrent signing.
class service_account {
public:
  static result<std::shared_ptr<const service_account>> parse(std::string_view json);
  ~service_account();

  const std::string& client_email() const { return client_email_; }
  const std::string& token_uri() const { return token_uri_; }

  // RS256 JWT {iss, scope, aud: token_uri, iat, exp = iat + 3600}.
  std::string make_assertion(unix_ms now) const;
  // The form-encoded body POSTed to token_uri.
  std::string token_request_body(unix_ms now) const;

  struct impl;
  service_account(std::string email, std::string uri, std::string key_id, std::unique_ptr<impl> p);

private:
  std::string client_email_;
  std::string token_uri_;
  std::string private_key_id_;
  std::unique_ptr<impl> impl_;
};

struct access_token {
  std::string value;
  unix_ms expires_at = 0;
};

// The token endpoint's answer; nullopt unless it is a 200 carrying a token.
std::optional<access_token> parse_token_response(int http_status, std::string_view body,
                                                 unix_ms now);

// application/x-www-form-urlencoded / URL path segment escaping.
std::string url_encode(std::string_view text);

} // namespace receiptd::model::store_b

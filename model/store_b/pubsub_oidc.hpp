#pragma once
// Pub/Sub push authentication (optional): a push subscription with
// authentication sends "Authorization: Bearer <ID token>", an OIDC JWT Google
// signs with RS256 under the keys it publishes as a JWKS
// (https://www.googleapis.com/oauth2/v3/certs). receiptd verifies it against
// keys the operator configures (store-b.rtdn-oidc-jwks), on top of the push
// URL's ?token=. Pure: the caller reads the file and supplies the clock.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "model/result.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::store_b {

// A JWKS's RSA signing keys, by kid. Thread-safe to share once parsed.
class oidc_keys {
public:
  // `json` is a JWKS document ({"keys": [...]}). Keys that are not RSA
  // ("kty" other than "RSA"), that have no "kid", whose "alg" is present and
  // not "RS256", whose "use" is present and not "sig", or whose n/e are not
  // base64url are skipped; a later key with the kid of a key already kept is
  // skipped too (an unusable entry claims no kid: RFC 7517 §4.5 lets keys of
  // different kty share one).
  // So are RSA keys outside model/key_limits.hpp (1024–4096 bits, exponent of
  // at most 64 bits): Google's are RSA-2048, e = 65537.
  // Errors (code invalid_request, field "jwks", the message saying why): not
  // JSON, no "keys" array, no usable key at all, over 1 MiB.
  static result<std::shared_ptr<const oidc_keys>> parse_jwks(std::string_view json);
  ~oidc_keys();

  std::size_t size() const;

  struct impl;
  explicit oidc_keys(std::unique_ptr<impl> p);

private:
  friend struct oidc_access;
  std::unique_ptr<impl> impl_;
};

// What a push's token must say.
struct oidc_expectation {
  std::string audience;            // "aud" must be this (or an array holding it); never empty
  std::string service_account;     // "email" must be this with "email_verified": true; empty: any
  std::chrono::seconds leeway{60}; // clock skew allowed on exp and iat
};

// The claims receiptd logs.
struct oidc_claims {
  std::string issuer;
  std::string subject;
  std::string email;
  unix_ms expires_at = 0;
};

// Verifies a compact JWT (the bearer token, without "Bearer "): three
// base64url segments (at most 16 KiB in all); header alg "RS256" (nothing else
// is accepted: not "none", not HS256, not ES256), no "crit", and a kid found in
// `keys`; a valid RSA-SHA256 signature over "header.payload"; claims iss
// "accounts.google.com" or "https://accounts.google.com", aud as expected, exp
// (seconds) after now − leeway, iat (when present) before now + leeway, and the
// email rule of `expectation`. Errors: code unauthorized, the message saying
// which check failed (for the operator's log; never the token).
result<oidc_claims> verify_push_token(std::string_view jwt, const oidc_keys& keys,
                                      const oidc_expectation& expectation, unix_ms now);

} // namespace receiptd::model::store_b

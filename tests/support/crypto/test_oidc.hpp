#pragma once
// Google-shaped OIDC test material (Pub/Sub push authentication): RSA
// keys, their JWKS entries as https://www.googleapis.com/oauth2/v3/certs
// writes them, and RS256-signed compact JWTs. Throws std::runtime_error when
// OpenSSL fails.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>
#include <openssl/types.h>

namespace receiptd::test_support {

using pkey_ptr = std::shared_ptr<EVP_PKEY>;

// A fresh RSA key (~100 ms for 2048 bits: keep one per test binary).
pkey_ptr make_rsa_key(std::size_t bits = 2048);

// {"kty":"RSA","alg":"RS256","use":"sig","kid":kid,"n":…,"e":…}.
boost::json::object rsa_jwk(EVP_PKEY* key, const std::string& kid);
// {"keys":[…]}.
std::string jwks_json(const std::vector<boost::json::value>& keys);

// RSASSA-PKCS1-v1_5 SHA-256 signature of `input` by `key`.
std::string rs256_sign(EVP_PKEY* key, std::string_view input);
// base64url(header) "." base64url(payload) "." base64url(RS256 signature), the
// header and payload taken byte for byte.
std::string rs256_jwt(std::string_view header_json, std::string_view payload_json, EVP_PKEY* key);

} // namespace receiptd::test_support

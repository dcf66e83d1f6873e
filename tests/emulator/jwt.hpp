#pragma once
// Compact JWS (RFC 7515) parsing and verification: RS256 for the Store B token
// endpoint (RFC 7523 JWT bearer grant, as Google's OAuth 2.0 server takes it),
// ES256 for the App Store Server API's bearer JWTs.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <openssl/types.h>

namespace receiptd::emulator {

// Unpadded (or padded) base64url, RFC 4648 §5; nullopt on any other character.
std::optional<std::string> base64url_decode(std::string_view text);

struct jwt {
  boost::json::object header;
  boost::json::object claims;
  std::string signing_input; // "<header b64>.<claims b64>", the signed bytes
  std::string signature;     // raw
};

// Splits and decodes header.claims.signature; nullopt when malformed.
std::optional<jwt> parse_jwt(std::string_view compact);

// RSASSA-PKCS1-v1_5 with SHA-256 over the signing input (RFC 7518 §3.3).
bool verify_rs256(const jwt& token, EVP_PKEY* key);

// ECDSA P-256 with SHA-256 over the signing input (RFC 7518 §3.4): the signature
// is r ‖ s, 64 bytes; the key must be EC P-256.
bool verify_es256(const jwt& token, EVP_PKEY* key);
bool is_ec_p256(EVP_PKEY* key);

// A public key from PEM text: "PUBLIC KEY", "RSA PUBLIC KEY", "CERTIFICATE", or a
// private key (e.g. a service-account JSON's "private_key"), whose public half is kept.
std::shared_ptr<EVP_PKEY> load_public_key(std::string_view pem);

} // namespace receiptd::emulator

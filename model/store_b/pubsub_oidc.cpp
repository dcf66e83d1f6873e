// Pub/Sub push authentication (pubsub_oidc.hpp): Google's OIDC ID tokens
// (compact JWS, RFC 7515; RS256, RFC 7518 §3.3) checked against an operator's
// copy of Google's JWKS (RFC 7517 §4, RSA members RFC 7518 §6.3.1), and the
// claims Pub/Sub documents (cloud.google.com/pubsub/docs/authenticate-push-subscriptions):
// iss, aud, exp, iat, email, email_verified.

#include "model/store_b/pubsub_oidc.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <new>
#include <optional>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>

#include "model/key_limits.hpp"
#include "model/encoding.hpp"
#include "model/store_a/openssl_ptr.hpp"

namespace receiptd::model::store_b {

namespace json = boost::json;
namespace ossl = store_a::ossl;

struct oidc_keys::impl {
  // kid → RSA public key. Only read after parsing: EVP_PKEYs are safe to verify
  // with from several threads at once (OpenSSL 3 threading rules).
  std::map<std::string, ossl::evp_pkey_ptr, std::less<>> keys;
};

// The one place that reads a parsed key set's keys.
struct oidc_access {
  static EVP_PKEY* find(const oidc_keys& keys, std::string_view kid) {
    const auto it = keys.impl_->keys.find(kid);
    return it == keys.impl_->keys.end() ? nullptr : it->second.get();
  }
};

oidc_keys::oidc_keys(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
oidc_keys::~oidc_keys() = default;

std::size_t oidc_keys::size() const {
  return impl_->keys.size();
}

namespace {

// Google's JWKS is ~1.5 KB (two or three keys); the bound only stops a wrong
// file (a log, a dump) from being read as one.
constexpr std::size_t max_jwks_bytes = 1024 * 1024;
// Google's ID tokens are ~1 KB; a push's whole Authorization header is bounded
// by the HTTP layer anyway.
constexpr std::size_t max_token_bytes = 16 * 1024;
// The latest NumericDate read: 9999-12-31T23:59:59Z (seconds).
constexpr std::int64_t max_numeric_date = 253'402'300'799;

using bn_ptr = std::unique_ptr<BIGNUM, ossl::deleter<BN_free>>;
using param_bld_ptr = std::unique_ptr<OSSL_PARAM_BLD, ossl::deleter<OSSL_PARAM_BLD_free>>;
using params_ptr = std::unique_ptr<OSSL_PARAM, ossl::deleter<OSSL_PARAM_free>>;
using pkey_ctx_ptr = std::unique_ptr<EVP_PKEY_CTX, ossl::deleter<EVP_PKEY_CTX_free>>;

error jwks_error(std::string message) {
  return error(field_errors{{"jwks", "invalid_jwks", std::move(message)}});
}

error refused(std::string message) {
  return error(errc::unauthorized, std::move(message));
}

// A string member, or nullptr when absent or not a string.
const json::string* string_member(const json::object& o, std::string_view name) {
  const auto* v = o.if_contains(name);
  return v != nullptr && v->is_string() ? &v->get_string() : nullptr;
}

// An RSA public key from a JWK's big-endian n and e (RFC 7518 §6.3.1), built
// through the provider interface (no deprecated RSA_* calls). Null when the
// numbers make no key, or one outside model/key_limits.hpp.
ossl::evp_pkey_ptr rsa_public_key(std::string_view n, std::string_view e) {
  bn_ptr bn_n{BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()),
                        static_cast<int>(n.size()), nullptr)};
  bn_ptr bn_e{BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()),
                        static_cast<int>(e.size()), nullptr)};
  param_bld_ptr bld{OSSL_PARAM_BLD_new()};
  if (!bn_n || !bn_e || !bld)
    throw std::bad_alloc();
  if (BN_is_zero(bn_n.get()) || BN_is_zero(bn_e.get()))
    return nullptr;
  if (OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1
      || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1)
    throw std::bad_alloc();
  params_ptr params{OSSL_PARAM_BLD_to_param(bld.get())};
  pkey_ctx_ptr ctx{EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr)};
  if (!params || !ctx)
    throw std::bad_alloc();
  EVP_PKEY* raw = nullptr;
  if (EVP_PKEY_fromdata_init(ctx.get()) != 1
      || EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) != 1)
    return nullptr;
  ossl::evp_pkey_ptr key{raw};
  // An operator's file sets what each push costs to verify.
  if (!rsa_key_problem(key.get()).empty())
    return nullptr;
  return key;
}

// One JWKS entry as a usable RS256 key, or null (skipped: see parse_jwks).
ossl::evp_pkey_ptr usable_key(const json::object& jwk) {
  const auto* kty = string_member(jwk, "kty");
  if (kty == nullptr || *kty != "RSA")
    return nullptr;
  if (const auto* alg = jwk.if_contains("alg");
      alg != nullptr && !(alg->is_string() && alg->get_string() == "RS256"))
    return nullptr;
  if (const auto* use = jwk.if_contains("use");
      use != nullptr && !(use->is_string() && use->get_string() == "sig"))
    return nullptr;
  const auto* n = string_member(jwk, "n");
  const auto* e = string_member(jwk, "e");
  if (n == nullptr || e == nullptr)
    return nullptr;
  auto n_bytes = base64url_decode(*n);
  auto e_bytes = base64url_decode(*e);
  if (!n_bytes || !e_bytes || n_bytes->empty() || e_bytes->empty())
    return nullptr;
  return rsa_public_key(*n_bytes, *e_bytes);
}

result<std::shared_ptr<const oidc_keys>> parse(std::string_view text) {
  if (text.size() > max_jwks_bytes)
    return jwks_error("the JWKS is over 1 MiB");
  boost::system::error_code ec;
  const auto doc = json::parse(text, ec);
  if (ec || !doc.is_object())
    return jwks_error("the JWKS is not a JSON object");
  const auto* keys = doc.get_object().if_contains("keys");
  if (keys == nullptr || !keys->is_array())
    return jwks_error("the JWKS has no \"keys\" array");
  auto out = std::make_unique<oidc_keys::impl>();
  for (const auto& entry : keys->get_array()) {
    if (!entry.is_object())
      continue;
    const auto* kid = string_member(entry.get_object(), "kid");
    // A kid kept before keeps its first key: which one a token means must not
    // depend on the order a lookup happens to prefer. (An unusable entry,
    // e.g. an EC key under the same kid, claims nothing: RFC 7517 §4.5.)
    if (kid == nullptr || kid->empty() || out->keys.count(std::string_view(*kid)) != 0)
      continue;
    if (auto key = usable_key(entry.get_object()))
      out->keys.emplace(std::string(*kid), std::move(key));
  }
  if (out->keys.empty())
    return jwks_error("the JWKS holds no RSA signing key with a kid (kty RSA, alg RS256, use sig)");
  return std::make_shared<const oidc_keys>(std::move(out));
}

// A JWT NumericDate (RFC 7519 §2: seconds, possibly with a fraction) as unix
// ms, or nullopt when it is not a number in [0, 9999-12-31].
std::optional<unix_ms> numeric_date(const json::value& v) {
  double seconds = 0;
  if (v.is_int64())
    seconds = static_cast<double>(v.get_int64());
  else if (v.is_uint64())
    seconds = static_cast<double>(v.get_uint64());
  else if (v.is_double())
    seconds = v.get_double();
  else
    return std::nullopt;
  if (!std::isfinite(seconds) || seconds < 0 || seconds > static_cast<double>(max_numeric_date))
    return std::nullopt;
  return static_cast<unix_ms>(std::floor(seconds * 1000));
}

// The three segments of a compact JWS: exactly two dots, none empty.
bool split(std::string_view jwt, std::string_view (&parts)[3]) {
  const auto first = jwt.find('.');
  if (first == std::string_view::npos)
    return false;
  const auto second = jwt.find('.', first + 1);
  if (second == std::string_view::npos || jwt.find('.', second + 1) != std::string_view::npos)
    return false;
  parts[0] = jwt.substr(0, first);
  parts[1] = jwt.substr(first + 1, second - first - 1);
  parts[2] = jwt.substr(second + 1);
  return !parts[0].empty() && !parts[1].empty() && !parts[2].empty();
}

bool rs256_verifies(EVP_PKEY* key, std::string_view signing_input, std::string_view signature) {
  // RSASSA-PKCS1-v1_5: the signature is exactly as long as the modulus.
  if (signature.size() != static_cast<std::size_t>(EVP_PKEY_get_size(key)))
    return false;
  ossl::evp_md_ctx_ptr ctx{EVP_MD_CTX_new()};
  if (!ctx)
    throw std::bad_alloc();
  return EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) == 1
    && EVP_DigestVerify(
         ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
         reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size())
    == 1;
}

// Whether "aud" names `audience`: a string, or an array holding it (RFC 7519 §4.1.3).
bool audience_matches(const json::value& aud, std::string_view audience) {
  if (aud.is_string())
    return aud.get_string() == audience;
  if (!aud.is_array())
    return false;
  for (const auto& a : aud.get_array())
    if (a.is_string() && a.get_string() == audience)
      return true;
  return false;
}

result<oidc_claims> verify(std::string_view jwt, const oidc_keys& keys,
                           const oidc_expectation& expectation, unix_ms now) {
  if (expectation.audience.empty())
    return refused("no audience is configured to check the token against");
  if (jwt.size() > max_token_bytes)
    return refused("token is over 16 KiB");
  std::string_view parts[3];
  if (!split(jwt, parts))
    return refused("token is not three base64url segments");
  auto header_bytes = base64url_decode(parts[0]);
  auto payload_bytes = base64url_decode(parts[1]);
  auto signature = base64url_decode(parts[2]);
  if (!header_bytes || !payload_bytes || !signature)
    return refused("a token segment is not canonical base64url");

  // Header: RS256 only, whatever else the token would like (RFC 8725 §3.1).
  boost::system::error_code ec;
  const auto header = json::parse(*header_bytes, ec);
  if (ec || !header.is_object())
    return refused("token header is not a JSON object");
  const auto* alg = string_member(header.get_object(), "alg");
  if (alg == nullptr || *alg != "RS256")
    return refused("token header alg is not RS256");
  // RFC 7515 §4.1.11: critical extensions must be understood; none are.
  if (header.get_object().contains("crit"))
    return refused("token header has crit parameters");
  const auto* kid = string_member(header.get_object(), "kid");
  if (kid == nullptr)
    return refused("token header has no kid");
  EVP_PKEY* key = oidc_access::find(keys, *kid);
  if (key == nullptr)
    return refused("token kid is not among the configured keys (Google rotates its keys: "
                   "refresh the JWKS)");

  const auto signing_input = jwt.substr(0, parts[0].size() + 1 + parts[1].size());
  if (!rs256_verifies(key, signing_input, *signature))
    return refused("token signature does not verify");

  // Claims, now that Google signed them.
  const auto payload = json::parse(*payload_bytes, ec);
  if (ec || !payload.is_object())
    return refused("token payload is not a JSON object");
  const auto& claims = payload.get_object();
  const auto* iss = string_member(claims, "iss");
  if (iss == nullptr || (*iss != "accounts.google.com" && *iss != "https://accounts.google.com"))
    return refused("token iss is not accounts.google.com");
  const auto* aud = claims.if_contains("aud");
  if (aud == nullptr || !audience_matches(*aud, expectation.audience))
    return refused("token aud is not the configured audience");

  const unix_ms leeway_ms
    = std::max<std::int64_t>(0, std::chrono::milliseconds(expectation.leeway).count());
  const auto* exp_value = claims.if_contains("exp");
  const auto exp = exp_value != nullptr ? numeric_date(*exp_value) : std::nullopt;
  if (!exp)
    return refused("token has no exp NumericDate");
  // RFC 7519 §4.1.4: now must be before exp (here: now − leeway).
  if (*exp <= now - leeway_ms)
    return refused("token expired");
  if (const auto* iat_value = claims.if_contains("iat")) {
    const auto iat = numeric_date(*iat_value);
    if (!iat)
      return refused("token iat is not a NumericDate");
    if (*iat > now + leeway_ms)
      return refused("token iat is in the future");
  }

  const auto* email = string_member(claims, "email");
  if (!expectation.service_account.empty()) {
    if (email == nullptr || *email != expectation.service_account)
      return refused("token email is not the configured service account");
    const auto* verified = claims.if_contains("email_verified");
    if (verified == nullptr || !verified->is_bool() || !verified->get_bool())
      return refused("token email is not verified (email_verified is not true)");
  }

  oidc_claims out;
  out.issuer = std::string(*iss);
  if (const auto* sub = string_member(claims, "sub"))
    out.subject = std::string(*sub);
  if (email != nullptr)
    out.email = std::string(*email);
  out.expires_at = *exp;
  return out;
}

} // namespace

result<std::shared_ptr<const oidc_keys>> oidc_keys::parse_jwks(std::string_view json) {
  ossl::error_queue_guard guard;
  try {
    return parse(json);
  } catch (const std::bad_alloc&) {
    return error(errc::internal_error, "out of memory while reading the JWKS");
  }
}

result<oidc_claims> verify_push_token(std::string_view jwt, const oidc_keys& keys,
                                      const oidc_expectation& expectation, unix_ms now) {
  ossl::error_queue_guard guard;
  try {
    return verify(jwt, keys, expectation, now);
  } catch (const std::bad_alloc&) {
    // Ours, not the token's: never a 401.
    return error(errc::internal_error, "out of memory while verifying a push token");
  }
}

} // namespace receiptd::model::store_b

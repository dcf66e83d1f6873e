#include "tests/support/crypto/test_oidc.hpp"

#include <stdexcept>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "model/encoding.hpp"

namespace receiptd::test_support {

namespace {

std::string big_endian(EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &bn) != 1)
    throw std::runtime_error("no RSA parameter");
  std::string out(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return out;
}

} // namespace

pkey_ptr make_rsa_key(std::size_t bits) {
  EVP_PKEY* k = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", bits);
  if (k == nullptr)
    throw std::runtime_error("RSA key generation failed");
  return pkey_ptr(k, EVP_PKEY_free);
}

boost::json::object rsa_jwk(EVP_PKEY* key, const std::string& kid) {
  using model::base64url_encode;
  return {{"kty", "RSA"},
          {"alg", "RS256"},
          {"use", "sig"},
          {"kid", kid},
          {"n", base64url_encode(big_endian(key, OSSL_PKEY_PARAM_RSA_N))},
          {"e", base64url_encode(big_endian(key, OSSL_PKEY_PARAM_RSA_E))}};
}

std::string jwks_json(const std::vector<boost::json::value>& keys) {
  boost::json::array a(keys.begin(), keys.end());
  return boost::json::serialize(boost::json::object{{"keys", std::move(a)}});
}

std::string rs256_sign(EVP_PKEY* key, std::string_view input) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), EVP_MD_CTX_free};
  const auto* data = reinterpret_cast<const unsigned char*>(input.data());
  std::size_t len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1
      || EVP_DigestSign(ctx.get(), nullptr, &len, data, input.size()) != 1)
    throw std::runtime_error("RS256 signing failed");
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, data,
                     input.size())
      != 1)
    throw std::runtime_error("RS256 signing failed");
  sig.resize(len);
  return sig;
}

std::string rs256_jwt(std::string_view header_json, std::string_view payload_json, EVP_PKEY* key) {
  using model::base64url_encode;
  const auto input = base64url_encode(header_json) + "." + base64url_encode(payload_json);
  return input + "." + base64url_encode(rs256_sign(key, input));
}

} // namespace receiptd::test_support

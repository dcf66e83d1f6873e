#include "jwt.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/decoder.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "http_util.hpp"
#include "model/encoding.hpp"

namespace receiptd::emulator {

std::optional<std::string> base64url_decode(std::string_view text) {
  std::string standard;
  standard.reserve(text.size() + 2);
  for (char c : text) {
    if (c == '-')
      standard.push_back('+');
    else if (c == '_')
      standard.push_back('/');
    else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '=')
      standard.push_back(c);
    else
      return std::nullopt; // model::base64_decode would skip whitespace; a JWT has none
  }
  return model::base64_decode(standard);
}

std::optional<jwt> parse_jwt(std::string_view compact) {
  auto dot1 = compact.find('.');
  if (dot1 == std::string_view::npos)
    return std::nullopt;
  auto dot2 = compact.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || compact.find('.', dot2 + 1) != std::string_view::npos)
    return std::nullopt;
  auto header = base64url_decode(compact.substr(0, dot1));
  auto claims = base64url_decode(compact.substr(dot1 + 1, dot2 - dot1 - 1));
  auto signature = base64url_decode(compact.substr(dot2 + 1));
  if (!header || !claims || !signature)
    return std::nullopt;
  auto header_json = parse_object(*header);
  auto claims_json = parse_object(*claims);
  if (!header_json || !claims_json)
    return std::nullopt;
  return jwt{std::move(*header_json), std::move(*claims_json), std::string(compact.substr(0, dot2)),
             std::move(*signature)};
}

bool verify_rs256(const jwt& token, EVP_PKEY* key) {
  if (!key || EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA)
    return false;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(token.signature.data()),
                          token.signature.size(),
                          reinterpret_cast<const unsigned char*>(token.signing_input.data()),
                          token.signing_input.size())
    == 1;
}

namespace {
struct openssl_free {
  void operator()(unsigned char* p) const noexcept { OPENSSL_free(p); }
};
} // namespace

bool is_ec_p256(EVP_PKEY* key) {
  if (!key || EVP_PKEY_get_base_id(key) != EVP_PKEY_EC)
    return false;
  char group[64] = "";
  std::size_t len = 0;
  if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &len)
      != 1)
    return false;
  return std::string_view(group, len) == "prime256v1";
}

bool verify_es256(const jwt& token, EVP_PKEY* key) {
  if (!is_ec_p256(key) || token.signature.size() != 64)
    return false;
  // JWS carries r ‖ s; OpenSSL verifies the DER Ecdsa-Sig-Value.
  const auto* raw = reinterpret_cast<const unsigned char*>(token.signature.data());
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(ECDSA_SIG_new(), ECDSA_SIG_free);
  BIGNUM* r = BN_bin2bn(raw, 32, nullptr);
  BIGNUM* s = BN_bin2bn(raw + 32, 32, nullptr);
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return false;
  }
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(sig.get(), &der);
  if (der_len <= 0)
    return false;
  std::unique_ptr<unsigned char, openssl_free> owned(der);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), der, static_cast<std::size_t>(der_len),
                          reinterpret_cast<const unsigned char*>(token.signing_input.data()),
                          token.signing_input.size())
    == 1;
}

std::shared_ptr<EVP_PKEY> load_public_key(std::string_view pem) {
  if (pem.empty() || pem.size() > 64 * 1024)
    return nullptr;
  auto read = [&](auto reader) -> EVP_PKEY* {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
    return bio ? reader(bio.get()) : nullptr;
  };
  EVP_PKEY* key = read([](BIO* b) { return PEM_read_bio_PUBKEY(b, nullptr, nullptr, nullptr); });
  if (!key)
    key = read([](BIO* b) {
      X509* cert = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
      EVP_PKEY* k = cert ? X509_get_pubkey(cert) : nullptr;
      X509_free(cert);
      return k;
    });
  if (!key) // an empty passphrase: an encrypted key fails instead of prompting on a tty
    key = read(
      [](BIO* b) { return PEM_read_bio_PrivateKey(b, nullptr, nullptr, const_cast<char*>("")); });
  if (!key) // "RSA PUBLIC KEY" (PKCS#1) has no PEM_read_bio_* in the non-deprecated API
    key = read([](BIO* b) {
      EVP_PKEY* k = nullptr;
      OSSL_DECODER_CTX* dctx = OSSL_DECODER_CTX_new_for_pkey(&k, "PEM", "type-specific", "RSA",
                                                             EVP_PKEY_PUBLIC_KEY, nullptr, nullptr);
      if (dctx && OSSL_DECODER_from_bio(dctx, b) != 1)
        k = nullptr;
      OSSL_DECODER_CTX_free(dctx);
      return k;
    });
  if (!key)
    return nullptr;
  return std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free);
}

} // namespace receiptd::emulator

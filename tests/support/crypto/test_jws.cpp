#include "tests/support/crypto/test_jws.hpp"

#include <memory>
#include <stdexcept>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "model/encoding.hpp"

namespace receiptd::test_support {

namespace {

[[noreturn]] void fail(const char* what) {
  char buf[256] = "";
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  ERR_clear_error();
  throw std::runtime_error(std::string("test_jws: ") + what + ": " + buf);
}

struct md_ctx_free {
  void operator()(EVP_MD_CTX* p) const noexcept { EVP_MD_CTX_free(p); }
};
struct ecdsa_sig_free {
  void operator()(ECDSA_SIG* p) const noexcept { ECDSA_SIG_free(p); }
};

// r and s as two 32-byte big-endian integers (RFC 7518 §3.4).
std::string raw_signature(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<ECDSA_SIG, ecdsa_sig_free> sig{
    d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()))};
  if (!sig)
    fail("ECDSA signature is not DER");
  std::string raw(64, '\0');
  auto* out = reinterpret_cast<unsigned char*>(raw.data());
  if (BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), out, 32) != 32
      || BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), out + 32, 32) != 32)
    fail("ECDSA r or s longer than 32 bytes (not P-256)");
  return raw;
}

} // namespace

test_pki make_jws_pki(std::string name) {
  test_pki pki;
  cert_options root;
  root.common_name = name + " Root CA - G3";
  root.key_algorithm = "EC";
  root.is_ca = true;
  pki.root = make_cert(root);

  cert_options mid = root;
  mid.common_name = apple_wwdr_name;
  mid.organization = apple_organization;
  mid.organizational_unit = name;
  mid.marker_oids = {apple_wwdr_intermediate_oid};
  pki.intermediate = make_cert(mid, &pki.root);

  cert_options leaf;
  leaf.common_name = apple_storekit_leaf_name;
  leaf.organization = apple_organization;
  leaf.organizational_unit = name;
  leaf.key_algorithm = "EC";
  leaf.marker_oids = {apple_receipt_signing_oid};
  pki.leaf = make_cert(leaf, &pki.intermediate);
  return pki;
}

std::string jws_pki_pem(const test_pki& pki) {
  return pki.leaf.pem() + pki.leaf.key_pem() + pki.intermediate.pem() + pki.root.pem();
}

test_pki load_jws_pki(std::string_view pem) {
  constexpr std::string_view begin = "-----BEGIN CERTIFICATE-----";
  constexpr std::string_view end = "-----END CERTIFICATE-----";
  std::vector<std::string_view> certs;
  for (auto at = pem.find(begin); at != std::string_view::npos; at = pem.find(begin, at)) {
    auto stop = pem.find(end, at);
    if (stop == std::string_view::npos)
      break;
    certs.push_back(pem.substr(at, stop + end.size() - at));
    at = stop;
  }
  if (certs.size() != 3)
    throw std::runtime_error("test_jws: a JWS PKI has 3 certificates (leaf, intermediate, root)");
  test_pki pki;
  pki.leaf = load_cert(certs[0], pem); // the one private key in the text
  pki.intermediate = load_cert(certs[1]);
  pki.root = load_cert(certs[2]);
  return pki;
}

std::string base64url(std::string_view bytes) {
  return model::base64url_encode(bytes);
}

std::string base64url_decode(std::string_view text) {
  std::string b64(text);
  for (auto& c : b64)
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (b64.size() % 4 != 0)
    b64 += '=';
  auto out = model::base64_decode(b64);
  if (!out || text.find_first_of("+/=") != std::string_view::npos)
    throw std::runtime_error("test_jws: not base64url: " + std::string(text.substr(0, 40)));
  return *out;
}

std::vector<std::string> split_compact(const std::string& compact) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (auto dot = compact.find('.'); dot != std::string::npos; dot = compact.find('.', start)) {
    out.push_back(compact.substr(start, dot - start));
    start = dot + 1;
  }
  out.push_back(compact.substr(start));
  return out;
}

bool es256_verifies(std::string_view signing_input, std::string_view raw_signature, EVP_PKEY* key) {
  if (raw_signature.size() != 64 || key == nullptr)
    return false;
  const auto* raw = reinterpret_cast<const unsigned char*>(raw_signature.data());
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig{ECDSA_SIG_new(), ECDSA_SIG_free};
  BIGNUM* r = BN_bin2bn(raw, 32, nullptr);
  BIGNUM* s = BN_bin2bn(raw + 32, 32, nullptr);
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    fail("ECDSA_SIG");
  }
  unsigned char* der = nullptr;
  const int der_len = i2d_ECDSA_SIG(sig.get(), &der);
  if (der_len <= 0)
    fail("i2d_ECDSA_SIG");
  std::unique_ptr<EVP_MD_CTX, md_ctx_free> ctx{EVP_MD_CTX_new()};
  const bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) == 1
    && EVP_DigestVerify(ctx.get(), der, static_cast<std::size_t>(der_len),
                        reinterpret_cast<const unsigned char*>(signing_input.data()),
                        signing_input.size())
      == 1;
  OPENSSL_free(der);
  ERR_clear_error();
  return ok;
}

std::string sign_es256_jws(std::string_view header_json, std::string_view payload_json,
                           EVP_PKEY* key) {
  const std::string input = base64url(header_json) + "." + base64url(payload_json);
  std::unique_ptr<EVP_MD_CTX, md_ctx_free> ctx{EVP_MD_CTX_new()};
  std::size_t len = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(input.data());
  if (!ctx || !key || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1
      || EVP_DigestSign(ctx.get(), nullptr, &len, data, input.size()) != 1)
    fail("ES256 signature");
  std::string der(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(der.data()), &len, data,
                     input.size())
      != 1)
    fail("ES256 signature");
  der.resize(len);
  return input + "." + base64url(raw_signature(der));
}

std::string make_storekit_jws(std::string_view payload_json,
                              const std::vector<std::string>& x5c_der, EVP_PKEY* signer) {
  boost::json::array x5c;
  for (const auto& der : x5c_der)
    x5c.emplace_back(model::base64_encode(der));
  boost::json::object header{{"alg", "ES256"}, {"x5c", std::move(x5c)}};
  return sign_es256_jws(boost::json::serialize(header), payload_json, signer);
}

std::string make_storekit_jws(std::string_view payload_json, const test_pki& pki) {
  return make_storekit_jws(payload_json, {pki.leaf.der(), pki.intermediate.der(), pki.root.der()},
                           pki.leaf.key());
}

std::string transaction_payload_json(const transaction_fields& t) {
  boost::json::object o;
  auto optional = [&o](std::string_view key, const auto& value) {
    if (value)
      o[key] = *value;
  };
  o["transactionId"] = t.transaction_id;
  o["originalTransactionId"] = t.original_transaction_id;
  optional("webOrderLineItemId", t.web_order_line_item_id);
  o["bundleId"] = t.bundle_id;
  o["productId"] = t.product_id;
  o["purchaseDate"] = t.purchase_date;
  o["originalPurchaseDate"] = t.original_purchase_date;
  optional("expiresDate", t.expires_date);
  o["quantity"] = t.quantity;
  o["type"] = t.type;
  optional("appAccountToken", t.app_account_token);
  optional("inAppOwnershipType", t.in_app_ownership_type);
  o["signedDate"] = t.signed_date;
  optional("revocationReason", t.revocation_reason);
  optional("revocationDate", t.revocation_date);
  o["environment"] = t.environment;
  optional("transactionReason", t.transaction_reason);
  optional("storefront", t.storefront);
  optional("price", t.price);
  optional("currency", t.currency);
  optional("appTransactionId", t.app_transaction_id);
  for (const auto& kv : t.extra)
    o[kv.key()] = kv.value();
  return boost::json::serialize(o);
}

std::string device_verification_of(std::string_view nonce, std::string_view device_id) {
  auto lower = [](std::string_view text) {
    std::string out(text);
    for (auto& c : out)
      if (c >= 'A' && c <= 'Z')
        c = static_cast<char>(c - 'A' + 'a');
    return out;
  };
  const auto input = lower(nonce) + lower(device_id);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(input.data(), input.size(), digest, &size, EVP_sha384(), nullptr) != 1)
    throw std::runtime_error("SHA-384 failed");
  return model::base64_encode(std::string_view(reinterpret_cast<const char*>(digest), size));
}

std::string app_transaction_payload_json(const app_transaction_fields& t) {
  boost::json::object o;
  auto optional = [&o](std::string_view key, const auto& value) {
    if (value)
      o[key] = *value;
  };
  o["receiptType"] = t.receipt_type;
  optional("appAppleId", t.app_apple_id);
  o["bundleId"] = t.bundle_id;
  o["applicationVersion"] = t.application_version;
  optional("versionExternalIdentifier", t.version_external_identifier);
  o["receiptCreationDate"] = t.receipt_creation_date;
  o["originalPurchaseDate"] = t.original_purchase_date;
  o["originalApplicationVersion"] = t.original_application_version;
  o["deviceVerification"] = device_verification_of(t.device_verification_nonce,
                                                   t.device_verification_id);
  o["deviceVerificationNonce"] = t.device_verification_nonce;
  optional("preorderDate", t.preorder_date);
  optional("appTransactionId", t.app_transaction_id);
  optional("originalPlatform", t.original_platform);
  for (const auto& kv : t.extra)
    o[kv.key()] = kv.value();
  return boost::json::serialize(o);
}

} // namespace receiptd::test_support

#include "model/store_a/pkcs7.hpp"

#include <climits>
#include <cstring>

#include <openssl/asn1t.h>
#include <openssl/objects.h>

#include "model/store_a/openssl_ptr.hpp"
#include "model/store_a/trust.hpp"

namespace receiptd::model::store_a {

// RFC 2315 §9.1 SignedData, as OpenSSL's PKCS7_SIGNED template but with
// `certificates` as ANY: each element keeps its full encoding, undecoded.
struct signed_data {
  ASN1_INTEGER* version;
  STACK_OF(X509_ALGOR) * md_algs;
  PKCS7* contents;
  STACK_OF(ASN1_TYPE) * cert;
  STACK_OF(ASN1_TYPE) * crl;
  STACK_OF(PKCS7_SIGNER_INFO) * signer_info;
};

namespace {

// OpenSSL's ASN.1 template macros: constant item tables, no mutable state.
DECLARE_ASN1_ITEM(signed_data)

ASN1_SEQUENCE(signed_data) = {
  ASN1_SIMPLE(signed_data, version, ASN1_INTEGER),
  ASN1_SET_OF(signed_data, md_algs, X509_ALGOR),
  ASN1_SIMPLE(signed_data, contents, PKCS7),
  ASN1_IMP_SEQUENCE_OF_OPT(signed_data, cert, ASN1_ANY, 0),
  ASN1_IMP_SET_OF_OPT(signed_data, crl, ASN1_ANY, 1),
  ASN1_SET_OF(signed_data, signer_info, PKCS7_SIGNER_INFO),
} ASN1_SEQUENCE_END(signed_data)

ASN1_SEQUENCE(content_info) = {
  ASN1_SIMPLE(content_info, type, ASN1_OBJECT),
  ASN1_EXP_OPT(content_info, sign, signed_data, 0),
} ASN1_SEQUENCE_END(content_info)

std::string_view view(const ASN1_STRING* s) {
  return {reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
          static_cast<std::size_t>(ASN1_STRING_length(s))};
}

bool digest(const EVP_MD* md, std::string_view data, unsigned char* out, unsigned int& len) {
  return EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) == 1;
}

} // namespace

void content_info_deleter::operator()(content_info* p) const noexcept {
  ASN1_item_free(reinterpret_cast<ASN1_VALUE*>(p), ASN1_ITEM_rptr(content_info));
}

content_info_ptr parse_signed_data(std::string_view der, std::string& error) {
  if (der.empty() || der.size() > static_cast<std::size_t>(LONG_MAX)) {
    error = "receipt is empty";
    return nullptr;
  }
  auto p = reinterpret_cast<const unsigned char*>(der.data());
  const auto* end = p + der.size();
  content_info_ptr ci{reinterpret_cast<content_info*>(
    ASN1_item_d2i(nullptr, &p, static_cast<long>(der.size()), ASN1_ITEM_rptr(content_info)))};
  if (!ci) {
    error = "receipt is neither a transaction receipt nor PKCS#7 SignedData";
    return nullptr;
  }
  if (p != end) {
    error = "bytes after the PKCS#7 structure";
    return nullptr;
  }
  if (OBJ_obj2nid(ci->type) != NID_pkcs7_signed || ci->sign == nullptr) {
    error = "PKCS#7 data is not SignedData";
    return nullptr;
  }
  // Apple embeds three certificates (leaf, intermediate, root); each one costs
  // ~100 µs to decode the first time, so a receipt may not make us decode hundreds.
  if (sk_ASN1_TYPE_num(ci->sign->cert) > max_embedded_certificates) {
    error = "more embedded certificates than any receipt carries";
    return nullptr;
  }
  PKCS7* inner = ci->sign->contents;
  if (inner == nullptr || OBJ_obj2nid(inner->type) != NID_pkcs7_data || inner->d.data == nullptr) {
    error = "SignedData does not embed its content";
    return nullptr;
  }
  return ci;
}

std::string_view signed_content(const content_info& ci) {
  // d2i has joined a constructed (BER) OCTET STRING into one buffer.
  return view(ci.sign->contents->d.data);
}

std::vector<std::string_view> embedded_certificates(const content_info& ci) {
  std::vector<std::string_view> out;
  for (int i = 0, n = sk_ASN1_TYPE_num(ci.sign->cert); i < n; ++i) {
    const ASN1_TYPE* t = sk_ASN1_TYPE_value(ci.sign->cert, i);
    // ANY keeps a SEQUENCE's complete encoding (tag and length included).
    if (t != nullptr && t->type == V_ASN1_SEQUENCE)
      out.push_back(view(t->value.sequence));
  }
  return out;
}

PKCS7_SIGNER_INFO* single_signer(const content_info& ci) {
  if (sk_PKCS7_SIGNER_INFO_num(ci.sign->signer_info) != 1)
    return nullptr;
  return sk_PKCS7_SIGNER_INFO_value(ci.sign->signer_info, 0);
}

bool verify_signer(const content_info& ci, const PKCS7_SIGNER_INFO& si, X509* signer,
                   const trust_anchors& anchors, std::string& detail) {
  const EVP_MD* md = anchors.digest(OBJ_obj2nid(si.digest_alg->algorithm));
  if (md == nullptr) {
    detail = "unsupported digest algorithm";
    return false;
  }
  EVP_PKEY* key = X509_get0_pubkey(signer);
  if (key == nullptr) {
    detail = "signer certificate has no usable key";
    return false;
  }
  auto content = signed_content(ci);
  std::string_view signed_bytes = content;
  unsigned char* attrs_der = nullptr;
  struct free_on_exit {
    unsigned char*& p;
    ~free_on_exit() { OPENSSL_free(p); }
  } guard{attrs_der};
  if (sk_X509_ATTRIBUTE_num(si.auth_attr) > 0) {
    // RFC 2315 §9.3: with authenticated attributes the signature covers their
    // DER (as a SET), and the messageDigest attribute binds the content.
    unsigned char md_value[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    const ASN1_OCTET_STRING* claimed = PKCS7_digest_from_attributes(si.auth_attr);
    if (claimed == nullptr || !digest(md, content, md_value, md_len)
        || view(claimed) != std::string_view(reinterpret_cast<char*>(md_value), md_len)) {
      detail = "messageDigest attribute does not match the content";
      return false;
    }
    int n = ASN1_item_i2d(reinterpret_cast<ASN1_VALUE*>(si.auth_attr), &attrs_der,
                          ASN1_ITEM_rptr(PKCS7_ATTR_VERIFY));
    if (n <= 0) {
      detail = "cannot encode the signed attributes";
      return false;
    }
    signed_bytes = {reinterpret_cast<char*>(attrs_der), static_cast<std::size_t>(n)};
  }
  ossl::evp_md_ctx_ptr ctx{EVP_MD_CTX_new()};
  bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key) == 1
            && EVP_DigestVerifyUpdate(ctx.get(), signed_bytes.data(), signed_bytes.size()) == 1
            && EVP_DigestVerifyFinal(ctx.get(), ASN1_STRING_get0_data(si.enc_digest),
                                     static_cast<std::size_t>(ASN1_STRING_length(si.enc_digest)))
                 == 1;
  if (!ok)
    detail = "PKCS#7 signature does not match the content";
  return ok;
}

} // namespace receiptd::model::store_a

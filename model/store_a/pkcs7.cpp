#include "model/store_a/pkcs7.hpp"

#include <climits>
#include <cstring>

#include <openssl/asn1t.h>
#include <openssl/objects.h>

#include "model/key_limits.hpp"
#include "model/store_a/ber.hpp"
#include "model/store_a/openssl_ptr.hpp"
#include "model/store_a/parsed.hpp"
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

// ---- the shape of the wrapper, before OpenSSL decodes anything -----------------
//
// ASN1_item_d2i allocates and decodes every element it meets before we could
// count anything. Measured on this hardware (one verify_receipt call, before
// these bounds): a nested SignedData as the content with 800 certificates (780 KB)
// took 113 ms, each X509 decoded with its key; a signer's issuer name of 55,000
// entries (660 KB) 136 ms; 60,000 digest algorithms 22 ms. So the structure is
// walked first (ber.hpp: one linear pass, no allocation) and anything bigger
// than a receipt ever is refused as malformed (each of the above: < 0.1 ms).

namespace shape {

constexpr std::uint8_t sequence = 0x30, set = 0x31, oid = 0x06, integer = 0x02;
constexpr std::uint8_t context_0 = 0xA0, context_1 = 0xA1; // [0] / [1], constructed

// DER content octets of the two PKCS#7 content types (RFC 2315 §14).
constexpr std::string_view oid_signed_data{"\x2A\x86\x48\x86\xF7\x0D\x01\x07\x02", 9};
constexpr std::string_view oid_data{"\x2A\x86\x48\x86\xF7\x0D\x01\x07\x01", 9};

// Apple receipts carry one digest algorithm, no CRLs and one signer info of
// ~300 bytes (no attributes); Xcode's are alike. Generous bounds above that.
constexpr std::size_t max_digest_algorithms = 8;
constexpr std::size_t max_crls = 16;
constexpr std::size_t max_signer_infos = 4;
constexpr std::size_t max_signer_info_bytes = 8 * 1024;

bool is_oid(const ber::element& e, std::string_view value) {
  return e.identifier == oid && !e.indefinite && e.content == value;
}

// The children of `e`, which must be constructed with the given identifier.
template <std::size_t N>
bool children(const ber::element& e, std::uint8_t identifier, ber::element (&out)[N],
              std::size_t& n) {
  n = 0;
  if (e.identifier != identifier)
    return false;
  return ber::for_each_child(e, [&](const ber::element& c) {
    if (n == N)
      return false;
    out[n++] = c;
    return true;
  });
}

// Checks a SET / [n] of at most `limit` elements of at most `max_bytes` each.
bool bounded(const ber::element& e, std::size_t limit, std::size_t max_bytes) {
  std::size_t n = 0;
  return ber::for_each_child(
    e, [&](const ber::element& c) { return ++n <= limit && c.whole.size() <= max_bytes; });
}

// "" when the ContentInfo at `der` is a SignedData of receipt size, else why not.
std::string check(std::string_view der) {
  auto rest = der;
  auto ci = ber::read(rest);
  if (!ci || ci->identifier != sequence)
    return "receipt is neither a transaction receipt nor PKCS#7 SignedData";
  if (!rest.empty())
    return "bytes after the PKCS#7 structure";
  ber::element top[2];
  std::size_t n = 0;
  if (!children(*ci, sequence, top, n) || n == 0 || top[0].identifier != oid)
    return "receipt is neither a transaction receipt nor PKCS#7 SignedData";
  if (!is_oid(top[0], oid_signed_data) || n != 2)
    return "PKCS#7 data is not SignedData";
  ber::element explicit_sd[1];
  if (!children(top[1], context_0, explicit_sd, n) || n != 1)
    return "PKCS#7 SignedData is not one SEQUENCE";
  // SignedData ::= SEQUENCE { version, digestAlgorithms SET, contentInfo,
  //   [0] IMPLICIT certificates OPTIONAL, [1] IMPLICIT crls OPTIONAL, signerInfos SET }
  ber::element sd[6];
  if (!children(explicit_sd[0], sequence, sd, n) || n < 4 || sd[0].identifier != integer)
    return "PKCS#7 SignedData has more or fewer parts than RFC 2315 defines";
  if (sd[1].identifier != set || !bounded(sd[1], max_digest_algorithms, 256))
    return "more digest algorithms than any receipt carries";
  // The content must be plain data: OpenSSL would decode a nested SignedData
  // (and every certificate in it) only for us to refuse it afterwards.
  ber::element content[2];
  std::size_t m = 0;
  if (!children(sd[2], sequence, content, m) || m == 0 || !is_oid(content[0], oid_data))
    return "SignedData does not embed its content as data";
  std::size_t i = 3;
  if (i < n && sd[i].identifier == context_0) {
    if (!bounded(sd[i], max_embedded_certificates, max_certificate_bytes))
      return "more or larger embedded certificates than any receipt carries";
    ++i;
  }
  if (i < n && sd[i].identifier == context_1) {
    if (!bounded(sd[i], max_crls, max_certificate_bytes))
      return "more revocation lists than any receipt carries";
    ++i;
  }
  if (i + 1 != n || sd[i].identifier != set
      || !bounded(sd[i], max_signer_infos, max_signer_info_bytes))
    return "more or larger signer infos than any receipt carries";
  return {};
}

} // namespace shape

} // namespace

void content_info_deleter::operator()(content_info* p) const noexcept {
  ASN1_item_free(reinterpret_cast<ASN1_VALUE*>(p), ASN1_ITEM_rptr(content_info));
}

result<content_info_ptr> parse_signed_data(std::string_view der) {
  if (der.empty() || der.size() > static_cast<std::size_t>(LONG_MAX))
    return malformed("receipt is empty");
  if (auto problem = shape::check(der); !problem.empty())
    return malformed(std::move(problem));
  auto p = reinterpret_cast<const unsigned char*>(der.data());
  const auto* end = p + der.size();
  content_info_ptr ci{reinterpret_cast<content_info*>(
    ASN1_item_d2i(nullptr, &p, static_cast<long>(der.size()), ASN1_ITEM_rptr(content_info)))};
  if (!ci)
    return malformed("receipt is neither a transaction receipt nor PKCS#7 SignedData");
  if (p != end)
    return malformed("bytes after the PKCS#7 structure");
  if (OBJ_obj2nid(ci->type) != NID_pkcs7_signed || ci->sign == nullptr)
    return malformed("PKCS#7 data is not SignedData");
  // Counted before decoding by shape::check; kept as the invariant the
  // verifier relies on.
  if (sk_ASN1_TYPE_num(ci->sign->cert) > max_embedded_certificates)
    return malformed("more embedded certificates than any receipt carries");
  PKCS7* inner = ci->sign->contents;
  if (inner == nullptr || OBJ_obj2nid(inner->type) != NID_pkcs7_data || inner->d.data == nullptr)
    return malformed("SignedData does not embed its content");
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

status verify_signer(const content_info& ci, const PKCS7_SIGNER_INFO& si, X509* signer,
                     const trust_anchors& anchors) {
  auto invalid
    = [](std::string why) { return refusal(fraud_reason::invalid_signature, std::move(why)); };
  const EVP_MD* md = anchors.digest(OBJ_obj2nid(si.digest_alg->algorithm));
  if (md == nullptr)
    return invalid("unsupported digest algorithm");
  EVP_PKEY* key = X509_get0_pubkey(signer);
  if (key == nullptr)
    return invalid("signer certificate has no usable key");
  // Before the key is used (key_limits.hpp): RSA within sane sizes, or EC (whose
  // curves OpenSSL bounds). Every Apple and Xcode receipt signer is RSA-2048.
  if (!EVP_PKEY_is_a(key, "RSA") && !EVP_PKEY_is_a(key, "EC"))
    return invalid("signer key is neither RSA nor EC");
  if (auto problem = rsa_key_problem(key); !problem.empty())
    return invalid("signer " + problem);
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
        || view(claimed) != std::string_view(reinterpret_cast<char*>(md_value), md_len))
      return invalid("messageDigest attribute does not match the content");
    int n = ASN1_item_i2d(reinterpret_cast<ASN1_VALUE*>(si.auth_attr), &attrs_der,
                          ASN1_ITEM_rptr(PKCS7_ATTR_VERIFY));
    if (n <= 0)
      return invalid("cannot encode the signed attributes");
    signed_bytes = {reinterpret_cast<char*>(attrs_der), static_cast<std::size_t>(n)};
  }
  ossl::evp_md_ctx_ptr ctx{EVP_MD_CTX_new()};
  bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key) == 1
    && EVP_DigestVerifyUpdate(ctx.get(), signed_bytes.data(), signed_bytes.size()) == 1
    && EVP_DigestVerifyFinal(ctx.get(), ASN1_STRING_get0_data(si.enc_digest),
                             static_cast<std::size_t>(ASN1_STRING_length(si.enc_digest)))
      == 1;
  if (!ok)
    return invalid("PKCS#7 signature does not match the content");
  return done{};
}

} // namespace receiptd::model::store_a

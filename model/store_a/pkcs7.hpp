#pragma once
// The PKCS#7 SignedData wrapper of unified receipts (internal).
//
// Parsed with OpenSSL's BER-capable template decoder (indefinite lengths and
// constructed OCTET STRINGs, as in Xcode's receipts), through a template that
// mirrors PKCS7_SIGNED (RFC 2315 §9.1) except that certificates stay raw DER:
// OpenSSL 3.0 spends ~100 µs decoding each certificate's public key, so
// certificates are decoded on demand through certificate_cache instead of on
// every parse.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/pkcs7.h>

#include "model/result.hpp"

namespace receiptd::model::store_a {

class trust_anchors;

struct signed_data;   // SignedData with raw certificates
struct content_info { // ContentInfo { contentType, [0] EXPLICIT SignedData }
  ASN1_OBJECT* type;
  signed_data* sign;
};

struct content_info_deleter {
  void operator()(content_info* p) const noexcept;
};
using content_info_ptr = std::unique_ptr<content_info, content_info_deleter>;

inline constexpr int max_embedded_certificates = 16;
// Apple's certificates are 1–1.6 KB. Decoding costs grow with size (OpenSSL
// canonicalises every name entry: 136 ms for 55,000 entries), so a certificate
// (embedded, or the leaf of a transaction receipt) larger than this is refused
// before it is decoded.
inline constexpr std::size_t max_certificate_bytes = 16 * 1024;

// Decodes a whole ContentInfo that must be SignedData embedding `data` content,
// with at most max_embedded_certificates certificates of at most
// max_certificate_bytes each. Its shape (element counts and sizes, the content
// type) is checked by a BER walk before OpenSSL decodes anything, so hostile
// bytes cost a linear pass. Errors carry field "receipt" and code
// "malformed_receipt".
result<content_info_ptr> parse_signed_data(std::string_view der);

// The embedded content (the receipt payload), in place.
std::string_view signed_content(const content_info& ci);

// The embedded certificates as DER, in order.
std::vector<std::string_view> embedded_certificates(const content_info& ci);

// The single signer info, or null when there is not exactly one.
PKCS7_SIGNER_INFO* single_signer(const content_info& ci);

// Checks the signer's signature with `signer`'s key: over the content digest, or,
// with signed attributes, over their DER after matching messageDigest (RFC 2315
// §9.3). Digests: SHA-1, SHA-256, SHA-384, SHA-512. Errors carry field "receipt"
// and code "invalid_signature".
status verify_signer(const content_info& ci, const PKCS7_SIGNER_INFO& si, X509* signer,
                     const trust_anchors& anchors);

} // namespace receiptd::model::store_a

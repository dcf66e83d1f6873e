#pragma once
// Test PKI and signed Store A receipts, generated with OpenSSL at test time.
//
// Used by the unit tests (cases no public vector covers) and by the functional
// tests (receipts that go through the real HTTP path). Production code loads the
// generated roots through the normal trust configuration
// (model::store_a::load_trust_anchors with root_pem()), so nothing in model/ knows
// about tests.
//
// Typical use:
//   auto pki = test_support::make_test_pki();                 // root ← WWDR-like ← leaf
//   test_support::unified_receipt_params p;
//   p.bundle_id = "com.example.app";
//   p.in_app.push_back(test_support::purchase("com.example.pro", "1000001", utc(2024, 5, 1)));
//   std::string der = test_support::make_unified_receipt(p, test_support::apple_like_signer(pki));
//   // base64_encode(der) is what an app uploads; pki.root.pem() is the trust root to configure.
//
// Key generation costs ~50–200 ms per RSA-2048 key: make a PKI once per test
// binary and reuse it. Every function throws std::runtime_error when OpenSSL fails
// (test code: a failure here is a broken test, not a verdict).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <openssl/types.h>

#include "model/records.hpp"
#include "model/timestamp.hpp"

namespace receiptd::test_support {

using model::unix_ms;

// Milliseconds since the epoch of a UTC calendar time.
unix_ms utc(int year, int month, int day, int hour = 0, int minute = 0, int second = 0);

enum class digest { sha1, sha256 };

struct cert_options;

// A certificate with its private key. Cheap to copy (shared OpenSSL objects).
class test_cert {
public:
  test_cert() = default;
  std::string pem() const;     // the certificate, PEM
  std::string der() const;     // the certificate, DER
  std::string key_pem() const; // the private key, PKCS#8 PEM
  X509* x509() const { return cert_.get(); }
  EVP_PKEY* key() const { return key_.get(); }
  explicit operator bool() const { return cert_ != nullptr; }

private:
  friend test_cert make_cert(const cert_options&, const test_cert*);
  friend test_cert load_cert(std::string_view, std::string_view);
  std::shared_ptr<X509> cert_;
  std::shared_ptr<EVP_PKEY> key_;
};

// Apple's marker extensions (value: DER NULL), as on the real certificates.
inline constexpr const char* apple_receipt_signing_oid = "1.2.840.113635.100.6.11.1";
inline constexpr const char* apple_wwdr_intermediate_oid = "1.2.840.113635.100.6.2.1";
// iOS 6 (v2) transaction receipts: the iTunes Store CA and its
// "PurchaseReceiptCertificate" leaves.
inline constexpr const char* apple_itunes_intermediate_oid = "1.2.840.113635.100.6.2.2";
inline constexpr const char* apple_purchase_receipt_oid = "1.2.840.113635.100.6.5.1";
// What Apple puts on a developer certificate issued by the WWDR CA ("iPhone
// Developer"): its key signs code, not receipts.
inline constexpr const char* apple_iphone_developer_oid = "1.2.840.113635.100.6.1.2";

// Apple's names, as the real certificates carry them (config/trust, tests/data).
inline constexpr const char* apple_organization = "Apple Inc.";
inline constexpr const char* apple_wwdr_name
  = "Apple Worldwide Developer Relations Certification Authority";
inline constexpr const char* apple_itunes_ca_name = "Apple iTunes Store Certification Authority";
inline constexpr const char* apple_receipt_signing_name
  = "Mac App Store and iTunes Store Receipt Signing";
inline constexpr const char* apple_purchase_receipt_name = "PurchaseReceiptCertificate";

struct cert_options {
  std::string common_name = "receiptd test certificate";
  std::string organization = "receiptd tests";
  std::string organizational_unit;   // empty: none
  std::string key_algorithm = "RSA"; // "RSA" (key_bits), "EC" (P-256) or "DSA" (key_bits)
  int key_bits = 2048;
  unsigned long long rsa_exponent = 65537; // RSA public exponent (odd)
  int rsa_exponent_shift = 0; // > 0: the exponent is 2^shift + 1 instead (hostile keys)
  digest signature_digest = digest::sha256;
  unix_ms not_before = utc(2020, 1, 1);
  unix_ms not_after = utc(2040, 1, 1);
  bool is_ca = false;                   // basicConstraints CA:TRUE + keyCertSign
  std::vector<std::string> marker_oids; // extra non-critical extensions with a NULL value
  std::string extended_key_usage;       // e.g. "codeSigning"; empty: no extension
};

// A self-signed certificate when issuer is null, else one signed by issuer.
test_cert make_cert(const cert_options& options, const test_cert* issuer = nullptr);
// A certificate (PEM) and, when key_pem is not empty, its private key (PEM), as
// pem() and key_pem() wrote them: material made by an earlier run.
test_cert load_cert(std::string_view cert_pem, std::string_view key_pem = {});

// root ← intermediate ← leaf, shaped like Apple's receipt-signing chain: the
// intermediate and leaf carry Apple's markers and names (O=Apple Inc. and the CN
// of the WWDR CA / the receipt-signing certificate; OU is the PKI's name, so no
// two PKIs, nor Apple's own certificates, share a subject). The leaf signs
// unified receipts and v3 transaction receipts.
// For v2 transaction receipts: root ← itunes_intermediate ← transaction_leaf_v2,
// shaped like Apple's iTunes Store CA and its RSA-1024 PurchaseReceiptCertificate.
struct test_pki {
  test_cert root;
  test_cert intermediate;
  test_cert leaf;
  test_cert itunes_intermediate;
  test_cert transaction_leaf_v2;
};

struct pki_options {
  std::string name = "receiptd test";       // prefix of the common names
  digest signature_digest = digest::sha256; // certificate signatures
  int leaf_key_bits = 2048;                 // 1024 for v2 transaction receipts (128-byte signature)
  bool leaf_marker = true;                  // leaf carries apple_receipt_signing_oid
  bool intermediate_marker = true;          // intermediate carries apple_wwdr_intermediate_oid
  bool with_itunes = true;                  // make itunes_intermediate and transaction_leaf_v2
  unix_ms not_before = utc(2020, 1, 1);
  unix_ms not_after = utc(2040, 1, 1);
  unix_ms leaf_not_after = utc(2040, 1, 1);
  // Keys of root, intermediates and leaf: "RSA" (leaf: leaf_key_bits) or "EC" (P-256).
  // The v2 transaction leaf stays RSA-1024 whatever this says (its blob needs it).
  std::string key_algorithm = "RSA";
};
test_pki make_test_pki(const pki_options& options = {});

// Who signs a unified receipt and which certificates it embeds.
struct receipt_signer {
  test_cert cert;               // the PKCS#7 signer, embedded first
  std::vector<test_cert> chain; // further embedded certificates, in order
  digest content_digest = digest::sha256;
  bool signed_attributes = false; // App Store and Xcode receipts have none
};
// leaf + intermediate embedded, like App Store receipts.
receipt_signer apple_like_signer(const test_pki& pki, digest content_digest = digest::sha256);

// An in-app purchase with the usual fields set.
model::apple_in_app_purchase purchase(std::string product_id, std::string transaction_id,
                                      unix_ms purchase_date);

struct unified_receipt_params {
  std::string bundle_id = "com.example.receiptd";
  std::optional<std::string> receipt_type = "ProductionSandbox";       // attr 0; nullopt: omitted
  std::optional<std::string> app_version = "1";                        // attr 3
  std::optional<std::string> original_app_version = "1.0";             // attr 19
  std::optional<std::string> opaque = std::string("0123456789abcdef"); // attr 4, raw
  std::optional<unix_ms> creation_date = utc(2024, 6, 1, 12);          // attr 12
  std::optional<unix_ms> expiration_date;                              // attr 21
  // attr 5: SHA-1(device_id ‖ opaque ‖ attr 2 value) when device_id (raw bytes, e.g. 16
  // UUID bytes) is set; sha1_hash overrides it; neither: attr 5 omitted.
  std::optional<std::string> device_id;
  std::optional<std::string> sha1_hash;
  std::vector<model::apple_in_app_purchase> in_app; // attr 17 each, in order
  // Absent optional in-app fields: written as empty strings / INTEGER 0 like Apple
  // (true) or left out entirely (false).
  bool write_absent_in_app_fields = true;
  // Appended as-is: {type, value octets}; for undocumented or hostile attributes.
  std::vector<std::pair<std::int64_t, std::string>> extra_attributes;
};

// The DER payload (SET OF ReceiptAttribute) alone.
std::string make_unified_payload(const unified_receipt_params& params);
// PKCS#7 SignedData (DER) over arbitrary content.
std::string sign_pkcs7(std::string_view content, const receipt_signer& signer);
// Both: the decoded bytes of a unified receipt.
std::string make_unified_receipt(const unified_receipt_params& params,
                                 const receipt_signer& signer);

struct transaction_receipt_params {
  std::string bundle_id = "com.example.receiptd"; // "bid"
  std::string product_id = "com.example.receiptd.product";
  std::string transaction_id = "1000000000000001";
  std::string original_transaction_id = "1000000000000001";
  unix_ms purchase_date = utc(2015, 11, 18, 4, 34, 41);
  std::optional<unix_ms> original_purchase_date;
  int quantity = 1;
  std::optional<unix_ms> expires_date; // written as ms, like iOS 6
  std::optional<std::string> web_order_line_item_id;
  std::optional<std::string> unique_vendor_identifier;
  std::optional<bool> is_trial_period;
  std::vector<std::pair<std::string, std::string>> extra_purchase_info;
  std::optional<std::string> environment = "Sandbox"; // nullopt: key omitted (production)
  int blob_version = 2;                               // 2: leaf must be RSA-1024; 3: RSA-2048
};

// The decoded bytes of an iOS 6 transaction receipt (the outer plist text),
// signed SHA1withRSA by `leaf`, which is embedded in the signature blob.
std::string make_transaction_receipt(const transaction_receipt_params& params,
                                     const test_cert& leaf);

// ---- hostile structures ---------------------------------------------

// One DER TLV (definite length).
std::string der_tlv(std::uint8_t tag, std::string_view content);

// A receipt payload of `count` tiny in-app purchases (attribute 17 holding an
// empty SET, 12 bytes each) after a bundle id and creation date: 65,500 of them
// are ~770 KB, ~1 MiB in base64.
std::string make_in_app_flood_payload(std::size_t count,
                                      const std::string& bundle_id = "com.example.receiptd");

// PKCS#7 SignedData (DER) put together part by part, nothing checked: each
// part is given as its full encoding.
struct signed_data_parts {
  std::string content_info; // encapContentInfo; empty: data holding `content`
  std::string content;
  std::vector<std::string> digest_algorithms; // empty: none (an empty SET)
  std::vector<std::string> certificates;      // [0]; empty: field omitted
  std::vector<std::string> crls;              // [1]; empty: field omitted
  std::vector<std::string> signer_infos;      // empty: none (unsigned)
};
std::string make_signed_data(const signed_data_parts& parts);
// The DER AlgorithmIdentifier of SHA-256.
std::string sha256_algorithm();

} // namespace receiptd::test_support

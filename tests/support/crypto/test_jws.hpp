#pragma once
// StoreKit 2 test material: an EC P-256 PKI shaped like Apple's
// StoreKit chain, ES256 compact JWS, and transaction payloads in Apple's field
// names and order (tests/data/apple-jws-transaction/*/payload.json).
//
// Typical use:
//   auto pki = test_support::make_jws_pki();
//   test_support::transaction_fields t;
//   t.transaction_id = t.original_transaction_id = "2000000000000001";
//   t.bundle_id = "com.example.app";
//   t.product_id = "com.example.app.monthly";
//   std::string jws = test_support::make_storekit_jws(test_support::transaction_payload_json(t),
//   pki);
//   // pki.root.pem() is the trust root to configure (store-a.trust-roots).
//
// Like test_ca, every function throws std::runtime_error when OpenSSL fails.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <openssl/types.h>

#include "tests/support/crypto/test_ca.hpp"

namespace receiptd::test_support {

// Apple's StoreKit leaf: "Prod ECC Mac App Store and iTunes Store Receipt Signing".
inline constexpr const char* apple_storekit_leaf_name
  = "Prod ECC Mac App Store and iTunes Store Receipt Signing";

// root ("<name> Root CA - G3", self-signed CA) ← intermediate (Apple's WWDR CA
// name, O "Apple Inc.", OU <name>, OID 1.2.840.113635.100.6.2.1, CA) ← leaf
// (apple_storekit_leaf_name, O "Apple Inc.", OU <name>, OID
// 1.2.840.113635.100.6.11.1, not a CA, digitalSignature); every key EC P-256,
// certificates valid 2020–2040. itunes_intermediate and transaction_leaf_v2
// are left empty.
test_pki make_jws_pki(std::string name = "receiptd JWS test");

// A JWS PKI as one PEM text, to keep it between runs: the leaf certificate, the
// leaf's private key, the intermediate and the root (their keys are not kept:
// only the leaf signs). load_jws_pki reads it back (throws when it is not one).
std::string jws_pki_pem(const test_pki& pki);
test_pki load_jws_pki(std::string_view pem);

// Unpadded base64url (RFC 4648 §5).
std::string base64url(std::string_view bytes);

// For checking what receiptd or the emulator signed: unpadded base64url
// decoded (throws on anything else), a compact JWS/JWT split on '.', and an ES256
// signature (raw r ‖ s) over `signing_input` checked with `key`'s public half.
std::string base64url_decode(std::string_view text);
std::vector<std::string> split_compact(const std::string& compact);
bool es256_verifies(std::string_view signing_input, std::string_view raw_signature, EVP_PKEY* key);

// Compact JWS: base64url(header_json) "." base64url(payload_json) "." base64url(r ‖ s),
// ECDSA P-256 / SHA-256 over the first two segments (RFC 7518 §3.4: the signature
// is r and s as 32-byte big-endian integers, not OpenSSL's DER Ecdsa-Sig-Value).
// The header and payload are taken byte for byte.
std::string sign_es256_jws(std::string_view header_json, std::string_view payload_json,
                           EVP_PKEY* key);

// What Apple sends: header {"alg":"ES256","x5c":[leaf, intermediate, root]}
// (standard padded base64 of each DER certificate), signed by the leaf.
std::string make_storekit_jws(std::string_view payload_json, const test_pki& pki);
// Forgeries: any x5c list (DER certificates, in the order given) and any signer.
std::string make_storekit_jws(std::string_view payload_json,
                              const std::vector<std::string>& x5c_der, EVP_PKEY* signer);

// A JWSTransactionDecodedPayload. The optional ones are left out of the JSON
// when empty (2023 payloads have no storefront, price or currency).
struct transaction_fields {
  std::string transaction_id = "2000000000000001";
  std::string original_transaction_id = "2000000000000001";
  std::optional<std::string> web_order_line_item_id;
  std::string bundle_id = "com.example.receiptd";
  std::string product_id = "com.example.receiptd.monthly";
  unix_ms purchase_date = utc(2024, 6, 1, 12);
  unix_ms original_purchase_date = utc(2024, 6, 1, 12);
  std::optional<unix_ms> expires_date;
  int quantity = 1;
  std::string type = "Auto-Renewable Subscription";
  std::optional<std::string> app_account_token;
  std::optional<std::string> in_app_ownership_type = "PURCHASED";
  unix_ms signed_date = utc(2024, 6, 1, 12, 0, 5);
  std::optional<int> revocation_reason;
  std::optional<unix_ms> revocation_date;
  std::string environment = "Sandbox"; // "Production", "Sandbox" or "Xcode"
  std::optional<std::string> transaction_reason = "PURCHASE";
  std::optional<std::string> storefront = "USA";
  std::optional<std::int64_t> price = 9990; // milliunits
  std::optional<std::string> currency = "USD";
  std::optional<std::string> app_transaction_id; // 2025 payloads
  // Further members, written last as they are (offerType, revocationType,
  // commitmentInfo, … of later payloads); a key above is replaced.
  boost::json::object extra;
};

// The payload JSON, in the order Apple writes it (transactionId,
// originalTransactionId, webOrderLineItemId, bundleId, productId, purchaseDate,
// originalPurchaseDate, expiresDate, quantity, type, appAccountToken,
// inAppOwnershipType, signedDate, revocationReason, revocationDate, environment,
// transactionReason, storefront, price, currency, appTransactionId).
std::string transaction_payload_json(const transaction_fields& fields);

// A JWSAppTransactionDecodedPayload (StoreKit AppTransaction). Optional ones
// are left out of the JSON when empty. The device binding is made as StoreKit
// makes it: deviceVerification = base64(SHA-384(lower(nonce) ‖ lower(device id)))
// for `device_verification_id` (identifierForVendor).
struct app_transaction_fields {
  std::optional<std::string> app_transaction_id = "704289572311552238";
  std::string bundle_id = "com.example.receiptd";
  std::string receipt_type = "Sandbox"; // "Production", "Sandbox" or "Xcode"
  std::optional<std::int64_t> app_apple_id = 1234567890;
  std::string application_version = "3.1";
  std::optional<std::int64_t> version_external_identifier = 878434117;
  unix_ms receipt_creation_date = utc(2024, 6, 1, 12, 0, 5);
  unix_ms original_purchase_date = utc(2021, 3, 4, 5, 6, 7);
  std::string original_application_version = "1.4";
  std::optional<unix_ms> preorder_date;
  std::optional<std::string> original_platform = "iOS";
  std::string device_verification_nonce = "5f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
  std::string device_verification_id = "6a0f0b91-7c3e-4d25-9b8a-1f2e3d4c5b6a";
  // Further members, written last as they are; a key above is replaced.
  boost::json::object extra;
};
std::string app_transaction_payload_json(const app_transaction_fields& fields);
// StoreKit's deviceVerification for a nonce and a device verification id (base64).
std::string device_verification_of(std::string_view nonce, std::string_view device_id);

} // namespace receiptd::test_support

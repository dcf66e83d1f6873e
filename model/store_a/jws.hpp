#pragma once
// StoreKit 2 and App Store Server API signed data: compact JWS (RFC 7515) signed
// ES256 by Apple, with the certificate chain in the header's x5c.
// Pure: text in, values out; no I/O, no clock (the instant is the payload's).
//
// What Apple signs this way: Transaction.jwsRepresentation and the Server API's
// signedTransactionInfo (a transaction), signedRenewalInfo, and the
// notifications' signedPayload. verify_jws checks any of them; the payload
// parsers below read the ones receiptd stores.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/store_a/receipt.hpp"

namespace receiptd::model::store_a {

// The three segments of a compact JWS, still base64url, each non-empty and made
// only of the base64url alphabet (no padding, no whitespace).
struct jws_segments {
  std::string_view header;
  std::string_view payload;
  std::string_view signature;
};

// nullopt unless `compact` is exactly three non-empty base64url segments joined
// by '.' whose lengths can be unpadded base64url (length % 4 != 1). This is
// the 422 boundary: what fails here is not a JWS at all.
std::optional<jws_segments> split_jws(std::string_view compact);

struct jws_options {
  // Evaluate the chain at this instant instead of the payload's signedDate
  // (tests showing that the date matters).
  std::optional<unix_ms> at;
  // The payload's key naming the instant Apple signed it: "signedDate" for
  // transactions, renewal infos and notifications; an app transaction
  // (JWSAppTransactionDecodedPayload) names it "receiptCreationDate" ("the date
  // that the App Store signs a JWS app transaction", App Store Server API 1.17).
  const char* date_key = "signedDate";
  // Test seam, as verify_options::fault_for_tests: called inside the failure
  // guard before any work. Null in the product.
  void (*fault_for_tests)() = nullptr;
};

struct jws_verification {
  fraud_reason reason = fraud_reason::none; // none: signature and chain check out
  std::string detail;                       // why, in a few words, for logs
  // The decoded payload bytes, set only when reason is none (what unverified
  // bytes claim is never parsed).
  std::string payload;
  std::optional<unix_ms> signed_date; // the payload's signedDate, when it has one
  // Anchored by a StoreKit test root (trust_config::sandbox_root_pems): a single
  // self-signed certificate that Xcode made. Never set for Apple's chain.
  bool xcode = false;
  // Verification itself failed (bad_alloc, an OpenSSL internal error): no verdict.
  bool internal_error = false;
};

// Checks, in this order (each failure is a verdict, never an exception):
//  - structure (malformed_receipt): split_jws; sizes before decoding (header
//    at most 16 KiB and payload at most 64 KiB decoded, signature exactly 64
//    bytes: r ‖ s); each segment canonical base64url (the unused bits of its
//    last character zero); header and payload are JSON objects (the payload
//    may also be the JSON literal null, as Apple's signedRenewalInfo sometimes
//    is); header "alg" is exactly "ES256"; no "crit" (RFC 7515 §4.1.11: no
//    extension is understood); "x5c" is an array of at most 4 entries (more is
//    refused before any is decoded), each padded standard base64 (RFC 7515
//    §4.1.6: no whitespace, no missing '=') of a DER certificate of at most
//    8 KiB, exactly three (leaf, intermediate, root), or exactly one
//    self-signed certificate (Xcode). Other header parameters are ignored
//    (Xcode's carries "kid" and "typ"); of duplicate names the last counts.
//  - signature (invalid_signature): ECDSA P-256 / SHA-256 over
//    "<header>.<payload>" with the leaf's key; the leaf's key must be EC P-256,
//    checked before it is used: an RSA leaf, or a P-384 CA certificate put
//    first, is invalid_signature (the JWS is well formed; its signature cannot
//    be an ES256 signature by that key).
//  - chain (untrusted_certificate), at signedDate (options.date_key; at "now"
//    of options.at when set; a payload without it, or whose value is not a
//    number of unix ms, is refused): three certificates: leaf ← x5c[1] ← a root of
//    anchors.roots() equal, byte for byte, to x5c[2] (x5c[2] is never trusted
//    itself); the built chain is exactly those three; the leaf carries OID
//    1.2.840.113635.100.6.11.1, the intermediate OID 1.2.840.113635.100.6.2.1.
//    One certificate: it must be one of the sandbox (StoreKit test) roots, and
//    then `xcode` is set.
// signedDate is an integer, or a number with a fraction (Xcode) floored.
// Verified chains are remembered in anchors.cache() like receipt chains
// (verification_cache::chain_kind::jws): a later JWS with the same x5c, in the
// same order, at an instant inside the certificates' validity, costs one
// ES256 verification.
// Thread-safe; never throws.
jws_verification verify_jws(std::string_view compact, const trust_anchors& anchors,
                            const jws_options& options = {});

// A StoreKit 2 transaction (JWSTransactionDecodedPayload), as the resource
// stores it. Apple's names in comments; the App Store Server API version that
// added a field in parentheses.
struct signed_transaction {
  std::string transaction_id;          // transactionId
  std::string original_transaction_id; // originalTransactionId
  std::string bundle_id;               // bundleId
  std::string product_id;              // productId
  std::string type;                    // type: "Auto-Renewable Subscription", "Consumable", …
  environment env = environment::production;         // environment: Production, Sandbox, Xcode
  std::optional<unix_ms> purchase_date;              // purchaseDate
  std::optional<unix_ms> original_purchase_date;     // originalPurchaseDate
  std::optional<unix_ms> expires_date;               // expiresDate
  std::optional<unix_ms> revocation_date;            // revocationDate
  std::optional<int> revocation_reason;              // revocationReason (0 or 1)
  std::optional<unix_ms> signed_date;                // signedDate
  std::optional<std::string> app_account_token;      // appAccountToken (a UUID)
  int quantity = 1;                                  // quantity
  std::optional<std::string> storefront;             // storefront (alpha-3)
  std::optional<std::int64_t> price;                 // price, milliunits
  std::optional<std::string> currency;               // currency (ISO 4217)
  std::optional<std::string> web_order_line_item_id; // webOrderLineItemId
  std::optional<std::string> in_app_ownership_type;  // inAppOwnershipType
  std::optional<std::string> transaction_reason;     // transactionReason
  std::optional<std::string> app_transaction_id;     // appTransactionId (API 1.15)
  std::optional<bool> is_upgraded;                   // isUpgraded
  std::optional<int> offer_type;                     // offerType: 1–4 (4 win-back)
  std::optional<std::string> offer_discount_type;    // offerDiscountType (ONE_TIME: 1.17)
  std::optional<std::string> offer_period;           // offerPeriod, ISO 8601 (1.15)
  // revocationType (1.19): REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE; and
  // revocationPercentage, in milliunits of a percent (40000 is 40%).
  std::optional<std::string> revocation_type;
  std::optional<int> revocation_percentage;
  std::optional<std::string> billing_plan_type; // billingPlanType (1.21): BILLED_UPFRONT, MONTHLY
  std::optional<commitment_info> commitment;    // commitmentInfo (1.21)
};

// Parses a verified payload. Lenient where Apple varies (absent optional fields,
// 2023 payloads without storefront or price, Xcode's fractional milliseconds,
// unknown extra fields), closed where it matters: transactionId,
// originalTransactionId, bundleId and productId must be non-empty strings of
// at most 256 bytes, environment one of Apple's three ("Production",
// "Sandbox", "Xcode"), dates integers (or numbers with a fraction, truncated)
// within [0, 9999-12-31T23:59:59.999Z], quantity a positive integer (default
// 1). An optional field present with the wrong type is an error too (a string
// of at most 256 bytes; price an integer; revocationReason a non-negative
// integer: Apple documents 0 and 1, a later value is kept, as for offerType and
// revocationPercentage; commitmentInfo an object of integers and a date); null
// or "" is absent; webOrderLineItemId may also be a non-negative integer.
// Errors (all of them): field "signed_transaction", code "malformed_receipt".
result<signed_transaction> parse_signed_transaction(std::string_view payload);

} // namespace receiptd::model::store_a

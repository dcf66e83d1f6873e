#pragma once
// Request bodies of the three upload endpoints (SPEC §4), parsed and checked
// field by field. Every problem found is reported, not just the first.

#include <optional>
#include <string>
#include <string_view>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/store_b/purchase_data.hpp"

namespace receiptd::model {

// The largest value each request field may have (README "The API"); beyond it the
// upload is refused with 422 and a field error (code "too_long" or "too_deep").
// Lengths are in bytes (UTF-8). Each sits well above what the stores issue and
// what a client sends, and below what the database can index: PostgreSQL refuses a
// B-tree entry over about 2,700 bytes, and (app_id, purchase_token) is a unique index.
inline constexpr std::size_t max_receipt_length
  = 2 * 1024 * 1024; // base64 as sent, whitespace included
// A StoreKit 2 JWS with its three certificates is 4–6 KB.
inline constexpr std::size_t max_signed_transaction_length = 64 * 1024;
inline constexpr std::size_t max_purchase_data_length
  = 32 * 1024; // Play's purchase JSON: < 1 KiB in practice
inline constexpr std::size_t max_purchase_signature_length
  = 2048; // base64 of an RSA-8192 signature: 1,368
inline constexpr std::size_t max_purchase_token_length = 2048; // Play's tokens: about 150–250
inline constexpr std::size_t max_order_id_length = 256;        // "GPA.1234-5678-9012-34567..12"
inline constexpr std::size_t max_product_id_length = 256;
inline constexpr std::size_t max_package_name_length = 256;
inline constexpr std::size_t max_user_identifier_length = 1024;
inline constexpr std::size_t max_identifier_for_vendor_length
  = 64;                                                      // a UUID is 36, a MAC address 17
inline constexpr std::size_t max_country_code_length = 2;    // ISO 3166-1 alpha-2
inline constexpr std::size_t max_ip_address_length = 64;     // IPv6 text is at most 45
inline constexpr std::size_t max_metadata_bytes = 16 * 1024; // as compact JSON
inline constexpr std::size_t max_metadata_depth = 16;        // {} is depth 1, {"a":[]} depth 2
// The whole body is parsed to at most this depth (then 422 "too_deep", no field):
// deep enough that metadata one level past its own maximum still gets a field error.
inline constexpr std::size_t max_body_depth = 64;

// ip_address: omitted → the request's peer address; null → not stored;
// a string → must be IPv4 or IPv6 (canonical form kept).
struct ip_choice {
  enum class kind { omitted, null, address } k = kind::omitted;
  std::string address;
};

struct upload_common {
  std::optional<std::string> user_identifier;
  std::optional<std::string> metadata; // compact JSON object text
  ip_choice ip;

  // The echo fields to store for a request that came from `peer_ip`.
  echo_fields echo(std::string_view peer_ip) const;
};

struct store_a_upload {
  // The canonical base64 of receipt_bytes (RFC 4648 §4: padded, no whitespace), what
  // is stored and sent to verifyReceipt. Clients may send it wrapped in lines (Apple's
  // own base64 has line breaks); the bytes, and so the re-upload key, are the same.
  std::string receipt_data;
  std::string receipt_bytes;                        // decoded
  std::optional<std::string> country_code;          // upper-cased
  std::optional<std::string> identifier_for_vendor; // a UUID
  upload_common common;
};

struct store_b_upload {
  std::string purchase_data;      // the exact string value
  std::string purchase_signature; // canonical base64 of signature_bytes ("" when sent empty)
  std::string signature_bytes;    // decoded
  store_b::purchase_data data;    // parsed from purchase_data
  upload_common common;
};

struct store_b_legacy_upload {
  std::string package_name;
  std::string purchase_token;
  std::string product_id;
  std::optional<std::string> order_id;
  upload_common common;
};

// POST /client/store_a/transactions: a StoreKit 2 signed transaction.
struct store_a_transaction_upload {
  std::string signed_transaction; // compact JWS, exactly as sent
  upload_common common;
};

// POST /client/store_a/app_transactions: a StoreKit 2 AppTransaction, and what
// the app knows to bind it to its device (store_a::check_device).
struct app_transaction_upload {
  std::string signed_app_transaction;                    // compact JWS, exactly as sent
  std::optional<std::string> device_verification_nonce;  // a UUID, lower-cased
  std::optional<std::string> device_verification_id;     // a UUID, lower-cased
  upload_common common;
};

result<store_a_upload> parse_store_a_upload(std::string_view body);
// signed_app_transaction as signed_transaction; device_verification_nonce and
// device_verification_id UUIDs (AppTransaction.deviceVerificationNonce and
// AppStore.deviceVerificationID, identifierForVendor on iOS) when sent.
result<app_transaction_upload> parse_app_transaction_upload(std::string_view body);
// signed_transaction must be a string of three base64url segments
// (model::store_a::split_jws); what they hold is the local verification's to judge.
result<store_a_transaction_upload> parse_store_a_transaction_upload(std::string_view body);
result<store_b_upload> parse_store_b_upload(std::string_view body);
result<store_b_legacy_upload> parse_store_b_legacy_upload(std::string_view body);

// App Store Server Notifications V2: {"signedPayload": "<JWS>"}, the
// JWS at most max_notification_length bytes and three base64url segments
// (store_a::split_jws). Other fields are ignored (Apple may add some). Anything
// else is an error with code bad_request (400: the store, not an app, sent it),
// field "signedPayload" or none.
inline constexpr std::size_t max_notification_length = 256 * 1024; // three JWS: ~25 KB
result<std::string> parse_store_a_notification_request(std::string_view body);

} // namespace receiptd::model

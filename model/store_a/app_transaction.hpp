#pragma once
// StoreKit 2 AppTransaction: the customer's purchase (or download) of the app
// itself, signed by the App Store as a JWS like a transaction
// (AppTransaction.jwsRepresentation; the App Store Server API's
// signedAppTransactionInfo, "Get App Transaction Info", API 1.17). What an app
// that turned from paid to free reads to keep its early buyers' features:
// originalApplicationVersion.
// Pure: text in, values out.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/app.hpp"
#include "model/records.hpp"
#include "model/result.hpp"
#include "model/store_a/jws.hpp"
#include "model/upload_request.hpp"

namespace receiptd::model::store_a {

// JWSAppTransactionDecodedPayload (App Store Server API; StoreKit
// AppTransaction), Apple's names in comments.
struct app_transaction {
  std::optional<std::string> app_transaction_id;          // appTransactionId (iOS 18.4+)
  std::string bundle_id;                                  // bundleId
  environment env = environment::production;              // receiptType
  std::optional<std::int64_t> app_apple_id;               // appAppleId (production only)
  std::optional<std::string> application_version;         // applicationVersion
  std::optional<std::int64_t> version_external_identifier; // versionExternalIdentifier
  std::optional<unix_ms> receipt_creation_date;           // receiptCreationDate: when signed
  std::optional<unix_ms> original_purchase_date;          // originalPurchaseDate
  std::optional<std::string> original_application_version; // originalApplicationVersion
  std::optional<unix_ms> preorder_date;                   // preorderDate
  std::optional<std::string> original_platform;           // originalPlatform: iOS, macOS, …
  std::optional<std::string> device_verification;         // deviceVerification (base64)
  std::optional<std::string> device_verification_nonce;   // deviceVerificationNonce (UUID)

  bool operator==(const app_transaction&) const = default;
};

// Parses a verified payload. Lenient where Apple varies (absent optional fields,
// unknown extra ones, Xcode's fractional milliseconds), closed where it matters:
// bundleId a non-empty string of at most 256 bytes, receiptType one of
// "Production", "Sandbox", "Xcode" (or the receipt's "ProductionSandbox", a
// sandbox), dates as transactions have them (parse_signed_transaction),
// appAppleId and versionExternalIdentifier non-negative integers, texts of at
// most 256 bytes; null or "" is absent. Errors (all of them): field
// "signed_app_transaction", code "malformed_receipt".
result<app_transaction> parse_app_transaction(std::string_view payload);

// Verifies an app transaction JWS as verify_jws does a transaction, its chain
// at receiptCreationDate (the instant Apple signs an app transaction).
jws_verification verify_app_transaction_jws(std::string_view compact,
                                            const trust_anchors& anchors);

// Whether the app transaction belongs to the device that uploads it (StoreKit,
// AppStore.deviceVerificationID): deviceVerification is the base64 SHA-384 of the
// lower-case deviceVerificationNonce followed by the lower-case device
// verification id (identifierForVendor on iOS), as ASCII.
//  - not_checked: the app sent neither a nonce nor a device id;
//  - nonce_matched: the app sent the nonce StoreKit gave it with this app
//    transaction, and it is the signed one (no device id to hash with);
//  - verified: the device id was sent and the hash is the signed one (and the
//    nonce, when sent, is the signed one);
//  - mismatch: what the app sent disagrees with what Apple signed, or the JWS
//    carries nothing to check it against: another device's app transaction.
enum class device_verification { not_checked, nonce_matched, verified, mismatch };
std::string_view to_string(device_verification x);
std::optional<device_verification> parse_device_verification(std::string_view text);

device_verification check_device(const app_transaction& t,
                                 const std::optional<std::string>& nonce,
                                 const std::optional<std::string>& device_id);

// The stored app transaction (db/migrations/020): the record fields every proof
// has, then the JWS as received and what it says.
struct app_transaction_record : record_base {
  // The re-upload key, with app_id: appTransactionId once the JWS verified
  // under Apple's chain, else "sha256:" + the hex SHA-256 of the JWS (a JWS
  // that did not verify, an Xcode one, or one from before appTransactionId).
  std::string app_transaction_key;
  std::string signed_app_transaction; // the JWS exactly as received
  app_transaction transaction;        // empty when the JWS did not verify
  device_verification device = device_verification::not_checked;
};

// The record as uploaded. Rejected with the fraud reason when the JWS did not
// verify, its payload is not an app transaction (malformed_receipt), it
// belongs to another bundle (bundle_id_mismatch) or to another device
// (device_hash_mismatch: check_device said mismatch); a JWS under a StoreKit
// test root is validated locally when the app accepts StoreKit test receipts,
// untrusted_certificate when not; one without appTransactionId is validated on
// its signature (the App Store Server API is asked by that id); pending
// otherwise, for Get App Transaction Info to confirm.
app_transaction_record make_record(const app_transaction_upload& u, const app& a,
                                   const jws_verification& v, std::string_view peer_ip,
                                   unix_ms now);

// How Get App Transaction Info's answer lands. A verdict other than confirmed
// applies as it is. A confirmed one (a 200 carrying signedAppTransactionInfo)
// counts once `signed_info` verifies like an upload (else the record stays
// pending and why is returned for the operator's log) and names the same
// appTransactionId and bundleId as the record (else store_rejected: Apple
// contradicts the upload); then the record is validated in the answer's
// environment and takes the answer's fields, keeping the upload's device
// verification values (a server answer carries none for this device).
std::string apply_server_answer(app_transaction_record& r, const store_verdict& v,
                                std::string_view signed_info, const trust_anchors& anchors);

// A re-upload of the same app transaction keeps id and created_at and takes
// the new echo fields and verdict, except that an upload failing its own local
// check never touches a record that passed its own, a validated record is
// not downgraded by a pending verdict, and naming another user than the bound
// one is a transfer the app's policy allows (the previous owner recorded) or
// refuses (terms.refused: 409 bound_to_other_user), as records.hpp's
// merge_reupload does for transactions.
app_transaction_record merge_reupload(const app_transaction_record& existing,
                                      const app_transaction_record& incoming);

// A JWS its own check refused is kept as its first max_rejected_proof_bytes
// (records.hpp, trim_rejected_proof).
void trim_rejected_proof(app_transaction_record& r);

// Whether the record keeps a revalidation job: pending (Get App Transaction
// Info not answered yet).
bool needs_job(const app_transaction_record& r);

// ---- Get App Transaction Info ----------------------------------------------

// GET {base}/inApps/v1/transactions/appTransactions/{anyTransactionId} (the id
// path-escaped; trailing '/' of base dropped). Apple takes an appTransactionId,
// a transactionId or an originalTransactionId of the customer.
std::string app_transaction_info_url(std::string_view base_url, std::string_view any_id);

// What one answer says: as classify_transaction_info (server_api.hpp), except
// that a 200 is confirmed when it carries a non-empty signedAppTransactionInfo
// (still to be verified: apply_server_answer), and a 404 whose errorCode is
// 4040019 (AppTransactionDoesNotExist) is not found like 4040010.
struct app_transaction_info_answer {
  store_verdict verdict;
  std::string signed_app_transaction_info; // confirmed
  bool transaction_not_found = false;      // 404 errorCode 4040010 or 4040019
  std::optional<std::int64_t> retry_after_ms;
};
app_transaction_info_answer classify_app_transaction_info(int http_status, std::string_view body,
                                                          std::string_view transport_error,
                                                          std::string_view retry_after_header,
                                                          unix_ms now);

} // namespace receiptd::model::store_a

namespace receiptd::model {
// Beside the other records' (records.hpp), for the code written for any record.
using store_a::trim_rejected_proof;
} // namespace receiptd::model

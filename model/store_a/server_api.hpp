#pragma once
// The App Store Server API: the per-app credentials, the ES256 JWT
// that authenticates each call, the Get Transaction Info URL and how its answer
// becomes a verdict. Pure: no I/O, the caller supplies the clock's reading.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"
#include "model/timestamp.hpp"
#include "model/verdict.hpp"

namespace receiptd::model::store_a {

inline constexpr std::string_view server_api_audience = "appstoreconnect-v1";
// The hosts Apple recommends since 2026-05-05 (App Store Server API changelog,
// "Server update"); api.storekit(-sandbox).itunes.apple.com keep working.
inline constexpr std::string_view default_server_api_url = "https://api.storekit.apple.com";
inline constexpr std::string_view default_server_api_sandbox_url
  = "https://api.storekit-sandbox.apple.com";

// store-a.confirm-with: how unified receipts are confirmed with Apple.
// automatic: the Server API for an app that has its credentials, verifyReceipt
// for the others.
enum class confirmation { automatic, verify_receipt, server_api };
std::optional<confirmation> parse_confirmation(std::string_view text); // "auto", …
std::string_view to_string(confirmation c);

// An app's in-app purchase key from App Store Connect: issuer id, key id and the
// .p8 private key (PKCS#8 PEM of an EC P-256 key). Parse once per app;
// thread-safe for concurrent signing.
class server_api_key {
public:
  // Errors name the field: "app_store_issuer_id" / "app_store_key_id" (empty,
  // longer than 256 bytes, or characters beyond printable ASCII: a space or a
  // newline too, since the id goes into every JWT verbatim),
  // "app_store_private_key" (not PEM, not a private key, not EC P-256, over
  // 16 KiB). One field error per bad field. An encrypted PEM is "not a private
  // key": no passphrase is ever asked for.
  static result<std::shared_ptr<const server_api_key>>
  parse(std::string_view issuer_id, std::string_view key_id, std::string_view private_key_pem);
  ~server_api_key();

  const std::string& issuer_id() const { return issuer_id_; }
  const std::string& key_id() const { return key_id_; }

  // ES256 JWT: header {"alg":"ES256","kid":key_id,"typ":"JWT"}, claims {"iss":
  // issuer_id,"iat":now/1000,"exp":iat+lifetime (at most 3600 s),"aud":
  // "appstoreconnect-v1","bid":bundle_id}; signature raw r ‖ s (64 bytes).
  // The lifetime is clamped to [0, 3600] s (Apple refuses exp beyond 60
  // minutes). ECDSA draws a fresh nonce: two JWTs never repeat a signature.
  // Should OpenSSL fail to sign, the signature segment is empty (Apple then
  // answers 401, an operator problem) rather than an exception.
  std::string make_jwt(unix_ms now, std::string_view bundle_id,
                       std::chrono::seconds lifetime = std::chrono::minutes(30)) const;

  struct impl;
  server_api_key(std::string issuer, std::string key, std::unique_ptr<impl> p);

private:
  std::string issuer_id_;
  std::string key_id_;
  std::unique_ptr<impl> impl_;
};

// GET {base}/inApps/v1/transactions/{transactionId} (the id path-escaped;
// trailing '/' of base dropped).
std::string transaction_info_url(std::string_view base_url, std::string_view transaction_id);

// What one Get Transaction Info answer says.
struct transaction_info_answer {
  // confirmed: 200 with a signedTransactionInfo string (still to be verified by
  // the caller); rejected: 404 whose errorCode is 4040010 (TransactionIdNotFound)
  // — the caller asks the other environment once before it counts; unreachable:
  // everything else (status 0, 5xx, 429, 401/403 with operator_problem set, a 200
  // without the field, HTML, 404 with another or no errorCode).
  store_verdict verdict;
  std::string signed_transaction_info; // set when confirmed
  bool transaction_not_found = false;  // the 4040010 case
  // 429's Retry-After (seconds or HTTP date relative to `now`), in ms; a date
  // already past is 0; absent or unparsable: nullopt. The verdict's
  // retry_not_before holds it as an instant (a 503's too: model/retry_after.hpp).
  std::optional<std::int64_t> retry_after_ms;
};

// http_status 0: no HTTP answer (connect error, timeout), `transport_error`
// says why. verdict.detail is a few words for logs and a job's last_error,
// never the body; verdict.body keeps the answer when it is a JSON object.
transaction_info_answer classify_transaction_info(int http_status, std::string_view body,
                                                  std::string_view transport_error,
                                                  std::string_view retry_after_header, unix_ms now);

// ---- Get All Subscription Statuses (the scheduled refresh) ----------

// GET {base}/inApps/v1/subscriptions/{transactionId} (the id path-escaped;
// trailing '/' of base dropped).
std::string subscription_statuses_url(std::string_view base_url, std::string_view transaction_id);

// One entry of a StatusResponse's data[].lastTransactions, still compact: the
// caller verifies both JWS (model/store_a/refresh.hpp).
struct subscription_status_entry {
  std::string original_transaction_id; // originalTransactionId
  int status = 0;                      // 1 active … 5 revoked (subscription_status_name)
  std::string signed_transaction_info; // signedTransactionInfo
  std::string signed_renewal_info;     // signedRenewalInfo; empty when absent
};

// What one Get All Subscription Statuses answer says: as
// classify_transaction_info, except that a 200 is confirmed when it carries a
// "data" array (every group's lastTransactions, in order, become `entries`;
// an entry that is not an object with a string originalTransactionId, an
// integer status and a non-empty string signedTransactionInfo makes the whole
// answer unreachable: Apple's shape is not what we know).
struct subscription_statuses_answer {
  store_verdict verdict;
  std::vector<subscription_status_entry> entries; // confirmed
  bool transaction_not_found = false;             // 404 errorCode 4040010
  std::optional<std::int64_t> retry_after_ms;
};

subscription_statuses_answer classify_subscription_statuses(int http_status, std::string_view body,
                                                            std::string_view transport_error,
                                                            std::string_view retry_after_header,
                                                            unix_ms now);

} // namespace receiptd::model::store_a

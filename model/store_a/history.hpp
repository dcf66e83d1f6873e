#pragma once
// App Store Server API, Get Transaction History (v2): the URL of each page,
// how one page's answer reads, and how the verified history confirms every
// in-app purchase of a unified receipt. Pure: no I/O.
//
// GET /inApps/v2/history/{transactionId}?revision=… answers a HistoryResponse
// {"revision", "hasMore", "bundleId", "appAppleId", "environment",
// "signedTransactions": [JWS…]}: at most 20 transactions per page, every
// product type (finished consumables too) in any state, revoked included;
// while hasMore is true the next page is asked with the revision the last
// answer gave.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/store_a/jws.hpp"
#include "model/timestamp.hpp"
#include "model/verdict.hpp"

namespace receiptd::model::store_a {

// GET {base}/inApps/v2/history/{transactionId}, then ?revision={revision} for
// the pages after the first (both escaped; trailing '/' of base dropped).
std::string transaction_history_url(std::string_view base_url, std::string_view transaction_id,
                                    std::string_view revision = {});

// What one page of the history says.
struct transaction_history_page {
  // confirmed: 200 with a signedTransactions array of non-empty strings, a
  // boolean hasMore and — when hasMore — a non-empty revision; anything else in
  // a 200 is unreachable (Apple's shape is not what we know). Other statuses
  // read as Get Transaction Info's (rejected: 404 errorCode 4040010).
  store_verdict verdict;
  std::vector<std::string> signed_transactions; // still compact JWS: the caller verifies them
  std::string revision;                         // the next page's token
  bool has_more = false;
  std::optional<environment> env; // "environment", when it names Production or Sandbox
  std::string bundle_id;          // "bundleId", when present
  bool transaction_not_found = false;
  std::optional<std::int64_t> retry_after_ms;
};

transaction_history_page classify_transaction_history(int http_status, std::string_view body,
                                                      std::string_view transport_error,
                                                      std::string_view retry_after_header,
                                                      unix_ms now);

// The pages a history may take before it is given up on as unreachable (20
// transactions a page: 20,000 transactions of one customer).
inline constexpr std::size_t max_history_pages = 1000;

// Every entry of a history verified like an upload (Apple's chain, ES256) and
// read as a transaction of `bundle_id` in the history's environment `env`
// (none: the entries' own, all alike). An entry that does not verify, names
// another bundle or another environment makes the whole history unusable: the
// error says why, for the operator's log, and the caller treats the store as
// unreachable (Apple's answers should always verify).
result<std::vector<signed_transaction>>
verified_history(const std::vector<std::string>& signed_transactions,
                 std::string_view bundle_id, std::optional<environment> env,
                 const trust_anchors& anchors);

// How a confirmed history lands on a unified receipt confirmed through the
// Server API. Each in-app purchase is looked up by its transaction id:
//  - found with the same product and original transaction: confirmed; it takes
//    the history's expiry and revocation (revocationDate as cancellation_date,
//    revocationReason as cancellation_reason: revoked, not active) and loses
//    any earlier contradiction;
//  - absent, or another product or original transaction: store_contradiction
//    says so, and the receipt does not prove that purchase.
// The receipt is validated in the history's environment when at least one
// purchase is confirmed, store_rejected when every one is contradicted. A
// verdict other than confirmed applies as it is.
void apply_history(receipt_record& r, const store_verdict& v,
                   const std::vector<signed_transaction>& history);

} // namespace receiptd::model::store_a

#pragma once
// Apple's verifyReceipt: what receiptd sends and what each answer means
// (DESIGN.md §2 status table, §3). Apple documents the status codes in
// "verifyReceipt → responseBody → status"; 21007/21008 say the receipt belongs to
// the other environment, and is-retryable marks temporary trouble.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/records.hpp"
#include "model/verdict.hpp"

namespace receiptd::model::store_a {

enum class verify_endpoint { production, sandbox };

// {"receipt-data": …, "password": …, "exclude-old-transactions": …}
std::string verify_receipt_body(std::string_view receipt_base64, std::string_view password,
                                bool exclude_old_transactions);

struct verify_answer {
  store_verdict verdict;
  // 21007 (sandbox receipt sent to production) / 21008 (the reverse): ask this
  // endpoint instead. Callers flip once.
  std::optional<verify_endpoint> retry_on;
};

// http_status 0: no HTTP answer (transport_error says why).
verify_answer classify_verify_receipt(int http_status, std::string_view body,
                                      std::string_view transport_error, verify_endpoint asked);

// Fills what the local receipt lacks (expiry, cancellation, trial and intro
// offer flags, web order line item) from the store's answer: unified answers
// carry receipt.in_app[] and latest_receipt_info[]; transaction answers a single
// receipt object. Purchases are matched by transaction id.
void enrich_in_app(std::vector<apple_in_app_purchase>& purchases, std::string_view body);

} // namespace receiptd::model::store_a

// Get App Transaction Info (App Store Server API 1.17): its URL and how its
// answer reads (app_transaction.hpp).

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "model/store_a/app_transaction.hpp"
#include "model/store_a/server_api.hpp"
#include "model/store_b/service_account.hpp" // url_encode

namespace receiptd::model::store_a {

std::string app_transaction_info_url(std::string_view base_url, std::string_view any_id) {
  std::string url(base_url);
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  return url + "/inApps/v1/transactions/appTransactions/" + store_b::url_encode(any_id);
}

app_transaction_info_answer classify_app_transaction_info(int http_status, std::string_view body,
                                                          std::string_view transport_error,
                                                          std::string_view retry_after_header,
                                                          unix_ms now) {
  app_transaction_info_answer out;
  boost::system::error_code ec;
  auto doc = boost::json::parse(body, ec);
  const auto* o = !ec && doc.is_object() ? &doc.get_object() : nullptr;
  if (http_status == 200) {
    const auto* info = o ? o->if_contains("signedAppTransactionInfo") : nullptr;
    if (!info || !info->is_string() || info->get_string().empty()) {
      out.verdict = unreachable_verdict("HTTP 200 without signedAppTransactionInfo");
      return out;
    }
    out.verdict.outcome = store_outcome::confirmed;
    out.verdict.detail = "HTTP 200";
    out.verdict.body = std::string(body);
    out.signed_app_transaction_info = std::string(info->get_string());
    return out;
  }
  // 404 AppTransactionDoesNotExistError (4040019): as TransactionIdNotFound
  // (4040010), the other environment is asked once before it counts.
  const auto* code = o ? o->if_contains("errorCode") : nullptr;
  if (http_status == 404 && code && code->is_int64() && code->get_int64() == 4040019) {
    out.verdict.outcome = store_outcome::rejected;
    out.verdict.detail = "HTTP 404 AppTransactionDoesNotExist (errorCode 4040019)";
    out.transaction_not_found = true;
    return out;
  }
  auto a = classify_transaction_info(http_status, body, transport_error, retry_after_header, now);
  out.verdict = std::move(a.verdict);
  out.transaction_not_found = a.transaction_not_found;
  out.retry_after_ms = a.retry_after_ms;
  return out;
}

} // namespace receiptd::model::store_a

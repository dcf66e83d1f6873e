#pragma once
// The stores' refund requests, answered: what receiptd sends when Apple asks
// for consumption data (CONSUMPTION_REQUEST → Send Consumption Information)
// and when Google asks for a refund review (pendingRefundReviewNotification →
// orders.reviewrefund). Pure: the bodies are built from receiptd's records,
// the app's settings and what the app's backend said of the purchase.
//
// Apple, App Store Server API 1.19+ "Send Consumption Information"
// (PUT /inApps/v2/transactions/consumption/{transactionId}, ConsumptionRequest):
// customerConsented, deliveryStatus and sampleContentProvided are required,
// consumptionPercentage (milliunits, 0–100000) and refundPreference
// (DECLINE, GRANT_FULL, GRANT_PRORATED) optional. The App Store refuses a
// customerConsented other than true (InvalidCustomerConsentedError): without
// the customer's consent nothing is sent. A deliveryStatus other than
// DELIVERED needs consumptionPercentage 0; an auto-renewable subscription
// takes no consumptionPercentage with GRANT_PRORATED (Apple computes it).
// The v1 body's account and spending fields (accountTenure,
// lifetimeDollarsPurchased, …) are not part of v2: they are not sent.
//
// Google, Play Developer API orders.reviewrefund
// (POST /androidpublisher/v3/applications/{packageName}/orders/{orderId}:reviewrefund):
// pendingRefundToken, sampleContentProvided and refundPreference (DECLINE,
// APPROVE, NEUTRAL) required, consumptionPercentageMilliunits optional.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "model/result.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::purchases {

// The app's default answer (receiptctl app update --refund-preference):
// none answers nothing at all.
enum class refund_preference { none, decline, grant, grant_prorated };
std::string_view to_string(refund_preference p);
std::optional<refund_preference> parse_refund_preference(std::string_view text);

// How long a store gives to answer: Apple 12 hours from the notification,
// Google 24 hours.
inline constexpr std::int64_t store_a_answer_window_ms = 12LL * 3600 * 1000;
inline constexpr std::int64_t store_b_answer_window_ms = 24LL * 3600 * 1000;

// Apple's deliveryStatus values (ConsumptionRequest, 1.19).
inline constexpr std::string_view delivery_statuses[] = {
  "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM",
  "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"};

// PUT /server/in_app_purchases/{id}/consumption: what the app's backend knows
// of the purchase. {"consumption_percentage": 0–100 (a number, fractions to
// the thousandth), "delivery_status": one of delivery_statuses in lower case
// ("delivered", "undelivered_quality_issue", …), "sample_content_provided":
// bool}; each optional, at least one; null clears it. Field errors (422).
struct consumption_report {
  std::optional<std::int32_t> consumption_milliunits; // 0–100000
  std::optional<std::string> delivery_status;         // Apple's spelling
  std::optional<bool> sample_content_provided;
};
result<consumption_report> parse_consumption_report(std::string_view body);
std::string to_json_text(const consumption_report& r);
// The stored text back (an unreadable one: nothing reported).
consumption_report read_consumption_report(std::string_view text);

// The app's settings for refund requests.
struct refund_settings {
  refund_preference preference = refund_preference::none;
  bool customer_consent = false; // the app collects the customer's consent
  bool sample_content_provided = false;
};

// What receiptd's own records say of the purchase.
struct refund_facts {
  bool delivered = false;     // validated by the store and not revoked
  bool auto_renewable = false; // Apple computes a subscription's consumption
};

// The body to send, or why nothing is sent ("preference_none", "no_consent").
struct refund_answer {
  std::optional<boost::json::object> body;
  std::string skipped; // set when body is none
};

// A refund request as receiptd keeps it (refund_requests): a durable job until
// it is answered, skipped, fails for good or its deadline passes.
struct refund_request {
  std::string id;
  std::string app_id;
  std::string purchase_id;
  std::string marketplace; // "store_a", "store_b"
  std::string environment;
  std::string store_key;   // Apple's transactionId, Play's orderId
  std::optional<std::string> package_name;
  std::optional<std::string> refund_token; // Play's pendingRefundToken
  std::optional<std::string> reason;       // Apple's consumptionRequestReason
  std::string state = "pending"; // pending, answered, skipped, failed, expired
  unix_ms received_at = 0;
  unix_ms deadline_at = 0;
  std::optional<unix_ms> answered_at;
  std::optional<std::string> sent; // the body sent, compact JSON
  std::optional<int> store_status; // the store's HTTP status of the last attempt
  int attempts = 0;
  std::optional<unix_ms> next_attempt_at;
  std::string last_error;
  std::int64_t version = 0;
};

// A new request, due at once. The store's window runs from when it asked
// (`asked_at`: Apple's signedDate, Play's eventTimeMillis; else `now`).
refund_request new_refund_request(std::string id, std::string app_id, std::string purchase_id,
                                  std::string marketplace, std::string environment,
                                  std::string store_key, unix_ms now,
                                  std::optional<unix_ms> asked_at);

// The purchase's refund_request field, compact JSON: {"store", "state",
// "reason", "received_at", "deadline_at", "answered_at", "sent", "store_status",
// "attempts", "last_error"} (times as {"ms","utc"}).
std::string refund_request_text(const refund_request& r);

// Where the answers go: {base}/inApps/v2/transactions/consumption/{transactionId};
// {base}/androidpublisher/v3/applications/{packageName}/orders/{orderId}:reviewrefund.
std::string store_a_consumption_url(std::string_view base_url, std::string_view transaction_id);
std::string store_b_review_url(std::string_view api_base, std::string_view package_name,
                               std::string_view order_id);

refund_answer store_a_consumption_body(const refund_settings& s, const refund_facts& f,
                                       const consumption_report& r);
refund_answer store_b_review_body(const refund_settings& s, const refund_facts& f,
                                  const consumption_report& r,
                                  const std::string& pending_refund_token);

} // namespace receiptd::model::purchases

#pragma once
// The signedRenewalInfo payload (JWSRenewalInfoDecodedPayload) the emulator
// signs, for App Store Server Notifications and Get All Subscription Statuses.

#include <cstdint>
#include <optional>
#include <string>

namespace receiptd::emulator {

struct renewal_fields {
  std::string original_transaction_id;
  std::optional<std::string> auto_renew_product_id;
  std::optional<std::string> product_id;
  int auto_renew_status = 1; // 0 off, 1 on
  bool is_in_billing_retry_period = false;
  std::optional<std::int64_t> grace_period_expires_date;
  std::int64_t signed_date = 0;
  std::string environment;
  std::optional<std::int64_t> recent_subscription_start_date;
  std::optional<std::int64_t> renewal_date;
};

// The payload JSON in the order Apple writes it (originalTransactionId,
// autoRenewProductId, productId, autoRenewStatus, isInBillingRetryPeriod,
// gracePeriodExpiresDate, signedDate, environment, recentSubscriptionStartDate,
// renewalDate; app-store-server-library's signedRenewalInfo.json); absent
// optionals and a false isInBillingRetryPeriod are left out.
std::string renewal_payload_json(const renewal_fields& fields);

} // namespace receiptd::emulator

#include "renewal_info.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace receiptd::emulator {

std::string renewal_payload_json(const renewal_fields& x) {
  boost::json::object r{{"originalTransactionId", x.original_transaction_id}};
  if (x.auto_renew_product_id)
    r["autoRenewProductId"] = *x.auto_renew_product_id;
  if (x.product_id)
    r["productId"] = *x.product_id;
  r["autoRenewStatus"] = x.auto_renew_status;
  if (x.is_in_billing_retry_period)
    r["isInBillingRetryPeriod"] = true;
  if (x.grace_period_expires_date)
    r["gracePeriodExpiresDate"] = *x.grace_period_expires_date;
  r["signedDate"] = x.signed_date;
  r["environment"] = x.environment;
  if (x.recent_subscription_start_date)
    r["recentSubscriptionStartDate"] = *x.recent_subscription_start_date;
  if (x.renewal_date)
    r["renewalDate"] = *x.renewal_date;
  return boost::json::serialize(r);
}

} // namespace receiptd::emulator

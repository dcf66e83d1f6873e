// parse_signed_transaction (jws.hpp): a verified JWSTransactionDecodedPayload
// (Apple, "JWSTransactionDecodedPayload", App Store Server API) as receiptd
// stores it. Lenient where Apple's payloads vary between years (absent fields,
// unknown ones, Xcode's fractional milliseconds), closed on what the resource
// relies on.

#include <cstdint>
#include <limits>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "model/store_a/jws.hpp"
#include "model/store_a/jws_internal.hpp"
#include "model/store_a/payload_reader.hpp"

namespace receiptd::model::store_a {

result<signed_transaction> parse_signed_transaction(std::string_view payload) {
  boost::system::error_code ec;
  const auto doc = boost::json::parse(payload, ec);
  if (ec || !doc.is_object())
    return field_error{"signed_transaction", "malformed_receipt",
                       "signed transaction payload is not a JSON object"};
  field_errors errors;
  payload_reader r(doc.get_object(), "signed_transaction", "malformed_receipt",
                   "signed transaction ", errors);
  signed_transaction t;
  r.required_text("transactionId", t.transaction_id);
  r.required_text("originalTransactionId", t.original_transaction_id);
  r.required_text("bundleId", t.bundle_id);
  r.required_text("productId", t.product_id);

  // Apple's three values (JWSTransactionDecodedPayload.environment).
  r.env("environment", t.env);

  // "Auto-Renewable Subscription", "Non-Consumable", "Consumable",
  // "Non-Renewing Subscription": kept as Apple spells it.
  std::optional<std::string> type;
  r.text("type", type);
  t.type = type.value_or("");

  r.date("purchaseDate", t.purchase_date);
  r.date("originalPurchaseDate", t.original_purchase_date);
  r.date("expiresDate", t.expires_date);
  r.date("revocationDate", t.revocation_date);
  r.date("signedDate", t.signed_date);
  // 0: refunded for another reason, 1: for an issue in the app; later values kept.
  r.integer("revocationReason", t.revocation_reason, 0, std::numeric_limits<int>::max());
  std::optional<int> quantity;
  r.integer("quantity", quantity, 1, std::numeric_limits<int>::max());
  t.quantity = quantity.value_or(1);
  // Milliunits of the currency (1990 is 1.99): an integer.
  r.integer("price", t.price, std::numeric_limits<std::int64_t>::min(),
            std::numeric_limits<std::int64_t>::max());

  r.text("appAccountToken", t.app_account_token);
  r.text("storefront", t.storefront);
  r.text("currency", t.currency);
  r.text("inAppOwnershipType", t.in_app_ownership_type);
  r.text("transactionReason", t.transaction_reason);
  r.text("appTransactionId", t.app_transaction_id);
  r.boolean("isUpgraded", t.is_upgraded);
  // 1 introductory, 2 promotional, 3 offer code, 4 win-back (later values kept);
  // offerDiscountType "FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT", "ONE_TIME".
  r.integer("offerType", t.offer_type, 0, std::numeric_limits<int>::max());
  r.text("offerDiscountType", t.offer_discount_type);
  r.text("offerPeriod", t.offer_period); // ISO 8601 duration: "P1M", "P1Y", …
  // REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE (later values kept); the
  // percentage in milliunits, 0–100000 documented, a later range kept.
  r.text("revocationType", t.revocation_type);
  r.integer("revocationPercentage", t.revocation_percentage, 0, std::numeric_limits<int>::max());
  r.text("billingPlanType", t.billing_plan_type); // BILLED_UPFRONT, MONTHLY
  if (const auto* c = r.find("commitmentInfo"); c != nullptr && !c->is_null()) {
    if (!c->is_object()) {
      r.fail("commitmentInfo", "is not an object");
    } else {
      payload_reader ci(c->get_object(), "signed_transaction", "malformed_receipt",
                        "signed transaction commitmentInfo.", errors);
      commitment_info info;
      ci.integer("billingPeriodNumber", info.billing_period_number, 0,
                 std::numeric_limits<int>::max());
      ci.integer("totalBillingPeriods", info.total_billing_periods, 0,
                 std::numeric_limits<int>::max());
      ci.date("commitmentExpiresDate", info.expires_date);
      ci.integer("commitmentPrice", info.price, std::numeric_limits<std::int64_t>::min(),
                 std::numeric_limits<std::int64_t>::max());
      t.commitment = info;
    }
  }
  // A string of digits in every payload seen; taken as a number too.
  if (const auto* v = r.find("webOrderLineItemId"); v != nullptr && v->is_uint64())
    t.web_order_line_item_id = std::to_string(v->get_uint64());
  else if (v != nullptr && v->is_int64() && v->get_int64() >= 0)
    t.web_order_line_item_id = std::to_string(v->get_int64());
  else
    r.text("webOrderLineItemId", t.web_order_line_item_id);

  if (!errors.empty())
    return errors;
  return t;
}

} // namespace receiptd::model::store_a

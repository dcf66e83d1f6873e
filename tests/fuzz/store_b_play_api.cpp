// Google's answers: the Play Developer API (products and subscriptionsv2,
// classify_purchase_response) and the OAuth token endpoint (parse_token_response).
// The first byte picks the HTTP status, the API and which of the two parses the
// body; the rest is the body.

#include "model/resource_json.hpp"
#include "model/store_b/play_api.hpp"
#include "model/store_b/service_account.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace receiptd;
  namespace sb = model::store_b;
  if (size == 0)
    return 0;
  static constexpr int statuses[] = {200, 0, 400, 401, 403, 404, 410, 500};
  const int status = statuses[data[0] & 7];
  auto body = fuzz::as_text(data + 1, size - 1);
  if (data[0] & 16) {
    if (auto token = sb::parse_token_response(status, body, fuzz::fixed_now)) {
      FUZZ_CHECK(status == 200 && !token->value.empty());
      (void)sb::url_encode(token->value);
    }
    return 0;
  }
  const auto api = data[0] & 8 ? sb::purchase_api::subscriptions_v2 : sb::purchase_api::products;
  model::play_purchase purchase; // what a signed upload of go-iap's purchase says
  purchase.product_id = data[0] & 32 ? "myproduct" : "premium_yearly";
  purchase.kind = api == sb::purchase_api::products ? model::product_kind::product
                                                    : model::product_kind::subscription;
  purchase.purchase_time = 1437564796303;
  purchase.purchase_state = model::purchase_state::purchased;
  auto verdict
    = sb::classify_purchase_response(api, status, body, status == 0 ? "timeout" : "", purchase);
  if (status != 200 && status != 410)
    FUZZ_CHECK(verdict.outcome != model::store_outcome::confirmed);
  // What an answer adds stays within what the resource and the columns hold.
  FUZZ_CHECK(!purchase.quantity || *purchase.quantity >= 0);
  FUZZ_CHECK(!purchase.refundable_quantity || *purchase.refundable_quantity >= 0);
  FUZZ_CHECK(!purchase.latest_order_id || purchase.latest_order_id->size() <= 256);
  FUZZ_CHECK(!purchase.deferred_product_id || purchase.deferred_product_id->size() <= 256);
  if (api == sb::purchase_api::products)
    FUZZ_CHECK(!purchase.prepaid && !purchase.installments && !purchase.offer_phase);
  if (purchase.prepaid == true)
    FUZZ_CHECK(purchase.auto_renewing == false && !purchase.installments);
  if (purchase.installments)
    FUZZ_CHECK(purchase.prepaid == false);
  fuzz::parses_as_json(boost::json::serialize(model::in_app_purchase_json(purchase)));
  return 0;
}

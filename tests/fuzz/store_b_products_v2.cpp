// Google's productsv2 answer (purchases.productsv2.getproductpurchasev2,
// Billing Library 8 one-time products: several line items, purchase options,
// offers, pending and cancelled states) through classify_purchase_response,
// the stored line items (line_items_json and back) and what a purchase order
// holding it observes. Byte 0: the HTTP status (bits 0-2), the claimed product
// (bit 3); the rest is the body.

#include <algorithm>

#include "model/purchases/observation.hpp"
#include "model/resource_json.hpp"
#include "model/store_b/line_items.hpp"
#include "model/store_b/play_api.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace receiptd;
  namespace sb = model::store_b;
  if (size == 0)
    return 0;
  static constexpr int statuses[] = {200, 0, 400, 401, 403, 404, 410, 500};
  const int status = statuses[data[0] & 7];
  auto body = fuzz::as_text(data + 1, size - 1);
  model::play_purchase purchase;
  purchase.product_id = data[0] & 8 ? "gems_100" : "premium";
  purchase.kind = model::product_kind::product;
  auto verdict = sb::classify_purchase_response(sb::purchase_api::products_v2, status, body,
                                                status == 0 ? "timeout" : "", purchase);
  if (status != 200 && status != 410)
    FUZZ_CHECK(verdict.outcome != model::store_outcome::confirmed);
  // The claimed product is what the record keeps, whatever the answer names.
  FUZZ_CHECK(purchase.product_id == (data[0] & 8 ? "gems_100" : "premium"));
  FUZZ_CHECK(purchase.kind == model::product_kind::product);
  FUZZ_CHECK(!purchase.quantity || *purchase.quantity >= 0);
  FUZZ_CHECK(!purchase.refundable_quantity || *purchase.refundable_quantity >= 0);
  FUZZ_CHECK(!purchase.latest_order_id || purchase.latest_order_id->size() <= 256);
  FUZZ_CHECK(!purchase.offer_id || purchase.offer_id->size() <= 256);
  FUZZ_CHECK(purchase.line_items.size() != 1 && purchase.line_items.size() <= sb::max_line_items);
  if (verdict.outcome == model::store_outcome::confirmed && status == 200) {
    // Several line items: the claimed product is one of them.
    if (!purchase.line_items.empty()) {
      bool claimed = false;
      for (const auto& item : purchase.line_items)
        claimed = claimed || item.product_id == purchase.product_id;
      FUZZ_CHECK(claimed);
    }
  }
  // What is stored reads back as itself.
  if (auto text = sb::line_items_json(purchase.line_items)) {
    fuzz::parses_as_json(*text);
    auto back = sb::parse_line_items_json(*text);
    FUZZ_CHECK(back && *back == purchase.line_items);
  } else {
    FUZZ_CHECK(purchase.line_items.empty());
  }
  fuzz::parses_as_json(boost::json::serialize(model::in_app_purchase_json(purchase)));
  // A purchase order holding it: one purchase per line item, each its own key.
  model::purchase_order_record r;
  r.id = "r1";
  r.app_id = "app";
  r.package_name = "com.example";
  r.purchase_token = "token-1";
  r.state = verdict.outcome == model::store_outcome::confirmed ? model::validation_state::validated
                                                                : model::validation_state::pending;
  r.purchase = purchase;
  auto seen = model::purchases::observe(r, {});
  FUZZ_CHECK(seen.size() == std::max<std::size_t>(1, purchase.line_items.size()));
  for (std::size_t i = 0; i < seen.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      FUZZ_CHECK(seen[i].key != seen[j].key);
  return 0;
}

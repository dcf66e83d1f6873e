// Google's orders answers (orders.get: an Order; orders.batchGet: {"orders":
// [Order…]}) through parse_order / parse_orders and apply_order onto a Play
// purchase of one or two line items. Byte 0: the HTTP status (bits 0-2), the
// call (bit 3: batchGet), two line items (bit 4); the rest is the body.

#include <algorithm>

#include "model/resource_json.hpp"
#include "model/store_b/line_items.hpp"
#include "model/store_b/orders.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

void holds(const receiptd::model::play_price& c) {
  FUZZ_CHECK(!c.currency_code || c.currency_code->size() == 3);
  FUZZ_CHECK(!c.currency_code
             || std::all_of(c.currency_code->begin(), c.currency_code->end(),
                            [](char ch) { return ch >= 'A' && ch <= 'Z'; }));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace receiptd;
  namespace sb = model::store_b;
  if (size == 0)
    return 0;
  static constexpr int statuses[] = {200, 0, 400, 401, 403, 404, 429, 500};
  const int status = statuses[data[0] & 7];
  auto body = fuzz::as_text(data + 1, size - 1);
  std::vector<sb::play_order> orders;
  if (data[0] & 8) {
    auto read = sb::parse_orders(status, body, status == 0 ? "timeout" : "");
    if (status != 200)
      FUZZ_CHECK(!read);
    if (read) {
      FUZZ_CHECK(read->size() <= sb::max_orders_per_batch);
      orders = std::move(*read);
    }
  } else {
    auto read = sb::parse_order(status, body, status == 0 ? "timeout" : "");
    if (status != 200)
      FUZZ_CHECK(!read);
    if (read)
      orders.push_back(std::move(*read));
  }
  for (const auto& o : orders) {
    FUZZ_CHECK(!o.order_id.empty() && o.order_id.size() <= 256);
    holds(o.cost);
    for (const auto& [product, cost] : o.line_items) {
      FUZZ_CHECK(!product.empty());
      holds(cost);
    }
    model::play_purchase p;
    p.product_id = "premium";
    if (data[0] & 16)
      p.line_items = {{"premium", 1, 1, false, {}, {}, {}}, {"gems_100", 3, 3, true, {}, {}, {}}};
    sb::apply_order(p, o, fuzz::fixed_now);
    FUZZ_CHECK(p.order_read_at == fuzz::fixed_now);
    holds(p.cost);
    // A price always comes with its currency when the order names one.
    if (p.cost.price && o.cost.currency_code)
      FUZZ_CHECK(p.cost.currency_code.has_value());
    // Applying it again changes nothing.
    auto again = p;
    FUZZ_CHECK(!sb::apply_order(again, o, fuzz::fixed_now) && again == p);
    if (auto text = sb::line_items_json(p.line_items)) {
      auto back = sb::parse_line_items_json(*text);
      FUZZ_CHECK(back && *back == p.line_items);
    }
    fuzz::parses_as_json(boost::json::serialize(model::in_app_purchase_json(p)));
  }
  return 0;
}

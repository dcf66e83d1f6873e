// POST /client/store_b/purchase_orders/legacy: the request body →
// store_b_legacy_upload → the package check → the record → answer and resource.

#include "model/store_b/purchase_order.hpp"
#include "tests/fuzz/upload_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace receiptd;
  namespace sb = model::store_b;
  auto u = model::parse_store_b_legacy_upload(fuzz::as_text(data, size));
  if (!u) {
    fuzz::check_refusal(u.errors());
    return 0;
  }
  FUZZ_CHECK(!u->package_name.empty() && !u->purchase_token.empty() && !u->product_id.empty());
  auto app = fuzz::fuzz_app();
  if (size % 2)
    app.package_name = u->package_name;
  auto reason = sb::check_locally(*u, app);
  auto record = sb::make_record(*u, app, fuzz::peer_ip, fuzz::fixed_now);
  record.id = "00000000-0000-4000-8000-000000000002";
  if (reason != model::fraud_reason::none)
    model::apply_fraud(record, reason);
  (void)sb::purchase_url("https://androidpublisher.googleapis.com", sb::first_api(record),
                         record.package_name, record.purchase.product_id, record.purchase_token);
  auto resource = fuzz::check_answer(record, reason);
  fuzz::check_echo(u->common, resource);
  return 0;
}

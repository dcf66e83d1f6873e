// POST /client/store_b/purchase_orders: the request body → store_b_upload (with
// the purchase data parsed) → the local check against a real licence key → the
// record → the answer and resource.

#include "model/store_b/licence_key.hpp"
#include "model/store_b/purchase_order.hpp"
#include "tests/fuzz/upload_checks.hpp"

namespace {

// go-iap's key: the one that signed tests/data's go-iap purchase, a seed here.
const receiptd::model::store_b::licence_key& licence() {
  static const auto key = [] {
    auto k = receiptd::model::store_b::licence_key::parse(receiptd::fuzz::source_file(
      "tests/data/google-play/go-iap-playstore-fixed-key/public_key.b64"));
    if (!k)
      std::abort();
    return *k;
  }();
  return *key;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace receiptd;
  namespace sb = model::store_b;
  auto u = model::parse_store_b_upload(fuzz::as_text(data, size));
  if (!u) {
    fuzz::check_refusal(u.errors());
    return 0;
  }
  auto app = fuzz::fuzz_app();
  app.package_name = size % 2 ? u->data.package_name : "my.package";
  auto reason = sb::check_locally(*u, licence(), app);
  auto record = sb::make_record(*u, app, fuzz::peer_ip, fuzz::fixed_now);
  record.id = "00000000-0000-4000-8000-000000000002";
  if (reason != model::fraud_reason::none)
    model::apply_fraud(record, reason);
  FUZZ_CHECK(record.purchase_data == u->purchase_data); // kept byte for byte
  auto resource = fuzz::check_answer(record, reason);
  fuzz::check_echo(u->common, resource);
  return 0;
}

// POST /client/store_a/receipts: the request body → store_a_upload → the local
// verification of the receipt it carries → the record → the answer and resource.

#include "model/encoding.hpp"
#include "model/store_a/receipt_record.hpp"
#include "tests/fuzz/upload_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace receiptd;
  namespace sa = model::store_a;
  auto u = model::parse_store_a_upload(fuzz::as_text(data, size));
  if (!u) {
    fuzz::check_refusal(u.errors());
    return 0;
  }
  auto decoded = model::base64_decode(u->receipt_data);
  FUZZ_CHECK(decoded && *decoded == u->receipt_bytes);
  if (u->country_code)
    FUZZ_CHECK(u->country_code->size() == 2);

  auto app = fuzz::fuzz_app();
  if (auto r = sa::decode_receipt(u->receipt_bytes))
    app.bundle_id = r->bundle_id;
  auto v = sa::verify_receipt(u->receipt_bytes, fuzz::apple_anchors(), app.bundle_id,
                              u->identifier_for_vendor);
  FUZZ_CHECK(!v.internal_error); // a verdict for any bytes (store_a_checks.hpp)
  auto record = sa::make_record(*u, app, v, fuzz::peer_ip, fuzz::fixed_now);
  record.id = "00000000-0000-4000-8000-000000000002";
  auto resource = fuzz::check_answer(record, v.reason);
  fuzz::check_echo(u->common, resource);
  return 0;
}

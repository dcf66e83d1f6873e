// Play purchase data and its signature (Play Billing: SHA1withRSA over the exact
// purchase data bytes): parse_purchase_data, the licence keys of tests/data, the
// local check and the record's JSON. Input: purchase data, "|@|", the signature
// as uploaded (base64).

#include "model/encoding.hpp"
#include "model/resource_json.hpp"
#include "model/store_b/licence_key.hpp"
#include "model/store_b/purchase_data.hpp"
#include "model/store_b/purchase_order.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

namespace sb = receiptd::model::store_b;

struct known_key {
  std::string text;
  std::shared_ptr<const sb::licence_key> key;
};

const std::vector<known_key>& keys() {
  static const auto out = [] {
    std::vector<known_key> k;
    for (const char* dir : {"go-iap-playstore-fixed-key", "voltrue2-trivialdrive-subscription",
                            "android-easy-checkout-test-keypair"}) {
      auto text = receiptd::fuzz::source_file(std::string("tests/data/google-play/") + dir
                                              + "/public_key.b64");
      auto key = sb::licence_key::parse(text);
      if (!key)
        std::abort();
      k.push_back({text, *key});
    }
    return k;
  }();
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace receiptd;
  auto fields = fuzz::split_fields(fuzz::as_text(data, size), 2);
  auto signature = model::base64_decode(fields[1]);
  for (const auto& k : keys())
    (void)k.key->verify(fields[0], signature ? *signature : std::string(fields[1]));

  auto parsed = sb::parse_purchase_data(fields[0]);
  if (!parsed) {
    FUZZ_CHECK(!parsed.errors().empty());
    FUZZ_CHECK(parsed.errors().front().field == "purchase_data");
    fuzz::parses_as_json(model::error_body(parsed.errors()));
    return 0;
  }
  (void)sb::purchase_state_of(parsed->purchase_state);
  model::store_b_upload upload;
  upload.purchase_data = std::string(fields[0]);
  upload.purchase_signature = std::string(fields[1]);
  upload.signature_bytes = signature ? *signature : std::string();
  upload.data = *parsed;
  model::app app;
  app.id = "00000000-0000-4000-8000-000000000001";
  app.package_name = parsed->package_name;
  const auto& k = keys()[size % keys().size()];
  app.store_b_public_key = k.text;
  auto reason = sb::check_locally(upload, *k.key, app);
  auto record = sb::make_record(upload, app, "2001:db8::1", fuzz::fixed_now);
  record.id = "00000000-0000-4000-8000-000000000002";
  if (reason != model::fraud_reason::none)
    model::apply_fraud(record, reason);
  (void)sb::first_api(record);
  auto answer = model::answer_for(record, reason);
  FUZZ_CHECK(answer.status >= 200 && answer.status < 500);
  fuzz::parses_as_json(answer.body);
  fuzz::parses_as_json(boost::json::serialize(model::purchase_order_json(record)));
  return 0;
}

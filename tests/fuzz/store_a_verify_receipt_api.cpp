// Apple's verifyReceipt answers: classify_verify_receipt (status codes, 21007/21008
// redirects, is-retryable) and enrich_in_app (receipt.in_app[],
// latest_receipt_info[], iOS 6 receipt objects), then the in-app resources.
// The first byte picks the HTTP status and the endpoint asked; the rest is the body.

#include "model/encoding.hpp"
#include "model/resource_json.hpp"
#include "model/store_a/receipt.hpp"
#include "model/store_a/verify_receipt_api.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

namespace sa = receiptd::model::store_a;

// The in-app purchases of tests/data's revenuecat sample, whose verifyReceipt
// answer is a seed: enrichment then matches real transaction ids.
const std::vector<receiptd::model::apple_in_app_purchase>& local_purchases() {
  static const auto out = [] {
    auto b64 = receiptd::fuzz::source_file(
      "tests/data/apple-unified/revenuecat-sample1-sandbox-ios/receipt.b64");
    auto bytes = receiptd::model::base64_decode(b64);
    auto r = bytes ? sa::decode_receipt(*bytes) : sa::decode_receipt("");
    if (!r)
      std::abort();
    auto purchases = r->in_app;
    receiptd::model::apple_in_app_purchase blank; // no transaction id at all
    purchases.push_back(blank);
    return purchases;
  }();
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace receiptd;
  if (size == 0)
    return 0;
  static constexpr int statuses[] = {200, 0, 500, 503, 429, 404, 302, 401};
  const int status = statuses[data[0] & 7];
  const auto asked = data[0] & 8 ? sa::verify_endpoint::sandbox : sa::verify_endpoint::production;
  auto body = fuzz::as_text(data + 1, size - 1);
  auto answer = sa::classify_verify_receipt(status, body, status == 0 ? "timeout" : "", asked);
  // No property on retry_on: 21007 from the sandbox itself names the endpoint
  // just asked, and store_a_client follows a redirect once only.
  if (status != 200)
    FUZZ_CHECK(answer.verdict.outcome != model::store_outcome::confirmed);

  auto purchases = local_purchases();
  sa::enrich_in_app(purchases, body);
  FUZZ_CHECK(purchases.size() == local_purchases().size());
  for (const auto& p : purchases)
    fuzz::parses_as_json(boost::json::serialize(model::in_app_purchase_json(p)));
  return 0;
}

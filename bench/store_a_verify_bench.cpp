// Local Store A verification cost per receipt: decode only, and the full
// verify_receipt (decode + signature + chain at the receipt's date + bundle id),
// for a SHA-1 unified receipt, a SHA-256 unified receipt and an iOS 6 transaction
// receipt from the public vectors. Prints microseconds (wall and CPU) per call,
// plus the first verification with fresh trust anchors (cold verification cache:
// every embedded certificate decoded, every chain link checked).
//
//   store_a_verify_bench [iterations]   (default 2000)

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "bench/micro.hpp"
#include "model/encoding.hpp"
#include "model/store_a/receipt.hpp"

namespace sa = receiptd::model::store_a;

namespace {

using receiptd::bench::measure;
using receiptd::bench::read_file;

std::string trust(const char* file) {
  return read_file(std::string(RECEIPTD_SOURCE_DIR) + "/config/trust/" + file);
}

std::string receipt(const std::string& rel) {
  auto bytes = receiptd::model::base64_decode(
    read_file(std::string(RECEIPTD_TEST_DATA) + "/" + rel + "/receipt.b64"));
  if (!bytes) {
    std::fprintf(stderr, "%s: not base64\n", rel.c_str());
    std::exit(1);
  }
  return *bytes;
}

std::shared_ptr<const sa::trust_anchors> fresh_anchors() {
  auto anchors
    = sa::load_trust_anchors({{trust("apple-root-ca.pem")},
                              {trust("apple-itunes-store-ca.pem"), trust("apple-wwdr-ca.pem")},
                              {}});
  if (!anchors) {
    std::fprintf(stderr, "trust: %s\n", anchors.errors().front().message.c_str());
    std::exit(1);
  }
  return *anchors;
}

} // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  auto anchors = fresh_anchors();
  struct item {
    const char* label;
    std::string bytes;
  } items[] = {
    {"unified SHA-1 (revenuecat, 8425 B, 9 IAP)",
     receipt("apple-unified/revenuecat-sample1-sandbox-ios")},
    {"unified SHA-256 (tpinappreceipt prod, 6627 B)",
     receipt("apple-unified/tpinappreceipt-production-ios")},
    {"transaction v2 (mbaasy yearly)",
     receipt("apple-transaction/mbaasy-yearly-subscription-sandbox-2015")},
  };
  std::printf("store_a verify, %d iterations each\n", iterations);
  int failures = 0;
  for (auto& it : items) {
    auto decoded = sa::decode_receipt(it.bytes);
    if (!decoded) {
      std::fprintf(stderr, "%s does not decode\n", it.label);
      return 1;
    }
    const std::string bundle = decoded->bundle_id;
    std::printf("%s\n", it.label);
    {
      auto cold = fresh_anchors();
      auto t0 = std::chrono::steady_clock::now();
      auto v = sa::verify_receipt(it.bytes, *cold, bundle, std::nullopt);
      auto t1 = std::chrono::steady_clock::now();
      failures += v.reason == receiptd::model::fraud_reason::none ? 0 : 1;
      std::printf("  %-44s %8.1f us wall (one call)\n", "verify_receipt, cold cache",
                  std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    measure("decode_receipt", iterations,
            [&] { failures += sa::decode_receipt(it.bytes) ? 0 : 1; });
    measure("verify_receipt", iterations, [&] {
      auto v = sa::verify_receipt(it.bytes, *anchors, bundle, std::nullopt);
      failures += v.reason == receiptd::model::fraud_reason::none ? 0 : 1;
    });
  }
  if (failures > 0)
    std::printf("unexpected failures: %d\n", failures);
  return failures > 0 ? 1 : 0;
}

// Local StoreKit 2 verification cost: verify_jws on real Apple JWS
// (a 2025 signed transaction, and a notification carrying two nested JWS),
// cold (fresh trust anchors: every x5c certificate decoded, the chain built
// and checked) and warm (the chain remembered: one ES256 verification), plus
// parse_signed_transaction. Prints microseconds (wall and CPU) per call.
//
//   store_a_jws_bench [iterations]   (default 2000)

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/micro.hpp"
#include "model/store_a/jws.hpp"

namespace sa = receiptd::model::store_a;
using receiptd::model::fraud_reason;

namespace {

using receiptd::bench::measure;
using receiptd::bench::read_file;

std::shared_ptr<const sa::trust_anchors> fresh_anchors() {
  // store-a.trust-roots' default.
  auto trust = [](const char* file) {
    return read_file(std::string(RECEIPTD_SOURCE_DIR) + "/config/trust/" + file);
  };
  auto anchors
    = sa::load_trust_anchors({{trust("apple-root-ca.pem"), trust("apple-root-ca-g3.pem")}, {}, {}});
  if (!anchors) {
    std::fprintf(stderr, "trust: %s\n", anchors.errors().front().message.c_str());
    std::exit(1);
  }
  return *anchors;
}

} // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::max(1, std::atoi(argv[1])) : 2000;
  struct item {
    const char* label;
    const char* dir;
    bool transaction;
  } items[] = {
    {"transaction 2025 (session-pro, 5322 B)",
     "apple-jws-transaction/session-pro-autorenew-renewal-sandbox-2025", true},
    {"notification 2025 (session-pro DID_RENEW)",
     "apple-jws-notification/session-pro-did-renew-sandbox-2025", false},
  };
  std::printf("store_a verify_jws, %d iterations each\n", iterations);
  int failures = 0;
  auto check = [&](const sa::jws_verification& v) {
    failures += v.reason == fraud_reason::none && !v.internal_error ? 0 : 1;
  };
  for (const auto& it : items) {
    const auto jws = read_file(std::string(RECEIPTD_TEST_DATA) + "/" + it.dir + "/jws.txt");
    std::printf("%s\n", it.label);
    {
      // The process's very first verification of this JWS (fresh anchors).
      auto cold = fresh_anchors();
      auto t0 = std::chrono::steady_clock::now();
      auto v = sa::verify_jws(jws, *cold);
      auto t1 = std::chrono::steady_clock::now();
      check(v);
      std::printf("  %-44s %8.1f us wall (one call)\n", "verify_jws, cold cache, first call",
                  std::chrono::duration<double, std::micro>(t1 - t0).count());
      // Cold again with new anchors each time (OpenSSL's own first-use costs paid).
      constexpr int rounds = 50;
      std::vector<std::shared_ptr<const sa::trust_anchors>> anchors;
      for (int i = 0; i < rounds; ++i)
        anchors.push_back(fresh_anchors());
      t0 = std::chrono::steady_clock::now();
      for (const auto& a : anchors)
        check(sa::verify_jws(jws, *a));
      t1 = std::chrono::steady_clock::now();
      std::printf("  %-44s %8.1f us wall (mean of %d)\n", "verify_jws, cold cache",
                  std::chrono::duration<double, std::micro>(t1 - t0).count() / rounds, rounds);
    }
    auto anchors = fresh_anchors();
    measure("verify_jws, chain remembered", iterations,
            [&] { check(sa::verify_jws(jws, *anchors)); });
    if (it.transaction) {
      const auto payload = sa::verify_jws(jws, *anchors).payload;
      measure("parse_signed_transaction", iterations,
              [&] { failures += sa::parse_signed_transaction(payload) ? 0 : 1; });
    }
  }
  if (failures > 0)
    std::printf("unexpected failures: %d\n", failures);
  return failures > 0 ? 1 : 0;
}

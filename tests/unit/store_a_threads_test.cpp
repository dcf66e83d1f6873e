// verify_receipt is called from several validator threads at once with one
// shared trust_anchors (DESIGN.md §1): results must not depend on interleaving.

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "tests/unit/store_a_fixtures.hpp"

using namespace store_a_fixtures;
using namespace receiptd::model;

TEST_CASE("concurrent verification with shared trust anchors", "[store_a][threads]") {
  struct job {
    std::string bytes;
    std::string bundle;
    fraud_reason expected;
  };
  std::vector<job> jobs;
  for (const char* name : unified_vectors) {
    auto bytes = vector_bytes("apple-unified", name);
    auto bundle = sa::decode_receipt(bytes)->bundle_id;
    jobs.push_back({bytes, bundle, fraud_reason::none});
    jobs.push_back({bytes, "com.other", fraud_reason::bundle_id_mismatch});
    // Near the end: inside the signature (DER) or the closing EOCs (Xcode's BER),
    // so invalid_signature or malformed_receipt; the sequential answer is the reference.
    auto broken = bytes;
    broken[broken.size() - 3] ^= 0x10;
    auto reference = sa::verify_receipt(broken, apple_and_storekit_anchors(), bundle, std::nullopt);
    CHECK(reference.reason != fraud_reason::none);
    jobs.push_back({broken, bundle, reference.reason});
  }
  for (const char* name : transaction_vectors) {
    auto bytes = vector_bytes("apple-transaction", name);
    jobs.push_back({bytes, sa::decode_receipt(bytes)->bundle_id, fraud_reason::none});
  }
  jobs.push_back({"garbage", "", fraud_reason::malformed_receipt});

  // Fresh anchors: the threads fill the verification cache concurrently.
  auto fresh = load({{trust_pem("apple-root-ca.pem")},
                     {trust_pem("apple-itunes-store-ca.pem"), trust_pem("apple-wwdr-ca.pem")},
                     {trust_pem("storekit-test.pem")}});
  const auto& anchors = *fresh;
  std::atomic<int> wrong{0}, done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10; ++round)
        for (std::size_t i = 0; i < jobs.size(); ++i) {
          const auto& j = jobs[(i + static_cast<std::size_t>(t) * 7) % jobs.size()];
          auto v = sa::verify_receipt(j.bytes, anchors, j.bundle, std::nullopt);
          if (v.reason != j.expected)
            ++wrong;
          ++done;
        }
    });
  for (auto& th : threads)
    th.join();
  CHECK(done == 4 * 10 * static_cast<int>(jobs.size()));
  CHECK(wrong == 0);
}

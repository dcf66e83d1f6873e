// The three real Play triples of tests/data/google-play and their negative cases.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "model/encoding.hpp"
#include "model/store_b/licence_key.hpp"
#include "test_files.hpp"

using namespace receiptd::model;
using receiptd::test::data_file;

namespace {

struct triple {
  std::string data, signature, key;
};

triple load(const std::string& name) {
  auto dir = "google-play/" + name + "/";
  return {data_file(dir + "signed_data.txt"), data_file(dir + "signature.b64"),
          data_file(dir + "public_key.b64")};
}

bool verifies(const std::string& key_b64, const std::string& data, const std::string& sig_b64) {
  auto key = store_b::licence_key::parse(key_b64);
  REQUIRE(key);
  auto sig = base64_decode(sig_b64);
  REQUIRE(sig);
  return (*key)->verify(data, *sig);
}

} // namespace

TEST_CASE("real Play signatures verify over the exact purchase data bytes", "[store_b][vectors]") {
  auto name = GENERATE(std::string("voltrue2-trivialdrive-subscription"),
                       std::string("go-iap-playstore-fixed-key"),
                       std::string("android-easy-checkout-test-keypair"));
  auto t = load(name);
  CHECK(verifies(t.key, t.data, t.signature));

  SECTION("one changed byte of the data fails") {
    auto tampered = t.data;
    tampered.back() ^= 0x01;
    CHECK_FALSE(verifies(t.key, tampered, t.signature));
  }
  SECTION("re-serialized data fails: a trailing newline is a different proof") {
    CHECK_FALSE(verifies(t.key, t.data + "\n", t.signature));
  }
  SECTION("one changed byte of the signature fails") {
    auto sig = *base64_decode(t.signature);
    sig[sig.size() / 2] ^= 0x01;
    auto key = store_b::licence_key::parse(t.key);
    CHECK_FALSE((*key)->verify(t.data, sig));
  }
  SECTION("an empty signature fails") {
    auto key = store_b::licence_key::parse(t.key);
    CHECK_FALSE((*key)->verify(t.data, ""));
  }
}

TEST_CASE("one parsed key checks signatures on several threads at once, again and again",
          "[store_b][vectors][threads]") {
  // Each check starts from the key's prepared context: one check must not leave
  // anything behind for the next, on its thread or another.
  auto t = load("android-easy-checkout-test-keypair");
  auto key = store_b::licence_key::parse(t.key);
  REQUIRE(key);
  const auto sig = *base64_decode(t.signature);
  auto tampered = t.data;
  tampered.back() ^= 0x01;
  std::atomic<int> right{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int n = 0; n < 4; ++n)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        bool genuine = i % 2 == 0;
        bool ok = (*key)->verify(genuine ? t.data : tampered, sig);
        (ok == genuine ? right : wrong).fetch_add(1);
      }
    });
  for (auto& th : threads)
    th.join();
  CHECK(right == 800);
  CHECK(wrong == 0);
}

TEST_CASE("another app's licence key does not verify", "[store_b][vectors]") {
  auto a = load("voltrue2-trivialdrive-subscription");
  auto b = load("android-easy-checkout-test-keypair");
  CHECK_FALSE(verifies(b.key, a.data, a.signature));
  CHECK_FALSE(verifies(a.key, b.data, b.signature));
}

TEST_CASE("go-iap negative cases", "[store_b][vectors]") {
  auto t = load("go-iap-playstore-fixed-key");
  auto dir = std::string("google-play/go-iap-playstore-fixed-key/negative/");
  SECTION("signature is invalid") {
    CHECK_FALSE(verifies(t.key, t.data, data_file(dir + "signature_wrong.b64")));
  }
  SECTION("signature is not base64") {
    CHECK_FALSE(base64_decode(data_file(dir + "signature_invalid_base64.txt")));
  }
  SECTION("public key is not base64") {
    auto key = store_b::licence_key::parse(data_file(dir + "public_key_invalid_base64.txt"));
    REQUIRE_FALSE(key);
    CHECK(key.errors().front().code == "invalid_base64");
  }
  SECTION("public key is not an RSA public key") {
    auto key = store_b::licence_key::parse(data_file(dir + "public_key_not_rsa.b64"));
    REQUIRE_FALSE(key);
    CHECK(key.errors().front().code == "invalid_key");
  }
}

TEST_CASE("android-easy-checkout: a signature over other data fails", "[store_b][vectors]") {
  auto t = load("android-easy-checkout-test-keypair");
  auto dir = std::string("google-play/android-easy-checkout-test-keypair/negative/");
  auto other_sig = data_file(dir + "signature_over_autorenewing_false.b64");
  CHECK_FALSE(verifies(t.key, t.data, other_sig));
  CHECK(verifies(t.key, data_file(dir + "signed_data_autorenewing_false.txt"), other_sig));
}

TEST_CASE("an empty licence key is rejected", "[store_b]") {
  CHECK_FALSE(store_b::licence_key::parse(""));
}

// A Play licence key is operator-supplied; one larger than RSA-4096 (or with a
// private-key-sized exponent) only makes every signature check of that app cost
// more, so it is refused where it is loaded: receiptctl says so,
// and an app context never holds it.

#include <catch2/catch.hpp>

#include "model/encoding.hpp"
#include "model/store_b/licence_key.hpp"
#include "tests/support/crypto/test_ca.hpp"

#include <openssl/x509.h>

using namespace receiptd::model;
namespace ts = receiptd::test_support;

namespace {

// The base64 SubjectPublicKeyInfo of a fresh key, as the Play Console gives it.
std::string licence_key_of(int bits, int exponent_shift = 0) {
  ts::cert_options o;
  o.key_bits = bits;
  o.rsa_exponent_shift = exponent_shift;
  auto cert = ts::make_cert(o);
  unsigned char* der = nullptr;
  int n = i2d_PUBKEY(X509_get0_pubkey(cert.x509()), &der);
  REQUIRE(n > 0);
  std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(n));
  OPENSSL_free(der);
  return base64_encode(out);
}

} // namespace

TEST_CASE("licence keys above RSA-4096 are refused where they are loaded",
          "[store_b][hostile][keys]") {
  CHECK(store_b::licence_key::parse(licence_key_of(2048)));
  CHECK(store_b::licence_key::parse(licence_key_of(4096)));

  auto big = store_b::licence_key::parse(licence_key_of(4160));
  REQUIRE_FALSE(big);
  CHECK(big.errors().front().field == "store_b_public_key");
  CHECK(big.errors().front().code == "invalid_key");
  CHECK_THAT(big.errors().front().message, Catch::Contains("RSA-4160 key: more than 4096 bits"));

  auto small = store_b::licence_key::parse(licence_key_of(768));
  REQUIRE_FALSE(small);
  CHECK_THAT(small.errors().front().message, Catch::Contains("fewer than 1024 bits"));

  auto exponent = store_b::licence_key::parse(licence_key_of(2048, 1500));
  REQUIRE_FALSE(exponent);
  CHECK_THAT(exponent.errors().front().message, Catch::Contains("public exponent of 1501 bits"));
}

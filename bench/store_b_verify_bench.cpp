// Local Store B check cost per upload: the Play signature (RSASSA-PKCS1-v1_5,
// SHA-1) over a real purchase's data with its app's parsed licence key
// (tests/data/google-play), as model::store_b::check_locally runs it. Prints
// microseconds (wall and CPU) per call.
//
//   store_b_verify_bench [iterations]   (default 20000)

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/micro.hpp"
#include "model/encoding.hpp"
#include "model/store_b/licence_key.hpp"

namespace {

std::string vector_file(const std::string& name) {
  auto text = receiptd::bench::read_file(
    std::string(RECEIPTD_TEST_DATA) + "/google-play/android-easy-checkout-test-keypair/" + name);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

} // namespace

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  auto key = receiptd::model::store_b::licence_key::parse(vector_file("public_key.b64"));
  auto sig = receiptd::model::base64_decode(vector_file("signature.b64"));
  const auto data = receiptd::bench::read_file(
    std::string(RECEIPTD_TEST_DATA)
    + "/google-play/android-easy-checkout-test-keypair/signed_data.txt");
  if (!key || !sig || !(*key)->verify(data, *sig)) {
    std::fprintf(stderr, "the test vector does not verify\n");
    return 1;
  }
  receiptd::bench::measure("licence_key::verify (RSA-2048, SHA-1)", iterations,
                           [&] { (void)(*key)->verify(data, *sig); });
  return 0;
}

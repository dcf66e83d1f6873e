// Unified App Store receipts: the whole PKCS#7 SignedData (BER or DER) with its
// certificates, signer info and ASN.1 payload, through decode_receipt and
// verify_receipt with the shipped trust anchors. Seeds: tests/data/apple-unified
// and generated receipts (tests/fuzz/make_seeds.cpp).

#include "tests/fuzz/store_a_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  receiptd::fuzz::check_store_a_bytes(receiptd::fuzz::as_text(data, size), size);
  return 0;
}

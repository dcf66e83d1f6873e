// Robustness: truncations and random mutations of every public vector go through
// decode_receipt and verify_receipt. Nothing may crash, hang or read out of
// bounds (run once under -fsanitize=address,undefined; see the report), and
// undecodable bytes must always come back as malformed_receipt.

#include <catch2/catch.hpp>

#include <random>

#include <openssl/pkcs7.h>

#include "tests/unit/store_a_fixtures.hpp"

using namespace store_a_fixtures;
using namespace receiptd::model;

namespace {

struct corpus_entry {
  std::string name;
  std::string bytes;
  std::string bundle;
};

std::vector<corpus_entry> corpus() {
  std::vector<corpus_entry> out;
  for (const char* name : unified_vectors)
    out.push_back({name, vector_bytes("apple-unified", name), ""});
  for (const char* name : transaction_vectors)
    out.push_back({name, vector_bytes("apple-transaction", name), ""});
  out.push_back({"unsigned mock",
                 vector_bytes("apple-transaction", "apple-library-legacy-minimal-unsigned"), ""});
  for (auto& e : out)
    if (auto d = sa::decode_receipt(e.bytes))
      e.bundle = d->bundle_id;
  return out;
}

// Checks one input; returns whether it still verified.
bool exercise(const std::string& bytes, const std::string& bundle) {
  auto decoded = sa::decode_receipt(bytes);
  auto v = sa::verify_receipt(bytes, apple_and_storekit_anchors(), bundle,
                              std::string("956328D9-CC6A-47F4-BE40-6953FB0AB6C7"));
  CHECK_FALSE(v.internal_error);
  // The two entry points agree on what is decodable. verify_receipt checks the
  // signature and chain before it decodes the payload, so bytes
  // that do not decode may be refused for their signature first; either way
  // nothing they claim is kept.
  const bool past_chain = v.reason == fraud_reason::none
    || v.reason == fraud_reason::bundle_id_mismatch
    || v.reason == fraud_reason::device_hash_mismatch;
  if (past_chain) {
    CHECK(decoded.ok());
    CHECK(v.receipt.has_value());
  }
  if (v.reason == fraud_reason::malformed_receipt)
    CHECK_FALSE(v.receipt.has_value());
  if (!decoded) {
    CHECK(decoded.errors().front().code == "malformed_receipt");
    CHECK_FALSE(past_chain);
    if (v.receipt) {
      CHECK(v.receipt->bundle_id.empty());
      CHECK(v.receipt->in_app.empty());
    }
  } else {
    CHECK(v.reason != fraud_reason::malformed_receipt);
  }
  return v.reason == fraud_reason::none;
}

// Byte range of the signed payload inside a PKCS#7 DER (empty if none).
std::pair<std::size_t, std::size_t> payload_range(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  PKCS7* p7 = d2i_PKCS7(nullptr, &p, static_cast<long>(der.size()));
  if (p7 == nullptr)
    return {0, 0};
  const ASN1_OCTET_STRING* s = p7->d.sign->contents->d.data;
  std::string_view needle(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                          static_cast<std::size_t>(ASN1_STRING_length(s)));
  auto at = std::string_view(der).find(needle);
  PKCS7_free(p7);
  return at == std::string_view::npos ? std::pair<std::size_t, std::size_t>{0, 0}
                                      : std::pair{at, needle.size()};
}

} // namespace

TEST_CASE("truncated receipts never verify and never crash", "[store_a][fuzz]") {
  for (const auto& e : corpus()) {
    SECTION(e.name) {
      int verified = 0;
      for (std::size_t len = 0; len < e.bytes.size();
           len += (len < 256 || len + 256 > e.bytes.size()) ? 1 : 7)
        verified += exercise(e.bytes.substr(0, len), e.bundle);
      CHECK(verified == 0);
    }
  }
}

TEST_CASE("randomly mutated receipts never crash", "[store_a][fuzz]") {
  std::mt19937 rng(20261122); // fixed: failures must reproduce
  auto mutate = [&](std::string s, std::size_t from, std::size_t size) {
    std::uniform_int_distribution<std::size_t> count(1, 4), pos(from, from + size - 1);
    std::uniform_int_distribution<int> byte(0, 255), kind(0, 2);
    for (std::size_t n = count(rng); n > 0; --n) {
      auto at = pos(rng);
      switch (kind(rng)) {
        case 0:
          s[at] = static_cast<char>(byte(rng));
          break; // random byte
        case 1:
          s[at] = static_cast<char>(s[at] ^ (1 << (byte(rng) % 8)));
          break; // one bit
        default:
          s[at] = static_cast<char>(0x80 | byte(rng));
          break; // length-ish byte
      }
    }
    return s;
  };
  for (const auto& e : corpus()) {
    SECTION(e.name) {
      for (int i = 0; i < 300; ++i)
        exercise(mutate(e.bytes, 0, e.bytes.size()), e.bundle);
      // Aimed at the payload, so the attribute decoder sees hostile structure.
      auto [off, size] = payload_range(e.bytes);
      if (size > 0)
        for (int i = 0; i < 300; ++i)
          CHECK_FALSE(exercise(mutate(e.bytes, off, size), e.bundle));
      // Transaction receipts: mutate the decoded blob and purchase-info, re-encoded,
      // so the mutations get past base64 into the binary and plist parsers.
      if (auto d = sa::decode_receipt(e.bytes);
          d && std::holds_alternative<sa::transaction_receipt>(d->detail)) {
        const auto& t = std::get<sa::transaction_receipt>(d->detail);
        auto blob = *base64_decode(t.outer.at("signature"));
        const auto& info = t.purchase_info_bytes;
        for (int i = 0; i < 300; ++i) {
          bool in_blob = i % 2 == 0;
          auto b = in_blob ? mutate(blob, 0, blob.size()) : blob;
          auto pi = in_blob ? info : mutate(info, 0, info.size());
          std::string text = "{\"signature\" = \"" + base64_encode(b) + "\"; \"purchase-info\" = \""
            + base64_encode(pi) + "\";}";
          exercise(text, e.bundle);
        }
      }
    }
  }
}

TEST_CASE("degenerate inputs", "[store_a][fuzz]") {
  CHECK_FALSE(exercise("", ""));
  CHECK_FALSE(exercise(std::string(100000, '{'), ""));
  CHECK_FALSE(exercise("{" + std::string(100000, ' '), ""));
  CHECK_FALSE(exercise(std::string(100000, '\x30'), ""));
  CHECK_FALSE(exercise("\x30\x80" + std::string(5000, '\x30') + std::string(5000, '\x80'), ""));
  CHECK_FALSE(exercise("{ \"a\" = \"" + std::string(100000, '\\') + "\"; }", ""));
  CHECK_FALSE(exercise("{ /* unterminated comment", ""));
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 200; ++i) {
    std::string s(static_cast<std::size_t>(byte(rng)) * 4, '\0');
    for (auto& c : s)
      c = static_cast<char>(byte(rng));
    if (i % 2)
      s.insert(0, "\x30\x82");
    CHECK_FALSE(exercise(s, ""));
  }
}

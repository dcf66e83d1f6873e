#pragma once
// What the fuzz targets share: properties that abort when broken (so libFuzzer,
// or the replay of tests/fuzz/replay_main.cpp, reports the input), splitting one
// input into several fields, and the real trust material, loaded once.
//
// The targets use only the public headers of model/: what an attacker can reach.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/store_a/receipt.hpp"
#include "model/timestamp.hpp"

namespace receiptd::fuzz {

[[noreturn]] inline void violated(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: property violated: %s\n", file, line, what);
  std::abort();
}

// A property every input must keep (not an assert: it also holds in release builds).
#define FUZZ_CHECK(cond) ((cond) ? (void)0 : ::receiptd::fuzz::violated(#cond, __FILE__, __LINE__))

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A compact JWS or JWT with one character of segment `segment` (0 header, 1
// payload, 2 signature) replaced by another of the base64url alphabet.
inline std::string tampered(std::string_view compact, int segment) {
  std::string out(compact);
  std::size_t at = 0;
  for (int i = 0; i < segment; ++i)
    at = out.find('.', at) + 1;
  out[at] = out[at] == 'A' ? 'B' : 'A';
  return out;
}

// Fields of one input are separated by this token (it is in every dictionary).
inline constexpr std::string_view field_separator = "|@|";

// The input cut at the first `n - 1` separators; always `n` fields (missing ones empty).
inline std::vector<std::string_view> split_fields(std::string_view input, std::size_t n) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < n) {
    auto at = input.find(field_separator);
    if (at == std::string_view::npos)
      break;
    out.push_back(input.substr(0, at));
    input.remove_prefix(at + field_separator.size());
  }
  out.push_back(input);
  out.resize(n);
  return out;
}

// A file of the source tree (config/trust, tests/data). RECEIPTD_SOURCE_DIR in the
// environment wins over the path compiled in, so a copied binary still finds them.
inline std::string source_file(const std::string& relative) {
  const char* env = std::getenv("RECEIPTD_SOURCE_DIR");
  std::string path = std::string(env ? env : RECEIPTD_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz: cannot read %s\n", path.c_str());
    std::abort();
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The trust configuration receiptd ships (config/receiptd.ini, config/trust/README.md:
// Apple Root CA for receipts, Apple Root CA - G3 for StoreKit 2 JWS), with the opt-in
// StoreKit test root so that path is fuzzed too.
inline const model::store_a::trust_anchors& apple_anchors() {
  static const auto anchors = [] {
    auto a
      = model::store_a::load_trust_anchors({{source_file("config/trust/apple-root-ca.pem"),
                                             source_file("config/trust/apple-root-ca-g3.pem")},
                                            {source_file("config/trust/apple-itunes-store-ca.pem"),
                                             source_file("config/trust/apple-wwdr-ca.pem")},
                                            {source_file("config/trust/storekit-test.pem")}});
    if (!a) {
      std::fprintf(stderr, "fuzz: trust: %s\n", a.errors().front().message.c_str());
      std::abort();
    }
    return *a;
  }();
  return *anchors;
}

// Every body receiptd answers with must be JSON a client can parse: hostile bytes
// in a receipt must not make the answer unreadable.
inline boost::json::value parses_as_json(std::string_view text) {
  boost::system::error_code ec;
  boost::json::parse_options opts;
  opts.max_depth = 1000; // the answer's own nesting plus the client's metadata
  auto v = boost::json::parse(text, ec, {}, opts);
  if (ec) {
    std::fprintf(stderr, "fuzz: not JSON (%s): %.300s\n", ec.message().c_str(),
                 std::string(text).c_str());
    violated("the answer parses as JSON", __FILE__, __LINE__);
  }
  return v;
}

// RECEIPTD_FUZZ_VERBOSE=1: targets say what they concluded (to read a finding).
inline bool verbose() {
  static const bool on = std::getenv("RECEIPTD_FUZZ_VERBOSE") != nullptr;
  return on;
}

inline constexpr model::unix_ms fixed_now = 1700000000000; // 2023-11-14 22:13:20 UTC

} // namespace receiptd::fuzz

#pragma once
// StoreKit 2 signed data (model/store_a/jws.hpp) as the targets that reach it
// see it: what Apple really signed (the public vectors of tests/data, nested
// JWS included), and verify_jws with the properties every caller relies on.
// Shared by store_a_signed_transaction, store_a_notification and
// store_a_server_api_answers.

#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>

#include "model/encoding.hpp"
#include "model/store_a/jws.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace receiptd::fuzz {

// "<header>.<payload>" of a compact JWS: what its signature covers.
inline std::string_view signing_input(std::string_view compact) {
  auto dot = compact.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : compact.substr(0, dot);
}

// The signing inputs of every JWS in tests/data/apple-jws-* (a notification's
// nested signedTransactionInfo and signedRenewalInfo too): the only ones a fuzzer
// can present with a signature Apple (or Xcode's StoreKit test key) made.
inline const std::set<std::string, std::less<>>& genuine_signing_inputs() {
  static const auto out = [] {
    std::set<std::string, std::less<>> s;
    auto add = [&s](std::string_view jws) { s.emplace(signing_input(jws)); };
    const std::string root = std::getenv("RECEIPTD_SOURCE_DIR") ? std::getenv("RECEIPTD_SOURCE_DIR")
                                                                : RECEIPTD_SOURCE_DIR;
    for (const char* kind : {"transaction", "notification", "renewal"}) {
      const auto dir
        = std::filesystem::path(root) / "tests/data" / ("apple-jws-" + std::string(kind));
      for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (!e.is_directory())
          continue;
        const auto rel = std::filesystem::relative(e.path() / "jws.txt", root).string();
        const auto jws = source_file(rel);
        add(jws);
        if (std::string_view(kind) != "notification")
          continue;
        // The nested JWS, as the notification's payload carries them.
        auto payload = model::base64url_decode(
          jws.substr(jws.find('.') + 1, signing_input(jws).size() - jws.find('.') - 1));
        boost::system::error_code ec;
        auto doc = payload ? boost::json::parse(*payload, ec) : boost::json::value();
        const auto* data = doc.is_object() ? doc.get_object().if_contains("data") : nullptr;
        if (data != nullptr && data->is_object())
          for (const char* key : {"signedTransactionInfo", "signedRenewalInfo"})
            if (const auto* v = data->get_object().if_contains(key); v && v->is_string())
              add(v->get_string());
      }
    }
    if (s.size() < 20) { // 21 files and their nested JWS: the layout changed
      std::fprintf(stderr, "fuzz: only %zu Apple JWS found in tests/data\n", s.size());
      std::abort();
    }
    return s;
  }();
  return out;
}

// verify_jws under the shipped trust roots, with what holds for any bytes:
// a verdict, never an internal error; nothing that is not a compact JWS
// passes; a pass hands out exactly the signed payload, is one of the JWS Apple
// signed (tests/data), and no longer passes once any segment is changed; a
// refusal hands out no payload (what unverified bytes claim is never read).
inline model::store_a::jws_verification
checked_verify_jws(std::string_view compact, model::store_a::jws_options options = {}) {
  namespace sa = model::store_a;
  auto v = sa::verify_jws(compact, apple_anchors(), options);
  if (verbose())
    std::fprintf(stderr, "verify_jws: %s %s%s\n", std::string(to_string(v.reason)).c_str(),
                 v.detail.c_str(), v.xcode ? " (xcode)" : "");
  FUZZ_CHECK(!v.internal_error);
  const auto segments = sa::split_jws(compact);
  if (!segments)
    FUZZ_CHECK(v.reason == model::fraud_reason::malformed_receipt);
  if (v.reason != model::fraud_reason::none) {
    FUZZ_CHECK(v.payload.empty() && !v.xcode);
    return v;
  }
  FUZZ_CHECK(genuine_signing_inputs().count(signing_input(compact)) == 1);
  FUZZ_CHECK(model::base64url_decode(segments->payload) == v.payload);
  for (int segment = 0; segment < 3; ++segment)
    FUZZ_CHECK(sa::verify_jws(tampered(compact, segment), apple_anchors(), options).reason
               != model::fraud_reason::none);
  return v;
}

// What the payload segment of `compact` claims, decoded without any check of
// the signature: what the parsers would read, were it signed.
inline std::optional<std::string> claimed_payload(std::string_view compact) {
  auto segments = model::store_a::split_jws(compact);
  if (!segments)
    return std::nullopt;
  return model::base64url_decode(segments->payload);
}

} // namespace receiptd::fuzz

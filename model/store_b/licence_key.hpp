#pragma once
// Play Billing signatures: RSASSA-PKCS1-v1_5 with SHA-1 over the exact purchase
// data bytes, checked with the app's licence key (base64 DER SubjectPublicKeyInfo
// from the Play Console). DESIGN.md §4.

#include <memory>
#include <string_view>

#include "model/result.hpp"

namespace receiptd::model::store_b {

// A parsed licence key. Parse once per app and share: parsing costs far more
// than a verification. Thread-safe for concurrent verify calls.
class licence_key {
public:
  static result<std::shared_ptr<const licence_key>> parse(std::string_view base64_spki);
  ~licence_key();

  // signature: the raw (base64-decoded) signature bytes.
  bool verify(std::string_view signed_data, std::string_view signature) const;

  struct impl;
  explicit licence_key(std::unique_ptr<impl> p);

private:
  std::unique_ptr<impl> impl_;
};

} // namespace receiptd::model::store_b

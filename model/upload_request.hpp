#pragma once
// Request bodies of the three upload endpoints (SPEC §4), parsed and checked
// field by field. Every problem found is reported, not just the first.

#include <optional>
#include <string>
#include <string_view>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/store_b/purchase_data.hpp"

namespace receiptd::model {

inline constexpr std::size_t max_user_identifier_length = 1024;

// ip_address: omitted → the request's peer address; null → not stored;
// a string → must be IPv4 or IPv6 (canonical form kept).
struct ip_choice {
  enum class kind { omitted, null, address } k = kind::omitted;
  std::string address;
};

struct upload_common {
  std::optional<std::string> user_identifier;
  std::optional<std::string> metadata; // compact JSON object text
  ip_choice ip;

  // The echo fields to store for a request that came from `peer_ip`.
  echo_fields echo(std::string_view peer_ip) const;
};

struct store_a_upload {
  std::string receipt_data;  // base64 as sent
  std::string receipt_bytes; // decoded
  std::optional<std::string> country_code;          // upper-cased
  std::optional<std::string> identifier_for_vendor; // a UUID
  upload_common common;
};

struct store_b_upload {
  std::string purchase_data;      // the exact string value
  std::string purchase_signature; // base64 as sent
  std::string signature_bytes;    // decoded
  store_b::purchase_data data;    // parsed from purchase_data
  upload_common common;
};

struct store_b_legacy_upload {
  std::string package_name;
  std::string purchase_token;
  std::string product_id;
  std::optional<std::string> order_id;
  upload_common common;
};

result<store_a_upload> parse_store_a_upload(std::string_view body);
result<store_b_upload> parse_store_b_upload(std::string_view body);
result<store_b_legacy_upload> parse_store_b_legacy_upload(std::string_view body);

} // namespace receiptd::model

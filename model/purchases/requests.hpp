#pragma once
// The customer and grant requests' parameters, checked: path segments, query
// parameters and the grant's body. Errors are field errors (422), naming the
// parameter.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/result.hpp"
#include "model/timestamp.hpp"
#include "model/verdict.hpp"

namespace receiptd::model::purchases {

inline constexpr std::size_t max_user_identifier_bytes = 1024;
inline constexpr int default_page_size = 50;
inline constexpr int max_page_size = 200;

// A path segment percent-decoded (RFC 3986 §2.1): the user identifier, 1–1,024
// bytes of UTF-8, no control characters. Field "user_identifier".
result<std::string> user_identifier_param(std::string_view raw);

// An entitlement name as receiptctl allows them: 1–64 of [A-Za-z0-9_.-].
// Field "entitlement".
result<std::string> entitlement_param(std::string_view raw);

// ?environment=: absent is production; "production", "sandbox", "xcode".
result<environment> environment_param(std::optional<std::string_view> raw);

// ?limit=: absent is default_page_size; 1–max_page_size.
result<int> limit_param(std::optional<std::string_view> raw);

// Where a listing goes on: after the purchase made at created_at with this id.
struct page_cursor {
  unix_ms created_at = 0;
  std::string id;
};
// ?cursor=: absent is the first page; else what next_cursor gave.
result<std::optional<page_cursor>> cursor_param(std::optional<std::string_view> raw);
std::string cursor_text(const page_cursor& c);

// POST …/entitlements/{name}/grants: {"expires_at": ms | Timestamp} or
// {"duration": seconds | "30d" | "12h" | "45m" | "90s"}, exactly one; the
// grant runs from `now`. Optional "environment" (as the query's). The end must
// be after now and at most ten years away.
struct grant_request {
  unix_ms starts_at = 0;
  unix_ms expires_at = 0;
  environment env = environment::production;
};
result<grant_request> parse_grant_request(std::string_view body, unix_ms now);

// POST /server/customers/{user}/restore: {"transaction_id": "…"} (any of the
// customer's App Store transaction ids, 1–64 visible ASCII characters) or
// {"signed_transaction": JWS} (three base64url segments, at most 64 KiB; its
// signature is the caller's to check), exactly one of them.
struct restore_request {
  std::optional<std::string> transaction_id;
  std::optional<std::string> signed_transaction;
};
result<restore_request> parse_restore_request(std::string_view body);

} // namespace receiptd::model::purchases

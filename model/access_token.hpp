#pragma once
// API access tokens: random, shown once, stored only as a SHA-256 hash. A token is
// of one kind: a client token goes into an app's mobile builds (the /client/...
// routes); a server token stays on the app's own backend (the /server/... routes).
// The routing table says which kind each route takes (http/routes.hpp).

#include <optional>
#include <string>
#include <string_view>

namespace receiptd::model {

enum class token_kind {
  client, // "client": the app's mobile clients (the default, and every token made before kinds)
  server, // "server": the app's own backend
};
std::string_view to_string(token_kind k);
std::optional<token_kind> parse_token_kind(std::string_view text);

// "rcpt_" followed by 32 base64url characters (192 random bits).
std::string make_access_token();

// The stored form: lowercase hex SHA-256 of the token text.
std::string access_token_hash(std::string_view token);

} // namespace receiptd::model

#pragma once
// Client API access tokens: random, shown once, stored only as a SHA-256 hash.

#include <string>
#include <string_view>

namespace receiptd::model {

// "rcpt_" followed by 32 base64url characters (192 random bits).
std::string make_access_token();

// The stored form: lowercase hex SHA-256 of the token text.
std::string access_token_hash(std::string_view token);

} // namespace receiptd::model

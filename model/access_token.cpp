#include "model/access_token.hpp"

#include "model/encoding.hpp"

namespace receiptd::model {

std::string_view to_string(token_kind k) {
  return k == token_kind::server ? "server" : "client";
}

std::optional<token_kind> parse_token_kind(std::string_view text) {
  if (text == "client")
    return token_kind::client;
  if (text == "server")
    return token_kind::server;
  return std::nullopt;
}

std::string make_access_token() {
  return "rcpt_" + base64url_encode(random_bytes(24));
}

std::string access_token_hash(std::string_view token) {
  return sha256_hex(token);
}

} // namespace receiptd::model

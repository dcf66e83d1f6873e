#include "model/access_token.hpp"

#include "model/encoding.hpp"

namespace receiptd::model {

std::string make_access_token() {
  return "rcpt_" + base64url_encode(random_bytes(24));
}

std::string access_token_hash(std::string_view token) {
  return sha256_hex(token);
}

} // namespace receiptd::model

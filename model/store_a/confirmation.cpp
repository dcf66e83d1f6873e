// store-a.confirm-with (model/store_a/server_api.hpp).
#include "model/store_a/server_api.hpp"

namespace receiptd::model::store_a {

std::optional<confirmation> parse_confirmation(std::string_view text) {
  if (text == "auto")
    return confirmation::automatic;
  if (text == "verify-receipt")
    return confirmation::verify_receipt;
  if (text == "server-api")
    return confirmation::server_api;
  return std::nullopt;
}

std::string_view to_string(confirmation c) {
  switch (c) {
    case confirmation::verify_receipt:
      return "verify-receipt";
    case confirmation::server_api:
      return "server-api";
    case confirmation::automatic:
      break;
  }
  return "auto";
}

} // namespace receiptd::model::store_a

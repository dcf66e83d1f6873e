#pragma once
// Store B (Google Play): the OAuth 2.0 token endpoint and the Play Developer API
// purchase endpoints, PROTOCOL.md "Store B".

#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "http_util.hpp"

namespace receiptd::emulator {

class emulator_state;

// POST /token: service-account JWT bearer grant (RFC 7523).
reply token_endpoint(emulator_state& state, std::string_view body);

// A parsed purchase path.
struct purchase_query {
  bool subscription = false; // subscriptionsv2.get, else products.get
  std::string package_name;
  std::string product_id; // products only
  std::string token;
};

// GET …/purchases/products/{productId}/tokens/{token} and
// GET …/purchases/subscriptionsv2/tokens/{token}.
reply purchase_endpoint(const emulator_state& state, const purchase_query& query,
                        std::string_view authorization);

// Google's JSON error envelope for an HTTP status, with the reason and message
// Google uses for it ({"error":{"code","message","errors":[…],"status"}}).
boost::json::object google_error(int http_status);

} // namespace receiptd::emulator

#pragma once
// An app's options for its customers (a customer is an app's user_identifier;
// GET /client|/server/customers/{user_identifier} answers what the customer may
// unlock now).

#include <optional>
#include <string_view>

#include "model/access_token.hpp"

namespace receiptd::model {

// Which tokens may look a customer up.
enum class customer_lookup_policy {
  client,      // "client" (default): client and server tokens
  server_only, // "server-only": server tokens only (the app's backend answers its clients)
};
std::string_view to_string(customer_lookup_policy p);
std::optional<customer_lookup_policy> parse_customer_lookup_policy(std::string_view text);
// Whether a token of this kind may look the app's customers up.
bool may_look_up_customers(customer_lookup_policy p, token_kind k);

// Where a customer's id may come from besides the upload's user_identifier.
enum class customer_id_source {
  none,              // "none" (default): user_identifier only
  app_account_token, // "app_account_token": StoreKit 2's appAccountToken and Google
                     // Play's obfuscatedExternalAccountId name the customer
};
std::string_view to_string(customer_id_source s);
std::optional<customer_id_source> parse_customer_id_source(std::string_view text);

} // namespace receiptd::model

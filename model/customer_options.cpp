#include "model/customer_options.hpp"

namespace receiptd::model {

std::string_view to_string(customer_lookup_policy p) {
  return p == customer_lookup_policy::server_only ? "server-only" : "client";
}

std::optional<customer_lookup_policy> parse_customer_lookup_policy(std::string_view text) {
  if (text == "client")
    return customer_lookup_policy::client;
  if (text == "server-only")
    return customer_lookup_policy::server_only;
  return std::nullopt;
}

bool may_look_up_customers(customer_lookup_policy p, token_kind k) {
  return p == customer_lookup_policy::client || k == token_kind::server;
}

std::string_view to_string(customer_id_source s) {
  return s == customer_id_source::app_account_token ? "app_account_token" : "none";
}

std::optional<customer_id_source> parse_customer_id_source(std::string_view text) {
  if (text == "none")
    return customer_id_source::none;
  if (text == "app_account_token")
    return customer_id_source::app_account_token;
  return std::nullopt;
}

} // namespace receiptd::model

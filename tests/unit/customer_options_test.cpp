// An app's customer options (model/customer_options.hpp): their text as receiptctl
// and the database spell it, and which tokens may look customers up.
#include <catch2/catch.hpp>

#include "model/customer_options.hpp"

using namespace receiptd::model;

TEST_CASE("customer options read and print as receiptctl spells them", "[customers]") {
  CHECK(to_string(customer_lookup_policy::client) == "client");
  CHECK(to_string(customer_lookup_policy::server_only) == "server-only");
  for (auto p : {customer_lookup_policy::client, customer_lookup_policy::server_only})
    CHECK(parse_customer_lookup_policy(to_string(p)) == p);
  CHECK_FALSE(parse_customer_lookup_policy("server_only"));
  CHECK_FALSE(parse_customer_lookup_policy(""));

  CHECK(to_string(customer_id_source::none) == "none");
  CHECK(to_string(customer_id_source::app_account_token) == "app_account_token");
  for (auto s : {customer_id_source::none, customer_id_source::app_account_token})
    CHECK(parse_customer_id_source(to_string(s)) == s);
  CHECK_FALSE(parse_customer_id_source("appAccountToken"));
}

TEST_CASE("customer lookup: client lets both kinds, server-only only server tokens",
          "[customers][token_kind]") {
  CHECK(may_look_up_customers(customer_lookup_policy::client, token_kind::client));
  CHECK(may_look_up_customers(customer_lookup_policy::client, token_kind::server));
  CHECK_FALSE(may_look_up_customers(customer_lookup_policy::server_only, token_kind::client));
  CHECK(may_look_up_customers(customer_lookup_policy::server_only, token_kind::server));
}

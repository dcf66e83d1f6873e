// The routing table's token kinds (http/routes.hpp): every bearer route takes the
// kind its path says, so a route added under /client/ or /server/ cannot take the
// other kind by mistake.
#include <catch2/catch.hpp>

#include "http/routes.hpp"

using namespace receiptd;

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

} // namespace

TEST_CASE("routes: /client/ paths take client tokens, /server/ paths server tokens",
          "[routes][token_kind]") {
  int client_routes = 0;
  for (const auto& r : http::routes()) {
    INFO(r.name << " " << r.path);
    if (!r.bearer) {
      // Operational routes and store notifications carry no bearer token: they
      // live outside both prefixes, so no app token opens them.
      CHECK_FALSE(starts_with(r.path, "/client/"));
      CHECK_FALSE(starts_with(r.path, "/server/"));
      continue;
    }
    // A bearer route lives under the prefix of the kind it takes, and so does its alias.
    CHECK((starts_with(r.path, "/client/") || starts_with(r.path, "/server/")));
    auto kind = starts_with(r.path, "/server/") ? model::token_kind::server
                                                : model::token_kind::client;
    CHECK(r.token == kind);
    if (!r.alias.empty())
      CHECK(starts_with(r.alias, kind == model::token_kind::server ? "/server/" : "/client/"));
    client_routes += kind == model::token_kind::client;
  }
  // The five uploads, the four record GETs, a purchase's and a customer's GET.
  CHECK(client_routes == 11);
}

TEST_CASE("routes: the 401 for a token of the other kind names the kind the path takes",
          "[routes][token_kind]") {
  const auto& upload = http::info(http::route::store_a_upload);
  CHECK(http::wrong_token_kind_message(upload, model::token_kind::server)
        == "this path takes a client token, not a server token");
  auto as_server = upload;
  as_server.token = model::token_kind::server;
  CHECK(http::wrong_token_kind_message(as_server, model::token_kind::client)
        == "this path takes a server token, not a client token");
}

TEST_CASE("token kinds read and print as receiptctl and the database spell them",
          "[token_kind]") {
  for (auto k : {model::token_kind::client, model::token_kind::server})
    CHECK(model::parse_token_kind(model::to_string(k)) == k);
  CHECK(model::to_string(model::token_kind::server) == "server");
  CHECK_FALSE(model::parse_token_kind("Server"));
  CHECK_FALSE(model::parse_token_kind(""));
}

// Token kinds through the real binaries on the database under test: receiptctl
// makes server tokens (`token issue APP --kind=server`, or `token create`) and
// lists each token's kind; receiptd refuses a server token on every /client/ path
// (401, saying which kind the path takes) while the app's client token works.
#include <catch2/catch.hpp>

#include <map>

#include "harness.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* wrong_kind = "this path takes a client token, not a server token";

struct server_token {
  std::string token, id;
};

server_token make_server_token(suite& s, const test_app& app, const std::string& verb = "issue") {
  auto r = s.ctl({"token", verb, app.name, "--kind=server"});
  INFO(r.err << r.out);
  REQUIRE(r.code == 0);
  CHECK(str(r.json.at("kind")) == "server");
  CHECK(str(r.json.at("app_id")) == app.id);
  return {str(r.json.at("token")), str(r.json.at("id"))};
}

void check_wrong_kind(const http_response& r, const std::string& path) {
  INFO(path << ": " << r.body);
  CHECK(r.status == 401);
  if (r.status != 401)
    return;
  auto e = r.json().at("errors").at(0);
  CHECK(str(e.at("code")) == "unauthorized");
  CHECK(str(e.at("message")) == wrong_kind);
}

} // namespace

TEST_CASE("a server token is refused on every client path; the client token works",
          "[token_kind][401]") {
  auto& s = the_suite();
  auto package = unique_package("kinds");
  auto app = create_store_b_app(s, package, test_licence_key());
  auto server = make_server_token(s, app);

  auto token = unique("tok");
  register_purchase(s, package, "gold", token, "product");
  auto data = purchase_data_json(package, "gold", token);
  auto body = store_b_body(data, sign_purchase(data));
  auto legacy = R"({"package_name":")" + package + R"(","purchase_token":")" + token
    + R"(","product_id":"gold"})";

  // Every upload path (and Mbaasy's aliases), with a body the app's client token
  // gets a 200 for where there is one: the kind decides, not the body.
  for (const auto& [path, upload] : std::vector<std::pair<std::string, std::string>>{
         {"/client/store_b/purchase_orders", body},
         {"/client/google_play/purchase_orders", body},
         {"/client/store_b/purchase_orders/legacy", legacy},
         {"/client/google_play/purchase_orders/legacy", legacy},
         {"/client/store_a/receipts", R"({"receipt":"AAAA"})"},
         {"/client/itunes_connect/receipts", R"({"receipt":"AAAA"})"},
         {"/client/store_a/transactions", R"({"signed_transaction":"a.b.c"})"}})
    check_wrong_kind(s.service.post(path, upload, server.token), path);

  auto uploaded = s.service.post("/client/store_b/purchase_orders", body, app.token);
  INFO(uploaded.body);
  REQUIRE(uploaded.status == 200);
  auto id = str(uploaded.json().at("id"));
  for (const auto& path : {"/client/store_b/purchase_orders/" + id,
                           "/client/google_play/purchase_orders/" + id,
                           "/client/store_a/receipts/" + id, "/client/store_a/transactions/" + id})
    check_wrong_kind(s.service.get(path, server.token), path);
  CHECK(s.service.get("/client/store_b/purchase_orders/" + id, app.token).status == 200);

  // A revoked server token is unknown, as any revoked token.
  REQUIRE(s.ctl({"token", "revoke", server.id}).code == 0);
  auto revoked = s.service.post("/client/store_b/purchase_orders", body, server.token);
  CHECK(revoked.status == 401);
  CHECK(revoked.body.find(wrong_kind) == std::string::npos);
}

TEST_CASE("receiptctl: token kinds are made, listed and checked", "[token_kind][receiptctl]") {
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("kinds_ctl"), test_licence_key());
  auto created = make_server_token(s, app, "create"); // token create is token issue
  auto client = s.ctl({"token", "issue", app.name});
  REQUIRE(client.code == 0);
  CHECK(str(client.json.at("kind")) == "client"); // the default, as before kinds
  auto explicit_client = s.ctl({"token", "issue", app.name, "--kind=client"});
  REQUIRE(explicit_client.code == 0);
  CHECK(str(explicit_client.json.at("kind")) == "client");

  auto list = s.ctl({"token", "list", app.name});
  REQUIRE(list.code == 0);
  std::map<std::string, std::string> kinds;
  for (const auto& t : list.json.as_array())
    kinds[str(t.at("id"))] = str(t.at("kind"));
  CHECK(kinds.size() == 4);
  CHECK(kinds.at(app.token_id) == "client"); // app create's first token
  CHECK(kinds.at(created.id) == "server");
  CHECK(kinds.at(str(client.json.at("id"))) == "client");
  auto shown = s.ctl({"app", "show", app.name});
  REQUIRE(shown.code == 0);
  CHECK(shown.json.at("tokens").as_array().size() == 4);

  auto bad = s.ctl({"token", "issue", app.name, "--kind=admin"});
  INFO(bad.err);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--kind takes client or server") != std::string::npos);
  // --kind belongs to token issue only.
  auto misplaced = s.ctl({"app", "update", app.name, "--kind=server"});
  CHECK(misplaced.code == 2);
  CHECK(misplaced.err.find("--kind") != std::string::npos);
  CHECK(s.ctl({"token", "list", app.name}).json.as_array().size() == 4); // nothing made
}

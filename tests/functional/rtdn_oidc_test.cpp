// Pub/Sub push authentication through the real binary (optional):
// with store-b.rtdn-oidc-jwks set, an RTDN push counts only when it also
// carries a Google-shaped OIDC token (RS256, the configured audience and
// service account) that verifies under the configured keys; the ?token= is
// still required. Its own receiptd, on the database under test.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <memory>

#include "harness.hpp"
#include "model/encoding.hpp"
#include "process.hpp"
#include "tests/support/crypto/test_oidc.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;
namespace ts = receiptd::test_support;

namespace {

const std::string audience = "receiptd-rtdn-push";
const std::string push_account = "rtdn-push@example-project.iam.gserviceaccount.com";

std::int64_t now_s() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

EVP_PKEY* google_key() {
  static const auto key = ts::make_rsa_key();
  return key.get();
}
EVP_PKEY* stranger_key() {
  static const auto key = ts::make_rsa_key();
  return key.get();
}

// What Pub/Sub sends, with `changes` applied to the claims.
std::string oidc_token(json::object changes = {}, EVP_PKEY* key = google_key(),
                       const std::string& kid = "google-1") {
  json::object claims{{"aud", audience},
                      {"azp", "113774264463038321964"},
                      {"email", push_account},
                      {"email_verified", true},
                      {"exp", now_s() + 3600},
                      {"iat", now_s()},
                      {"iss", "https://accounts.google.com"},
                      {"sub", "113774264463038321964"}};
  for (auto& [k, v] : changes)
    claims[k] = v;
  json::object header{{"alg", "RS256"}, {"kid", kid}, {"typ", "JWT"}};
  return ts::rs256_jwt(json::serialize(header), json::serialize(claims), key);
}

// A receiptd that wants Pub/Sub OIDC tokens, beside the suite's.
std::unique_ptr<service_process> oidc_service() {
  auto& s = the_suite();
  auto dir = make_temp_dir("receiptd-rtdn-oidc");
  const auto jwks_file = dir + "/google-certs.json";
  std::ofstream(jwks_file) << ts::jwks_json({ts::rsa_jwk(google_key(), "google-1")});
  auto args = standard_service_args(s);
  args.push_back("--store-b.rtdn-oidc-jwks=" + jwks_file);
  args.push_back("--store-b.rtdn-oidc-audience=" + audience);
  args.push_back("--store-b.rtdn-oidc-service-account=" + push_account);
  auto p = std::make_unique<service_process>(dir, s.db_url, args);
  p->start();
  return p;
}

// A testNotification push for the package.
std::string test_push(const std::string& package) {
  json::object data{{"version", "1.0"},
                    {"packageName", package},
                    {"eventTimeMillis", "1746683885460"},
                    {"testNotification", json::object{{"version", "1.0"}}}};
  auto id = std::to_string(std::stoull(model::hex_encode(model::random_bytes(6)), nullptr, 16));
  json::object message{{"data", model::base64_encode(json::serialize(data))},
                       {"messageId", id},
                       {"publishTime", "2025-05-08T05:58:05.617Z"}};
  return json::serialize(
    json::object{{"message", message}, {"subscription", "projects/p/subscriptions/play-rtdn"}});
}

} // namespace

TEST_CASE("with store-b.rtdn-oidc-jwks an RTDN push needs a valid Pub/Sub OIDC token as well as "
          "its ?token=",
          "[rtdn][oidc]") {
  auto& s = the_suite();
  auto package = unique_package("rtdn-oidc");
  auto app = create_store_b_app(s, package, test_licence_key());
  auto url = s.ctl({"app", "rtdn-url", app.id, "--base-url=http://x"});
  INFO(url.out << url.err);
  REQUIRE(url.code == 0);
  const auto path = str(url.json.at("url")).substr(std::string("http://x").size());
  auto p = oidc_service();

  auto push = [&](const std::string& bearer, const std::string& to = "") {
    auto r = p->post(to.empty() ? path : to, test_push(package), bearer);
    INFO(r.body);
    return r.status;
  };

  CHECK(push(oidc_token()) == 200);
  // The same token through the suite's receiptd, which wants none: also fine.
  CHECK(s.service.post(path, test_push(package), oidc_token()).status == 200);

  SECTION("no token, or one that fails a check: 401 with the error shape") {
    auto r = p->post(path, test_push(package), "");
    CHECK(r.status == 401);
    CHECK(str(r.json().at("errors").at(0).at("code")) == "unauthorized");
    CHECK(push(oidc_token({}, stranger_key())) == 401);           // another key
    CHECK(push(oidc_token({}, google_key(), "google-2")) == 401); // a kid not configured
    CHECK(push(oidc_token({{"aud", "someone-else"}})) == 401);
    CHECK(push(oidc_token({{"email", "intruder@evil.iam.gserviceaccount.com"}})) == 401);
    CHECK(push(oidc_token({{"email_verified", false}})) == 401);
    CHECK(push(oidc_token({{"iss", "https://evil.example.com"}})) == 401);
    CHECK(push(oidc_token({{"exp", now_s() - 600}})) == 401);
    auto forged = oidc_token();
    forged.back() = forged.back() == 'A' ? 'B' : 'A';
    CHECK(push(forged) == 401);
    CHECK(push("not-a-jwt") == 401);
  }
  SECTION("a valid token does not stand in for the URL's ?token=") {
    auto no_secret = "/notifications/store_b/" + app.id;
    CHECK(push(oidc_token(), no_secret) == 401);
    CHECK(push(oidc_token(), no_secret + "?token=wrong") == 401);
  }
}

// What an operator or a client expects of any HTTP service, through the real
// binaries: one version everywhere (--version, /healthz), HEAD on every GET path,
// Allow on a 405, and the client's address behind a trusted reverse proxy
// (http.trusted-proxies), ignored from anyone else.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "process.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* legacy = "/client/store_b/purchase_orders/legacy";

std::string version_of(const std::string& binary) {
  auto r = run_program({binary, "--version"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto space = r.out.find(' ');
  REQUIRE(space != std::string::npos);
  auto version = r.out.substr(space + 1);
  REQUIRE(!version.empty());
  REQUIRE(version.back() == '\n');
  version.pop_back();
  return version;
}

// A legacy upload's answer; the resource echoes the address receiptd took for the client.
http_response legacy_upload(service_process& svc, const test_app& app, const std::string& from,
                            std::vector<std::string> headers = {}) {
  auto body = json::serialize(json::object{
    {"package_name", app.package_name}, {"purchase_token", unique("tok")}, {"product_id", "gold"}});
  headers.push_back("Authorization: Bearer " + app.token);
  headers.push_back("Content-Type: application/json");
  return http_call("POST", svc.url(legacy), body, headers, {.source_ip = from, .ca_file = {}});
}

// The stored record an upload answered with (a 402 carries it beside its errors).
json::object record_of(const http_response& r) {
  INFO(r.status << " " << r.body);
  REQUIRE((r.status == 200 || r.status == 206 || r.status == 402));
  auto j = r.json();
  return r.status == 402 ? j.at("purchase_order").as_object() : j.as_object();
}

std::string stored_ip(const http_response& r) {
  auto o = record_of(r);
  return o.at("ip_address").is_null() ? "null" : std::string(o.at("ip_address").as_string());
}

} // namespace

TEST_CASE("one version: receiptd --version, receiptctl --version, /healthz", "[conventions]") {
  auto& s = the_suite();
  auto version = version_of(RECEIPTD_BINARY);
  CHECK(version_of(RECEIPTCTL_BINARY) == version);
  auto health = http_call("GET", s.service.url("/healthz"));
  REQUIRE(health.status == 200);
  CHECK(health.json() == json::parse(R"({"status":"ok","version":")" + version + "\"}"));
}

TEST_CASE("HEAD answers a GET path's headers without its body; 405 says Allow", "[conventions]") {
  auto& s = the_suite();
  auto get = http_call("GET", s.service.url("/healthz"));
  auto head = http_call("HEAD", s.service.url("/healthz"));
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  CHECK(head.header("content-length") == get.header("content-length"));
  CHECK(head.header("content-type") == "application/json");
  // Through the actors too: a record read, and one that is not there.
  auto app = create_store_b_app(s, unique_package("head"), test_licence_key());
  auto stored = legacy_upload(s.service, app, "");
  auto id = std::string(record_of(stored).at("id").as_string());
  auto path = "/client/store_b/purchase_orders/" + id;
  auto full = http_call("GET", s.service.url(path), {}, {"Authorization: Bearer " + app.token});
  auto bare = http_call("HEAD", s.service.url(path), {}, {"Authorization: Bearer " + app.token});
  CHECK(bare.status == full.status);
  CHECK(bare.body.empty());
  CHECK(bare.header("content-length") == std::to_string(full.body.size()));
  CHECK(http_call("HEAD",
                  s.service.url("/client/store_b/purchase_orders/"
                                "00000000-0000-4000-8000-000000000000"),
                  {}, {"Authorization: Bearer " + app.token})
          .status
        == 404);
  CHECK(http_call("HEAD", s.service.url("/metrics")).status == 200);

  auto post_only = http_call("GET", s.service.url(legacy));
  CHECK(post_only.status == 405);
  CHECK(post_only.header("allow") == "POST");
  auto get_only = http_call("POST", s.service.url("/healthz"), "{}");
  CHECK(get_only.status == 405);
  CHECK(get_only.header("allow") == "GET, HEAD");
  auto put = http_call("PUT", s.service.url(path), "{}", {"Authorization: Bearer " + app.token});
  CHECK(put.status == 405);
  CHECK(put.header("allow") == "GET, HEAD");
}

TEST_CASE("a trusted proxy's X-Forwarded-For or Forwarded names the client; anyone else's "
          "is ignored",
          "[conventions][proxy]") {
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("proxied"), test_licence_key());
  auto args = standard_service_args(s);
  args.push_back(R"(--http.trusted-proxies=["127.0.0.1", "10.0.0.0/8"])");
  service_process svc(make_temp_dir("receiptd-proxied"), s.db_url, args);
  svc.start();

  // From the proxy (127.0.0.1): the address it forwarded, past other proxies of ours.
  CHECK(stored_ip(legacy_upload(svc, app, "127.0.0.1", {"X-Forwarded-For: 203.0.113.9"}))
        == "203.0.113.9");
  CHECK(stored_ip(legacy_upload(svc, app, "127.0.0.1",
                                {"X-Forwarded-For: 1.2.3.4, 198.51.100.7, 10.1.2.3"}))
        == "198.51.100.7");
  CHECK(stored_ip(legacy_upload(svc, app, "127.0.0.1",
                                {R"(Forwarded: for="[2001:db8::17]:4711";proto=https)"}))
        == "2001:db8::17");
  // Sent on two lines, the values count in order (the last one is the proxy's).
  CHECK(stored_ip(legacy_upload(svc, app, "127.0.0.1",
                                {"X-Forwarded-For: 1.2.3.4", "X-Forwarded-For: 198.51.100.8"}))
        == "198.51.100.8");
  CHECK(stored_ip(legacy_upload(svc, app, "127.0.0.1")) == "127.0.0.1");
  // From anyone else (127.0.0.2 is not listed): the header is the client's own claim.
  CHECK(stored_ip(legacy_upload(svc, app, "127.0.0.2", {"X-Forwarded-For: 203.0.113.9"}))
        == "127.0.0.2");
  CHECK(stored_ip(legacy_upload(svc, app, "127.0.0.2", {"Forwarded: for=203.0.113.9"}))
        == "127.0.0.2");
  CHECK(svc.stop() == 0);

  // Without the option no header counts, from anywhere (the suite's receiptd).
  CHECK(stored_ip(legacy_upload(s.service, app, "127.0.0.1", {"X-Forwarded-For: 203.0.113.9"}))
        == "127.0.0.1");
}

TEST_CASE("http.trusted-proxies takes addresses and networks only", "[conventions][proxy]") {
  auto& s = the_suite();
  auto args = standard_service_args(s);
  args.push_back(R"(--http.trusted-proxies=["10.0.0.0/33"])");
  args.insert(args.begin(), RECEIPTD_BINARY);
  args.push_back("--db.url=" + s.db_url);
  auto r = run_program(args);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("http.trusted-proxies") != std::string::npos);
}

// packaging/nginx/receiptd.conf, as shipped, in front of a real receiptd: TLS, the
// client's address through http.trusted-proxies, the apps' and the stores' paths
// passed on, the operational ones kept inside, and no push secret in the log.
// Only the host's names and ports and the certificate's paths are replaced.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <csignal>

#include <filesystem>

#include "harness.hpp"
#include "process.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* nginx_binary = "/usr/sbin/nginx";

// Replaces every `from` in `text` (which must hold it: the shipped file's shape is
// part of what is checked).
void replace_all(std::string& text, const std::string& from, const std::string& to) {
  INFO("packaging/nginx/receiptd.conf no longer has: " << from);
  REQUIRE(text.find(from) != std::string::npos);
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

struct nginx_in_front {
  std::string dir;
  unsigned short https_port = free_port(), http_port = free_port();
  std::string ca_file; // the self-signed certificate nginx serves
  std::unique_ptr<child_process> proc;

  nginx_in_front(unsigned short receiptd_port) : dir(make_temp_dir("receiptd-nginx")) {
    ca_file = dir + "/cert.pem";
    auto made = run_program({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                             "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj",
                             "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                             dir + "/key.pem", "-out", ca_file});
    INFO(made.err);
    REQUIRE(made.exit_code == 0);
    auto site = read_text(std::string(RECEIPTD_SOURCE_DIR) + "/packaging/nginx/receiptd.conf");
    replace_all(site, "server 127.0.0.1:8080;",
                "server 127.0.0.1:" + std::to_string(receiptd_port) + ";");
    replace_all(site, "listen 80;", "listen 127.0.0.1:" + std::to_string(http_port) + ";");
    replace_all(site, "listen 443 ssl http2;",
                "listen 127.0.0.1:" + std::to_string(https_port) + " ssl http2;");
    replace_all(site, "listen [::]:80;\n", "");
    replace_all(site, "listen [::]:443 ssl http2;\n", "");
    replace_all(site, "/etc/letsencrypt/live/receipts.example.com/fullchain.pem", ca_file);
    replace_all(site, "/etc/letsencrypt/live/receipts.example.com/privkey.pem", dir + "/key.pem");
    replace_all(site, "/var/log/nginx/receiptd.access.log", dir + "/access.log");
    replace_all(site, "receipts.example.com", "127.0.0.1");
    write_text(dir + "/receiptd.conf", site);
    // Around it, what /etc/nginx/nginx.conf gives a site, in the test's own folder.
    std::string main = geteuid() == 0 ? "user root;\n" : "";
    main += "worker_processes 1;\npid " + dir + "/nginx.pid;\nerror_log " + dir
      + "/error.log;\nevents {}\nhttp {\n  client_body_temp_path " + dir
      + "/body;\n  proxy_temp_path " + dir + "/proxy;\n  include " + dir + "/receiptd.conf;\n}\n";
    write_text(dir + "/nginx.conf", main);
    auto checked = run_program({nginx_binary, "-t", "-p", dir, "-c", dir + "/nginx.conf"});
    INFO(checked.err);
    REQUIRE(checked.exit_code == 0);
    proc = std::make_unique<child_process>(std::vector<std::string>{nginx_binary, "-p", dir, "-c",
                                                                    dir + "/nginx.conf", "-g",
                                                                    "daemon off;"},
                                           dir + "/nginx.log");
    REQUIRE(eventually([&] {
      return http_call("GET", url("/healthz"), {}, {}, {.source_ip = {}, .ca_file = ca_file}).status
        == 200;
    }));
  }
  ~nginx_in_front() {
    if (proc) {
      proc->signal(SIGQUIT); // graceful: lets its workers go
      proc->wait(std::chrono::seconds(10));
    }
  }

  std::string url(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(https_port) + path;
  }
  http_response call(const std::string& method, const std::string& path,
                     const std::string& body = {}, std::vector<std::string> headers = {}) {
    return http_call(method, url(path), body, headers,
                     {.source_ip = "127.0.0.2", .ca_file = ca_file});
  }
};

} // namespace

TEST_CASE("the shipped nginx site: TLS in front, the client's address, the right paths",
          "[nginx][proxy]") {
  REQUIRE(std::filesystem::exists(nginx_binary)); // scripts/setup --test installs nginx-light
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("nginx"), test_licence_key());
  auto args = standard_service_args(s);
  args.push_back(R"(--http.trusted-proxies=["127.0.0.1"])");
  service_process svc(make_temp_dir("receiptd-behind-nginx"), s.db_url, args);
  svc.start();
  nginx_in_front nginx(svc.port());

  // An upload over TLS from 127.0.0.2: stored with that address, whatever the
  // client claimed in an X-Forwarded-For of its own.
  auto body = json::serialize(json::object{
    {"package_name", app.package_name}, {"purchase_token", unique("tok")}, {"product_id", "gold"}});
  auto r = nginx.call("POST", "/client/store_b/purchase_orders/legacy", body,
                      {"Authorization: Bearer " + app.token, "Content-Type: application/json",
                       "X-Forwarded-For: 203.0.113.9", "X-Request-Id: via-nginx-1"});
  INFO(r.error << " " << r.body);
  REQUIRE((r.status == 402 || r.status == 200 || r.status == 206));
  auto j = r.json();
  auto& order = r.status == 402 ? j.at("purchase_order") : j;
  CHECK(order.at("ip_address") == "127.0.0.2");
  CHECK(r.header("x-request-id") == "via-nginx-1");
  // Its record reads through the proxy too.
  auto id = std::string(order.at("id").as_string());
  auto read = nginx.call("GET", "/client/store_b/purchase_orders/" + id, {},
                         {"Authorization: Bearer " + app.token});
  CHECK(read.status == 200);

  // The stores' paths reach receiptd (its own answers, in its error shape).
  auto apple = nginx.call("POST", "/notifications/store_a/" + app.id, "{}");
  INFO(apple.body);
  CHECK(apple.status == 400); // not a signed payload: receiptd's own refusal
  CHECK(apple.json().at("errors").as_array().size() >= 1);
  auto google
    = nginx.call("POST", "/notifications/store_b/" + app.id + "?token=push-secret-42", "{}");
  INFO(google.body);
  CHECK(google.status == 400); // not a Pub/Sub push
  CHECK(google.json().at("errors").as_array().size() >= 1);
  // Liveness and the document pass; metrics and readiness stay inside.
  auto health = nginx.call("GET", "/healthz");
  CHECK(health.status == 200);
  CHECK(health.json().at("status") == "ok");
  CHECK(nginx.call("GET", "/openapi.yaml").status == 200);
  CHECK(nginx.call("GET", "/metrics").status == 404);
  CHECK(nginx.call("GET", "/readyz").status == 404);
  // Plain http is sent to https.
  auto plain = http_call("GET", "http://127.0.0.1:" + std::to_string(nginx.http_port) + "/healthz");
  CHECK(plain.status == 301);
  CHECK(plain.header("location").rfind("https://127.0.0.1", 0) == 0);

  // The access log has the requests, never a push URL's secret.
  CHECK(eventually([&] {
    return read_text(nginx.dir + "/access.log").find("/notifications/store_b/")
      != std::string::npos;
  }));
  auto log = read_text(nginx.dir + "/access.log");
  CHECK(log.find("push-secret-42") == std::string::npos);
  CHECK(log.find("127.0.0.2") != std::string::npos);
  CHECK(svc.stop() == 0);
}

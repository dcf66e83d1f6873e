// What is not HTTP/1.1, through the real binary on a plain socket: refused with a
// 4xx in the error shape and the connection closed, and nothing after it read as a
// request (http/request_framing.hpp). Chunked uploads are read whatever the reads.
#include <catch2/catch.hpp>

#include <thread>

#include "harness.hpp"
#include "raw_socket.hpp"

using namespace receiptd::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const std::string health = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

// The one answer to `bytes` on a new connection, which must then close.
raw_connection::response refused(suite& s, const std::string& bytes) {
  raw_connection c(s.service.port());
  c.send_all(bytes);
  auto got = c.read_responses(2, seconds(3));
  REQUIRE(got.size() == 1);
  CHECK(got[0].has_header("connection: close"));
  CHECK(got[0].body.find("{\"errors\":[{\"code\":") == 0);
  CHECK(c.closed_within(seconds(2)));
  return got[0];
}

std::string upload_head(const std::string& token, const std::string& framing) {
  return "POST /client/store_b/purchase_orders HTTP/1.1\r\nHost: 127.0.0.1\r\n"
         "Authorization: Bearer "
    + token + "\r\nContent-Type: application/json\r\n" + framing + "\r\n";
}

} // namespace

TEST_CASE("a request whose framing a proxy could read otherwise is refused, and what follows it "
          "never runs",
          "[http][framing]") {
  auto& s = the_suite();
  // Each carries a whole second request as its "body": a proxy that framed it the
  // other way would have sent that request on as the next one.
  const std::string smuggled = health;
  for (std::string framing :
       {"Transfer-Encoding: gzip\r\nContent-Length: " + std::to_string(smuggled.size()) + "\r\n",
        std::string("Content-Length: -1\r\n"),
        "Transfer-Encoding: chunked\r\nContent-Length: " + std::to_string(smuggled.size()) + "\r\n",
        std::string("Content-Length: 3\r\nContent-Length: 4\r\n"),
        std::string("Content-Length: 18446744073709551617\r\n")}) {
    INFO(framing);
    auto r = refused(s, upload_head("whatever", framing) + smuggled);
    CHECK((r.status == 400 || r.status == 413));
  }
}

TEST_CASE("header fields the service does not read cannot make it fail", "[http][framing]") {
  auto& s = the_suite();
  // Pistache parses these into typed forms and answered 500 when one was malformed.
  raw_connection c(s.service.port());
  c.send_all("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:99999999999999999999\r\nDate: yesterday\r\n"
             "Cookie: no-equals-sign\r\nCache-Control: max-age=soon\r\n"
             "Accept: */*;q=abc\r\nContent-Type: /\r\n\r\n");
  auto got = c.read_responses(1, seconds(5));
  REQUIRE(got.size() == 1);
  CHECK(got[0].status == 200);
}

TEST_CASE("a chunked upload is read whatever its reads, and the connection stays open",
          "[http][chunked]") {
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("chunked"), test_licence_key());
  auto token = unique("chunked-token");
  register_purchase(s, app.package_name, "gold", token);
  auto data = purchase_data_json(app.package_name, "gold", token);
  auto body = store_b_body(data, sign_purchase(data));
  auto half = body.size() / 2;
  auto chunk = [](const std::string& data) {
    char size[16];
    std::snprintf(size, sizeof size, "%zx", data.size());
    return std::string(size) + "\r\n" + data + "\r\n";
  };
  auto stream = upload_head(app.token, "Transfer-Encoding: chunked\r\n")
    + chunk(body.substr(0, half)) + chunk(body.substr(half)) + "0\r\n\r\n" + health;
  raw_connection c(s.service.port());
  // Every CR of the chunk framing in one read, its LF in the next (Pistache's own
  // chunk parser hung on that).
  std::size_t from = 0;
  for (auto at = stream.find("\r\n", from); at != std::string::npos;
       at = stream.find("\r\n", from)) {
    c.send_all(stream.substr(from, at + 1 - from));
    std::this_thread::sleep_for(milliseconds(20));
    from = at + 1;
  }
  c.send_all(stream.substr(from));
  auto got = c.read_responses(2, seconds(10));
  REQUIRE(got.size() == 2);
  CHECK(got[0].status == 200);
  CHECK(got[0].body.find("\"purchase_token\":\"" + token + "\"") != std::string::npos);
  CHECK(got[1].status == 200);
  CHECK_FALSE(c.closed_within(milliseconds(200)));
}

TEST_CASE("what is not HTTP/1.1 is answered 4xx in the error shape, and the connection closed",
          "[http][framing]") {
  auto& s = the_suite();
  auto chunked = upload_head("whatever", "Transfer-Encoding: chunked\r\n");
  CHECK(refused(s, chunked + "5\r\nhelloXX0\r\n\r\n").status == 400); // chunk not ended by CR LF
  CHECK(refused(s, chunked + "-5\r\nhello\r\n0\r\n\r\n").status == 400);
  CHECK(refused(s, chunked + "5;ext=1\r\nhello\r\n0\r\n\r\n").status == 400);
  CHECK(refused(s, "FOO /healthz HTTP/1.1\r\n\r\n").status == 405);
  CHECK(refused(s, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").status == 400);
  CHECK(refused(s, "GET /healthz\r\n\r\n").status == 400);
  CHECK(refused(s, "GET /healthz HTTP/1.1\nHost: x\n\n").status == 400);
  CHECK(refused(s, "GET /healthz HTTP/1.1\r\nX-A: a\r\n  folded\r\n\r\n").status == 400);
  CHECK(refused(s, "GET /healthz HTTP/1.1\r\nNo colon here\r\n\r\n").status == 400);
  CHECK(refused(s, "GET /healthz HTTP/1.1\r\nX-A " + std::string(":") + " a\r\n\r\n").status
        == 400);
  CHECK(
    refused(s, "GET /healthz HTTP/1.1\r\nX-A: " + std::string(70 * 1024, 'a') + "\r\n\r\n").status
    == 431);
  // Binary is refused at once, not when a header timeout or size limit is reached.
  CHECK(refused(s, std::string(1000, '\0')).status == 400);
}

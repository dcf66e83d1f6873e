// Persistent connections and pipelining (RFC 9112 §9), through the real binary on a
// plain socket: what Go's net/http, curl and wrk rely on.
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include "harness.hpp"
#include "raw_socket.hpp"
#include "tests/support/db/raw_sql.hpp"

using namespace receiptd::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr const char* signed_path = "/client/store_b/purchase_orders";

std::string health(const std::string& extra_headers = "", const std::string& version = "1.1") {
  return "GET /healthz HTTP/" + version + "\r\nHost: 127.0.0.1\r\n" + extra_headers + "\r\n";
}

std::string request(const std::string& method, const std::string& path, const std::string& token,
                    const std::string& request_id, const std::string& body = "") {
  return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token
    + "\r\nX-Request-Id: " + request_id + "\r\nContent-Type: application/json\r\nContent-Length: "
    + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// A signed Play order the emulator knows.
std::string valid_upload(suite& s, const test_app& app) {
  auto token = unique("keepalive-token");
  register_purchase(s, app.package_name, "gold", token);
  auto data = purchase_data_json(app.package_name, "gold", token);
  return store_b_body(data, sign_purchase(data));
}

std::string request_id_of(const raw_connection::response& r) {
  auto at = r.head.find("X-Request-Id: ");
  if (at == std::string::npos)
    return "";
  auto end = r.head.find("\r\n", at);
  return r.head.substr(at + 14, end - at - 14);
}

struct store_b_back_up {
  suite& s;
  ~store_b_back_up() { s.emulator.set_mode("store_b", "up"); }
};

} // namespace

TEST_CASE("an HTTP/1.1 connection without a Connection header stays open", "[http][keepalive]") {
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("keepalive"), test_licence_key());
  raw_connection c(s.service.port());
  for (int i = 0; i < 3; ++i) {
    c.send_all(health());
    auto got = c.read_responses(1, seconds(5));
    REQUIRE(got.size() == 1);
    CHECK(got[0].status == 200);
    CHECK_FALSE(got[0].has_header("connection: close"));
  }
  // An upload answered from another thread, then more on the same connection.
  c.send_all(request("POST", signed_path, app.token, "upload-1", valid_upload(s, app)));
  auto uploaded = c.read_responses(1, seconds(10));
  REQUIRE(uploaded.size() == 1);
  INFO(uploaded[0].head << uploaded[0].body);
  CHECK(uploaded[0].status == 200);
  CHECK_FALSE(uploaded[0].has_header("connection: close"));
  c.send_all(request("POST", signed_path, app.token, "upload-2", valid_upload(s, app)));
  auto again = c.read_responses(1, seconds(10));
  REQUIRE(again.size() == 1);
  CHECK(again[0].status == 200);
  CHECK_FALSE(c.closed_within(milliseconds(300)));
}

TEST_CASE("Connection: close, and HTTP/1.0 without keep-alive, end the connection after the "
          "answer",
          "[http][keepalive]") {
  auto& s = the_suite();
  SECTION("HTTP/1.1 with Connection: close") {
    raw_connection c(s.service.port());
    c.send_all(health("Connection: close\r\n"));
    auto got = c.read_responses(1, seconds(5));
    REQUIRE(got.size() == 1);
    CHECK(got[0].status == 200);
    CHECK(got[0].has_header("connection: close"));
    CHECK(c.closed_within(seconds(5)));
  }
  SECTION("HTTP/1.0 without a Connection header") {
    raw_connection c(s.service.port());
    c.send_all(health("", "1.0"));
    auto got = c.read_responses(1, seconds(5));
    REQUIRE(got.size() == 1);
    CHECK(got[0].has_header("connection: close"));
    CHECK(c.closed_within(seconds(5)));
  }
  SECTION("HTTP/1.0 with Connection: keep-alive stays open") {
    raw_connection c(s.service.port());
    c.send_all(health("Connection: keep-alive\r\n", "1.0"));
    auto got = c.read_responses(1, seconds(5));
    REQUIRE(got.size() == 1);
    CHECK(got[0].has_header("connection: keep-alive"));
    CHECK_FALSE(c.closed_within(milliseconds(300)));
    c.send_all(health("Connection: keep-alive\r\n", "1.0"));
    CHECK(c.read_responses(1, seconds(5)).size() == 1);
  }
  SECTION("a pipelined request after Connection: close is not answered") {
    raw_connection c(s.service.port());
    c.send_all(health("Connection: close\r\n") + health());
    auto got = c.read_responses(2, seconds(3));
    CHECK(got.size() == 1);
    CHECK(c.closed_within(seconds(5)));
  }
}

TEST_CASE("pipelined requests are all answered, in the order they were sent",
          "[http][pipelining]") {
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("pipelined"), test_licence_key());
  store_b_back_up restore{s};
  // The first upload's store call takes 300 ms; everything after it would be
  // answered long before if the requests were handled side by side.
  s.emulator.set_mode("store_b", "slow", 300);
  auto stream = request("POST", signed_path, app.token, "first", valid_upload(s, app))
    + health("X-Request-Id: second\r\n")
    + request("GET", std::string(signed_path) + "/00000000-0000-4000-8000-000000000000", app.token,
              "third")
    + request("POST", signed_path, "unknown-token", "fourth", "{}")
    + request("POST", signed_path, app.token, "fifth", valid_upload(s, app));
  SECTION("sent in one write") {
    raw_connection c(s.service.port());
    c.send_all(stream);
    auto got = c.read_responses(5, seconds(15));
    REQUIRE(got.size() == 5);
    std::vector<std::string> ids;
    std::vector<int> statuses;
    for (auto& r : got) {
      ids.push_back(request_id_of(r));
      statuses.push_back(r.status);
    }
    CHECK(ids == std::vector<std::string>{"first", "second", "third", "fourth", "fifth"});
    CHECK(statuses == std::vector<int>{200, 200, 404, 401, 200});
    CHECK_FALSE(c.closed_within(milliseconds(200)));
  }
  SECTION("sent in pieces that cut requests anywhere") {
    raw_connection c(s.service.port());
    for (std::size_t at = 0; at < stream.size(); at += 97)
      c.send_all(stream.substr(at, 97));
    auto got = c.read_responses(5, seconds(15));
    REQUIRE(got.size() == 5);
    CHECK(request_id_of(got[0]) == "first");
    CHECK(request_id_of(got[4]) == "fifth");
    CHECK(got[1].status == 200);
    CHECK(got[3].status == 401);
  }
}

TEST_CASE("a client that ends its side once its upload is out still gets the answer",
          "[http][keepalive]") {
  // shutdown(SHUT_WR) after the request (`nc -N`, some proxies' health checks):
  // Pistache drops the peer at the end of its input, before the upload, answered
  // from another thread, has its answer.
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("halfclose"), test_licence_key());
  raw_connection c(s.service.port());
  c.send_all(request("POST", signed_path, app.token, "half-closed", valid_upload(s, app)));
  REQUIRE(::shutdown(c.fd(), SHUT_WR) == 0);
  auto got = c.read_responses(1, seconds(10));
  REQUIRE(got.size() == 1);
  INFO(got[0].head << got[0].body);
  CHECK(got[0].status == 200);
  CHECK(got[0].has_header("connection: close"));
  CHECK(request_id_of(got[0]) == "half-closed");
  CHECK(c.closed_within(seconds(5)));
}

TEST_CASE("an upload not answered within http.header-timeout gets one 408, and the connection "
          "ends there",
          "[http][timeouts]") {
  // The clocks are receiptd's own (http/server.cpp, sweep_connections). Before,
  // Pistache's timer wrote a 408 of its own and dropped the peer, while the upload's
  // answer still went out after it on the same connection; and a peer dropped with
  // a write of Pistache's in flight could end the process.
  auto& s = the_suite();
  auto args = standard_service_args(s);
  args.insert(args.end(), {"--http.header-timeout=3s", "--http.body-timeout=3s"});
  service_process service(make_temp_dir("receiptd-late-answer"), s.db_url, args);
  service.start();
  auto app = create_store_b_app(s, unique_package("late"), test_licence_key());
  auto body = valid_upload(s, app);
  raw_connection c(service.port());
  std::string received;
  {
    // Its save waits on a lock held past the header timeout.
    held_transaction lock(s.db_url, s.dialect == receiptd::db::dialect::postgresql
                                      ? "LOCK TABLE store_b_purchase_orders IN SHARE ROW "
                                        "EXCLUSIVE MODE"
                                      : "UPDATE apps SET name = name");
    c.send_all(request("POST", signed_path, app.token, "late", body));
    auto got = c.read_responses(1, seconds(10));
    REQUIRE(got.size() == 1);
    INFO(got[0].head << got[0].body);
    CHECK(got[0].status == 408);
    CHECK(got[0].has_header("connection: close"));
    CHECK(got[0].body.find("\"request_timeout\"") != std::string::npos);
  }
  // The lock is gone and the upload saved: nothing more on this connection, which
  // has ended.
  auto more = c.read_for(seconds(3));
  INFO(more);
  CHECK(more.empty());
  CHECK(c.closed_within(seconds(1)));
}

namespace {

// A service whose connection clocks are short enough to watch (header-timeout must
// exceed validator.store-deadline, 2 s in the suite's options).
service_process timed_service(suite& s, const std::string& name) {
  auto args = standard_service_args(s);
  args.insert(args.end(), {"--http.header-timeout=3s", "--http.body-timeout=5s",
                           "--http.keepalive-timeout=2s"});
  return service_process(make_temp_dir(name), s.db_url, args);
}

using clock_type = std::chrono::steady_clock;

long elapsed_ms(clock_type::time_point since) {
  return static_cast<long>(
    std::chrono::duration_cast<milliseconds>(clock_type::now() - since).count());
}

} // namespace

TEST_CASE("a client trickling its headers gets 408 http.header-timeout after it connected, "
          "however steadily it sends",
          "[http][timeouts]") {
  auto& s = the_suite();
  auto service = timed_service(s, "receiptd-trickle");
  service.start();
  raw_connection c(service.port());
  auto opened = clock_type::now();
  c.send_all("POST " + std::string(signed_path) + " HTTP/1.1\r\nX-Slow: ");
  std::vector<raw_connection::response> got;
  // One header byte every 200 ms, until the answer (the pacing is what is simulated).
  while (got.empty() && elapsed_ms(opened) < 8000) {
    got = c.read_responses(1, milliseconds(200));
    if (got.empty())
      (void)::send(c.fd(), "a", 1, MSG_NOSIGNAL);
  }
  auto after = elapsed_ms(opened);
  REQUIRE(got.size() == 1);
  INFO(got[0].head << got[0].body << " after " << after << " ms");
  CHECK(got[0].status == 408);
  CHECK(got[0].has_header("connection: close"));
  CHECK(got[0].body.find("\"request_timeout\"") != std::string::npos);
  CHECK(after >= 2900);
  CHECK(after <= 4500); // the sweep runs four times a second
  CHECK(c.closed_within(seconds(2)));
}

TEST_CASE("a body that does not arrive within http.body-timeout gets 408, and the connection "
          "ends",
          "[http][timeouts]") {
  auto& s = the_suite();
  auto service = timed_service(s, "receiptd-stalled-body");
  service.start();
  auto app = create_store_b_app(s, unique_package("stalled"), test_licence_key());
  raw_connection c(service.port());
  auto opened = clock_type::now();
  // A good token (its check passes while the body arrives), and a tenth of the body.
  auto head = request("POST", signed_path, app.token, "stalled", std::string(1000, 'x'));
  c.send_all(head.substr(0, head.size() - 900));
  auto got = c.read_responses(1, seconds(10));
  auto after = elapsed_ms(opened);
  REQUIRE(got.size() == 1);
  INFO(got[0].head << got[0].body << " after " << after << " ms");
  CHECK(got[0].status == 408);
  CHECK(got[0].body.find("\"request_timeout\"") != std::string::npos);
  CHECK(after >= 4900);
  CHECK(c.closed_within(seconds(2)));
}

TEST_CASE("a connection that never sends a byte is closed after http.header-timeout, without "
          "an answer",
          "[http][timeouts]") {
  auto& s = the_suite();
  auto service = timed_service(s, "receiptd-silent");
  service.start();
  raw_connection c(service.port());
  auto opened = clock_type::now();
  // Nothing arrives but the end of the stream: no 408 a client could take for the
  // answer to a request it sends at that moment.
  auto got = c.read_for(seconds(6));
  auto after = elapsed_ms(opened);
  INFO("got \"" << got << "\" after " << after << " ms");
  CHECK(got.empty());
  CHECK(after >= 2900);
  CHECK(after <= 5500); // header-timeout 3 s; the sweep runs four times a second
}

TEST_CASE("an idle kept-alive connection is closed after http.keepalive-timeout, without an "
          "answer",
          "[http][timeouts][keepalive]") {
  auto& s = the_suite();
  auto service = timed_service(s, "receiptd-idle");
  service.start();
  raw_connection c(service.port());
  c.send_all(health());
  auto got = c.read_responses(1, seconds(5));
  REQUIRE(got.size() == 1);
  CHECK(got[0].status == 200);
  auto answered = clock_type::now();
  // Still open well within the keep-alive timeout: a second request is answered.
  CHECK_FALSE(c.closed_within(milliseconds(1000)));
  c.send_all(health());
  got = c.read_responses(1, seconds(5));
  REQUIRE(got.size() == 1);
  CHECK(got[0].status == 200);
  answered = clock_type::now();
  CHECK(c.closed_within(seconds(4)));
  auto after = elapsed_ms(answered);
  INFO("closed " << after << " ms after the last answer");
  CHECK(after >= 1900);
}

// http::request_framer: where pipelined requests end, and whether the connection stays open.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "http/request_framing.hpp"

using receiptd::http::request_framer;

namespace {

struct framed_request {
  std::string bytes;
  bool keep_alive;
};

// Feeds `stream` in chunks of `chunk` bytes; returns each completed request's bytes.
std::vector<framed_request> split(const std::string& stream, std::size_t chunk, request_framer& f) {
  std::vector<framed_request> out;
  std::string current;
  for (std::size_t at = 0; at < stream.size(); at += chunk) {
    std::string_view in(stream.data() + at, std::min(chunk, stream.size() - at));
    while (!in.empty()) {
      auto p = f.next(in);
      REQUIRE(p.length > 0);
      REQUIRE(p.length <= in.size());
      current.append(in.substr(0, p.length));
      in.remove_prefix(p.length);
      if (p.ends_request) {
        out.push_back({current, f.keep_alive()});
        current.clear();
      }
    }
  }
  CHECK(current.empty());
  return out;
}

const std::string get_health = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
const std::string post_body = "POST /client/store_b/purchase_orders HTTP/1.1\r\nHost: x\r\n"
                              "content-length:  11 \r\n\r\n{\"a\":\"bcd\"}";

} // namespace

TEST_CASE("pipelined requests are split where each ends, whatever the read sizes",
          "[http][framing]") {
  auto stream = post_body + get_health + post_body;
  for (std::size_t chunk : {1u, 2u, 3u, 5u, 17u, 64u, 1000u}) {
    request_framer f;
    auto got = split(stream, chunk, f);
    INFO("chunk " << chunk);
    REQUIRE(got.size() == 3);
    CHECK(got[0].bytes == post_body);
    CHECK(got[1].bytes == get_health);
    CHECK(got[2].bytes == post_body);
    CHECK(f.framed());
  }
}

TEST_CASE("HTTP/1.1 stays open unless the client says close; HTTP/1.0 only on keep-alive",
          "[http][framing]") {
  auto ask = [](const std::string& request) {
    request_framer f;
    auto got = split(request, 1000, f);
    REQUIRE(got.size() == 1);
    return got[0].keep_alive;
  };
  CHECK(ask("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK_FALSE(ask("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"));
  CHECK_FALSE(ask("GET / HTTP/1.1\r\nconnection: Upgrade, CLOSE\r\n\r\n"));
  CHECK(ask("GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n"));
  CHECK_FALSE(ask("GET / HTTP/1.0\r\n\r\n"));
  CHECK(ask("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
  CHECK_FALSE(ask("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"));
}

TEST_CASE("what cannot be framed is passed on whole, as Pistache alone would see it",
          "[http][framing]") {
  SECTION("chunked bodies") {
    request_framer f;
    std::string chunked = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    std::string rest = "5\r\nhello\r\n0\r\n\r\n" + get_health;
    CHECK(f.next(chunked).length == chunked.size());
    CHECK_FALSE(f.framed());
    auto p = f.next(rest);
    CHECK(p.length == rest.size());
    CHECK_FALSE(p.ends_request);
  }
  SECTION("a malformed or conflicting Content-Length") {
    for (std::string cl :
         {"Content-Length: 12x\r\n", "Content-Length: -1\r\n",
          "Content-Length: 5\r\nContent-Length: 6\r\n", "Content-Length: 1234567890123456\r\n"}) {
      request_framer f;
      std::string head = "POST /x HTTP/1.1\r\n" + cl + "\r\n";
      f.next(head);
      CHECK_FALSE(f.framed());
    }
  }
  SECTION("a header block over the limit") {
    request_framer f;
    std::string big = "GET / HTTP/1.1\r\nX: " + std::string(request_framer::max_head_bytes, 'a');
    auto p = f.next(big);
    CHECK(p.length == big.size());
    CHECK_FALSE(f.framed());
  }
  SECTION("the same Content-Length twice is fine") {
    request_framer f;
    std::string req = "POST /x HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab";
    auto got = split(req + get_health, 7, f);
    CHECK(got.size() == 2);
    CHECK(f.framed());
  }
}

TEST_CASE("a request still arriving is passed on as it comes", "[http][framing]") {
  request_framer f;
  std::string part1 = "POST /x HTTP/1.1\r\nContent-Le", part2 = "ngth: 4\r\n\r\nab";
  auto p = f.next(part1);
  CHECK(p.length == part1.size());
  CHECK_FALSE(p.ends_request);
  p = f.next(part2); // the header block is a piece of its own: it is screened before the body
  CHECK(p.length == part2.size() - 2);
  CHECK_FALSE(p.ends_request);
  p = f.next("ab");
  CHECK(p.length == 2);
  CHECK_FALSE(p.ends_request);
  p = f.next("cdGET");
  CHECK(p.length == 2);
  CHECK(p.ends_request);
}

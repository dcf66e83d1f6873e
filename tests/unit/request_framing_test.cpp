// http::request_framer: where pipelined requests end, whether the connection stays
// open, what the parser gets, and what is refused as not HTTP/1.1.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "http/request_framing.hpp"
#include "model/error_codes.hpp"

using receiptd::http::request_framer;
using receiptd::model::errc;

namespace {

struct framed_request {
  std::string parsed; // what the parser got for it
  bool keep_alive;
};

// Feeds `stream` in chunks of `chunk` bytes; returns what the parser got for each
// completed request. Stops at a refusal.
std::vector<framed_request> split(const std::string& stream, std::size_t chunk, request_framer& f) {
  std::vector<framed_request> out;
  std::string current;
  for (std::size_t at = 0; at < stream.size() && !f.refusal(); at += chunk) {
    std::string_view in(stream.data() + at, std::min(chunk, stream.size() - at));
    while (!in.empty()) {
      auto p = f.next(in);
      if (f.refusal()) {
        CHECK(p.consumed == 0);
        CHECK(p.parse.empty());
        return out;
      }
      REQUIRE(p.consumed > 0);
      REQUIRE(p.consumed <= in.size());
      current.append(p.parse);
      in.remove_prefix(p.consumed);
      if (p.ends_request) {
        out.push_back({current, f.keep_alive()});
        current.clear();
      }
    }
  }
  CHECK(current.empty());
  return out;
}

// The refusal of `stream`, fed whole and byte by byte (the same either way).
std::optional<errc> refusal_of(const std::string& stream) {
  std::optional<errc> whole, bytewise;
  for (std::size_t chunk : {stream.size(), std::size_t{1}}) {
    request_framer f(1024);
    split(stream, chunk, f);
    (chunk == 1 ? bytewise : whole)
      = f.refusal() ? std::optional(f.refusal()->code()) : std::nullopt;
  }
  CHECK(whole == bytewise);
  return whole;
}

const std::string get_health = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
const std::string post_body = "POST /client/store_b/purchase_orders HTTP/1.1\r\nHost: x\r\n"
                              "content-length:  11 \r\n\r\n{\"a\":\"bcd\"}";
// What the parser gets for post_body: the framer writes the Content-Length.
const std::string post_parsed = "POST /client/store_b/purchase_orders HTTP/1.1\r\nHost: x\r\n"
                                "Content-Length: 11\r\n\r\n{\"a\":\"bcd\"}";
const std::string post_chunked = "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 "5\r\n{\"a\":\r\n06\r\n\"bcd\"}\r\n0\r\nX-Trailer: t\r\n\r\n";
const std::string chunked_parsed = "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n"
                                   "{\"a\":\"bcd\"}";

} // namespace

TEST_CASE("pipelined requests are split where each ends, whatever the read sizes",
          "[http][framing]") {
  auto stream = post_body + get_health + post_chunked + "\r\n" + post_body;
  for (std::size_t chunk : {1u, 2u, 3u, 5u, 17u, 64u, 1000u}) {
    request_framer f;
    auto got = split(stream, chunk, f);
    INFO("chunk " << chunk);
    CHECK_FALSE(f.refusal());
    REQUIRE(got.size() == 4);
    CHECK(got[0].parsed == post_parsed);
    CHECK(got[1].parsed == get_health);
    CHECK(got[2].parsed == chunked_parsed); // decoded, its trailer dropped
    CHECK(got[3].parsed == post_parsed);    // the empty line before it ignored
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
  CHECK(ask(post_chunked));
}

TEST_CASE("the parser gets the header fields the filter keeps, and the framer's Content-Length",
          "[http][framing]") {
  request_framer f(1024, [](std::string_view name) { return name != "Date"; });
  auto got = split("POST /x HTTP/1.1\r\nDate: not a date\r\nX-Request-Id: abc\r\n"
                   "Content-Length: 2\r\nContent-Length: 2\r\n\r\nab",
                   7, f);
  REQUIRE(got.size() == 1);
  CHECK(got[0].parsed == "POST /x HTTP/1.1\r\nX-Request-Id: abc\r\nContent-Length: 2\r\n\r\nab");
}

TEST_CASE("the header block goes on whole, then the body as it comes", "[http][framing]") {
  request_framer f;
  std::string part1 = "POST /x HTTP/1.1\r\nContent-Le", part2 = "ngth: 4\r\n\r\nab";
  auto p = f.next(part1);
  CHECK(p.consumed == part1.size());
  CHECK(p.parse.empty()); // nothing before the block is whole and checked
  p = f.next(part2);      // the block alone: the caller screens it before the body
  CHECK(p.consumed == part2.size() - 2);
  CHECK(p.parse == "POST /x HTTP/1.1\r\nContent-Length: 4\r\n\r\n");
  CHECK_FALSE(p.ends_request);
  p = f.next("ab");
  CHECK(p.parse == "ab");
  CHECK_FALSE(p.ends_request);
  p = f.next("cdGET");
  CHECK(p.parse == "cd");
  CHECK(p.ends_request);
}

TEST_CASE("the framer says where a request's head ends, what it announces, and which bytes are "
          "body",
          "[http][framing]") {
  request_framer f;
  auto p = f.next("POST /x HTTP/1.1\r\nContent-Length: 4\r\n\r\nab");
  CHECK(p.head_done);
  CHECK_FALSE(p.body);
  CHECK(f.content_length() == 4u);
  CHECK(f.head() == "POST /x HTTP/1.1\r\nContent-Length: 4\r\n\r\n");
  p = f.next("ab");
  CHECK(p.body);
  CHECK_FALSE(p.head_done);
  p = f.next("cd");
  CHECK(p.body);
  CHECK(p.ends_request);

  SECTION("no body: the head ends the request") {
    p = f.next("GET /healthz HTTP/1.1\r\n\r\n");
    CHECK(p.head_done);
    CHECK(p.ends_request);
    CHECK(f.content_length() == 0u);
  }
  SECTION("chunked: the head without a length, then the body as it is decoded") {
    p = f.next("POST /y HTTP/1.1\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n");
    CHECK(p.head_done);
    CHECK(p.parse.empty());
    CHECK_FALSE(f.content_length());
    CHECK(f.head() == "POST /y HTTP/1.1\r\nX-A: b\r\n\r\n");
    p = f.next("5\r\nhello\r\n3\r\nab");
    CHECK(f.decoded_bytes() == 7);
    CHECK(p.parse.empty());
    p = f.next("c\r\n0\r\n\r\n");
    CHECK(p.ends_request);
    CHECK_FALSE(p.body);
    CHECK(p.parse == "POST /y HTTP/1.1\r\nX-A: b\r\nContent-Length: 8\r\n\r\nhelloabc");
  }
}

TEST_CASE("a chunked body is decoded whatever the reads, and handed on whole", "[http][framing]") {
  // Every split, the CR and LF after a chunk's data in two reads included (which
  // Pistache's own chunk parser turns into a hang).
  for (std::size_t chunk = 1; chunk <= post_chunked.size(); ++chunk) {
    request_framer f;
    auto got = split(post_chunked + get_health, chunk, f);
    INFO("chunk " << chunk);
    REQUIRE(got.size() == 2);
    CHECK(got[0].parsed == chunked_parsed);
    CHECK(got[1].parsed == get_health);
  }
  SECTION("an empty chunked body") {
    request_framer f;
    auto got = split("POST /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n", 3, f);
    REQUIRE(got.size() == 1);
    CHECK(got[0].parsed == "POST /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  }
}

TEST_CASE("chunk framing that is not RFC 9112's is refused", "[http][framing]") {
  const std::string head = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  CHECK(refusal_of(head + "5\r\nhelloXX0\r\n\r\n") == errc::malformed_request);    // not CR LF
  CHECK(refusal_of(head + "-5\r\nhello\r\n0\r\n\r\n") == errc::malformed_request); // negative
  CHECK(refusal_of(head + "0x5\r\nhello\r\n0\r\n\r\n") == errc::malformed_request);
  CHECK(refusal_of(head + " 5\r\nhello\r\n0\r\n\r\n") == errc::malformed_request);
  CHECK(refusal_of(head + "5;ext=1\r\nhello\r\n0\r\n\r\n") == errc::malformed_request);
  CHECK(refusal_of(head + "5\nhello\r\n0\r\n\r\n") == errc::malformed_request); // bare LF
  CHECK(refusal_of(head + "000000001\r\nh\r\n0\r\n\r\n") == errc::malformed_request);
  CHECK(refusal_of(head + "0\r\nbad trailer\r\n\r\n") == errc::malformed_request);
  // Over the body limit (1,024 here), by one chunk or several.
  CHECK(refusal_of(head + "401\r\n") == errc::body_too_large);
  CHECK(refusal_of(head + "200\r\n" + std::string(512, 'a') + "\r\n201\r\n")
        == errc::body_too_large);
  CHECK(refusal_of(head + "400\r\n" + std::string(1024, 'a') + "\r\n0\r\n\r\n") == std::nullopt);
}

TEST_CASE("a request that is not HTTP/1.1 is refused before the parser sees it",
          "[http][framing]") {
  auto with_header = [](const std::string& field) {
    return "POST /x HTTP/1.1\r\nHost: x\r\n" + field + "\r\n\r\n";
  };
  SECTION("framing a proxy could read otherwise (RFC 9112 §6.3)") {
    for (std::string cl : {"12x", "-1", "+1", "1 2", "1,1", "", "0x10"})
      CHECK(refusal_of(with_header("Content-Length: " + cl)) == errc::malformed_request);
    CHECK(refusal_of(with_header("Content-Length: 5\r\nContent-Length: 6"))
          == errc::malformed_request);
    CHECK(refusal_of(with_header("Content-Length: 1234567890123456")) == errc::body_too_large);
    CHECK(refusal_of(with_header("Transfer-Encoding: chunked\r\nContent-Length: 3"))
          == errc::malformed_request);
    CHECK(refusal_of(with_header("Transfer-Encoding: gzip")) == errc::malformed_request);
    CHECK(refusal_of(with_header("Transfer-Encoding: gzip, chunked")) == errc::malformed_request);
    CHECK(refusal_of(with_header("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked"))
          == errc::malformed_request);
    CHECK(refusal_of("POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
          == errc::malformed_request);
  }
  SECTION("header lines") {
    CHECK(refusal_of(with_header("X-A: a\r\n  folded")) == errc::malformed_request);
    CHECK(refusal_of(with_header("NoColon")) == errc::malformed_request);
    CHECK(refusal_of(with_header("Content-Length : 2")) == errc::malformed_request);
    CHECK(refusal_of(with_header(std::string("X-A: a\0b", 8))) == errc::malformed_request);
    CHECK(refusal_of(with_header("X-A: a\rb")) == errc::malformed_request);
    CHECK(refusal_of("GET / HTTP/1.1\nHost: x\n\n") == errc::malformed_request);
    CHECK(refusal_of(with_header("X-A: caf\xc3\xa9")) == std::nullopt); // obs-text is a value
  }
  SECTION("request lines") {
    CHECK(refusal_of("FOO / HTTP/1.1\r\n\r\n") == errc::method_not_allowed);
    CHECK(refusal_of("post / HTTP/1.1\r\n\r\n") == errc::method_not_allowed);
    CHECK(refusal_of("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") == errc::malformed_request);
    CHECK(refusal_of("GET /healthz\r\n\r\n") == errc::malformed_request);
    CHECK(refusal_of("GET  / HTTP/1.1\r\n\r\n") == errc::malformed_request);
    CHECK(refusal_of("GET / HTTP/1.1 \r\n\r\n") == errc::malformed_request);
    CHECK(refusal_of("GET / HTTP/1\r\n\r\n") == errc::malformed_request);
    CHECK(refusal_of("GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n") == errc::malformed_request);
    CHECK(refusal_of("\x16\x03\x01\x02\x00\x01\x00") == errc::malformed_request); // TLS
  }
  SECTION("a header block over 64 KiB") {
    CHECK(refusal_of(with_header("X-A: " + std::string(request_framer::max_head_bytes, 'a')))
          == errc::headers_too_large);
    std::string many;
    for (int i = 0; i < 10000; ++i)
      many += "X-" + std::to_string(i) + ": y\r\n";
    CHECK(refusal_of(with_header(many + "X: z")) == errc::headers_too_large);
  }
  SECTION("binary is refused at its first control character, not at the size limit") {
    request_framer f;
    auto p = f.next(std::string(100, '\0'));
    REQUIRE(f.refusal());
    CHECK(f.refusal()->code() == errc::malformed_request);
    CHECK(p.consumed == 0);
  }
  SECTION("nothing more is taken after a refusal") {
    request_framer f;
    f.next("GET / HTTP/9.9\r\n");
    REQUIRE(f.refusal());
    auto p = f.next(get_health);
    CHECK(p.consumed == 0);
    CHECK(p.parse.empty());
  }
}

TEST_CASE("a proxy header sent on several lines reaches the parser as one, values in order",
          "[framing][proxy]") {
  request_framer f(1024);
  auto reqs = split("GET /healthz HTTP/1.1\r\nX-Forwarded-For: 1.2.3.4\r\nHost: x\r\n"
                    "x-forwarded-for: 10.0.0.1, 10.0.0.2\r\nForwarded: for=1.1.1.1\r\n\r\n"
                    "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
                    7, f);
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0].parsed
        == "GET /healthz HTTP/1.1\r\nHost: x\r\nForwarded: for=1.1.1.1\r\n"
           "X-Forwarded-For: 1.2.3.4, 10.0.0.1, 10.0.0.2\r\n\r\n");
  // Nothing of it carries over to the next request.
  CHECK(reqs[1].parsed == "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
}

TEST_CASE("a refused method leaves its target for the 405's Allow", "[framing]") {
  request_framer f(1024);
  split("FROB /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 64, f);
  REQUIRE(f.refusal());
  CHECK(f.refusal()->code() == errc::method_not_allowed);
  CHECK(f.target() == "/healthz");
}

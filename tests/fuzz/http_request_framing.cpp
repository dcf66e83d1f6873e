// The HTTP/1.1 framer in front of Pistache's parser (http/request_framing.hpp):
// every byte a client sends goes through it first.
//
// Input: byte 0 picks a read size (1–64); the rest is the byte stream of one
// connection. Properties:
// - the stream cut into reads of that size, fed whole and fed byte by byte gives
//   the same requests and the same refusal (how TCP splits a stream changes
//   nothing);
// - a piece takes bytes unless the stream is refused, never more than offered,
//   and nothing is taken after a refusal;
// - what the parser gets for each request is a request line of a known method,
//   header lines without control characters, no Transfer-Encoding, and one
//   Content-Length that is exactly the body's size (none without a body, or 0).

#include <cctype>
#include <optional>

#include "http/request_framing.hpp"
#include "model/error_codes.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using receiptd::http::request_framer;

constexpr std::uint64_t max_body = 4096;

struct outcome {
  std::vector<std::string> requests;
  std::optional<receiptd::model::errc> refusal;
  bool operator==(const outcome&) const = default;
};

outcome run(std::string_view stream, std::size_t read_size) {
  request_framer f(max_body);
  outcome out;
  std::string current;
  for (std::size_t at = 0; at < stream.size() && !f.refusal(); at += read_size) {
    auto in = stream.substr(at, read_size);
    while (!in.empty()) {
      auto p = f.next(in);
      if (f.refusal()) {
        FUZZ_CHECK(p.consumed == 0 && p.parse.empty());
        break;
      }
      FUZZ_CHECK(p.consumed > 0 && p.consumed <= in.size());
      current.append(p.parse);
      in.remove_prefix(p.consumed);
      if (p.ends_request)
        out.requests.push_back(std::exchange(current, {}));
    }
  }
  if (f.refusal()) {
    out.refusal = f.refusal()->code();
    auto after = f.next("GET / HTTP/1.1\r\n\r\n");
    FUZZ_CHECK(after.consumed == 0 && after.parse.empty());
  }
  return out;
}

bool lower_equals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i])
      return false;
  return true;
}

void check_request(const std::string& r) {
  auto head_end = r.find("\r\n\r\n");
  FUZZ_CHECK(head_end != std::string::npos);
  auto body_size = r.size() - head_end - 4;
  std::string_view head(r.data(), head_end + 2);
  auto line_end = head.find("\r\n");
  auto method = head.substr(0, head.find(' '));
  FUZZ_CHECK(method == "GET" || method == "POST" || method == "HEAD" || method == "PUT"
             || method == "PATCH" || method == "DELETE" || method == "OPTIONS" || method == "TRACE"
             || method == "CONNECT");
  int lengths = 0;
  for (auto at = line_end + 2; at < head.size();) {
    auto eol = head.find("\r\n", at);
    auto line = head.substr(at, eol - at);
    at = eol + 2;
    for (char c : line)
      FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 || c == '\t');
    auto name = line.substr(0, line.find(':'));
    FUZZ_CHECK(!lower_equals(name, "transfer-encoding"));
    if (lower_equals(name, "content-length")) {
      ++lengths;
      FUZZ_CHECK(line == "Content-Length: " + std::to_string(body_size));
    }
  }
  FUZZ_CHECK(lengths <= 1 && (body_size == 0 || lengths == 1));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  auto read_size = std::size_t{1} + data[0] % 64;
  auto stream = receiptd::fuzz::as_text(data + 1, size - 1);
  auto whole = run(stream, stream.size() + 1);
  FUZZ_CHECK(run(stream, read_size) == whole);
  FUZZ_CHECK(run(stream, 1) == whole);
  for (const auto& r : whole.requests)
    check_request(r);
  return 0;
}

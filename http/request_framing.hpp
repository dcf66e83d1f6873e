#pragma once
// Where each request on a connection ends (RFC 9112 §6.3), and whether the
// connection stays open after it (RFC 9112 §9.3). Pure: no I/O, no Pistache.
//
// Why: Pistache 0.0.5 parses one request per read and, once it is complete,
// resets its buffer, dropping whatever followed it in the same read (a pipelined
// second request). The server therefore hands Pistache one request at a time:
// this says how many bytes of what arrived belong to the current request.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace receiptd::http {

class request_framer {
public:
  struct piece {
    std::size_t length = 0;    // bytes at the start of the input that belong to the request
    bool ends_request = false; // … and they complete it
  };

  // The next piece of `input`: never longer than it, never empty when it is not.
  piece next(std::string_view input);

  // Whether the connection stays open after the request whose header block was seen
  // last: HTTP/1.1 unless a Connection header says "close"; HTTP/1.0 only when it
  // says "keep-alive" (and not "close").
  bool keep_alive() const { return keep_alive_; }

  // False once a request could not be framed (a Transfer-Encoding, a malformed or
  // conflicting Content-Length, a header block over max_head_bytes, or one not ended
  // by CRLF CRLF): from there on the rest of the stream is passed on unsplit, and
  // Pistache's own parser decides (one request per read, as without the framer).
  bool framed() const { return phase_ != phase::unframed; }

  // A header block longer than this is not framed (Pistache refuses it anyway:
  // its request limit is the body limit plus 64 KiB).
  static constexpr std::size_t max_head_bytes = 64 * 1024;

private:
  enum class phase { head, body, unframed };

  void end_of_head();

  phase phase_ = phase::head;
  std::string head_;            // the current header block, up to and including CRLF CRLF
  std::uint64_t body_left_ = 0; // bytes of the current body still to come
  bool keep_alive_ = true;
};

} // namespace receiptd::http

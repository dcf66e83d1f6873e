#pragma once
// Where each request on a connection ends (RFC 9112 §6–7), whether the connection
// stays open after it (§9.3), and whether it is HTTP/1.1 at all. Pure: no I/O, no
// Pistache.
//
// Why: Pistache 0.0.5's parser, fed a client's bytes as they come,
// - parses one request per read and drops whatever followed it (a pipelined request);
// - answers malformed framing (a negative Content-Length, both Content-Length and
//   Transfer-Encoding, an unknown transfer coding) with an error of its own and then
//   parses the rest of the stream as a new request: a body smuggled past a proxy runs;
// - answers 500 with the exception's text when a header it parses into a typed form
//   is malformed (Date, Cache-Control, Cookie, Accept, Host, Content-Type, …);
// - mis-reads chunked bodies (a CR LF split between two reads hangs the connection;
//   any two bytes pass as a chunk's CR LF; a negative chunk size).
// The server therefore hands it only what this framer has checked, one request at a
// time: a request line and header block that are strict HTTP/1.1 (RFC 9112 §2–5),
// only the header fields the caller keeps, and a body framed by Content-Length; a
// chunked body is decoded here and handed on whole, with the Content-Length of what
// it decoded to. Anything else is a refusal that ends the connection.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/result.hpp"

namespace receiptd::http {

class request_framer {
public:
  // A request line and header block longer than this are refused (431).
  static constexpr std::size_t max_head_bytes = 64 * 1024;

  // Whether a header field goes on to the parser, by name as sent (nullptr: all of
  // them). Content-Length and Transfer-Encoding never do: the framer writes the
  // Content-Length of the body it hands on.
  using header_filter = bool (*)(std::string_view name);

  // `max_body_bytes` bounds a chunked body (413); a Content-Length over it is the
  // caller's to refuse, which it can before the body is read.
  explicit request_framer(std::uint64_t max_body_bytes = UINT64_MAX, header_filter keep = nullptr);

  struct piece {
    std::size_t consumed = 0; // bytes at the start of the input taken: > 0 unless refused
    // What goes to the parser now (often nothing): part of the input, or text of the
    // framer's own (a checked header block, a decoded chunked request), valid until
    // the next call.
    std::string_view parse;
    bool ends_request = false; // `parse` completes a request
    // `parse` is bytes of a body framed by Content-Length (a caller may hold them
    // and hand the body on whole).
    bool body = false;
    // This piece completed a request's header block (head(), content_length()):
    // the request can be judged before its body.
    bool head_done = false;
  };

  // The next piece of `input` (nothing once refused).
  piece next(std::string_view input);

  // Set once the stream cannot be framed: the caller answers it and closes the
  // connection. 400 malformed_request (not HTTP/1.1: the request line and its
  // version, a header line, Content-Length, a transfer coding other than chunked,
  // chunk framing), 405 method_not_allowed (a method the parser does not know), 413
  // body_too_large (a Content-Length of more than 15 digits, a chunked body over the
  // limit), 431 headers_too_large.
  const std::optional<model::error>& refusal() const { return refusal_; }

  // Whether the connection stays open after the request whose header block was seen
  // last: HTTP/1.1 unless a Connection header says "close"; HTTP/1.0 only when it
  // says "keep-alive" (and not "close").
  bool keep_alive() const { return keep_alive_; }

  // The target of the request line seen last (a refused method's Allow names the
  // methods of its path).
  const std::string& target() const { return target_; }

  // Of the request whose header block was seen last: its checked header block as
  // the parser gets it (a chunked one without Content-Length: its length is known
  // at its end), valid until the next call; its Content-Length (none: chunked); and
  // how much of a chunked body has been decoded so far.
  std::string_view head() const { return chunked_ ? std::string_view(chunked_head_) : out_; }
  std::optional<std::uint64_t> content_length() const {
    return chunked_ ? std::nullopt : std::optional(announced_);
  }
  std::size_t decoded_bytes() const { return body_.size(); }

private:
  enum class phase { head, body, chunk_size, chunk_data, chunk_end, trailers };

  piece head_piece(std::string_view in);
  piece chunked_piece(std::string_view in);
  bool request_line(std::string_view line);
  bool header_line(std::string_view line);
  piece end_of_head(std::size_t consumed);
  bool chunk_size_line(std::string_view line);
  piece refuse(model::errc code, std::string message);
  // Appends what of `in` belongs to the current line; true once the line is whole.
  bool take_line(std::string_view in, std::size_t& at, std::size_t limit);

  std::uint64_t max_body_;
  header_filter filter_;
  phase phase_ = phase::head;
  std::optional<model::error> refusal_;
  bool keep_alive_ = true;

  // The header block being read.
  std::string line_;           // the current line, up to its LF
  std::size_t head_bytes_ = 0; // of the block's (or the trailers') whole lines
  bool seen_request_line_ = false;
  bool http10_ = false;
  bool close_asked_ = false, keep_alive_asked_ = false;
  std::optional<std::uint64_t> length_;
  bool length_too_large_ = false;
  std::string codings_; // Transfer-Encoding values, joined by ","
  bool has_codings_ = false;
  std::string out_; // what the parser gets: the checked block, then a decoded request
  std::string target_;
  // The proxies' list fields, each handed on as one line (header_line).
  struct joined_field {
    std::string_view name;
    std::string value;
    bool seen = false;
  };
  joined_field joined_[2] = {{"Forwarded", {}, false}, {"X-Forwarded-For", {}, false}};
  bool chunked_ = false;        // the request whose block was seen last
  std::uint64_t announced_ = 0; // its Content-Length
  std::string chunked_head_;    // its block, when chunked (head())

  std::uint64_t body_left_ = 0;    // of a Content-Length body
  std::uint64_t chunk_left_ = 0;   // of the current chunk's data
  std::size_t chunk_end_seen_ = 0; // bytes of the CR LF after a chunk's data
  std::string body_;               // a chunked body, decoded
};

} // namespace receiptd::http

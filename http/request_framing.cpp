#include "http/request_framing.hpp"

#include <algorithm>
#include <array>

#include "model/encoding.hpp"

namespace receiptd::http {

namespace {

using model::errc;

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
           return lower(x) == lower(y);
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// RFC 9110 §5.6.2 tchar.
bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
    return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

// A control character other than HTAB (CR and LF are the line's own business).
bool is_ctl(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u < 0x20 && c != '\t') || u == 0x7F;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The methods the parser knows (Pistache 0.0.5 HTTP_METHODS); the routes answer 405
// to those they do not serve, and so does the framer to any other. (RFC 9110 would
// have 501 for an unknown method, 501 for an unknown transfer coding and 505 for
// another HTTP version: a client's garbage is answered 4xx here, so that 5xx stays
// the measure of the service's own failures, which operators alert on.)
constexpr std::array<std::string_view, 9> known_methods{
  "GET", "POST", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"};

// A chunk-size line: at most this many hex digits (RFC 9112 §7.1 leaves the bound to
// the recipient; 8 is 4 GiB, far above any body limit).
constexpr std::size_t max_chunk_size_digits = 8;
// Longest line taken while reading chunk framing: the size and its CR LF.
constexpr std::size_t max_chunk_line = 64;

} // namespace

request_framer::request_framer(std::uint64_t max_body_bytes, header_filter keep)
  : max_body_(max_body_bytes), filter_(keep) {}

request_framer::piece request_framer::refuse(errc code, std::string message) {
  refusal_ = model::error(code, std::move(message));
  line_.clear();
  body_.clear();
  out_.clear();
  return {};
}

bool request_framer::take_line(std::string_view in, std::size_t& at, std::size_t limit) {
  auto lf = in.find('\n', at);
  auto end = lf == std::string_view::npos ? in.size() : lf + 1;
  auto part = in.substr(at, end - at);
  line_.append(part);
  at = end;
  // A control character fails the line before it is whole: a stream of NULs or
  // binary is refused at once, not when the header limit is reached.
  for (char c : part)
    if (is_ctl(c) && c != '\r' && c != '\n') {
      refuse(errc::malformed_request, "the request contains a control character");
      return false;
    }
  if (line_.size() > limit) {
    if (phase_ == phase::chunk_size)
      refuse(errc::malformed_request, "a chunk size line is too long");
    else
      refuse(errc::headers_too_large,
             "the request line and headers (or trailers) are longer than "
               + std::to_string(max_head_bytes) + " bytes");
    return false;
  }
  return lf != std::string_view::npos;
}

request_framer::piece request_framer::next(std::string_view in) {
  if (refusal_ || in.empty())
    return {};
  switch (phase_) {
    case phase::head:
      return head_piece(in);
    case phase::body: {
      auto n = static_cast<std::size_t>(std::min<std::uint64_t>(body_left_, in.size()));
      body_left_ -= n;
      if (body_left_ == 0)
        phase_ = phase::head;
      return {
        .consumed = n, .parse = in.substr(0, n), .ends_request = body_left_ == 0, .body = true};
    }
    default:
      return chunked_piece(in);
  }
}

request_framer::piece request_framer::head_piece(std::string_view in) {
  std::size_t at = 0;
  while (at < in.size()) {
    bool whole = take_line(in, at, max_head_bytes - std::min(head_bytes_, max_head_bytes));
    if (refusal_)
      return {};
    if (!whole)
      break;
    head_bytes_ += line_.size();
    if (line_.size() < 2 || line_[line_.size() - 2] != '\r')
      return refuse(errc::malformed_request, "a line of the request does not end with CR LF");
    std::string_view line(line_.data(), line_.size() - 2);
    if (line.find('\r') != std::string_view::npos)
      return refuse(errc::malformed_request, "a line of the request contains a bare CR");
    if (!seen_request_line_) {
      // RFC 9112 §2.2: empty lines before a request line are ignored.
      if (!line.empty() && !request_line(line))
        return {};
    } else if (line.empty()) {
      line_.clear();
      return end_of_head(at);
    } else if (!header_line(line)) {
      return {};
    }
    line_.clear();
  }
  return {in.size(), {}, false};
}

bool request_framer::request_line(std::string_view line) {
  auto sp1 = line.find(' ');
  auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    refuse(errc::malformed_request, "the request line is not \"METHOD target HTTP/1.1\"");
    return false;
  }
  auto method = line.substr(0, sp1);
  auto target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  auto version = line.substr(sp2 + 1);
  if (!is_token(method) || target.empty()
      || !std::all_of(target.begin(), target.end(), [](char c) { return c > 0x20 && c < 0x7F; })) {
    refuse(errc::malformed_request, "the request line is not \"METHOD target HTTP/1.1\"");
    return false;
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    bool http_version = version.size() == 8 && version.starts_with("HTTP/") && is_digit(version[5])
      && version[6] == '.' && is_digit(version[7]);
    if (http_version)
      refuse(errc::malformed_request,
             "HTTP version " + std::string(version.substr(5)) + " is not supported (HTTP/1.1 is)");
    else
      refuse(errc::malformed_request, "the request line is not \"METHOD target HTTP/1.1\"");
    return false;
  }
  target_.assign(target);
  if (std::find(known_methods.begin(), known_methods.end(), method) == known_methods.end()) {
    refuse(errc::method_not_allowed, "the method " + std::string(method) + " is not supported");
    return false;
  }
  seen_request_line_ = true;
  http10_ = version == "HTTP/1.0";
  out_.assign(line);
  out_ += "\r\n";
  return true;
}

bool request_framer::header_line(std::string_view line) {
  if (line.front() == ' ' || line.front() == '\t') {
    refuse(errc::malformed_request, "a header line starts with whitespace (obsolete line folding)");
    return false;
  }
  auto colon = line.find(':');
  auto name = line.substr(0, colon);
  if (colon == std::string_view::npos || !is_token(name)) {
    refuse(errc::malformed_request, "a header line is not \"name: value\"");
    return false;
  }
  auto value = trim(line.substr(colon + 1));
  if (iequals(name, "content-length")) {
    if (value.empty() || !std::all_of(value.begin(), value.end(), is_digit)) {
      refuse(errc::malformed_request, "Content-Length is not a number of bytes");
      return false;
    }
    if (value.size() > 15) {
      length_too_large_ = true;
      return true;
    }
    std::uint64_t n = 0;
    for (char c : value)
      n = n * 10 + static_cast<std::uint64_t>(c - '0');
    if (length_ && *length_ != n) {
      refuse(errc::malformed_request, "the request has two different Content-Length values");
      return false;
    }
    length_ = n;
    return true;
  }
  if (iequals(name, "transfer-encoding")) {
    if (has_codings_)
      codings_ += ',';
    codings_.append(value);
    has_codings_ = true;
    return true;
  }
  if (iequals(name, "connection")) {
    for (auto rest = value; !rest.empty();) {
      auto comma = rest.find(',');
      auto option = trim(rest.substr(0, comma));
      close_asked_ = close_asked_ || iequals(option, "close");
      keep_alive_asked_ = keep_alive_asked_ || iequals(option, "keep-alive");
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  // A list field sent as several lines reaches the parser as one line, the values
  // joined in order (RFC 9110 §5.3): Pistache keeps only the first of repeated
  // fields, and of the proxies' headers the last value counts.
  for (auto& joined : joined_) {
    if (!iequals(name, joined.name))
      continue;
    if (!joined.value.empty())
      joined.value += ", ";
    joined.value.append(value);
    joined.seen = true;
    return true;
  }
  if (!filter_ || filter_(name)) {
    out_.append(line);
    out_ += "\r\n";
  }
  return true;
}

request_framer::piece request_framer::end_of_head(std::size_t consumed) {
  keep_alive_ = !close_asked_ && (!http10_ || keep_alive_asked_);
  bool chunked = false;
  if (has_codings_) {
    if (http10_)
      return refuse(errc::malformed_request, "an HTTP/1.0 request cannot have Transfer-Encoding");
    if (length_ || length_too_large_)
      return refuse(errc::malformed_request,
                    "the request has both Content-Length and Transfer-Encoding");
    if (!iequals(trim(codings_), "chunked"))
      return refuse(errc::malformed_request,
                    "the transfer coding \"" + codings_ + "\" is not supported (chunked is)");
    chunked = true;
  }
  if (length_too_large_)
    return refuse(errc::body_too_large, "the request body is larger than any this service takes");
  auto length = length_.value_or(0);
  for (auto& joined : joined_) {
    if (joined.seen && (!filter_ || filter_(joined.name)))
      out_ += std::string(joined.name) + ": " + joined.value + "\r\n";
    joined.value.clear();
    joined.seen = false;
  }
  // Ready for the next request's block (out_ is still this one's).
  seen_request_line_ = false;
  head_bytes_ = 0;
  close_asked_ = keep_alive_asked_ = false;
  length_.reset();
  codings_.clear();
  has_codings_ = false;
  chunked_ = chunked;
  announced_ = length;
  if (chunked) {
    phase_ = phase::chunk_size;
    body_.clear();
    chunked_head_ = out_ + "\r\n";
    return {
      .consumed = consumed, .parse = {}, .ends_request = false, .body = false, .head_done = true};
  }
  if (length > 0)
    out_ += "Content-Length: " + std::to_string(length) + "\r\n";
  out_ += "\r\n";
  body_left_ = length;
  phase_ = length > 0 ? phase::body : phase::head;
  return {.consumed = consumed, .parse = out_, .ends_request = length == 0, .head_done = true};
}

bool request_framer::chunk_size_line(std::string_view line) {
  if (line.find(';') != std::string_view::npos) {
    refuse(errc::malformed_request, "chunk extensions are not accepted");
    return false;
  }
  if (line.empty() || line.size() > max_chunk_size_digits
      || !std::all_of(line.begin(), line.end(),
                      [](char c) { return model::hex_digit_value(c) >= 0; })) {
    refuse(errc::malformed_request, "a chunk size is not a hexadecimal number");
    return false;
  }
  std::uint64_t size = 0;
  for (char c : line)
    size = size * 16 + static_cast<std::uint64_t>(model::hex_digit_value(c));
  if (size > max_body_ || body_.size() + size > max_body_) {
    refuse(errc::body_too_large,
           "the request body is larger than " + std::to_string(max_body_) + " bytes");
    return false;
  }
  chunk_left_ = size;
  phase_ = size == 0 ? phase::trailers : phase::chunk_data;
  return true;
}

request_framer::piece request_framer::chunked_piece(std::string_view in) {
  std::size_t at = 0;
  while (at < in.size()) {
    switch (phase_) {
      case phase::chunk_data: {
        auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_left_, in.size() - at));
        body_.append(in.substr(at, n));
        at += n;
        chunk_left_ -= n;
        if (chunk_left_ == 0) {
          phase_ = phase::chunk_end;
          chunk_end_seen_ = 0;
        }
        break;
      }
      case phase::chunk_end:
        if (in[at] != "\r\n"[chunk_end_seen_])
          return refuse(errc::malformed_request, "a chunk's data does not end with CR LF");
        ++at;
        if (++chunk_end_seen_ == 2)
          phase_ = phase::chunk_size;
        break;
      case phase::chunk_size:
      case phase::trailers: {
        auto limit = phase_ == phase::chunk_size
          ? max_chunk_line
          : max_head_bytes - std::min(head_bytes_, max_head_bytes);
        if (!take_line(in, at, limit))
          return refusal_ ? piece{} : piece{in.size(), {}, false};
        if (phase_ == phase::trailers)
          head_bytes_ += line_.size();
        if (line_.size() < 2 || line_[line_.size() - 2] != '\r')
          return refuse(errc::malformed_request, "a line of the request does not end with CR LF");
        std::string_view line(line_.data(), line_.size() - 2);
        if (phase_ == phase::chunk_size) {
          if (!chunk_size_line(line))
            return {};
          line_.clear();
          break;
        }
        // A trailer field (checked, not handed on), or the empty line that ends the body.
        if (!line.empty()) {
          auto colon = line.find(':');
          if (line.front() == ' ' || line.front() == '\t' || colon == std::string_view::npos
              || !is_token(line.substr(0, colon)))
            return refuse(errc::malformed_request, "a trailer line is not \"name: value\"");
          line_.clear();
          break;
        }
        line_.clear();
        out_ += "Content-Length: " + std::to_string(body_.size()) + "\r\n\r\n";
        out_ += body_;
        body_.clear();
        body_.shrink_to_fit();
        head_bytes_ = 0;
        phase_ = phase::head;
        return {.consumed = at, .parse = out_, .ends_request = true};
      }
      default:
        return {at, {}, false};
    }
  }
  return {in.size(), {}, false};
}

} // namespace receiptd::http

#include "http/request_framing.hpp"

#include <algorithm>
#include <optional>

namespace receiptd::http {

namespace {

constexpr std::string_view crlf = "\r\n";
constexpr std::string_view end_of_headers = "\r\n\r\n";

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

// 1*DIGIT, at most 15 of them (Pistache's own limit is far below).
std::optional<std::uint64_t> content_length(std::string_view v) {
  if (v.empty() || v.size() > 15)
    return std::nullopt;
  std::uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9')
      return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

// Bytes of `in` up to and including the CRLF CRLF that ends the header block,
// given the block's start `head` (which does not contain it), or npos.
std::size_t head_end_in(std::string_view head, std::string_view in) {
  auto keep = std::min<std::size_t>(head.size(), end_of_headers.size() - 1);
  std::string bridge(head.substr(head.size() - keep));
  bridge.append(in.substr(0, std::min(in.size(), end_of_headers.size() - 1)));
  if (auto b = bridge.find(end_of_headers); b != std::string::npos)
    return b + end_of_headers.size() - keep;
  if (auto p = in.find(end_of_headers); p != std::string_view::npos)
    return p + end_of_headers.size();
  return std::string_view::npos;
}

} // namespace

request_framer::piece request_framer::next(std::string_view in) {
  if (in.empty())
    return {};
  switch (phase_) {
    case phase::unframed:
      return {in.size(), false};
    case phase::body: {
      auto n = static_cast<std::size_t>(std::min<std::uint64_t>(body_left_, in.size()));
      body_left_ -= n;
      if (body_left_ > 0)
        return {n, false};
      phase_ = phase::head;
      return {n, true};
    }
    case phase::head:
      break;
  }
  auto taken = head_end_in(head_, in);
  if (taken == std::string_view::npos) {
    head_.append(in);
    if (head_.size() > max_head_bytes) {
      phase_ = phase::unframed;
      head_.clear();
      head_.shrink_to_fit();
    }
    return {in.size(), false};
  }
  head_.append(in.substr(0, taken));
  if (head_.size() > max_head_bytes)
    phase_ = phase::unframed;
  else
    end_of_head();
  head_.clear();
  return {taken, phase_ == phase::head};
}

// The request line and headers are in head_: the body's length and the connection's fate.
void request_framer::end_of_head() {
  auto line_end = head_.find(crlf);
  std::string_view request_line(head_.data(), line_end);
  bool http10
    = request_line.size() >= 8 && request_line.substr(request_line.size() - 8) == "HTTP/1.0";
  bool close = false, keep = false, unframeable = false;
  std::optional<std::uint64_t> length;
  for (auto pos = line_end + crlf.size(); pos < head_.size();) {
    auto eol = head_.find(crlf, pos);
    std::string_view line(head_.data() + pos, eol - pos);
    pos = eol + crlf.size();
    auto colon = line.find(':');
    if (colon == std::string_view::npos)
      continue;
    auto name = line.substr(0, colon);
    auto value = trim(line.substr(colon + 1));
    if (iequals(name, "content-length")) {
      auto n = content_length(value);
      if (!n || (length && *length != *n))
        unframeable = true;
      length = n;
    } else if (iequals(name, "transfer-encoding")) {
      unframeable = true;
    } else if (iequals(name, "connection")) {
      while (!value.empty()) {
        auto comma = value.find(',');
        auto option = trim(value.substr(0, comma));
        close = close || iequals(option, "close");
        keep = keep || iequals(option, "keep-alive");
        value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
      }
    }
  }
  keep_alive_ = !close && (!http10 || keep);
  if (unframeable) {
    phase_ = phase::unframed;
    return;
  }
  body_left_ = length.value_or(0);
  phase_ = body_left_ > 0 ? phase::body : phase::head;
}

} // namespace receiptd::http

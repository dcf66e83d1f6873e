#include "model/json_out.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

#include <boost/json/parse.hpp>
#include <boost/json/serializer.hpp>

namespace receiptd::model::json_out {

namespace {

// Drains a serializer into `out`. One per thread: constructing one per string
// cost more than the string.
void drain(std::string& out, boost::json::serializer& sr) {
  char buf[512];
  while (!sr.done())
    out.append(sr.read(buf, sizeof buf));
}

// Whether any of the eight bytes of `w` is a quote, a backslash or a control
// character (the bytes a JSON string escapes): the has-less-than and has-zero
// byte tests, exact for "any".
bool any_to_escape(std::uint64_t w) {
  constexpr std::uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;
  auto has_zero = [&](std::uint64_t x) { return (x - ones) & ~x & highs; };
  const auto below_space = (w - ones * 0x20) & ~w & highs;
  return (below_space | has_zero(w ^ (ones * '"')) | has_zero(w ^ (ones * '\\'))) != 0;
}

// How many more bytes a byte takes escaped: \" \\ \b \t \n \f \r one,
// other control characters \u00XX five.
std::size_t escape_extra(unsigned char c) {
  if (c == '"' || c == '\\')
    return 1;
  if (c >= 0x20)
    return 0;
  switch (c) {
    case '\b':
    case '\t':
    case '\n':
    case '\f':
    case '\r':
      return 1;
    default:
      return 5;
  }
}

// A key's bit in a text object's filter of the keys it holds.
std::uint64_t key_bit(std::string_view key) {
  if (key.empty())
    return 1;
  auto h = key.size() * 31 + static_cast<unsigned char>(key.front()) * 7
    + static_cast<unsigned char>(key.back());
  return std::uint64_t{1} << (h % 64);
}

boost::json::serializer& thread_serializer() {
  thread_local boost::json::serializer sr;
  return sr;
}

} // namespace

void append_string(std::string& out, std::string_view s) {
  // Boost.JSON's serializer writes what follows a string's first escape one
  // character at a time, and the rows a batch writes hold JSON texts (a Play
  // purchase's data, a store's answer, a purchase's facts) that escape every
  // quote: escaped here in two passes (the size, then the bytes, eight at a
  // time where none is escaped), spelt as that serializer spells them (its
  // escape table; the resource_json tests hold the two equal for every byte).
  static constexpr char hex[] = "0123456789abcdef";
  auto word_at = [&](std::size_t i) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    return w;
  };
  std::size_t extra = 0;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8)
    if (any_to_escape(word_at(i)))
      for (std::size_t k = i; k < i + 8; ++k)
        extra += escape_extra(static_cast<unsigned char>(s[k]));
  for (; i < s.size(); ++i)
    extra += escape_extra(static_cast<unsigned char>(s[i]));

  const auto at = out.size();
  out.resize(at + s.size() + extra + 2);
  char* p = out.data() + at;
  *p++ = '"';
  if (extra == 0) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  } else {
    auto put = [&](unsigned char c) {
      if (escape_extra(c) == 0) {
        *p++ = static_cast<char>(c);
        return;
      }
      *p++ = '\\';
      switch (c) {
        case '"':
        case '\\':
          *p++ = static_cast<char>(c);
          break;
        case '\b':
          *p++ = 'b';
          break;
        case '\t':
          *p++ = 't';
          break;
        case '\n':
          *p++ = 'n';
          break;
        case '\f':
          *p++ = 'f';
          break;
        case '\r':
          *p++ = 'r';
          break;
        default:
          *p++ = 'u';
          *p++ = '0';
          *p++ = '0';
          *p++ = hex[c >> 4];
          *p++ = hex[c & 15];
      }
    };
    // A word with nothing to escape is copied whole; one with something, byte by
    // byte; the tail byte by byte.
    for (i = 0; i + 8 <= s.size(); i += 8) {
      const auto w = word_at(i);
      if (!any_to_escape(w)) {
        std::memcpy(p, &w, 8);
        p += 8;
        continue;
      }
      for (std::size_t k = i; k < i + 8; ++k)
        put(static_cast<unsigned char>(s[k]));
    }
    for (; i < s.size(); ++i)
      put(static_cast<unsigned char>(s[i]));
  }
  *p = '"';
}

void append_value(std::string& out, const boost::json::value& v) {
  auto& sr = thread_serializer();
  sr.reset(&v);
  drain(out, sr);
}

void append_integer(std::string& out, std::int64_t v) {
  char buf[24];
  auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out.append(buf, end);
}

boost::json::value stored_json(const std::optional<std::string>& text) {
  if (!text)
    return nullptr;
  boost::system::error_code ec;
  // Uploads are held to max_metadata_depth now; records stored before that held up
  // to the request parser's 64 levels, past Boost.JSON's default of 32.
  boost::json::parse_options opts;
  opts.max_depth = 64;
  auto v = boost::json::parse(*text, ec, {}, opts);
  return ec ? boost::json::value(nullptr) : v;
}

bool text_object::open(std::string_view key) {
  if (recording_) {
    keys_.push_back(key);
    key_bits_ |= key_bit(key);
  } else if (keep_first_ && (key_bits_ & key_bit(key))
             && std::find(keys_.begin(), keys_.end(), key) != keys_.end()) {
    return false;
  }
  // Keys are this program's own names: nothing in them to escape. Written at
  // once: an answer and a purchase's facts have a few hundred.
  const auto at = out_.size();
  out_.resize(at + key.size() + (first_ ? 3 : 4));
  char* p = out_.data() + at;
  if (!first_)
    *p++ = ',';
  first_ = false;
  *p++ = '"';
  std::memcpy(p, key.data(), key.size());
  p += key.size();
  *p++ = '"';
  *p = ':';
  return true;
}

} // namespace receiptd::model::json_out

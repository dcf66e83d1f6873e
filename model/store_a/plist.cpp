// OpenStep property list syntax: Apple, "Property List Programming Guide",
// "Old-Style ASCII Property Lists" (archived), and CoreFoundation's
// CFOldStylePList.c for the escape set.

#include "model/store_a/plist.hpp"

#include "model/encoding.hpp"

#include <cstdint>

#include "model/store_a/parsed.hpp"
#include "model/store_a/text.hpp"

namespace receiptd::model::store_a {

namespace {

bool is_bare_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
    || c == '$' || c == '+' || c == '/' || c == ':' || c == '.' || c == '-';
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Keys go into error messages; a hostile one must not flood the logs.
std::string shown(const std::string& key) {
  return "\"" + (key.size() <= 40 ? key : key.substr(0, 40) + "…") + "\"";
}

class parser {
public:
  explicit parser(std::string_view text) : s_(text) {}

  std::string error;

  bool dict(plist_dict& out) {
    skip_blank();
    if (!take('{'))
      return fail("does not start with '{'");
    for (;;) {
      skip_blank();
      if (take('}'))
        break;
      std::string key, value;
      if (!string(key))
        return false;
      skip_blank();
      if (!take('='))
        return fail("expected '=' after " + shown(key));
      skip_blank();
      if (peek() == '{' || peek() == '(' || peek() == '<')
        return fail("nested value for " + shown(key) + " is not supported");
      if (!string(value))
        return false;
      skip_blank();
      if (!take(';'))
        return fail("expected ';' after the value of " + shown(key));
      if (!text::is_valid_utf8(key) || !text::is_valid_utf8(value))
        return fail(shown(key) + " is not valid UTF-8");
      if (out.size() == max_plist_entries)
        return fail("more than " + std::to_string(max_plist_entries) + " entries");
      if (!out.emplace(std::move(key), std::move(value)).second)
        return fail("a key appears twice");
    }
    skip_blank();
    if (pos_ != s_.size())
      return fail("text after the closing '}'");
    return true;
  }

private:
  std::string_view s_;
  std::size_t pos_ = 0;

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }

  bool take(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool fail(std::string message) {
    if (error.empty())
      error = std::move(message);
    return false;
  }

  void skip_blank() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n')
          ++pos_;
      } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '*') {
        auto end = s_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? s_.size() : end + 2;
      } else {
        return;
      }
    }
  }

  bool string(std::string& out) {
    if (take('"'))
      return quoted(out);
    auto start = pos_;
    while (pos_ < s_.size() && is_bare_char(s_[pos_]))
      ++pos_;
    if (pos_ == start)
      return fail("expected a string");
    out.assign(s_.substr(start, pos_ - start));
    return true;
  }

  bool quoted(std::string& out) {
    for (;;) {
      if (pos_ >= s_.size())
        return fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"')
        return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size())
        return fail("unterminated string");
      char e = s_[pos_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'a':
          out += '\a';
          break;
        case 'v':
          out += '\v';
          break;
        case 'U':
          if (!unicode_escape(out))
            return false;
          break;
        default:
          if (e >= '0' && e <= '7') {
            unsigned v = static_cast<unsigned>(e - '0');
            for (int i = 0; i < 2 && peek() >= '0' && peek() <= '7'; ++i)
              v = v * 8 + static_cast<unsigned>(s_[pos_++] - '0');
            if (v > 0xFF)
              return fail("octal escape out of range");
            out += static_cast<char>(v);
          } else {
            out += e; // \" \\ and any other escaped character stand for themselves
          }
      }
    }
  }

  // \U followed by up to four hex digits: a UTF-16 code unit. A surrogate pair
  // is two escapes in a row.
  bool unicode_escape(std::string& out) {
    auto unit = [&]() -> int {
      int v = 0, digits = 0;
      while (digits < 4 && hex_digit_value(peek()) >= 0) {
        v = v * 16 + hex_digit_value(s_[pos_++]);
        ++digits;
      }
      return digits == 0 ? -1 : v;
    };
    int hi = unit();
    if (hi < 0)
      return fail("\\U without hex digits");
    std::uint32_t cp = static_cast<std::uint32_t>(hi);
    if (cp >= 0xDC00 && cp <= 0xDFFF)
      return fail("lone low surrogate");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (!(take('\\') && take('U')))
        return fail("lone high surrogate");
      int lo = unit();
      if (lo < 0xDC00 || lo > 0xDFFF)
        return fail("invalid surrogate pair");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<std::uint32_t>(lo) - 0xDC00);
    }
    append_utf8(out, cp);
    return true;
  }
};

} // namespace

result<plist_dict> parse_plist_dict(std::string_view text, std::string_view what) {
  plist_dict out;
  parser p(text);
  if (!p.dict(out))
    return malformed(std::string(what) + ": " + p.error);
  return out;
}

} // namespace receiptd::model::store_a

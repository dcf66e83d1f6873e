#include "http_util.hpp"

#include "model/encoding.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <pistache/http.h>
#include <pistache/http_headers.h>

namespace receiptd::emulator {

namespace Http = Pistache::Http;

reply json_reply(int status, const boost::json::value& body) {
  return reply{status, content_kind::json, boost::json::serialize(body), std::nullopt};
}

reply html_reply(int status, std::string body) {
  return reply{status, content_kind::html, std::move(body), std::nullopt};
}

reply empty_reply(int status) {
  return reply{status, content_kind::none, {}, std::nullopt};
}

namespace {
// Pistache writes only typed headers (headers().addRaw is silently dropped).
class retry_after_header : public Http::Header::Header {
public:
  NAME("Retry-After")
  explicit retry_after_header(std::string value) : value_(std::move(value)) {}
  void write(std::ostream& os) const override { os << value_; }

private:
  std::string value_;
};
} // namespace

void send_reply(Http::ResponseWriter& writer, const reply& r) {
  // Both stores label their bodies with a charset (Google: "application/json;
  // charset=UTF-8").
  static const Http::Mime::MediaType json_type = [] {
    Http::Mime::MediaType m(Http::Mime::Type::Application, Http::Mime::Subtype::Json);
    m.setParam("charset", "UTF-8");
    return m;
  }();
  static const Http::Mime::MediaType html_type = [] {
    Http::Mime::MediaType m(Http::Mime::Type::Text, Http::Mime::Subtype::Html);
    m.setParam("charset", "UTF-8");
    return m;
  }();
  auto& headers = writer.headers();
  headers.remove<Http::Header::Connection>();
  headers.add<Http::Header::Connection>(Http::ConnectionControl::KeepAlive);
  if (r.retry_after)
    headers.add<retry_after_header>(*r.retry_after);
  if (r.kind == content_kind::none) {
    writer.send(static_cast<Http::Code>(r.status), r.body);
    return;
  }
  writer.send(static_cast<Http::Code>(r.status), r.body,
              r.kind == content_kind::json ? json_type : html_type);
}

std::string header_value(const Http::Request& request, const std::string& name) {
  const auto& headers = request.headers();
  // Pistache parses well-known headers (Authorization among them) into typed
  // objects and keeps the others raw.
  if (name == Http::Header::Authorization::Name) {
    if (auto typed = headers.tryGet<Http::Header::Authorization>())
      return typed->value();
  }
  if (auto raw = headers.tryGetRaw(name))
    return raw->value();
  return {};
}

std::optional<boost::json::object> parse_object(std::string_view text) {
  boost::system::error_code ec;
  auto value = boost::json::parse(text, ec);
  if (ec || !value.is_object())
    return std::nullopt;
  return std::move(value.as_object());
}

std::optional<std::string> get_string(const boost::json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  if (!v || !v->is_string())
    return std::nullopt;
  return std::string(v->as_string());
}

std::optional<bool> get_bool(const boost::json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  if (!v || !v->is_bool())
    return std::nullopt;
  return v->as_bool();
}

std::optional<std::int64_t> get_int(const boost::json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  if (!v)
    return std::nullopt;
  if (v->is_int64())
    return v->as_int64();
  if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(v->as_uint64());
  if (v->is_double()) {
    double d = v->as_double();
    if (d == static_cast<double>(static_cast<std::int64_t>(d)) && d > -9.2e18 && d < 9.2e18)
      return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

namespace {
int hex_digit(char c) {
  return model::hex_digit_value(c);
}
} // namespace

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size())
        return std::nullopt;
      int hi = hex_digit(text[i + 1]);
      int lo = hex_digit(text[i + 2]);
      if (hi < 0 || lo < 0)
        return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::map<std::string, std::string> parse_form(std::string_view body) {
  std::map<std::string, std::string> fields;
  while (!body.empty()) {
    auto amp = body.find('&');
    auto pair = body.substr(0, amp);
    body = amp == std::string_view::npos ? std::string_view{} : body.substr(amp + 1);
    auto eq = pair.find('=');
    auto name = percent_decode(pair.substr(0, eq), true);
    auto value = percent_decode(
      eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), true);
    if (name && value && !name->empty())
      fields.emplace(std::move(*name), std::move(*value));
  }
  return fields;
}

std::string sanitize_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    unsigned char c = p[i];
    std::size_t len = c < 0x80 ? 1
      : (c >> 5) == 0x6        ? 2
      : (c >> 4) == 0xE        ? 3
      : (c >> 3) == 0x1E       ? 4
                               : 0;
    bool ok = len != 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k)
      ok = (p[i + k] & 0xC0) == 0x80;
    if (ok && len > 1) { // reject overlong forms, surrogates and code points past U+10FFFF
      std::uint32_t cp = c & (0xFF >> (len + 1));
      for (std::size_t k = 1; k < len; ++k)
        cp = (cp << 6) | (p[i + k] & 0x3F);
      static constexpr std::uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= min_cp[len] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
    }
    if (ok) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> segments;
  while (!path.empty()) {
    auto slash = path.find('/');
    auto segment = path.substr(0, slash);
    if (!segment.empty())
      segments.push_back(segment);
    if (slash == std::string_view::npos)
      break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

} // namespace receiptd::emulator

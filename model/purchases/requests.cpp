#include "model/purchases/requests.hpp"

#include <charconv>

#include <boost/json/parse.hpp>

#include "model/encoding.hpp"
#include "model/store_a/jws.hpp"
#include "model/upload_request.hpp"

namespace receiptd::model::purchases {

namespace {

constexpr unix_ms max_grant_ms = 10LL * 366 * 24 * 3600 * 1000;

std::optional<std::int64_t> digits(std::string_view s) {
  std::int64_t v = 0;
  if (s.empty() || s.size() > 18)
    return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0)
    return std::nullopt;
  return v;
}

// "30d", "12h", "45m", "90s" → milliseconds.
std::optional<unix_ms> duration_text(std::string_view s) {
  if (s.size() < 2)
    return std::nullopt;
  std::int64_t unit = 0;
  switch (s.back()) {
    case 'd':
      unit = 24LL * 3600 * 1000;
      break;
    case 'h':
      unit = 3600LL * 1000;
      break;
    case 'm':
      unit = 60LL * 1000;
      break;
    case 's':
      unit = 1000;
      break;
    default:
      return std::nullopt;
  }
  auto n = digits(s.substr(0, s.size() - 1));
  if (!n || *n > max_grant_ms / unit)
    return std::nullopt;
  return *n * unit;
}

} // namespace

result<std::string> user_identifier_param(std::string_view raw) {
  auto bad = [](std::string message) {
    return field_error{"user_identifier", "invalid", std::move(message)};
  };
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '%') {
      int hi = i + 2 < raw.size() ? hex_digit_value(raw[i + 1]) : -1;
      int lo = i + 2 < raw.size() ? hex_digit_value(raw[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        return bad("the user identifier has a % that is not followed by two hex digits");
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return bad("the user identifier holds a control character");
    out += c;
  }
  if (out.empty())
    return bad("the user identifier is empty");
  // An upload's user_identifier is a JSON string, so UTF-8: other bytes name no
  // customer, and neither a JSON answer nor a PostgreSQL text column can hold them.
  if (!is_valid_utf8(out))
    return bad("the user identifier is not UTF-8 (percent-encode its UTF-8 bytes)");
  if (out.size() > max_user_identifier_bytes)
    return field_error{"user_identifier", "too_long", "the user identifier is over 1024 bytes"};
  return out;
}

result<std::string> entitlement_param(std::string_view raw) {
  bool ok = !raw.empty() && raw.size() <= 64;
  for (char c : raw)
    ok = ok
      && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
          || c == '-' || c == '.');
  if (!ok)
    return field_error{"entitlement", "invalid",
                       "an entitlement name is 1-64 letters, digits, '_', '-' or '.'"};
  return std::string(raw);
}

result<environment> environment_param(std::optional<std::string_view> raw) {
  if (!raw)
    return environment::production;
  if (auto env = parse_environment(*raw))
    return *env;
  return field_error{"environment", "invalid",
                     "environment is \"production\", \"sandbox\" or \"xcode\""};
}

result<int> limit_param(std::optional<std::string_view> raw) {
  if (!raw)
    return default_page_size;
  auto n = digits(*raw);
  if (!n || *n < 1 || *n > max_page_size)
    return field_error{"limit", "invalid",
                       "limit is a whole number from 1 to " + std::to_string(max_page_size)};
  return static_cast<int>(*n);
}

std::string cursor_text(const page_cursor& c) {
  return std::to_string(c.created_at) + "." + c.id;
}

result<std::optional<page_cursor>> cursor_param(std::optional<std::string_view> raw) {
  if (!raw)
    return std::optional<page_cursor>();
  auto dot = raw->find('.');
  auto ms = dot == std::string_view::npos ? std::nullopt : digits(raw->substr(0, dot));
  auto id = dot == std::string_view::npos ? std::string_view() : raw->substr(dot + 1);
  if (!ms || id.empty() || id.size() > 64)
    return field_error{"cursor", "invalid", "cursor is not one a listing gave (next_cursor)"};
  return std::optional<page_cursor>(page_cursor{*ms, std::string(id)});
}

result<grant_request> parse_grant_request(std::string_view body, unix_ms now) {
  boost::system::error_code ec;
  auto doc = boost::json::parse(body.empty() ? std::string_view("{}") : body, ec);
  if (ec || !doc.is_object())
    return field_error{"", "invalid_json", "the body is not a JSON object"};
  const auto& o = doc.get_object();
  grant_request g;
  g.starts_at = now;
  field_errors errors;
  const auto* expires = o.if_contains("expires_at");
  const auto* duration = o.if_contains("duration");
  if ((expires == nullptr) == (duration == nullptr)) {
    errors.push_back({"expires_at", "missing", "give expires_at or duration, one of them"});
  } else if (expires) {
    const boost::json::value* ms = expires;
    if (expires->is_object())
      ms = expires->get_object().if_contains("ms");
    if (ms && ms->is_int64())
      g.expires_at = ms->get_int64();
    else if (ms && ms->is_uint64() && ms->get_uint64() <= INT64_MAX)
      g.expires_at = static_cast<unix_ms>(ms->get_uint64());
    else
      errors.push_back({"expires_at", "invalid",
                        "expires_at is unix milliseconds or a Timestamp ({\"ms\": …})"});
  } else {
    std::optional<unix_ms> length;
    if (duration->is_int64() && duration->get_int64() > 0
        && duration->get_int64() <= max_grant_ms / 1000)
      length = duration->get_int64() * 1000;
    else if (duration->is_string())
      length = duration_text(duration->get_string());
    if (!length)
      errors.push_back({"duration", "invalid",
                        "duration is seconds, or a number followed by d, h, m or s (\"30d\")"});
    else
      g.expires_at = now + *length;
  }
  if (errors.empty() && (g.expires_at <= now || g.expires_at - now > max_grant_ms))
    errors.push_back({expires ? "expires_at" : "duration", "invalid",
                      "a grant ends after now and at most ten years from now"});
  if (const auto* env = o.if_contains("environment")) {
    auto parsed = env->is_string() ? parse_environment(env->get_string()) : std::nullopt;
    if (!parsed)
      errors.push_back({"environment", "invalid",
                        "environment is \"production\", \"sandbox\" or \"xcode\""});
    else
      g.env = *parsed;
  }
  if (!errors.empty())
    return errors;
  return g;
}

result<restore_request> parse_restore_request(std::string_view body) {
  boost::system::error_code ec;
  auto doc = boost::json::parse(body, ec);
  if (ec || !doc.is_object())
    return field_error{"", "invalid_json", "the body is not a JSON object"};
  const auto& o = doc.get_object();
  const auto* id = o.if_contains("transaction_id");
  const auto* jws = o.if_contains("signed_transaction");
  if ((id == nullptr) == (jws == nullptr))
    return field_error{"transaction_id", "missing",
                       "give transaction_id or signed_transaction, one of them"};
  restore_request out;
  if (id) {
    bool ok = id->is_string() && !id->get_string().empty() && id->get_string().size() <= 64;
    if (ok)
      for (unsigned char c : id->get_string())
        ok = ok && c > 0x20 && c < 0x7f;
    if (!ok)
      return field_error{"transaction_id", "invalid",
                         "transaction_id is an App Store transaction id: 1 to 64 visible ASCII "
                         "characters"};
    out.transaction_id = std::string(id->get_string());
    return out;
  }
  if (!jws->is_string() || jws->get_string().size() > max_signed_transaction_length
      || !store_a::split_jws(jws->get_string()))
    return field_error{"signed_transaction", "invalid_jws",
                       "signed_transaction must be a compact JWS: three base64url segments "
                       "joined by '.', at most 64 KiB"};
  out.signed_transaction = std::string(jws->get_string());
  return out;
}

} // namespace receiptd::model::purchases

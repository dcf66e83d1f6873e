#pragma once
// Small HTTP and JSON helpers shared by the emulator's listeners.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace Pistache::Http {
class Request;
class ResponseWriter;
} // namespace Pistache::Http

namespace receiptd::emulator {

enum class content_kind { json, html, none };

// A response computed on a reactor thread and sent at once or later (slow mode).
struct reply {
  int status = 200;
  content_kind kind = content_kind::json; // none: no Content-Type
  std::string body;
  std::optional<std::string> retry_after; // a Retry-After header, verbatim (seconds or a date)
};

reply json_reply(int status, const boost::json::value& body);
reply html_reply(int status, std::string body);
// No body and no Content-Type (Apple's App Store Server API 401).
reply empty_reply(int status);

// Sends `r` with "Connection: keep-alive" whatever the client asked, so that
// the service under test can reuse connections (Pistache 0.0.5 otherwise
// answers "Connection: Close" to clients that send no Connection header).
void send_reply(Pistache::Http::ResponseWriter& writer, const reply& r);

// A header's value, or "" when absent.
std::string header_value(const Pistache::Http::Request& request, const std::string& name);

// JSON text → object; nullopt on any parse error or when not an object.
std::optional<boost::json::object> parse_object(std::string_view text);

// Typed field access that never throws: nullopt when absent or of another type.
std::optional<std::string> get_string(const boost::json::object& o, std::string_view key);
std::optional<bool> get_bool(const boost::json::object& o, std::string_view key);
std::optional<std::int64_t> get_int(const boost::json::object& o, std::string_view key);

// RFC 3986 percent-decoding; `plus_is_space` for application/x-www-form-urlencoded.
// nullopt on a malformed escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);
// application/x-www-form-urlencoded body → fields (a malformed pair is skipped).
std::map<std::string, std::string> parse_form(std::string_view body);

// `text` with every byte that is not part of well-formed UTF-8 replaced by
// U+FFFD, so that logged request bodies always serialize to valid JSON.
std::string sanitize_utf8(std::string_view text);

// "/a/b/c" → {"a","b","c"} (empty segments dropped).
std::vector<std::string_view> split_path(std::string_view path);

} // namespace receiptd::emulator

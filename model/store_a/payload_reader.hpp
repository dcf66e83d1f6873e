#pragma once
// Reading the fields of a verified Apple JWS payload (a transaction, a
// notification, a renewal info) with Apple's types: every problem found becomes
// a field error under one field and code, its message naming the key. Internal
// to model/store_a/.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/store_a/jws_internal.hpp"

namespace receiptd::model::store_a {

class payload_reader {
public:
  // Identifiers and short texts Apple sends are tens of bytes; anything longer
  // is not Apple's.
  static constexpr std::size_t max_text_bytes = 256;

  // Errors go to `errors` as {field, code, prefix + key + " " + what}.
  payload_reader(const boost::json::object& o, std::string field, std::string code,
                 std::string prefix, field_errors& errors)
    : o_(o),
      field_(std::move(field)),
      code_(std::move(code)),
      prefix_(std::move(prefix)),
      errors_(errors) {}

  // A required non-empty string of at most `max` bytes.
  void required_text(const char* key, std::string& out, std::size_t max = max_text_bytes) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr || v->is_null())
      return fail(key, "is missing");
    if (!v->is_string() || v->get_string().empty() || v->get_string().size() > max)
      return fail(key, "is not a non-empty string of at most " + std::to_string(max) + " bytes");
    out = v->get_string();
  }

  // An optional string: absent, null or "" is nullopt; another type is an error.
  void text(const char* key, std::optional<std::string>& out, std::size_t max = max_text_bytes) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr || v->is_null())
      return;
    if (!v->is_string() || v->get_string().size() > max)
      return fail(key, "is not a string of at most " + std::to_string(max) + " bytes");
    if (!v->get_string().empty())
      out = std::string(v->get_string());
  }

  // An optional instant (json_unix_ms).
  void date(const char* key, std::optional<unix_ms>& out) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr || v->is_null())
      return;
    out = json_unix_ms(*v);
    if (!out)
      fail(key, "is not a date in unix milliseconds");
  }

  // An optional integer within [lo, hi].
  template <class T>
  void integer(const char* key, std::optional<T>& out, std::int64_t lo, std::int64_t hi) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr || v->is_null())
      return;
    std::optional<std::int64_t> n;
    if (v->is_int64())
      n = v->get_int64();
    else if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(hi))
      n = static_cast<std::int64_t>(v->get_uint64());
    if (!n || *n < lo || *n > hi)
      return fail(key, "is not an integer in range");
    out = static_cast<T>(*n);
  }

  // An optional boolean.
  void boolean(const char* key, std::optional<bool>& out) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr || v->is_null())
      return;
    if (!v->is_bool())
      return fail(key, "is not a boolean");
    out = v->get_bool();
  }

  // Apple's three environments ("Production", "Sandbox", "Xcode"), required.
  void env(const char* key, environment& out) {
    std::string text;
    required_text(key, text);
    if (text == "Production")
      out = environment::production;
    else if (text == "Sandbox")
      out = environment::sandbox;
    else if (text == "Xcode")
      out = environment::xcode;
    else if (!text.empty())
      fail(key, "is not Production, Sandbox or Xcode");
  }

  const boost::json::value* find(const char* key) const { return o_.if_contains(key); }
  const boost::json::object& object() const { return o_; }

  void fail(std::string_view key, const std::string& what) {
    errors_.push_back({field_, code_, prefix_ + std::string(key) + " " + what});
  }

private:
  const boost::json::object& o_;
  std::string field_, code_, prefix_;
  field_errors& errors_;
};

} // namespace receiptd::model::store_a

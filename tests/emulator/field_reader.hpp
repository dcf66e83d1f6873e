#pragma once
// Typed reading of a control request's JSON fields, remembering the first
// problem so that an endpoint can read everything and then answer one clear 400.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "http_util.hpp"

namespace receiptd::emulator {

class field_reader {
public:
  explicit field_reader(const boost::json::object& o) : o_(o) {}

  std::optional<std::string> text(std::string_view key, bool required = false) {
    auto* v = o_.if_contains(key);
    if (!v || v->is_null())
      return missing(key, required), std::nullopt;
    if (!v->is_string())
      return fail(key, "must be a string"), std::nullopt;
    return std::string(v->as_string());
  }

  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max,
                                      bool required = false) {
    auto* v = o_.if_contains(key);
    if (!v || v->is_null())
      return missing(key, required), std::nullopt;
    auto n = get_int(o_, key);
    if (!n || *n < min || *n > max)
      return fail(key,
                  "must be an integer from " + std::to_string(min) + " to " + std::to_string(max)),
             std::nullopt;
    return n;
  }

  std::optional<double> number(std::string_view key, double min, double max) {
    auto* v = o_.if_contains(key);
    if (!v || v->is_null())
      return std::nullopt;
    std::optional<double> n;
    if (v->is_double())
      n = v->as_double();
    else if (v->is_int64())
      n = static_cast<double>(v->as_int64());
    else if (v->is_uint64())
      n = static_cast<double>(v->as_uint64());
    if (!n || !(*n >= min && *n <= max))
      return fail(key, "must be a number from " + number_text(min) + " to " + number_text(max)),
             std::nullopt;
    return n;
  }

  std::optional<bool> boolean(std::string_view key) {
    auto* v = o_.if_contains(key);
    if (!v || v->is_null())
      return std::nullopt;
    if (!v->is_bool())
      return fail(key, "must be true or false"), std::nullopt;
    return v->as_bool();
  }

  std::optional<boost::json::value> any(std::string_view key) {
    auto* v = o_.if_contains(key);
    if (!v || v->is_null())
      return std::nullopt;
    return *v;
  }

  void fail(std::string_view key, std::string_view what) {
    if (error_.empty())
      error_ = std::string(key) + " " + std::string(what);
  }
  const std::string& error() const { return error_; }

private:
  static std::string number_text(double x) {
    auto t = std::to_string(x); // "1.000000" -> "1"
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.')
      t.pop_back();
    return t;
  }

  void missing(std::string_view key, bool required) {
    if (required)
      fail(key, "is required");
  }

  const boost::json::object& o_;
  std::string error_;
};

} // namespace receiptd::emulator

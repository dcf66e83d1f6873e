#include "model/json_fields.hpp"

namespace receiptd::model {

std::optional<std::int64_t> json_int(const boost::json::value* v) {
  if (!v)
    return std::nullopt;
  if (v->is_int64())
    return v->get_int64();
  if (v->is_uint64() && v->get_uint64() <= INT64_MAX)
    return static_cast<std::int64_t>(v->get_uint64());
  if (v->is_string()) {
    const auto& s = v->get_string();
    if (s.empty() || s.size() > 18)
      return std::nullopt;
    std::int64_t n = 0;
    for (char c : s) {
      if (c < '0' || c > '9')
        return std::nullopt;
      n = n * 10 + (c - '0');
    }
    return n;
  }
  return std::nullopt;
}

std::string json_text(const boost::json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

} // namespace receiptd::model

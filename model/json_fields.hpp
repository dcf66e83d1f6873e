#pragma once
// Reading fields of the stores' JSON answers, which spell numbers either as
// JSON numbers or as strings of digits ("purchaseTimeMillis": "1700000000000").

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace receiptd::model {

// A non-negative integer given as a number or a digit string; nullopt otherwise.
std::optional<std::int64_t> json_int(const boost::json::value* v);

// The string at `key`, or "" when it is absent or not a string.
std::string json_text(const boost::json::object& o, const char* key);

} // namespace receiptd::model

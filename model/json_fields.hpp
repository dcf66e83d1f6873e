#pragma once
// Reading fields of the stores' JSON answers, which spell numbers either as
// JSON numbers or as strings of digits ("purchaseTimeMillis": "1700000000000").

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace receiptd::model {

// A non-negative integer given as a number or a digit string; nullopt otherwise.
std::optional<std::int64_t> json_int(const boost::json::value* v);

// The string at `key`, or "" when it is absent or not a string.
std::string json_text(const boost::json::object& o, const char* key);

// A block of the stack a document is parsed into (`boost::json::parse(text, ec,
// block.storage())`): its keys and strings are freed together when the block goes,
// a larger document taking more blocks from the heap. What is read from the
// document is copied out before then.
template <std::size_t Bytes>
class stack_block {
public:
  stack_block() = default;
  stack_block(const stack_block&) = delete;
  stack_block& operator=(const stack_block&) = delete;
  boost::json::storage_ptr storage() { return &resource_; }

private:
  unsigned char bytes_[Bytes];
  boost::json::monotonic_resource resource_{bytes_, Bytes};
};

} // namespace receiptd::model

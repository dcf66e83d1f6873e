#pragma once
// A JSON object written once for two readers: as text straight from the values
// (an upload's answer, a looked-up resource, a stored row: no document built,
// serialized and freed per request) or as a Boost.JSON document (events compare
// a resource before and after, field by field). A shape is a template over
// either output (text_object, dom_object); both write the same fields in the
// same order, and Boost.JSON spells every string and number of both.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "model/timestamp.hpp"

namespace receiptd::model::json_out {

// Appends `s` quoted and escaped, as Boost.JSON's serializer writes it.
void append_string(std::string& out, std::string_view s);
// Appends `v` as boost::json::serialize writes it.
void append_value(std::string& out, const boost::json::value& v);
void append_integer(std::string& out, std::int64_t v);
// JSON text kept as text (an upload's metadata, a refund request) as a value:
// null when absent or not JSON.
boost::json::value stored_json(const std::optional<std::string>& text);

namespace detail {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// One scalar (or an optional one: null when empty) as text.
template <class T>
void append_scalar(std::string& out, const T& v) {
  if constexpr (is_optional<T>::value) {
    if (!v)
      out += "null";
    else
      append_scalar(out, *v);
  } else if constexpr (std::is_same_v<T, std::nullptr_t>) {
    out += "null";
  } else if constexpr (std::is_same_v<T, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    append_integer(out, v);
  } else if constexpr (std::is_arithmetic_v<T>) {
    append_value(out, boost::json::value(v));
  } else {
    static_assert(std::is_convertible_v<const T&, std::string_view>, "a JSON scalar");
    append_string(out, std::string_view(v));
  }
}

// The same scalar as a document value.
template <class T>
boost::json::value scalar_value(const T& v) {
  if constexpr (is_optional<T>::value) {
    return v ? scalar_value(*v) : boost::json::value(nullptr);
  } else if constexpr (std::is_same_v<T, std::nullptr_t> || std::is_arithmetic_v<T>) {
    return boost::json::value(v);
  } else {
    static_assert(std::is_convertible_v<const T&, std::string_view>, "a JSON scalar");
    return boost::json::value(boost::json::string_view(std::string_view(v)));
  }
}

// Writes `fill(writer)` into `out` between the writer's brackets.
template <class Writer, class Fill>
void write_nested(std::string& out, Fill&& fill) {
  Writer inner(out);
  fill(inner);
  inner.close();
}

// A document (object or array) filled by `fill(writer)`.
template <class Json, class Writer, class Fill>
Json build_nested(boost::json::storage_ptr storage, Fill&& fill) {
  Json inner(std::move(storage));
  Writer out(inner);
  fill(out);
  return inner;
}

} // namespace detail

class text_array;

// Writes `{"key":value,...}` into `out` from construction to close().
class text_object {
public:
  explicit text_object(std::string& out) : out_(out) { out_ += '{'; }
  text_object(const text_object&) = delete;
  text_object& operator=(const text_object&) = delete;

  // One object filled from two shapes: record_keys() before the first,
  // keep_first() before the second, whose fields are then left out where the
  // first wrote the key (its value stays).
  void record_keys() {
    recording_ = true;
    keys_.reserve(32);
  }
  void keep_first() {
    keep_first_ = true;
    recording_ = false; // the second shape's keys are its own: none twice
  }

  template <class T>
  void put(std::string_view key, const T& v) {
    if (open(key))
      detail::append_scalar(out_, v);
  }
  // A value that is already a document (stored metadata).
  void put_json(std::string_view key, const boost::json::value& v) {
    if (open(key))
      append_value(out_, v);
  }
  template <class Fill>
  void put_object(std::string_view key, Fill&& fill) {
    if (open(key))
      detail::write_nested<text_object>(out_, fill);
  }
  template <class Fill>
  void put_array(std::string_view key, Fill&& fill);
  void close() { out_ += '}'; }

private:
  bool open(std::string_view key);

  std::string& out_;
  bool first_ = true;
  bool recording_ = false;
  bool keep_first_ = false;
  std::vector<std::string_view> keys_; // written between record_keys() and keep_first()
  std::uint64_t key_bits_ = 0;         // one bit per recorded key: most lookups end here
};

// Writes `[value,...]` into `out` from construction to close().
class text_array {
public:
  explicit text_array(std::string& out) : out_(out) { out_ += '['; }
  text_array(const text_array&) = delete;
  text_array& operator=(const text_array&) = delete;

  template <class T>
  void push(const T& v) {
    next();
    detail::append_scalar(out_, v);
  }
  template <class Fill>
  void push_object(Fill&& fill) {
    next();
    detail::write_nested<text_object>(out_, fill);
  }
  void close() { out_ += ']'; }

private:
  void next() {
    if (!first_)
      out_ += ',';
    first_ = false;
  }
  std::string& out_;
  bool first_ = true;
};

template <class Fill>
void text_object::put_array(std::string_view key, Fill&& fill) {
  if (open(key))
    detail::write_nested<text_array>(out_, fill);
}

class dom_array;

// The same calls filling a document object.
class dom_object {
public:
  explicit dom_object(boost::json::object& o) : o_(o) {}

  void record_keys() {} // the document has them
  void keep_first() { keep_first_ = true; }

  template <class T>
  void put(std::string_view key, const T& v) {
    set(key, detail::scalar_value(v));
  }
  void put_json(std::string_view key, boost::json::value v) { set(key, std::move(v)); }
  template <class Fill>
  void put_object(std::string_view key, Fill&& fill) {
    if (wanted(key))
      set(key, detail::build_nested<boost::json::object, dom_object>(o_.storage(), fill));
  }
  template <class Fill>
  void put_array(std::string_view key, Fill&& fill);

private:
  // Whether a field `key` is to be written (after keep_first(), not where one is).
  bool wanted(std::string_view key) const { return !keep_first_ || !o_.contains(key); }

  void set(std::string_view key, boost::json::value v) {
    if (keep_first_)
      o_.emplace(key, std::move(v)); // only where absent
    else
      o_[key] = std::move(v);
  }

  boost::json::object& o_;
  bool keep_first_ = false;
};

class dom_array {
public:
  explicit dom_array(boost::json::array& a) : a_(a) {}

  template <class T>
  void push(const T& v) {
    a_.emplace_back(detail::scalar_value(v));
  }
  template <class Fill>
  void push_object(Fill&& fill) {
    a_.emplace_back(detail::build_nested<boost::json::object, dom_object>(a_.storage(), fill));
  }

private:
  boost::json::array& a_;
};

template <class Fill>
void dom_object::put_array(std::string_view key, Fill&& fill) {
  if (wanted(key))
    set(key, detail::build_nested<boost::json::array, dom_array>(o_.storage(), fill));
}

// {"ms":…,"utc":"…"} (model/timestamp.hpp's timestamp_json), null when absent.
template <class Object>
void put_timestamp(Object& o, std::string_view key, const std::optional<unix_ms>& ms) {
  if (!ms)
    return o.put(key, nullptr);
  o.put_object(key, [&](auto& t) {
    t.put("ms", *ms);
    utc_buffer buf;
    t.put("utc", format_utc(*ms, buf));
  });
}

// A list of strings.
template <class Object, class Strings>
void put_strings(Object& o, std::string_view key, const Strings& list) {
  o.put_array(key, [&](auto& a) {
    for (const auto& s : list)
      a.push(s);
  });
}

// Writes `shape(object)` as text.
template <class Shape>
std::string text_of(Shape&& shape) {
  std::string out;
  out.reserve(2048);
  text_object o(out);
  shape(o);
  o.close();
  return out;
}

// Writes `shape(object)` as a document.
template <class Shape>
boost::json::object document_of(Shape&& shape, std::size_t fields = 0) {
  boost::json::object o;
  o.reserve(fields);
  dom_object out(o);
  shape(out);
  return o;
}

} // namespace receiptd::model::json_out

#pragma once
// Errors are values at module edges: a parser or check returns either its value
// or the list of field errors that the HTTP layer renders as the DESIGN.md §2 shape.

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace receiptd::model {

struct field_error {
  std::string field;  // empty when the error is not about one field
  std::string code;   // machine-readable, snake_case: "missing", "invalid_base64", …
  std::string message;
};

using field_errors = std::vector<field_error>;

template <class T>
class result {
public:
  result(T value) : v_(std::move(value)) {}
  result(field_errors errors) : v_(std::move(errors)) {}
  result(field_error error) : v_(field_errors{std::move(error)}) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const field_errors& errors() const { return std::get<1>(v_); }

private:
  std::variant<T, field_errors> v_;
};

} // namespace receiptd::model

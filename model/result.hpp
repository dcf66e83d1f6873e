#pragma once
// Errors are values at module edges, through every layer (model/, db/, config/,
// http/): a function returns either its value or an `error`. An error has a code
// from the one table of error codes (model/error_codes.hpp: code → HTTP status,
// retry hint), and the list of field errors the HTTP layer renders as the
// DESIGN.md §2 shape. It is mapped to a status once, at the HTTP edge.

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "model/error_codes.hpp"

namespace receiptd::model {

struct field_error {
  std::string field; // empty when the error is not about one field
  std::string code;  // machine-readable, snake_case: "missing", "invalid_base64", …
  std::string message;
};

using field_errors = std::vector<field_error>;

class error {
public:
  // Field errors of a request: invalid_request (422).
  error(field_errors fields) : code_(errc::invalid_request), fields_(std::move(fields)) {}
  error(field_error field) : error(field_errors{std::move(field)}) {}
  // Field errors under another code (a conflict names the field it is about).
  error(errc code, field_errors fields) : code_(code), fields_(std::move(fields)) {}
  // An error not about one field: the body lists it under its code's name.
  error(errc code, std::string message)
    : code_(code), fields_{{"", std::string(name_of(code)), std::move(message)}} {}

  errc code() const { return code_; }
  // What the answer's "errors" lists; never empty.
  const field_errors& fields() const { return fields_; }
  // The first error's text: what a log line or a command's message says.
  const std::string& message() const { return fields_.front().message; }

  // Seconds a client should wait before it tries again, when the error knows
  // better than its code's entry in the table (a rate limit's bucket).
  const std::optional<int>& retry_after() const { return retry_after_; }
  error& retry_after(int seconds) {
    retry_after_ = seconds;
    return *this;
  }

private:
  errc code_;
  field_errors fields_;
  std::optional<int> retry_after_;
};

template <class T>
class result {
public:
  result(T value) : v_(std::move(value)) {}
  result(error e) : v_(std::move(e)) {}
  result(field_errors errors) : v_(error(std::move(errors))) {}
  result(field_error e) : v_(error(std::move(e))) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const error& err() const { return std::get<1>(v_); }
  const field_errors& errors() const { return err().fields(); }

private:
  std::variant<T, error> v_;
};

// Success without a value.
struct done {};
using status = result<done>;

} // namespace receiptd::model

#pragma once
// Database errors are values: SOCI exceptions are caught inside db/ and returned
// as db::error, so nothing thrown by a driver crosses an actor boundary.

#include <string>
#include <utility>
#include <variant>

namespace receiptd::db {

struct error {
  std::string message;
};

template <class T>
class outcome {
public:
  outcome(T value) : v_(std::move(value)) {}
  outcome(error e) : v_(std::move(e)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  T* operator->() { return &value(); }
  const error& err() const { return std::get<1>(v_); }

private:
  std::variant<T, error> v_;
};

} // namespace receiptd::db

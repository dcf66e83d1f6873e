#pragma once
// Whether a list of field errors names `field` with `code`.

#include <string>

#include "model/result.hpp"

namespace receiptd::test {

inline bool has_error(const model::field_errors& errors, const std::string& field,
                      const std::string& code) {
  for (const auto& e : errors)
    if (e.field == field && e.code == code)
      return true;
  return false;
}

} // namespace receiptd::test

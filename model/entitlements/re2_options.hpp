#pragma once
// The RE2 options every entitlement pattern is compiled with, so that a pattern
// receiptctl accepted compiles the same way in receiptd. Internal to
// model/entitlements/*.cpp.

#include <re2/re2.h>

#include "model/entitlements/rules.hpp"

namespace receiptd::model::entitlements {

inline RE2::Options pattern_options() {
  RE2::Options o; // UTF-8, case-sensitive, longest-match off: RE2's defaults
  o.set_log_errors(false); // a bad pattern is an answer to the operator, not a log line
  o.set_max_mem(pattern_memory_bytes);
  return o;
}

} // namespace receiptd::model::entitlements

#include "model/verdict.hpp"

namespace receiptd::model {

namespace {

constexpr std::string_view reason_names[] = {
  "",
  "invalid_signature",
  "untrusted_certificate",
  "malformed_receipt",
  "bundle_id_mismatch",
  "package_name_mismatch",
  "device_hash_mismatch",
  "store_rejected",
};

constexpr std::string_view state_names[] = {"pending", "validated", "rejected", "failed"};

} // namespace

std::string_view to_string(validation_state x) {
  return state_names[static_cast<int>(x)];
}

std::string_view to_string(fraud_reason x) {
  return reason_names[static_cast<int>(x)];
}

std::string_view to_string(environment x) {
  switch (x) {
    case environment::sandbox:
      return "sandbox";
    case environment::xcode:
      return "xcode";
    default:
      return "production";
  }
}

std::optional<validation_state> parse_validation_state(std::string_view text) {
  for (int i = 0; i < 4; ++i)
    if (state_names[i] == text)
      return static_cast<validation_state>(i);
  return std::nullopt;
}

std::optional<fraud_reason> parse_fraud_reason(std::string_view text) {
  for (int i = 0; i < 8; ++i)
    if (reason_names[i] == text)
      return static_cast<fraud_reason>(i);
  return std::nullopt;
}

std::optional<environment> parse_environment(std::string_view text) {
  if (text == "production")
    return environment::production;
  if (text == "sandbox")
    return environment::sandbox;
  if (text == "xcode")
    return environment::xcode;
  return std::nullopt;
}

int http_status_for(validation_state state) {
  switch (state) {
    case validation_state::validated:
    case validation_state::failed: // only reached asynchronously; shown by GET
      return 200;
    case validation_state::pending:
      return 206;
    case validation_state::rejected:
      return 402;
  }
  return 500;
}

store_verdict unreachable_verdict(std::string detail, bool operator_problem) {
  store_verdict v;
  v.outcome = store_outcome::unreachable;
  v.detail = std::move(detail);
  v.operator_problem = operator_problem;
  return v;
}

} // namespace receiptd::model

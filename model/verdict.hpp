#pragma once
// The vocabulary of DESIGN.md §2: validation states, fraud reasons, environments
// and what a store said about a proof.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace receiptd::model {

enum class validation_state { pending, validated, rejected, failed };

enum class fraud_reason {
  none,
  invalid_signature,
  untrusted_certificate,
  malformed_receipt,
  bundle_id_mismatch,
  package_name_mismatch,
  device_hash_mismatch,
  store_rejected,
};

// xcode: a receipt signed by Xcode's StoreKit test certificate, verified locally
// only (Apple's servers do not know it); never production or sandbox.
enum class environment { production, sandbox, xcode };

std::string_view to_string(validation_state x);
std::string_view to_string(fraud_reason x); // "" for none
std::string_view to_string(environment x);
std::optional<validation_state> parse_validation_state(std::string_view text);
std::optional<fraud_reason> parse_fraud_reason(std::string_view text); // "" → none
std::optional<environment> parse_environment(std::string_view text);

// What the store's server API said about a proof whose signature checked out.
enum class store_outcome {
  confirmed,   // genuine (Apple 0/21006, Play 200/410) → validated, 200
  rejected,    // definitively not genuine (Apple 21003/21010, Play 400/404) → 402
  unreachable, // anything ambiguous: network, timeout, 5xx, 429, HTML, 21002… → 206 + job
};

struct store_verdict {
  store_outcome outcome = store_outcome::unreachable;
  std::optional<environment> env; // set when the store tells
  std::string detail;             // short reason for logs and the job's last_error
  bool operator_problem = false;  // credentials/secret/quota (Apple 21004, Play 401/403)
  std::string body;               // the store's answer (JSON text) for enrichment
  // When the store said it (model/store_time.hpp): its answer's time, for
  // answers that sign none the time it was received.
  std::optional<std::int64_t> said_at;
  // Unreachable because the store asked for a pause (429 or 503 with a
  // Retry-After: model/retry_after.hpp): not to be asked about it again before
  // this instant, unix ms.
  std::optional<std::int64_t> retry_not_before = std::nullopt;
};

// An ambiguous answer (or none): the proof stays pending and is asked again;
// `operator_problem` when the store refused our credentials or quota.
store_verdict unreachable_verdict(std::string detail, bool operator_problem = false);

// The HTTP status an upload is answered with once its record is stored.
int http_status_for(validation_state state);

} // namespace receiptd::model

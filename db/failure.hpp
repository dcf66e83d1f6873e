#pragma once
// Database errors are values: SOCI exceptions are caught inside db/ and returned
// as model::error (storage_unavailable) with a redacted message (db/redact.hpp),
// so nothing thrown by a driver crosses an actor boundary.

#include <string>

#include "model/result.hpp"

namespace receiptd::db {

inline model::error failure(std::string message) {
  return {model::errc::storage_unavailable, std::move(message)};
}

} // namespace receiptd::db

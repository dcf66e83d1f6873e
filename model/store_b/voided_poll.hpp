#pragma once
// One app's voided purchases poll as the database leases it
// (db::database::claim_voided_polls).

#include <cstdint>
#include <string>

#include "model/app.hpp"
#include "model/store_b/voided.hpp"

namespace receiptd::model::store_b {

struct voided_poll {
  std::string app_id;
  voided_cursor cursor;
  std::int64_t version = 0; // the claim's fencing token
  unix_ms next_poll_at = 0; // written when the poll finishes (or fails)
  std::string last_error;   // written with it: '' after a poll that read every page
};

struct claimed_voided_poll {
  voided_poll poll;
  model::app app; // its package name and service account
};

} // namespace receiptd::model::store_b

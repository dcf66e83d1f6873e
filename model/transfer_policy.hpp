#pragma once
// What a re-upload of a proof already bound to one user_identifier may do when it
// names another one (hosted validators call this the restore policy).

#include <optional>
#include <string>
#include <string_view>

namespace receiptd::model {

struct transfer_policy {
  enum class kind {
    transfer,     // the proof moves to the new user; the previous owners are recorded
    keep,         // the proof stays with its first user; the upload is answered 409
    reject_after, // transfers are allowed `limit` times, then answered 409
  };
  kind mode = kind::transfer;
  int limit = 0; // reject_after only

  // Whether a proof already moved `transfers_so_far` times may move once more.
  bool allows(int transfers_so_far) const;
  bool operator==(const transfer_policy&) const = default;
};

// "transfer", "keep" or "reject_after=N" (0 ≤ N ≤ 1,000,000).
std::optional<transfer_policy> parse_transfer_policy(std::string_view text);
std::string to_string(const transfer_policy& p);

} // namespace receiptd::model

#pragma once
// Work this thread's database calls wrote for a background actor of the
// instance to claim (revalidation jobs, webhook deliveries, refund requests),
// with when it falls due. The repositories note it as they write; the
// persistence worker takes the notes after each call and tells the actors
// (actors/work_notice.hpp), which then claim it when it falls due instead of at
// their next poll. A write later rolled back leaves its note: the claim it
// causes finds nothing.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/clock.hpp"

namespace receiptd::db {

enum class work_kind : std::uint8_t { jobs, deliveries, refund_requests };
inline constexpr std::size_t work_kinds = 3;

struct work_written {
  // Due times noted per kind (by work_kind), in the order written.
  std::array<std::vector<model::unix_ms>, work_kinds> due;

  bool empty() const {
    for (const auto& d : due)
      if (!d.empty())
        return false;
    return true;
  }
};

// At most this many due times are kept per kind between takes; work noted
// beyond them is found by the actors' poll.
inline constexpr std::size_t max_noted_per_kind = 1024;

void note_work(work_kind kind, model::unix_ms due);

// This thread's notes since the last take; they are emptied.
work_written take_work_written();

} // namespace receiptd::db

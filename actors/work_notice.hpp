#pragma once
// In-process notice of background work (DESIGN.md §1): the persistence workers
// tell the retry scheduler, the webhook dispatcher and the refund answerer of
// the work this instance's database calls wrote (db/work_written.hpp), and each
// gets a tick when that work falls due, so it claims it then instead of finding
// it at its next poll. Their polls (retry.poll-interval, webhooks.poll-interval)
// remain, for work written elsewhere: other instances, receiptctl, leases that
// ran out.

#include <array>
#include <chrono>
#include <mutex>
#include <set>

#include "actors/fwd.hpp"
#include "db/work_written.hpp"
#include "model/clock.hpp"

namespace receiptd::actors {

class work_notice {
public:
  // Ticks fall on multiples of `granularity`, always after the write they follow
  // committed: work written within one granularity costs one tick.
  explicit work_notice(const model::time_source& clock,
                       std::chrono::milliseconds granularity = std::chrono::milliseconds(100));

  // Once the actors run (they claim at start: nothing written before is lost).
  void attach(retry_scheduler_actor jobs, webhook_dispatcher_actor deliveries,
              refund_answerer_actor refunds);
  // Before the actor system stops: no tick is sent after.
  void detach();

  // From any thread, after the writes committed: a tick to each kind's actor at
  // each due time (rounded up to the granularity, never now or before), unless
  // one is already on its way for that time.
  void tell(const db::work_written& written);

  // Ticks sent so far (tests).
  std::size_t ticks_sent() const;

private:
  void send(db::work_kind kind, std::chrono::milliseconds delay);

  const model::time_source* clock_;
  std::chrono::milliseconds granularity_;
  mutable std::mutex mutex_;
  bool attached_ = false;
  retry_scheduler_actor jobs_;
  webhook_dispatcher_actor deliveries_;
  refund_answerer_actor refunds_;
  // Per kind, the times of the ticks on their way (unix ms).
  std::array<std::set<model::unix_ms>, db::work_kinds> pending_;
  std::size_t sent_ = 0;
};

} // namespace receiptd::actors

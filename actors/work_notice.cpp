#include "actors/work_notice.hpp"

#include <caf/send.hpp>

#include <algorithm>

#include "actors/type_ids.hpp"

namespace receiptd::actors {

work_notice::work_notice(const model::time_source& clock, std::chrono::milliseconds granularity)
  : clock_(&clock), granularity_(std::max(granularity, std::chrono::milliseconds(1))) {}

void work_notice::attach(retry_scheduler_actor jobs, webhook_dispatcher_actor deliveries,
                         refund_answerer_actor refunds) {
  std::lock_guard lock(mutex_);
  jobs_ = std::move(jobs);
  deliveries_ = std::move(deliveries);
  refunds_ = std::move(refunds);
  attached_ = true;
}

void work_notice::detach() {
  std::lock_guard lock(mutex_);
  attached_ = false;
  jobs_ = nullptr;
  deliveries_ = nullptr;
  refunds_ = nullptr;
}

void work_notice::tell(const db::work_written& written) {
  if (written.empty())
    return;
  std::lock_guard lock(mutex_);
  if (!attached_)
    return;
  const model::unix_ms now = clock_->now_ms();
  const model::unix_ms step = granularity_.count();
  for (std::size_t k = 0; k < db::work_kinds; ++k) {
    auto& pending = pending_[k];
    // Ticks whose time has come are no longer on their way.
    pending.erase(pending.begin(), pending.lower_bound(now));
    for (auto due : written.due[k]) {
      // The next multiple of the granularity strictly after both now and the
      // due time: a tick never overtakes the write it follows.
      const auto at = (std::max(due, now) / step + 1) * step;
      if (pending.insert(at).second)
        send(static_cast<db::work_kind>(k), std::chrono::milliseconds(at - now));
    }
  }
}

void work_notice::send(db::work_kind kind, std::chrono::milliseconds delay) {
  ++sent_;
  switch (kind) {
    case db::work_kind::jobs:
      caf::delayed_anon_send(jobs_, delay, tick_atom_v);
      break;
    case db::work_kind::deliveries:
      caf::delayed_anon_send(deliveries_, delay, tick_atom_v);
      break;
    case db::work_kind::refund_requests:
      caf::delayed_anon_send(refunds_, delay, tick_atom_v);
      break;
  }
}

std::size_t work_notice::ticks_sent() const {
  std::lock_guard lock(mutex_);
  return sent_;
}

} // namespace receiptd::actors

#include "actors/scheduler.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/detail/thread_safe_actor_clock.hpp>
#include <caf/policy/work_sharing.hpp>
#include <caf/scheduler/coordinator.hpp>

#include <mutex>
#include <unordered_set>
#include <utility>

namespace receiptd::actors {

namespace {

// CAF's work sharing, notifying after the queue's lock is released.
struct sharing_policy : caf::policy::work_sharing {
  template <class Coordinator>
  void enqueue(Coordinator* self, caf::resumable* job) {
    queue_type node{job}; // allocated outside the lock
    auto& d = self->data();
    {
      std::lock_guard<std::mutex> guard(d.lock);
      d.queue.splice(d.queue.end(), node);
    }
    d.cv.notify_one();
  }

  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    enqueue(self, job);
  }

  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    enqueue(self->parent(), job);
  }

  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    enqueue(self->parent(), job);
  }

  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    enqueue(self->parent(), job);
  }
};

using caf_clock = caf::detail::thread_safe_actor_clock;

// The coordinator's clock, told of an ending actor only when that actor set a
// timeout. Delayed messages (delayed_send) are not the actor's timeouts: CAF
// delivers them whether the actor still runs or not, and does not cancel them.
class quiet_clock final : public caf_clock {
public:
  explicit quiet_clock(caf_clock& clock) : clock_(clock) {}

  void set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                            uint64_t id) override {
    note(self);
    clock_.set_ordinary_timeout(t, self, type, id);
  }

  void set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) override {
    note(self);
    clock_.set_request_timeout(t, self, id);
  }

  void set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                         uint64_t id) override {
    note(self);
    clock_.set_multi_timeout(t, self, type, id);
  }

  void cancel_ordinary_timeout(caf::abstract_actor* self, caf::atom_value type) override {
    clock_.cancel_ordinary_timeout(self, type);
  }

  void cancel_request_timeout(caf::abstract_actor* self, caf::message_id id) override {
    clock_.cancel_request_timeout(self, id);
  }

  void cancel_timeouts(caf::abstract_actor* self) override {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (timed_.erase(self->id()) == 0)
        return;
    }
    clock_.cancel_timeouts(self);
  }

  void schedule_message(time_point t, caf::strong_actor_ptr receiver,
                        caf::mailbox_element_ptr content) override {
    clock_.schedule_message(t, std::move(receiver), std::move(content));
  }

  void schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender,
                        caf::message content) override {
    clock_.schedule_message(t, std::move(target), std::move(sender), std::move(content));
  }

  void cancel_all() override { clock_.cancel_all(); }

private:
  void note(caf::abstract_actor* self) {
    std::lock_guard<std::mutex> guard(mutex_);
    timed_.insert(self->id());
  }

  caf_clock& clock_; // the coordinator's own: its thread dispatches everything
  std::mutex mutex_;
  std::unordered_set<caf::actor_id> timed_; // actors that set a timeout, until they end
};

class coordinator final : public caf::scheduler::coordinator<sharing_policy> {
public:
  using super = caf::scheduler::coordinator<sharing_policy>;

  explicit coordinator(caf::actor_system& sys) : super(sys), quiet_(super::clock()) {}

  caf_clock& clock() noexcept override { return quiet_; }

private:
  quiet_clock quiet_;
};

} // namespace

void use_sharing_scheduler(caf::actor_system_config& cfg) {
  cfg.module_factories.push_back(
    [](caf::actor_system& sys) -> caf::actor_system::module* { return new coordinator(sys); });
}

} // namespace receiptd::actors

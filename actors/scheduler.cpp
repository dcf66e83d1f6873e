#include "actors/scheduler.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/detail/thread_safe_actor_clock.hpp>
#include <caf/logger.hpp>
#include <caf/policy/unprofiled.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/coordinator.hpp>

#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <utility>

namespace receiptd::actors {

namespace {

// The scheduler's one queue of actors to run, shared by its threads and by the
// helping threads of receiptd's own (turns). It outlives the coordinator while a
// turns object still points at it: once closed, turns run nothing.
struct shared_queue {
  std::mutex lock;
  std::condition_variable wake;    // scheduler threads asleep on an empty queue
  std::condition_variable settled; // close() waits here for helpers to finish
  std::list<caf::resumable*> jobs;
  std::size_t workers = 0;  // scheduler threads
  std::size_t sleeping = 0; // of those, asleep on `wake`
  std::size_t helping = 0;  // helping threads running jobs right now
  bool closed = false;      // the coordinator stops: helpers take no job any more
  caf::actor_system* system = nullptr;
  std::size_t max_throughput = 0;

  // Pushes a job; wakes a sleeping scheduler thread unless `quiet` (the caller
  // is a helping thread that runs the queue itself when its turn ends).
  void push(caf::resumable* job, bool quiet) {
    std::list<caf::resumable*> node{job}; // allocated outside the lock
    bool notify = false;
    {
      std::lock_guard<std::mutex> guard(lock);
      jobs.splice(jobs.end(), node);
      notify = !quiet && sleeping > 0;
    }
    if (notify) // after the lock is released: the woken thread does not block on it
      wake.notify_one();
  }

  void close() {
    std::unique_lock<std::mutex> guard(lock);
    closed = true;
    settled.wait(guard, [&] { return helping == 0; });
  }

  void help(std::size_t budget);
};

// The queue whose turn this thread is in (http::turn_hook), and how deep.
thread_local shared_queue* turn_queue = nullptr;
thread_local int turn_depth = 0;

// A helping thread's execution unit: what the jobs it runs schedule goes on the
// shared queue, quietly (the helper goes on running the queue).
class helping_unit final : public caf::execution_unit {
public:
  helping_unit(shared_queue& q) : caf::execution_unit(q.system), q_(q) {}
  void exec_later(caf::resumable* job) override { q_.push(job, true); }

private:
  shared_queue& q_;
};

// At the end of a turn: when no scheduler thread is awake, the helping thread runs
// what is queued (what its turn caused, and what follows from it) up to `budget`
// jobs, as a scheduler thread would; what is left then wakes a scheduler thread.
// When one is awake it takes the queue, as it would have anyway; with more than
// one scheduler thread, one that sleeps is woken too (the awake one may be deep
// in a long job), as CAF's own policy would have on the push.
void shared_queue::help(std::size_t budget) {
  std::unique_lock<std::mutex> guard(lock);
  if (closed)
    return;
  if (sleeping < workers) {
    bool wake_one = sleeping > 0 && !jobs.empty();
    guard.unlock();
    if (wake_one)
      wake.notify_one();
    return;
  }
  ++helping;
  // CAF's spawn makes the spawning thread hold the system's logger (spawn_impl sets
  // the thread's current logger), and ~actor_system waits until nothing holds it:
  // a helping thread that outlives the system (the outbound client's) lets go of
  // what it did not hold before.
  bool held_logger = caf::logger::current_logger() != nullptr;
  helping_unit unit(*this);
  for (std::size_t n = 0; n < budget && !jobs.empty() && !closed; ++n) {
    auto* job = jobs.front();
    jobs.pop_front();
    guard.unlock();
    // What caf::scheduler::worker::run does with a job (closed before any
    // shutdown job is queued, so none reaches a helper).
    switch (job->resume(&unit, max_throughput)) {
      case caf::resumable::resume_later:
        push(job, true);
        break;
      case caf::resumable::done:
      case caf::resumable::awaiting_message:
      case caf::resumable::shutdown_execution_unit:
        caf::intrusive_ptr_release(job);
        break;
    }
    guard.lock();
  }
  --helping;
  if (!held_logger && caf::logger::current_logger() != nullptr) {
    guard.unlock();
    caf::logger::set_current_actor_system(nullptr);
    guard.lock();
  }
  bool rest = !jobs.empty() && !closed;
  bool last = closed && helping == 0;
  guard.unlock();
  if (rest)
    wake.notify_one();
  if (last)
    settled.notify_all();
}

// Jobs a helping thread runs per turn at most before it hands the rest to a
// scheduler thread: an upload's supervisor, validator and store-client steps are
// a handful; the bound keeps a reactor from running a whole backlog.
constexpr std::size_t help_budget = 64;

// CAF's work sharing on the shared queue: one queue, threads asleep on a
// condition variable, woken after the queue's lock is released (CAF's own policy
// notifies while holding it, so the woken thread first blocked on that lock and
// was woken a second time).
struct sharing_policy : caf::policy::unprofiled {
  struct coordinator_data {
    explicit coordinator_data(caf::scheduler::abstract_coordinator*)
      : queue(std::make_shared<shared_queue>()) {}
    std::shared_ptr<shared_queue> queue;
  };

  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {}
  };

  template <class Coordinator>
  void enqueue(Coordinator* self, caf::resumable* job) {
    auto& q = *self->data().queue;
    q.push(job, turn_queue == &q);
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

  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    auto& q = *self->parent()->data().queue;
    std::unique_lock<std::mutex> guard(q.lock);
    while (q.jobs.empty()) {
      ++q.sleeping;
      q.wake.wait(guard);
      --q.sleeping;
    }
    auto* job = q.jobs.front();
    q.jobs.pop_front();
    return job;
  }

  template <class Worker, class UnaryFunction>
  void foreach_resumable(Worker*, UnaryFunction) {}

  template <class Coordinator, class UnaryFunction>
  void foreach_central_resumable(Coordinator* self, UnaryFunction f) {
    auto& q = *self->data().queue;
    std::unique_lock<std::mutex> guard(q.lock);
    while (!q.jobs.empty()) {
      auto* job = q.jobs.front();
      q.jobs.pop_front();
      f(job);
    }
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

  std::shared_ptr<shared_queue> queue() { return data().queue; }

protected:
  void start() override {
    auto& q = *data().queue;
    {
      std::lock_guard<std::mutex> guard(q.lock);
      q.workers = num_workers();
      q.system = &system();
      q.max_throughput = max_throughput();
    }
    super::start();
  }

  void stop() override {
    data().queue->close(); // before CAF queues its shutdown jobs: no helper takes one
    super::stop();
  }

private:
  quiet_clock quiet_;
};

} // namespace

struct scheduler_turns::state {
  std::shared_ptr<shared_queue> queue; // kept while attached
};

scheduler_turns::scheduler_turns() : state_(std::make_unique<state>()) {}

scheduler_turns::~scheduler_turns() = default;

void scheduler_turns::attach(caf::actor_system& sys) {
  auto* ours = dynamic_cast<coordinator*>(&sys.scheduler());
  if (!ours)
    return; // another scheduler (stealing, a test's): turns stay plain
  state_->queue = ours->queue();
  queue_.store(state_->queue.get(), std::memory_order_release);
}

void scheduler_turns::begin() {
  if (turn_depth++ == 0)
    turn_queue = static_cast<shared_queue*>(queue_.load(std::memory_order_acquire));
}

void scheduler_turns::end() {
  if (--turn_depth > 0)
    return;
  auto* q = turn_queue;
  // Still in the turn while helping: what the jobs schedule is pushed quietly.
  if (q)
    q->help(help_budget);
  turn_queue = nullptr;
}

void use_sharing_scheduler(caf::actor_system_config& cfg) {
  cfg.module_factories.push_back(
    [](caf::actor_system& sys) -> caf::actor_system::module* { return new coordinator(sys); });
}

} // namespace receiptd::actors

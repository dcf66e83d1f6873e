#pragma once
// receiptd's CAF scheduler for scheduler.policy = 'sharing': CAF 0.17.6's
// own work-sharing coordinator (one queue, threads asleep on a condition variable)
// with fewer wake-ups per upload.
//
// - A job pushed from another thread wakes a sleeping scheduler thread after the
//   queue's lock is released. CAF's policy notifies while holding it, so the
//   woken thread first blocks on that lock and is woken a second time.
// - An ending actor that never set a timeout does not message the clock thread.
//   CAF's local_actor::cleanup asks the clock to drop the actor's timeouts for
//   every actor that ends, which wakes the clock thread once per validator (one
//   per upload), although validators set none (their requests are answered by
//   their deadline: actors/messages.hpp).
// - The threads of receiptd's own help (scheduler_turns below): a Pistache
//   reactor that hands an upload to the supervisor, the outbound client's thread
//   that hands a store's answer to a store client, a persistence worker that
//   answers a save, each runs the actor work that follows at the end of its turn
//   itself, when no scheduler thread is awake, instead of waking one. An upload
//   then crosses the threads it must (a reactor, the outbound thread, a
//   persistence worker, each woken by its socket or its queue) and no other: at
//   500 uploads/s this took a scheduler thread's 3 wake-ups and preemptions per
//   upload away and receiptd's CPU per upload down by a sixth (bench/README.md).
//
// Everything else (threads, throughput, delayed messages, timeouts) is CAF's.

#include <caf/fwd.hpp>

#include <atomic>
#include <memory>

#include "http/turn_hook.hpp"

namespace receiptd::actors {

// Makes `cfg`'s actor systems use this scheduler. Call before the actor_system
// is made, only when scheduler.policy is 'sharing'.
void use_sharing_scheduler(caf::actor_system_config& cfg);

// The turns of receiptd's own threads (http::turn_hook), attached to an actor
// system. What a turn hands to actors is queued without waking a scheduler
// thread; when the turn ends and every scheduler thread is asleep, the turn's
// thread runs the queue itself (at most a few dozen jobs, then a scheduler
// thread gets the rest), as a scheduler thread would; when one is awake, it takes
// them (and, with more than one scheduler thread, one that sleeps is woken).
// Actors never block (DESIGN.md §1), so a reactor, the outbound thread or a
// persistence worker runs them as safely as a scheduler thread does. A turn must
// not wait for the actor work it hands on (that work runs when the turn ends).
//
// Before attach(), and with a scheduler other than this one, turns change
// nothing. Once the actor system stops, turns run nothing more; the object may
// outlive it (the outbound client's thread does).
class scheduler_turns final : public http::turn_hook {
public:
  scheduler_turns();
  ~scheduler_turns() override;
  scheduler_turns(const scheduler_turns&) = delete;
  scheduler_turns& operator=(const scheduler_turns&) = delete;

  // Call once, after `sys` is made and before its threads' turns matter.
  void attach(caf::actor_system& sys);

  void begin() override;
  void end() override;

private:
  struct state;
  std::unique_ptr<state> state_;
  std::atomic<void*> queue_{nullptr};
};

} // namespace receiptd::actors

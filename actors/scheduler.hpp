#pragma once
// receiptd's CAF scheduler for scheduler.policy = 'sharing' (issue 7): CAF 0.17.6's
// own work-sharing coordinator, with two wake-ups per upload fewer.
//
// - A job pushed from another thread (a Pistache reactor, the curl thread, a
//   persistence worker) wakes a sleeping scheduler thread after the queue's lock
//   is released. CAF's policy notifies while holding it, so the woken thread
//   first blocks on that lock and is woken a second time.
// - An ending actor that never set a timeout does not message the clock thread.
//   CAF's local_actor::cleanup asks the clock to drop the actor's timeouts for
//   every actor that ends, which wakes the clock thread once per validator (one
//   per upload), although validators set none (their requests are answered by
//   their deadline: actors/messages.hpp).
//
// Everything else (threads, throughput, delayed messages, timeouts) is CAF's.

#include <caf/fwd.hpp>

namespace receiptd::actors {

// Makes `cfg`'s actor systems use this scheduler. Call before the actor_system
// is made, only when scheduler.policy is 'sharing'.
void use_sharing_scheduler(caf::actor_system_config& cfg);

} // namespace receiptd::actors

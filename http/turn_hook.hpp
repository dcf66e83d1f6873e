#pragma once
// A turn of one of the service's own threads: a Pistache reactor handling what a
// client sent, the outbound client's loop handling what the stores answered, or a
// persistence worker answering a call. What such a turn hands to the actors (an
// upload, a store's answer, a saved record) the actor scheduler may let that
// thread run itself once the turn is over, instead of waking a scheduler thread
// for it (actors/scheduler.hpp: a wake-up is the dearest thing an upload pays for
// at everyday load). The http folder only marks where
// its turns begin and end; it knows nothing of actors.

namespace receiptd::http {

class turn_hook {
public:
  virtual ~turn_hook() = default;
  // Called by the thread whose turn it is, in pairs, and with no lock held at
  // end(): end() may run actor work, which may answer a request on any connection.
  virtual void begin() = 0;
  virtual void end() = 0;
};

// One turn for the scope's life; a null hook is no turn at all.
class turn {
public:
  explicit turn(turn_hook* hook) : hook_(hook) {
    if (hook_)
      hook_->begin();
  }
  ~turn() {
    if (hook_)
      hook_->end();
  }
  turn(const turn&) = delete;
  turn& operator=(const turn&) = delete;

private:
  turn_hook* hook_;
};

} // namespace receiptd::http

#pragma once
// The auth revision's notices (PostgreSQL LISTEN/NOTIFY: every change to apps,
// access_tokens or webhook_endpoints notifies `receiptd_auth`, db/sql_apps.hpp),
// counted; shared by the thread that hears them (db::change_listener) and the
// supervisor, whose token cache reads the count. While they are heard, a change
// anyone makes reaches the cache when its notice arrives, and the revocation
// check becomes the safety net: it asks the database every 10 s instead of every
// auth.revocation-check (actors/supervisor.cpp). They are listened for only while
// tokens are cached: an idle service asks the database nothing.

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>

namespace receiptd::actors {

class auth_notices {
public:
  // `start_listening`: called (from the supervisor's thread) when tokens start
  // being cached; it must not block (it wakes the listener).
  explicit auth_notices(std::function<void()> start_listening = {})
    : start_listening_(std::move(start_listening)) {}

  // Whether tokens are cached (the supervisor's word): listen while they are.
  void want(bool wanted) {
    if (wanted_.exchange(wanted, std::memory_order_acq_rel) != wanted && wanted
        && start_listening_)
      start_listening_();
  }
  bool wanted() const { return wanted_.load(std::memory_order_acquire); }

  // Who is told of each notice (the supervisor, once it runs): called on the
  // listener's thread, it must not block.
  void on_notice(std::function<void()> tell) {
    std::lock_guard lock(mutex_);
    tell_ = std::move(tell);
  }

  // A notice heard: the revision grew since.
  void noticed() {
    count_.fetch_add(1, std::memory_order_acq_rel);
    std::function<void()> tell;
    {
      std::lock_guard lock(mutex_);
      tell = tell_;
    }
    if (tell)
      tell();
  }
  // Whether notices are heard: set when they start or stop arriving (either way,
  // what the cache read before is suspect, so it counts as a notice).
  void hearing(bool up) {
    hearing_.store(up, std::memory_order_release);
    noticed();
  }
  bool hearing() const { return hearing_.load(std::memory_order_acquire); }
  std::uint64_t count() const { return count_.load(std::memory_order_acquire); }

private:
  std::function<void()> start_listening_;
  std::mutex mutex_;
  std::function<void()> tell_; // under mutex_
  std::atomic<std::uint64_t> count_{0};
  std::atomic<bool> hearing_{false};
  std::atomic<bool> wanted_{false};
};

} // namespace receiptd::actors

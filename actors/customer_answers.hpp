#pragma once
// Customer answers given again (GET /client|/server/customers/{id}): a lookup
// costs a persistence worker's wake-up and a database round trip, while a
// customer's answer stays the same, but for requested_at, until something is
// written or one of its times passes (model::purchases::answer_same_until). The
// supervisor keeps the answers it gave and gives one again while
//  - no write that may change any customer's answer has happened since it was
//    read: this instance's persistence workers count theirs after the commit and
//    before the upload's answer is handed on (so an answer after an upload never
//    predates it); other instances' writes reach the count through the
//    database's notices (PostgreSQL LISTEN/NOTIFY: db/change_listener.hpp);
//  - those notices are heard: without them (SQLite, or the listening session
//    down) nothing is kept;
//  - its time has not come: now < same_until;
//  - the app's entitlement rules are the ones it was made with.
// Kept answers are bounded in bytes (db.customer-answer-bytes); when full,
// all are dropped.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/messages.hpp"

namespace receiptd::actors {

// What may have changed customers' answers, counted; shared by the threads that
// write (the persistence workers), the one that hears other instances' writes
// (db::change_listener) and the supervisor that reads it. Other instances' writes
// are listened for only while customers are looked up (a minute after the last
// lookup): an instance that only takes uploads pays nothing for them.
class customer_changes {
public:
  // How long after the last lookup other instances' writes are still listened for.
  static constexpr model::unix_ms listen_for_ms = 60'000;

  // `start_listening`: called (from the supervisor's thread) when a lookup finds
  // nobody listening; it must not block (it wakes the listener).
  explicit customer_changes(std::function<void()> start_listening = {})
    : start_listening_(std::move(start_listening)) {}

  // A customer lookup at `now` (the supervisor's clock).
  void asked(model::unix_ms now) {
    last_asked_.store(now, std::memory_order_relaxed);
    if (!hearing() && start_listening_ && !starting_.exchange(true, std::memory_order_acq_rel))
      start_listening_();
  }
  // Whether to keep listening at `now`: looked up within listen_for_ms.
  bool wanted(model::unix_ms now) const {
    auto last = last_asked_.load(std::memory_order_relaxed);
    return last != never && now - last < listen_for_ms;
  }

  std::uint64_t count() const { return count_.load(std::memory_order_acquire); }
  // After a write committed (or a notice of one, heard).
  void written() { count_.fetch_add(1, std::memory_order_acq_rel); }
  // Whether other instances' writes are heard: set when the database's notices
  // start or stop arriving (either way, what was read before is suspect).
  void hearing(bool up) {
    hearing_.store(up, std::memory_order_release);
    if (!up)
      starting_.store(false, std::memory_order_release); // the next lookup wakes it again
    written();
  }
  bool hearing() const { return hearing_.load(std::memory_order_acquire); }

private:
  static constexpr model::unix_ms never = INT64_MIN;
  std::function<void()> start_listening_;
  std::atomic<std::uint64_t> count_{0};
  std::atomic<bool> hearing_{false};
  std::atomic<bool> starting_{false};
  std::atomic<model::unix_ms> last_asked_{never};
};

// The supervisor's kept answers (one actor's state: not thread-safe).
class answer_cache {
public:
  explicit answer_cache(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // What an answer depends on besides the database and the time: the app, the
  // customer and environment as asked (undecoded), and the app's rules.
  struct key {
    std::string app_id;
    std::string user;
    std::string environment;
    bool operator==(const key&) const = default;
  };
  struct key_hash {
    std::size_t operator()(const key& k) const;
  };
  using rules_ptr = std::shared_ptr<const model::entitlements::matcher>;

  // The answer's body at `now`, when one is kept for `k`, made with `rules`,
  // read with nothing written since (`changes`: customer_changes::count() now),
  // and still the same at `now`.
  std::optional<std::string> find(const key& k, const rules_ptr& rules, std::uint64_t changes,
                                  model::unix_ms now);
  // Keeps `a` (asked with `changes_asked` counted and notices heard), unless
  // something was written since (`changes` now), it cannot be given again, or
  // it does not fit.
  void keep(key k, rules_ptr rules, std::uint64_t changes_asked, std::uint64_t changes,
            const customer_answer& a);

  std::size_t size() const { return kept_.size(); }
  std::size_t bytes() const { return bytes_; }

private:
  struct kept {
    rules_ptr rules;
    std::string head;
    model::unix_ms asked_at = 0;
    std::optional<model::unix_ms> same_until;
  };
  // Drops everything read before `changes`.
  void catch_up(std::uint64_t changes);

  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::uint64_t changes_ = 0; // the count every kept answer was read at
  std::unordered_map<key, kept, key_hash> kept_;
};

// The environment a lookup asks for, as sent (the first "environment" value;
// empty when absent).
std::string asked_environment(const std::vector<std::pair<std::string, std::string>>& query);

} // namespace receiptd::actors

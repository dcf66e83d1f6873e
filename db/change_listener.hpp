#pragma once
// Other instances' writes, heard: a PostgreSQL session of its own, on a thread
// of its own, that LISTENs on a channel the database notifies (when what customer
// answers show changes: db/sql_customers.hpp, sql::customer_changes; when apps,
// tokens or webhook endpoints change: db/sql_apps.hpp, sql::auth_revision), while
// it is wanted. It calls `noticed` for each batch of notices that arrive,
// `hearing(true)` once it listens and `hearing(false)` when it stops: it is no
// longer wanted (checked every 10 s and when woken), the database went away, or
// shutdown. While wanted and not listening it connects again every second; a
// silent connection is checked every 10 s (a peer that vanished is noticed then).

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace receiptd::db {

class change_listener {
public:
  struct callbacks {
    std::function<void()> noticed;
    std::function<void(bool)> hearing;
    std::function<bool()> wanted;
  };

  // What it listens for.
  enum class channel {
    customers, // what customer answers show (sql::customer_changes)
    auth,      // apps, tokens, webhook endpoints (sql::auth_revision)
  };

  // `url`: a "postgresql://…" connection string (db/url.hpp). The thread starts
  // at once and waits until it is woken and wanted.
  change_listener(std::string url, channel on, callbacks cb);
  ~change_listener(); // stops listening (hearing(false)) and joins the thread

  change_listener(const change_listener&) = delete;
  change_listener& operator=(const change_listener&) = delete;

  // From any thread, without blocking: look at `wanted` again now.
  void wake();

private:
  void run();
  void listen(); // one session, until it is lost, unwanted or stopped
  // Sleeps up to `ms` (-1: until woken) or until woken; false once stopped.
  bool pause(int ms);

  std::string conninfo_;
  const char* listen_;
  callbacks cb_;
  int wake_fd_ = -1; // an eventfd
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

} // namespace receiptd::db

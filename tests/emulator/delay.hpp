#pragma once
// Slow mode without a thread per request: reactor threads hand their response
// writer and computed reply to one timer thread, which keeps them in a min-heap
// by due time and sends each when it falls due. Thousands of pending responses
// cost memory only.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "http_util.hpp"

namespace Pistache::Http {
class ResponseWriter;
}

namespace receiptd::emulator {

class store_listener;

class delay_queue {
public:
  using clock = std::chrono::steady_clock;

  delay_queue();
  ~delay_queue(); // stops the thread; pending responses are dropped unsent
  delay_queue(const delay_queue&) = delete;
  delay_queue& operator=(const delay_queue&) = delete;

  // `writer` came from `via` while it was at `generation` (see store_listener).
  void schedule(clock::time_point due, store_listener& via, std::uint64_t generation,
                Pistache::Http::ResponseWriter writer, reply r);

  std::size_t pending() const;

private:
  struct item;
  struct later; // heap order: earliest due first, FIFO among equals
  void run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::unique_ptr<item>> heap_;
  std::uint64_t sequence_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace receiptd::emulator

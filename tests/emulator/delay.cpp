#include "delay.hpp"

#include <algorithm>

#include <pistache/http.h>

#include "listener.hpp"

namespace receiptd::emulator {

struct delay_queue::item {
  clock::time_point due;
  std::uint64_t sequence;
  store_listener* via;
  std::uint64_t generation;
  Pistache::Http::ResponseWriter writer;
  reply response;
};

struct delay_queue::later {
  bool operator()(const std::unique_ptr<item>& a, const std::unique_ptr<item>& b) const {
    return a->due != b->due ? a->due > b->due : a->sequence > b->sequence;
  }
};

delay_queue::delay_queue() : thread_([this] { run(); }) {}

delay_queue::~delay_queue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void delay_queue::schedule(clock::time_point due, store_listener& via, std::uint64_t generation,
                           Pistache::Http::ResponseWriter writer, reply r) {
  auto entry
    = std::unique_ptr<item>(new item{due, 0, &via, generation, std::move(writer), std::move(r)});
  bool earliest;
  {
    std::lock_guard lock(mutex_);
    entry->sequence = sequence_++;
    heap_.push_back(std::move(entry));
    std::push_heap(heap_.begin(), heap_.end(), later{});
    earliest = heap_.front()->sequence == sequence_ - 1;
  }
  // With one delay for everything the new entry is almost never the earliest:
  // the timer thread is woken only when its deadline moves forward.
  if (earliest)
    wake_.notify_one();
}

std::size_t delay_queue::pending() const {
  std::lock_guard lock(mutex_);
  return heap_.size();
}

void delay_queue::run() {
  std::vector<std::unique_ptr<item>> due;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (heap_.empty()) {
      wake_.wait(lock);
      continue;
    }
    auto now = clock::now();
    if (heap_.front()->due > now) {
      wake_.wait_until(lock, heap_.front()->due);
      continue;
    }
    while (!heap_.empty() && heap_.front()->due <= now) {
      std::pop_heap(heap_.begin(), heap_.end(), later{});
      due.push_back(std::move(heap_.back()));
      heap_.pop_back();
    }
    lock.unlock(); // sending must not block schedule() on the reactor threads
    for (auto& entry : due)
      entry->via->send_if_current(entry->generation, entry->writer, entry->response);
    due.clear();
    lock.lock();
  }
}

} // namespace receiptd::emulator

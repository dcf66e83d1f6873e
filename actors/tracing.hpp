#pragma once
// Spans: one line per actor hop (actor, message, start, duration, outcome) under
// the upload's trace id, appended as JSON lines to a file by a background thread
// (every second, or sooner when the buffer is half full or on flush()).
// Recording never blocks: a bounded buffer drops on overflow and counts the drops
// (logged as a warning at most once a minute, and in total when the tracer stops).
// Tracing off is a tracer like any other that records nothing (tracer::off()):
// code that records spans never asks whether tracing is on.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/messages.hpp"
#include "config/settings.hpp"
#include "model/clock.hpp"

namespace receiptd::actors {

struct span_record {
  std::string trace_id;
  std::uint64_t span_id = 0;
  std::uint64_t parent_id = 0;
  const char* actor = "";
  std::string message;
  std::int64_t start_us = 0; // unix time
  std::int64_t duration_us = 0;
  std::string outcome;
};

std::string to_json_line(const span_record& s);

class tracer {
public:
  // With settings.enabled false: records nothing, starts no thread, opens no file.
  // Spans are timed on `clock` (its wall clock for start times, its steady clock
  // for durations), as the rate of drop warnings.
  explicit tracer(config::trace_settings settings,
                  const model::time_source& clock = model::system_time());
  ~tracer(); // writes out what is buffered

  // A tracer that records nothing, for work outside any upload and for tests.
  static tracer& off();

  bool enabled() const { return settings_.enabled; }
  const model::time_source& clock() const { return *clock_; }
  void record(span_record s);
  std::uint64_t next_span_id() { return ++last_span_id_; }
  std::uint64_t dropped() const { return dropped_; }
  void flush(); // waits until everything recorded so far is written

private:
  void run();
  void report_drops(bool final);

  config::trace_settings settings_;
  const model::time_source* clock_;
  void open_file();
  void rotate_if_full();

  std::ofstream file_;
  std::uintmax_t file_bytes_ = 0;
  std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<span_record> buffer_;
  std::uint64_t written_ = 0, recorded_ = 0;
  std::size_t flush_requests_ = 0; // flush() calls waiting
  bool stop_ = false;
  std::atomic<std::uint64_t> last_span_id_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::uint64_t dropped_reported_ = 0; // writer thread only
  model::time_source::steady_time last_drop_report_{};
  std::thread writer_;
};

// A span in progress; recorded when it ends (destruction or end()). Movable, so
// an actor can keep one in its state across asynchronous steps.
class span {
public:
  span() = default;
  span(tracer& t, const trace_context& parent, const char* actor, std::string message);
  span(span&& other) noexcept;
  span& operator=(span&& other) noexcept;
  ~span() { end(); }

  void outcome(std::string text) { rec_.outcome = std::move(text); }
  // The context for messages this span causes.
  trace_context child() const { return {rec_.trace_id, rec_.span_id}; }
  void end();

private:
  tracer* tracer_ = nullptr; // null: ended, moved from, or tracing off
  span_record rec_;
  model::time_source::steady_time start_steady_{};
};

} // namespace receiptd::actors

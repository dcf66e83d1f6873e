#include "actors/tracing.hpp"

#include "actors/log.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "model/json_out.hpp"

namespace receiptd::actors {

namespace {

// A span id as 16 lower-case hex digits.
void append_hex_id(std::string& out, std::uint64_t id) {
  static constexpr char hex[] = "0123456789abcdef";
  char buf[16];
  for (int i = 15; i >= 0; --i, id >>= 4)
    buf[i] = hex[id & 15];
  out.append(buf, sizeof buf);
}

} // namespace

// The same text boost::json::serialize gives for the object {"trace_id", "span_id",
// "parent_id", "actor", "message", "start_us", "duration_us", "outcome"} (in that
// order), written straight into one string: the writer thread formats every span,
// and building a json::object per line cost more than everything else it does.
static void append_json_line(std::string& out, const span_record& s) {
  auto text = [&out](std::string_view key, std::string_view value) {
    out += key;
    model::json_out::append_string(out, value);
  };
  text("{\"trace_id\":", s.trace_id);
  out += ",\"span_id\":\"";
  append_hex_id(out, s.span_id);
  out += "\",\"parent_id\":\"";
  if (s.parent_id)
    append_hex_id(out, s.parent_id);
  out += '"';
  text(",\"actor\":", s.actor);
  text(",\"message\":", s.message);
  out += ",\"start_us\":";
  model::json_out::append_integer(out, s.start_us);
  out += ",\"duration_us\":";
  model::json_out::append_integer(out, s.duration_us);
  text(",\"outcome\":", s.outcome);
  out += '}';
}

std::string to_json_line(const span_record& s) {
  std::string out;
  append_json_line(out, s);
  return out;
}

tracer::tracer(config::trace_settings settings, const model::time_source& clock)
  : settings_(std::move(settings)), clock_(&clock) {
  if (!settings_.enabled)
    return;
  if (!settings_.file.empty())
    open_file();
  buffer_.reserve(1024);
  writer_ = std::thread([this] { run(); });
}

tracer::~tracer() {
  if (!writer_.joinable())
    return;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    stop_ = true;
  }
  cv_.notify_all();
  writer_.join();
  report_drops(true);
}

tracer& tracer::off() {
  static tracer none(config::trace_settings{.enabled = false, .file = "", .buffer = 1});
  return none;
}

// The README promises that dropped spans are counted: the count reaches the log
// when spans are dropped (at most once a minute) and when the tracer stops.
void tracer::report_drops(bool final) {
  auto dropped = dropped_.load();
  if (dropped == dropped_reported_)
    return;
  auto now = clock_->steady_now();
  if (!final && now - last_drop_report_ < std::chrono::minutes(1))
    return;
  log_warn("trace: " + std::to_string(dropped - dropped_reported_) + " spans dropped ("
           + std::to_string(dropped) + " in all): the buffer (trace.buffer="
           + std::to_string(settings_.buffer) + ") was full");
  dropped_reported_ = dropped;
  last_drop_report_ = now;
}

namespace {
// The writer takes the buffer this often, or at once when it is half full or
// someone flushes: recording a span wakes nobody. A futex wake per span, or per
// upload at a few uploads per second, costs more than formatting the lines (on
// these virtual machines a thread's wake-up costs ~100 µs of CPU when the machine
// is idle); once a second costs nothing worth counting, and spans are in the file
// within a second (receiptctl trace, flush() at shutdown).
constexpr auto write_interval = std::chrono::seconds(1);
} // namespace

void tracer::record(span_record s) {
  if (!settings_.enabled)
    return;
  bool wake = false;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    if (buffer_.size() >= settings_.buffer) {
      ++dropped_;
      return;
    }
    buffer_.push_back(std::move(s));
    ++recorded_;
    wake = buffer_.size() == std::max<std::size_t>(settings_.buffer / 2, 1);
  }
  if (wake)
    cv_.notify_all(); // all: flush() waits on the same condition variable
}

void tracer::flush() {
  if (!settings_.enabled)
    return;
  std::unique_lock<std::mutex> lock(mtx_);
  auto target = recorded_;
  ++flush_requests_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return written_ >= target || stop_; });
  --flush_requests_;
}

void tracer::open_file() {
  file_.open(settings_.file, std::ios::app);
  std::error_code ec;
  auto size = std::filesystem::file_size(settings_.file, ec);
  file_bytes_ = ec ? 0 : size;
}

// Bounded disk use: past max_file_bytes the file becomes FILE.1 (replacing the
// previous one) and a new file starts, so at most twice the limit is kept.
void tracer::rotate_if_full() {
  if (settings_.max_file_bytes == 0 || file_bytes_ < settings_.max_file_bytes)
    return;
  file_.close();
  std::error_code ec;
  std::filesystem::rename(settings_.file, settings_.file + ".1", ec);
  open_file();
}

void tracer::run() {
  std::vector<span_record> batch;
  std::string out;
  const auto half = std::max<std::size_t>(settings_.buffer / 2, 1);
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mtx_);
      cv_.wait_for(lock, write_interval, [&] {
        return stop_ || buffer_.size() >= half || (flush_requests_ > 0 && !buffer_.empty());
      });
      batch.swap(buffer_);
      if (batch.empty() && stop_)
        return;
    }
    report_drops(false);
    if (batch.empty())
      continue;
    out.clear();
    for (const auto& s : batch) {
      append_json_line(out, s);
      out += '\n';
    }
    if (file_.is_open()) {
      file_ << out;
      file_.flush();
      file_bytes_ += out.size();
      rotate_if_full();
    }
    if (settings_.log_spans)
      std::cerr << out;
    {
      std::lock_guard<std::mutex> guard(mtx_);
      written_ += batch.size();
    }
    cv_.notify_all();
    batch.clear();
  }
}

span::span(tracer& t, const trace_context& parent, const char* actor, std::string message)
  : tracer_(t.enabled() ? &t : nullptr) {
  rec_.trace_id = parent.trace_id;
  rec_.parent_id = parent.parent_span;
  if (!tracer_)
    return;
  rec_.span_id = tracer_->next_span_id();
  rec_.actor = actor;
  rec_.message = std::move(message);
  rec_.start_us = tracer_->clock().now_us();
  start_steady_ = tracer_->clock().steady_now();
}

span::span(span&& other) noexcept
  : tracer_(other.tracer_), rec_(std::move(other.rec_)), start_steady_(other.start_steady_) {
  other.tracer_ = nullptr;
}

span& span::operator=(span&& other) noexcept {
  if (this != &other) {
    end();
    tracer_ = other.tracer_;
    rec_ = std::move(other.rec_);
    start_steady_ = other.start_steady_;
    other.tracer_ = nullptr;
  }
  return *this;
}

void span::end() {
  if (!tracer_)
    return;
  rec_.duration_us = std::chrono::duration_cast<std::chrono::microseconds>(
                       tracer_->clock().steady_now() - start_steady_)
                       .count();
  tracer_->record(std::move(rec_));
  tracer_ = nullptr;
}

} // namespace receiptd::actors

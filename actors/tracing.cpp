#include "actors/tracing.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace receiptd::actors {

namespace {

std::int64_t unix_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

std::int64_t steady_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

std::string hex_id(std::uint64_t id) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

} // namespace

std::string to_json_line(const span_record& s) {
  boost::json::object o{{"trace_id", s.trace_id},
                        {"span_id", hex_id(s.span_id)},
                        {"parent_id", s.parent_id ? hex_id(s.parent_id) : ""},
                        {"actor", s.actor},
                        {"message", s.message},
                        {"start_us", s.start_us},
                        {"duration_us", s.duration_us},
                        {"outcome", s.outcome}};
  return boost::json::serialize(o);
}

tracer::tracer(config::trace_settings settings) : settings_(std::move(settings)) {
  if (!settings_.file.empty())
    file_.open(settings_.file, std::ios::app);
  buffer_.reserve(1024);
  writer_ = std::thread([this] { run(); });
}

tracer::~tracer() {
  {
    std::lock_guard<std::mutex> guard(mtx_);
    stop_ = true;
  }
  cv_.notify_all();
  writer_.join();
}

void tracer::record(span_record s) {
  {
    std::lock_guard<std::mutex> guard(mtx_);
    if (buffer_.size() >= settings_.buffer) {
      ++dropped_;
      return;
    }
    buffer_.push_back(std::move(s));
    ++recorded_;
  }
  cv_.notify_one();
}

void tracer::flush() {
  std::unique_lock<std::mutex> lock(mtx_);
  auto target = recorded_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return written_ >= target || stop_; });
}

void tracer::run() {
  std::vector<span_record> batch;
  std::string out;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mtx_);
      cv_.wait_for(lock, std::chrono::milliseconds(200),
                   [&] { return stop_ || !buffer_.empty(); });
      batch.swap(buffer_);
      if (batch.empty() && stop_)
        return;
    }
    out.clear();
    for (const auto& s : batch) {
      out += to_json_line(s);
      out += '\n';
    }
    if (file_.is_open()) {
      file_ << out;
      file_.flush();
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

span::span(tracer* t, const trace_context& parent, const char* actor, std::string message)
  : tracer_(t) {
  rec_.trace_id = parent.trace_id;
  rec_.parent_id = parent.parent_span;
  if (!tracer_)
    return;
  rec_.span_id = tracer_->next_span_id();
  rec_.actor = actor;
  rec_.message = std::move(message);
  rec_.start_us = unix_us();
  start_steady_us_ = steady_us();
}

span::span(span&& other) noexcept
  : tracer_(other.tracer_), rec_(std::move(other.rec_)),
    start_steady_us_(other.start_steady_us_) {
  other.tracer_ = nullptr;
}

span& span::operator=(span&& other) noexcept {
  if (this != &other) {
    end();
    tracer_ = other.tracer_;
    rec_ = std::move(other.rec_);
    start_steady_us_ = other.start_steady_us_;
    other.tracer_ = nullptr;
  }
  return *this;
}

void span::end() {
  if (!tracer_)
    return;
  rec_.duration_us = steady_us() - start_steady_us_;
  tracer_->record(std::move(rec_));
  tracer_ = nullptr;
}

} // namespace receiptd::actors

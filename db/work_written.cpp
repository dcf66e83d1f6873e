#include "db/work_written.hpp"

#include <utility>

namespace receiptd::db {

namespace {

thread_local work_written noted;

} // namespace

void note_work(work_kind kind, model::unix_ms due) {
  auto& times = noted.due[static_cast<std::size_t>(kind)];
  if (times.size() < max_noted_per_kind)
    times.push_back(due);
}

work_written take_work_written() {
  return std::exchange(noted, work_written{});
}

} // namespace receiptd::db

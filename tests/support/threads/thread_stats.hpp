#pragma once
// This process's threads by name, from /proc/self/task: how often they went to
// sleep and were woken (voluntary context switches) and whether they sleep now.
// For tests that assert which threads a piece of work wakes. Header-only: no
// library to link.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace receiptd::test {

// The /proc/self/task entries of this process's threads named `name`.
inline std::vector<std::filesystem::path> tasks_named(const std::string& name) {
  std::vector<std::filesystem::path> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string comm_name;
    if (std::getline(comm, comm_name) && comm_name == name)
      out.push_back(task.path());
  }
  return out;
}

// How often the threads named `name` went to sleep and were woken.
inline long wake_ups(const std::string& name) {
  long total = 0;
  for (const auto& task : tasks_named(name)) {
    std::ifstream status(task / "status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0)
        total += std::stol(line.substr(line.find(':') + 1));
  }
  return total;
}

// Whether every thread named `name` is asleep (state S) right now.
inline bool all_asleep(const std::string& name) {
  for (const auto& task : tasks_named(name)) {
    std::ifstream stat(task / "stat");
    std::string line;
    std::getline(stat, line);
    if (line.substr(line.rfind(')') + 2, 1) != "S") // after "pid (comm) "
      return false;
  }
  return true;
}

} // namespace receiptd::test

#pragma once
// A child process for the functional tests: the real receiptd, receiptctl and
// the store emulator, with output captured to a log file.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace receiptd::test {

class child_process {
public:
  // Starts `argv[0]` with `argv`; stdout and stderr go to `log_path`.
  child_process(std::vector<std::string> argv, std::string log_path, std::string working_dir = {});
  ~child_process(); // SIGKILL if still running

  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  void signal(int sig);
  // Waits for the exit; returns the exit status, or -1 on timeout.
  int wait(std::chrono::milliseconds timeout);
  std::string log() const;

private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::string log_path_;
};

struct run_result {
  int exit_code = -1;
  std::string out; // stdout
  std::string err; // stderr
};

// Runs a program to completion, capturing stdout and stderr.
run_result run_program(const std::vector<std::string>& argv,
                       std::chrono::milliseconds timeout = std::chrono::seconds(60),
                       const std::string& working_dir = {});

// A TCP port nobody listens on right now (bind to 0, read, close).
unsigned short free_port();

std::string make_temp_dir(const std::string& prefix);
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

// Polls `condition` until it holds or `timeout` passes; no fixed sleeps.
template <class F>
bool eventually(F condition, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    if (condition())
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    struct timespec ts {
      0, static_cast<long>(pause.count()) * 1000000L
    };
    nanosleep(&ts, nullptr);
    if (pause < std::chrono::milliseconds(100))
      pause *= 2;
  }
}

} // namespace receiptd::test

#include "process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace receiptd::test {

namespace {

pid_t spawn(const std::vector<std::string>& argv, int out_fd, int err_fd,
            const std::string& working_dir) {
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    throw std::runtime_error("fork failed");
  if (pid == 0) {
    // Dies with the test process, even when that one crashes or is killed.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    // The child must not inherit blocked signals from the test process.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!working_dir.empty() && chdir(working_dir.c_str()) != 0)
      _exit(126);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

} // namespace

child_process::child_process(std::vector<std::string> argv, std::string log_path,
                             std::string working_dir)
  : log_path_(std::move(log_path)) {
  int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0)
    throw std::runtime_error("cannot open " + log_path_);
  pid_ = spawn(argv, fd, fd, working_dir);
  close(fd);
}

child_process::~child_process() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
}

bool child_process::running() {
  if (pid_ <= 0 || status_ != -1)
    return false;
  int st = 0;
  auto r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return false;
  }
  return true;
}

void child_process::signal(int sig) {
  if (running())
    ::kill(pid_, sig);
}

int child_process::wait(std::chrono::milliseconds timeout) {
  eventually([&] { return !running(); }, timeout);
  return status_;
}

std::string child_process::log() const {
  return read_text(log_path_);
}

run_result run_program(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                       const std::string& working_dir) {
  char out_path[] = "/tmp/receiptd-run-out.XXXXXX";
  char err_path[] = "/tmp/receiptd-run-err.XXXXXX";
  int out = mkstemp(out_path);
  int err = mkstemp(err_path);
  pid_t pid = spawn(argv, out, err, working_dir);
  close(out);
  close(err);
  run_result r;
  int st = 0;
  bool done = eventually([&] { return waitpid(pid, &st, WNOHANG) == pid; }, timeout);
  if (!done) {
    ::kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
  }
  r.exit_code = done && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  unlink(out_path);
  unlink(err_path);
  return r;
}

unsigned short free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string make_temp_dir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + ".XXXXXX";
  if (!mkdtemp(tmpl.data()))
    throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

} // namespace receiptd::test

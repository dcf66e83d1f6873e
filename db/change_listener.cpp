#include "db/change_listener.hpp"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <memory>

#include "db/sql_apps.hpp"
#include "db/sql_customers.hpp"
#include "db/url.hpp"

namespace receiptd::db {

namespace {

constexpr int reconnect_ms = 1000;
constexpr int check_ms = 10000;
constexpr std::string_view prefix = "postgresql://";

struct pg_finish {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using conn_ptr = std::unique_ptr<PGconn, pg_finish>;

bool exec(PGconn* c, const char* sql) {
  PGresult* r = PQexec(c, sql);
  auto status = PQresultStatus(r);
  PQclear(r);
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

void drain(int fd) {
  std::uint64_t n = 0;
  [[maybe_unused]] auto got = read(fd, &n, sizeof n);
}

} // namespace

change_listener::change_listener(std::string url, channel on, callbacks cb)
  : listen_(on == channel::auth ? sql::auth_revision::listen : sql::customer_changes::listen),
    cb_(std::move(cb)), wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  auto full = with_connection_defaults(url);
  conninfo_ = full.rfind(prefix, 0) == 0 ? full.substr(prefix.size()) : full;
  thread_ = std::thread([this] { run(); });
}

change_listener::~change_listener() {
  stopping_ = true;
  wake();
  if (thread_.joinable())
    thread_.join();
  close(wake_fd_);
}

void change_listener::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = write(wake_fd_, &one, sizeof one);
}

bool change_listener::pause(int ms) {
  pollfd p{wake_fd_, POLLIN, 0};
  if (poll(&p, 1, ms) > 0)
    drain(wake_fd_);
  return !stopping_;
}

void change_listener::run() {
  while (pause(-1)) {
    while (!stopping_ && cb_.wanted()) {
      listen();
      cb_.hearing(false); // also after a failed attempt: the next lookup wakes it again
      if (!stopping_ && cb_.wanted() && !pause(reconnect_ms))
        break;
    }
  }
}

void change_listener::listen() {
  conn_ptr c(PQconnectdb(conninfo_.c_str()));
  if (PQstatus(c.get()) != CONNECTION_OK || !exec(c.get(), listen_))
    return;
  cb_.hearing(true);
  while (!stopping_) {
    pollfd p[2] = {{PQsocket(c.get()), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int ready = poll(p, 2, check_ms);
    if (stopping_)
      return;
    if (p[1].revents & POLLIN)
      drain(wake_fd_);
    if (ready == 0 || (p[1].revents & POLLIN)) {
      if (!cb_.wanted()) // nobody wants the notices any more
        return;
      if (ready == 0 && !exec(c.get(), sql::customer_changes::ping))
        return; // silence, and the database does not answer
    }
    if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && !PQconsumeInput(c.get()))
      return;
    bool any = false;
    while (PGnotify* n = PQnotifies(c.get())) {
      PQfreemem(n);
      any = true;
    }
    if (any)
      cb_.noticed();
    if (PQstatus(c.get()) != CONNECTION_OK)
      return;
  }
}

} // namespace receiptd::db

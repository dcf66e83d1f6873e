#pragma once
// A store's HTTP listener that can really go away (mode "down": new connections
// are refused and open ones closed) and come back on the same port.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace Pistache::Http {
class Endpoint;
class Handler;
class ResponseWriter;
} // namespace Pistache::Http

namespace receiptd::emulator {

struct reply;

struct listener_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0; // 0: pick a free port on the first open, keep it afterwards
  int threads = 2;
  std::size_t max_request_size = 16 * 1024 * 1024;
};

class store_listener {
public:
  explicit store_listener(listener_options options);
  ~store_listener();
  store_listener(const store_listener&) = delete;
  store_listener& operator=(const store_listener&) = delete;

  void set_handler(std::shared_ptr<Pistache::Http::Handler> handler);

  // Binds and serves; throws std::runtime_error when the port cannot be bound.
  void open();
  // Stops accepting, joins the reactor threads and closes every open connection.
  void close();
  bool is_open() const;
  std::uint16_t port() const { return port_; }

  // Bumped by every open and close. A writer taken while generation() was g
  // belongs to a live endpoint iff the listener is open and still at g.
  std::uint64_t generation() const { return generation_; }

  // Sends `r` through `writer` unless the endpoint that produced the writer is
  // gone (the writer would then point into freed Pistache objects). Safe from
  // any thread; false when dropped.
  bool send_if_current(std::uint64_t generation, Pistache::Http::ResponseWriter& writer,
                       const reply& r);

private:
  void close_connections() const;

  listener_options options_;
  std::shared_ptr<Pistache::Http::Handler> handler_;
  std::mutex switch_mutex_;        // serializes open/close
  mutable std::shared_mutex gate_; // held shared while sending from another thread
  std::unique_ptr<Pistache::Http::Endpoint> endpoint_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::uint16_t> port_{0};
};

} // namespace receiptd::emulator

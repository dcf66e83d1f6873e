#pragma once
// A store's HTTP/2 listener, beside its HTTP/1.1 one: the stores speak HTTP/2
// over TLS (PROTOCOL.md "HTTP/2"), and so does this one, offering only "h2" by
// ALPN; receiptd's default outbound.store-http-version=auto negotiates it.
// Not h2c (cleartext with prior knowledge): Debian 12's libcurl 7.88.1 fails
// every second call on such a connection (curl#10634, fixed in 8.0).
// nghttp2 frames the connections; one thread serves them all (epoll), answers
// through handle_store_request like the HTTP/1.1 listener, and keeps slow-mode
// answers in a timer heap. Like store_listener it can really go away ("down").

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "state.hpp"

typedef struct ssl_ctx_st SSL_CTX;

namespace receiptd::emulator {

// The emulator's TLS identity: a self-signed P-256 certificate for 127.0.0.1
// and localhost, made at start-up. Clients trust it through its PEM
// (GET /control/tls/certificate; receiptd: outbound.ca-file).
class tls_identity {
public:
  tls_identity(); // throws std::runtime_error when OpenSSL fails
  ~tls_identity();
  tls_identity(const tls_identity&) = delete;
  tls_identity& operator=(const tls_identity&) = delete;

  const std::string& certificate_pem() const { return pem_; }
  SSL_CTX* context() const { return ctx_; }

private:
  SSL_CTX* ctx_ = nullptr;
  std::string pem_;
};

struct h2_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0; // 0: pick a free port on the first open, keep it afterwards
  std::size_t max_request_size = 16 * 1024 * 1024; // headers + body; larger gets 413
  // SETTINGS_MAX_CONCURRENT_STREAMS (libcurl's own limit is 100 too).
  std::uint32_t max_concurrent_streams = 100;
  const tls_identity* tls = nullptr; // required
};

class h2_listener {
public:
  h2_listener(store_id store, emulator_state& state, h2_options options);
  ~h2_listener();
  h2_listener(const h2_listener&) = delete;
  h2_listener& operator=(const h2_listener&) = delete;

  // Binds and serves; throws std::runtime_error when the port cannot be bound.
  void open();
  // Stops accepting, closes every connection (pending slow answers are dropped).
  void close();
  bool is_open() const;
  std::uint16_t port() const { return port_; }
  // Connections accepted since start (clients that multiplex open few).
  std::uint64_t connections_accepted() const { return accepted_; }

private:
  struct loop;

  store_id store_;
  emulator_state* state_;
  h2_options options_;
  std::mutex switch_mutex_; // serializes open/close
  std::unique_ptr<loop> loop_;
  std::atomic<std::uint16_t> port_{0};
  std::atomic<bool> open_{false};
  std::atomic<std::uint64_t> accepted_{0};
};

} // namespace receiptd::emulator

#pragma once
// Outbound HTTP(S) to the stores: one libcurl multi handle carries every transfer
// (connection reuse, HTTP/2, TLS checks, timeouts come with it), driven by the
// client's thread ("outbound"). Callers on any thread submit; a call submitted
// while that thread waits is started by the caller itself. Completions run on
// whichever thread holds curl at the time (mostly the client's) and must only hand
// the result on (the store-client actors anon_send it).

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "http/turn_hook.hpp"
#include "model/url_policy.hpp"

namespace receiptd::http {

using model::http_version;

struct outbound_request {
  std::string method = "GET"; // "GET" or "POST"
  std::string url;
  // What the call is, for its span ("products", "verify_receipt"): spans name a
  // call by this and its URL's origin only (model::url_origin), never its path or
  // query.
  std::string label;
  std::vector<std::string> headers; // "Name: value"
  std::string body;
  std::chrono::milliseconds timeout{4000};
  // When set, the body sent is body + *shared_body + body_tail: a large payload (an
  // upload's receipt) is read from its owner's one copy instead of copied in. The
  // client lets go of it before the completion callback runs.
  std::shared_ptr<const std::string> shared_body;
  std::string body_tail;
  http_version version = http_version::automatic;

  std::size_t body_size() const {
    return body.size() + (shared_body ? shared_body->size() + body_tail.size() : 0);
  }
};

struct outbound_response {
  int status = 0; // 0: no HTTP answer; then `error` says why
  std::string body;
  std::string error;
  std::string content_type;
  std::string retry_after; // the Retry-After header, when the answer had one
};

// Where the store clients send their HTTP requests: the curl client below, or a
// test's fake that answers them when the test says so.
class outbound_transport {
public:
  using callback = std::function<void(outbound_response)>;
  virtual ~outbound_transport() = default;
  // Thread-safe and non-blocking: `done` runs once, on any thread.
  virtual void submit(outbound_request req, callback done) = 0;
};

// Submits every call through `inner` at one HTTP version (the store clients' calls
// at outbound.store-http-version; webhooks keep curl's choice).
class versioned_transport final : public outbound_transport {
public:
  versioned_transport(outbound_transport& inner, http_version version)
    : inner_(&inner), version_(version) {}
  void submit(outbound_request req, callback done) override {
    req.version = version_;
    inner_->submit(std::move(req), std::move(done));
  }

private:
  outbound_transport* inner_;
  http_version version_;
};

class outbound_client final : public outbound_transport {
public:
  struct options {
    std::string ca_file; // empty: the system's CA bundle
    std::chrono::milliseconds connect_timeout{2000};
    std::size_t max_connections_per_host = 0; // 0: unlimited
    // Open connections kept for reuse, idle or not (CURLMOPT_MAXCONNECTS). curl's
    // default, four per transfer in flight at the moment one ends, closed a
    // connection whenever the calls in flight dipped and opened another when they
    // rose again: one TCP handshake every ten calls at 16 uploads in flight. At
    // least the calls the store clients may have in flight (0: no bound).
    std::size_t max_open_connections = 8192;
    std::size_t max_response_bytes = 4 * 1024 * 1024;
    // Marks each round of the client's loop (calls started, answers handed on) as
    // a turn (null: none); it must outlive the client.
    turn_hook* turns = nullptr;
  };

  explicit outbound_client(options opts);
  ~outbound_client(); // stops the thread; pending transfers complete with an error

  outbound_client(const outbound_client&) = delete;
  outbound_client& operator=(const outbound_client&) = delete;

  void submit(outbound_request req, callback done) override;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace receiptd::http

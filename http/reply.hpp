#pragma once
// What the HTTP layer hands to the actors with each request, and the one-shot
// reply channel they answer through (from whichever thread holds it).

#include <memory>
#include <optional>
#include <string>

namespace receiptd::http {

enum class route {
  store_a_upload,        // POST /client/store_a/receipts
  store_b_upload,        // POST /client/store_b/purchase_orders
  store_b_legacy_upload, // POST /client/store_b/purchase_orders/legacy
  store_a_get,           // GET  /client/store_a/receipts/{id}
  store_b_get,           // GET  /client/store_b/purchase_orders/{id}
};

const char* to_string(route r);

struct inbound_request {
  route target = route::store_b_upload;
  std::string record_id;    // GET routes
  std::string token;        // the bearer token (syntax already checked)
  std::string body;
  std::string peer_ip;
  std::string trace_id;     // X-Request-Id, or one made up
};

struct reply {
  int status = 200;
  std::string body; // JSON
  std::optional<int> retry_after_seconds;
};

// Sends the response exactly once: later calls are ignored. Thread-safe.
class reply_sink {
public:
  virtual ~reply_sink() = default;
  // true when this call sent the response, false when one was sent before.
  virtual bool send(reply r) = 0;
  virtual bool sent() const = 0;
};

using reply_sink_ptr = std::shared_ptr<reply_sink>;

} // namespace receiptd::http

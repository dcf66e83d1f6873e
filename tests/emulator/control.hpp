#pragma once
// The control API (PROTOCOL.md "Control"): JSON in, JSON out, on its own port.

#include <array>
#include <mutex>
#include <string>

#include <pistache/http.h>

#include "state.hpp"

namespace receiptd::emulator {

class store_listener;
class h2_listener;

// What the control handler acts on; owned by main, shared by the handler's
// per-thread clones.
struct control_context {
  emulator_state* state = nullptr;
  std::array<store_listener*, 2> listeners{}; // indexed by store_id
  // Each store's HTTP/2 listener, when it has one: it goes down and comes back
  // with the store's HTTP/1.1 listener.
  std::array<h2_listener*, 2> h2{};
  std::string tls_certificate_pem; // GET /control/tls/certificate
  std::mutex switching;            // one mode change at a time
};

class control_handler : public Pistache::Http::Handler {
public:
  HTTP_PROTOTYPE(control_handler)

  explicit control_handler(control_context& context) : context_(&context) {}

  void onRequest(const Pistache::Http::Request& request,
                 Pistache::Http::ResponseWriter writer) override;

private:
  control_context* context_;
};

} // namespace receiptd::emulator

#pragma once
// The inbound HTTP side (Pistache): routes, bearer-token syntax, body size limit,
// trace ids and peer address. No business logic: each request is handed to the
// dispatch function (which only sends a message to the supervisor) together with
// a reply_sink, and answered later from whichever thread holds the sink.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "config/settings.hpp"
#include "http/admission.hpp"
#include "http/reply.hpp"
#include "http/turn_hook.hpp"

namespace receiptd::http {

class server {
public:
  using dispatch_fn = std::function<void(inbound_request, reply_sink_ptr)>;

  // `turns`: marks each reactor's handling of a client's input as a turn (null:
  // none); `gate`: the body budget and what is known of credentials, by which a
  // request is judged once its headers are in (null: no budget beyond
  // http.max-body-bytes per request, no credential known). Both must outlive the
  // server.
  server(config::http_settings settings, dispatch_fn dispatch, turn_hook* turns = nullptr,
         const admission* gate = nullptr);
  ~server();

  // Binds and starts the reactor threads; returns the bound port.
  std::uint16_t start();
  // Client connections open at once at most: http.max-connections, lowered by
  // start() when two descriptors per connection do not fit the open-file limit.
  std::size_t max_connections() const;

  // New requests get 503 from now on; in-flight ones still get their answer.
  void begin_draining();
  // Requests handed to the actors and not yet answered.
  std::size_t in_flight() const;
  void stop();

  struct shared_state;

private:
  std::shared_ptr<shared_state> state_;
  struct endpoint_holder;
  std::unique_ptr<endpoint_holder> endpoint_;
};

} // namespace receiptd::http

#pragma once
// The webhook receiver (PROTOCOL.md "Webhook receiver"): named endpoints on the
// control port that take receiptd's webhook deliveries, record each
// exactly as it came, and answer as told: a status, late, or never (hang).

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <pistache/http.h>

#include <boost/json/object.hpp>

namespace receiptd::emulator {

struct control_context;
class delay_queue;
class store_listener;

// How an endpoint answers (POST /control/webhooks/{name}/mode).
struct webhook_mode {
  int status = 200;
  int delay_ms = 0;
  bool hang = false;        // never answer: the sender's timeout decides
  std::optional<int> times; // requests left in this mode, then back to the default (200)
};

class webhook_receiver {
public:
  // `via`: the control port's listener, which the receiver's answers go out on.
  explicit webhook_receiver(store_listener& via);
  ~webhook_receiver(); // drops unanswered (hanging, delayed) requests unsent
  webhook_receiver(const webhook_receiver&) = delete;
  webhook_receiver& operator=(const webhook_receiver&) = delete;

  // Serves /webhooks/{name} and /control/webhooks/{name}[/mode]. False when the
  // path is none of them: `writer` is then untouched.
  bool serve(const Pistache::Http::Request& request, Pistache::Http::ResponseWriter& writer);

  // Forgets every endpoint: deliveries, modes, hanging requests (/control/reset).
  void reset();

private:
  struct delivery {
    std::string method, path;
    boost::json::object headers; // lower-case names
    std::string body;
    std::optional<int> status_answered; // none: hung
    std::int64_t at_ms = 0;             // arrival, unix ms
  };
  struct endpoint {
    webhook_mode mode;
    std::deque<delivery> deliveries; // oldest first, at most max_deliveries
    // Requests told to hang: held, never answered, until clear, reset or exit.
    std::deque<Pistache::Http::ResponseWriter> hanging;
  };

  void receive(const std::string& name, const Pistache::Http::Request& request,
               Pistache::Http::ResponseWriter& writer);
  boost::json::object endpoint_json(const std::string& name);

  store_listener& via_;
  std::unique_ptr<delay_queue> delays_;
  std::mutex mutex_;
  std::map<std::string, endpoint> endpoints_;
};

// The control port's handler: the webhook receiver's paths first, then the
// control API (control.hpp). POST /control/reset resets the receiver too.
class control_port_handler : public Pistache::Http::Handler {
public:
  HTTP_PROTOTYPE(control_port_handler)

  control_port_handler(control_context& context, webhook_receiver& receiver)
    : context_(&context), receiver_(&receiver) {}

  void onRequest(const Pistache::Http::Request& request,
                 Pistache::Http::ResponseWriter writer) override;

private:
  control_context* context_;
  webhook_receiver* receiver_;
};

} // namespace receiptd::emulator

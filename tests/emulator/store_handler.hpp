#pragma once
// The HTTP/1.1 handler behind each store listener (handle_store_request below).
// Runs on Pistache reactor threads; never blocks (slow mode hands the writer to
// the delay queue).

#include <pistache/http.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "http_util.hpp"
#include "state.hpp"

namespace receiptd::emulator {

// A store request as either listener (HTTP/1.1 or h2c) received it.
struct store_request {
  std::string method;                       // "GET", "POST", …
  std::string path;                         // without the query
  std::map<std::string, std::string> query; // percent-decoded, '+' as a space
  std::string authorization;                // the Authorization header, or ""
  std::string body;
  // orders.batchGet's orderIds, each one: the h2 listener reads every repeated
  // orderIds; the HTTP/1.1 one only the first (Pistache 0.0.5 keeps one value
  // of a repeated parameter), read as a comma list too.
  std::vector<std::string> order_ids;
};

// What to answer, and after how long (slow mode).
struct handled {
  reply response;
  std::optional<std::chrono::milliseconds> delay;
};

// Applies the store's mode (PROTOCOL.md "Modes"), counts and logs the call, and
// routes it to Store A or Store B. Thread-safe; never blocks.
handled handle_store_request(store_id store, emulator_state& state, const store_request& request);

class delay_queue;
class store_listener;

class store_handler : public Pistache::Http::Handler {
public:
  HTTP_PROTOTYPE(store_handler)

  store_handler(store_id store, emulator_state& state, delay_queue& delays,
                store_listener& listener)
    : store_(store), state_(&state), delays_(&delays), listener_(&listener) {}

  void onRequest(const Pistache::Http::Request& request,
                 Pistache::Http::ResponseWriter writer) override;

private:
  store_id store_;
  emulator_state* state_;
  delay_queue* delays_;
  store_listener* listener_;
};

} // namespace receiptd::emulator

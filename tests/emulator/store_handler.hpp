#pragma once
// The HTTP handler behind each store listener: applies the store's mode
// (PROTOCOL.md "Modes"), counts and logs the call, and routes it to Store A or
// Store B. Runs on Pistache reactor threads; never blocks (slow mode hands the
// writer to the delay queue).

#include <pistache/http.h>

#include "state.hpp"

namespace receiptd::emulator {

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

#include "actors/outbound_calls.hpp"

namespace receiptd::actors {

void store_failure_log::note(const store_call& call, const http::outbound_response& r) {
  auto outcome = outcome_of(r);
  std::string what;
  switch (outcome) {
    case call_outcome::error:
      what = "no answer (" + (r.error.empty() ? std::string("no detail") : r.error) + ")";
      break;
    case call_outcome::unavailable:
      what = "HTTP " + std::to_string(r.status);
      break;
    case call_outcome::bad_answer:
      what = "HTTP " + std::to_string(r.status) + " with an HTML page, not the store's answer";
      break;
    case call_outcome::ok:
    case call_outcome::refused: // a verdict, or credentials the clients log themselves
      return;
  }
  auto kind = std::string(to_string(outcome));
  lines_.warn(call.store + "/" + kind,
              call.store + " " + call.call + " call failed: " + what
                + "; retried later (an upload meanwhile is stored pending: 206)",
              log_context{}
                .with("store", call.store)
                .with("call", call.call)
                .with("outcome", kind)
                .with("http_status", std::int64_t{r.status}));
}

} // namespace receiptd::actors

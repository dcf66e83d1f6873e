#include "actors/operational_handler.hpp"

#include <caf/event_based_actor.hpp>

#include "actors/operational.hpp"

namespace receiptd::actors {

namespace {

// Prometheus' text exposition format, version 0.0.4.
constexpr std::string_view prometheus_text = "text/plain; version=0.0.4; charset=utf-8";

void scrape(caf::event_based_actor* self, inbound in, validator_deps_ptr deps) {
  if (!deps->instruments->may_scrape(in.request.token)) {
    in.reply->send(http::error_reply(
      {model::errc::unauthorized, "metrics need the bearer token of metrics.token"}));
    return;
  }
  // The operational actor answers within operational_deadline and a rendering.
  self->request(deps->operational, 2 * operational_deadline, scrape_atom_v)
    .then(
      [=](std::string& text) {
        in.reply->send(http::reply{200, std::move(text), std::nullopt, prometheus_text});
      },
      [=](caf::error& e) {
        in.reply->send(http::error_reply(
          {model::errc::internal_error, "the metrics could not be rendered: " + failure_text(e)}));
      });
}

void not_ready(const inbound& in, std::string reason) {
  in.reply->send(http::error_reply({model::errc::not_ready, std::move(reason)}));
}

void check_ready(caf::event_based_actor* self, inbound in, validator_deps_ptr deps) {
  if (!deps->trust)
    return not_ready(in, "the Store A trust material is not loaded (store-a.trust-roots)");
  self->request(deps->operational, 2 * operational_deadline, ready_atom_v)
    .then(
      [=](std::int32_t missing) {
        if (missing > 0)
          return not_ready(in,
                           "the database schema lacks " + std::to_string(missing)
                             + " of this build's migrations (a receiptd of this version "
                               "applies them when it starts)");
        in.reply->send(http::reply{200, R"({"status":"ready"})"});
        return;
      },
      [=](caf::error& e) { not_ready(in, "database unreachable: " + failure_text(e)); });
}

} // namespace

void handle_operational(caf::event_based_actor* self, inbound in, validator_deps_ptr deps) {
  switch (in.request.target) {
    case http::route::metrics:
      return scrape(self, std::move(in), std::move(deps));
    case http::route::ready:
      return check_ready(self, std::move(in), std::move(deps));
    default:
      // Liveness and the OpenAPI document are the HTTP layer's own answers.
      in.reply->send(http::error_reply({model::errc::not_found, "no such resource"}));
      return;
  }
}

} // namespace receiptd::actors

#include "actors/operational_handler.hpp"

#include <caf/event_based_actor.hpp>

#include <algorithm>

#include "actors/log.hpp"

namespace receiptd::actors {

namespace {

// Prometheus' text exposition format, version 0.0.4.
constexpr std::string_view prometheus_text = "text/plain; version=0.0.4; charset=utf-8";

// What a database failure says (actors/persistence_worker.hpp: db_failure), or
// that it did not answer in time.
std::string why(const caf::error& e) {
  if (e == caf::sec::request_timeout)
    return "no answer within " + std::to_string(operational_deadline.count()) + " s";
  const auto& context = e.context();
  if (!context.match_elements<std::string>())
    return caf::to_string(e);
  std::string_view text = context.get_as<std::string>(0);
  constexpr std::string_view prefix = "database: "; // db_failure's; the caller says so
  if (text.starts_with(prefix))
    text.remove_prefix(prefix.size());
  return std::string(text);
}

void answer_metrics(const inbound& in, const validator_deps& deps) {
  auto text = deps.instruments->exposition({.spans_dropped = deps.trace->dropped()});
  in.reply->send(http::reply{200, std::move(text), std::nullopt, prometheus_text});
}

void scrape(caf::event_based_actor* self, inbound in, validator_deps_ptr deps) {
  if (!deps->instruments->may_scrape(in.request.token)) {
    in.reply->send(http::error_reply(
      {model::errc::unauthorized, "metrics need the bearer token of metrics.token"}));
    return;
  }
  self->request(deps->persistence, operational_deadline, queue_figures_atom_v)
    .then(
      [=](db::job_queue_figures& q) {
        auto& m = *deps->instruments;
        m.queue_due.set(static_cast<double>(q.due));
        m.queue_leased.set(static_cast<double>(q.leased));
        m.queue_scheduled.set(static_cast<double>(q.scheduled));
        auto waited = q.oldest_due_at ? deps->clock->now_ms() - *q.oldest_due_at : 0;
        m.queue_oldest_due_age.set(static_cast<double>(std::max<model::unix_ms>(waited, 0))
                                   / 1000.0);
        m.webhook_pending.set(static_cast<double>(q.webhook_pending));
        auto lag
          = q.webhook_oldest_pending_at ? deps->clock->now_ms() - *q.webhook_oldest_pending_at : 0;
        m.webhook_oldest_pending_age.set(static_cast<double>(std::max<model::unix_ms>(lag, 0))
                                         / 1000.0);
        answer_metrics(in, *deps);
      },
      [=](caf::error& e) {
        deps->instruments->queue_read_errors.add();
        log_warn("metrics: the revalidation queue figures could not be read: " + why(e));
        answer_metrics(in, *deps);
      });
}

void not_ready(const inbound& in, std::string reason) {
  in.reply->send(http::error_reply({model::errc::not_ready, std::move(reason)}));
}

void check_ready(caf::event_based_actor* self, inbound in, validator_deps_ptr deps) {
  if (!deps->trust)
    return not_ready(in, "the Store A trust material is not loaded (store-a.trust-roots)");
  self->request(deps->persistence, operational_deadline, ready_atom_v)
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
      [=](caf::error& e) { not_ready(in, "database unreachable: " + why(e)); });
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

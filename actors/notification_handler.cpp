#include "actors/notification_handler.hpp"

#include <caf/event_based_actor.hpp>

#include <boost/json/serialize.hpp>

#include "actors/log.hpp"
#include "model/store_a/notification_verify.hpp"
#include "model/upload_request.hpp"

namespace receiptd::actors {

namespace {

struct notification_run {
  inbound in;
  validator_deps_ptr deps;
  span root;
};
using run_ptr = std::shared_ptr<notification_run>;

void answer(notification_run& r, http::reply reply) {
  r.root.outcome(std::to_string(reply.status));
  r.root.end();
  r.in.reply->send(std::move(reply));
}

void answer_error(notification_run& r, const model::error& e) {
  answer(r, http::error_reply(e));
}

void storage_failed(notification_run& r, const caf::error& e, const char* what) {
  log_error(std::string("store notification: ") + what + " failed: " + caf::to_string(e));
  answer_error(r, {model::errc::storage_unavailable, "the record store is unavailable"});
}

void apply(caf::event_based_actor* self, run_ptr r, const model::app& app,
           model::store_a::verified_notification v) {
  auto type = v.n.type;
  self
    ->request(r->deps->persistence, caf::infinite, apply_atom_v, r->root.child(), app.id,
              std::move(v))
    .then(
      [=](notification_result& done) {
        boost::json::object body{
          {"status", done.duplicate ? "duplicate" : "applied"},
          {"notification_type", type},
          {"records_changed", done.records_changed},
        };
        answer(*r, {200, boost::json::serialize(body)});
      },
      [=](caf::error& e) { storage_failed(*r, e, "saving"); });
}

} // namespace

void handle_store_a_notification(caf::event_based_actor* self, inbound in,
                                 validator_deps_ptr deps) {
  auto& d = *deps;
  span root(*d.trace, {in.request.trace_id, 0}, "notification", "store_a");
  auto r = std::make_shared<notification_run>(
    notification_run{std::move(in), std::move(deps), std::move(root)});
  auto payload = model::parse_store_a_notification_request(r->in.request.body);
  if (!payload)
    return answer_error(*r, payload.err());
  auto jws = std::make_shared<std::string>(std::move(payload).value());
  self->request(d.persistence, caf::infinite, find_app_atom_v, r->in.request.record_id)
    .then(
      [=](std::optional<model::app>& app) {
        // By id only: find_app also matches names, which a URL must not rely on.
        if (!app || app->id != r->in.request.record_id)
          return answer_error(*r, {model::errc::not_found, "no such app"});
        auto v = model::store_a::verify_notification(*jws, *r->deps->trust, app->bundle_id);
        if (!v) {
          log_info("store notification refused for app " + app->id + ": " + v.err().message());
          return answer_error(*r, v.err());
        }
        apply(self, r, *app, std::move(v).value());
      },
      [=](caf::error& e) { storage_failed(*r, e, "finding the app"); });
}

} // namespace receiptd::actors

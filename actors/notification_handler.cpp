#include "actors/notification_handler.hpp"

#include <caf/event_based_actor.hpp>

#include <boost/json/serialize.hpp>

#include "actors/app_context.hpp"
#include "actors/log.hpp"
#include "model/encoding.hpp"
#include "model/store_a/notification_verify.hpp"
#include "model/store_b/rtdn.hpp"
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

// Said longer ago than notifications.max-age: a replay of an old notification
// (Apple's and Google's retries end within days) is recorded, never applied.
bool too_old(const notification_run& r, std::optional<model::unix_ms> said_at) {
  const auto& d = *r.deps;
  return said_at && *said_at < d.clock->now_ms() - d.settings.notification_max_age.count();
}

// Every line about a notification goes through the handlers' shared limiter
// (validator_deps::notification_log): anyone can send notifications, forged
// ones included, and a flood of them must not flood the log. `subject` says
// which lines count together (a kind of event for one app).
void log_limited(const notification_run& r, log_level level, const std::string& subject,
                 const std::string& text) {
  r.deps->notification_log->log(level, subject, text);
}

// A notification refused before anything is applied: a line per app and store
// at most once a minute, with the number of the others.
void log_refused(const notification_run& r, const char* store, const std::string& app_id,
                 const std::string& why) {
  log_limited(r, log_level::info, std::string("refused ") + store + " " + app_id,
              "store notification refused for app " + app_id + ": " + why);
}

void storage_failed(notification_run& r, const caf::error& e, const char* what) {
  log_limited(r, log_level::error, std::string("storage ") + what,
              std::string("store notification: ") + what + " failed: " + caf::to_string(e));
  answer_error(r, {model::errc::storage_unavailable, "the record store is unavailable"});
}

void apply(caf::event_based_actor* self, run_ptr r, const model::app& app,
           model::store_a::verified_notification v) {
  auto type = v.n.type;
  const bool record_only = v.record_only;
  self
    ->request(r->deps->persistence, caf::infinite, apply_atom_v, r->root.child(), app.id,
              std::move(v))
    .then(
      [=](notification_result& done) {
        // "recorded": kept, but too old to change anything (notifications.max-age).
        boost::json::object body{
          {"status", done.duplicate ? "duplicate" : record_only ? "recorded" : "applied"},
          {"notification_type", type},
          {"records_changed", done.records_changed},
        };
        answer(*r, {200, boost::json::serialize(body)});
      },
      [=](caf::error& e) { storage_failed(*r, e, "saving"); });
}

// ---- Store B: Google Play real-time developer notifications ------------------

using rtdn_ptr = std::shared_ptr<const model::store_b::rtdn>;

// Records the push (once per messageId) with `updated`, the purchase order as
// the Play Developer API has it now (none: recorded only), and answers after
// the commit, as the App Store's are answered: "recorded" when `record_only`
// (older than notifications.max-age: kept, too old to change anything).
void record(caf::event_based_actor* self, run_ptr r, const model::app& app, rtdn_ptr n,
            std::optional<model::purchase_order_record> updated, bool record_only = false) {
  self
    ->request(r->deps->persistence, caf::infinite, apply_atom_v, r->root.child(), app.id, *n,
              std::move(updated))
    .then(
      [=](notification_result& done) {
        // notification_subtype: Play's name of the notificationType, else its
        // number; an unknown kind's key; null for the kinds without types.
        auto subtype = model::store_b::notification_type_name(*n);
        auto fallback = model::store_b::notification_subtype(*n);
        boost::json::value subtype_json = nullptr;
        if (!subtype.empty())
          subtype_json = subtype;
        else if (!fallback.empty())
          subtype_json = fallback;
        boost::json::object body{
          {"status", done.duplicate ? "duplicate" : record_only ? "recorded" : "applied"},
          {"notification_type", model::store_b::to_string(n->kind)},
          {"notification_subtype", std::move(subtype_json)},
          {"records_changed", done.records_changed},
        };
        answer(*r, {200, boost::json::serialize(body)});
      },
      [=](caf::error& e) { storage_failed(*r, e, "saving"); });
}

// Nothing is recorded: the push is answered 503 and Pub/Sub redelivers it later
// (with its own backoff), when the store may answer.
void store_unreachable(notification_run& r, const std::string& app_id, const std::string& detail) {
  log_limited(r, log_level::warn, "play unreachable " + app_id,
              "store notification for app " + app_id + ": the Play Developer API did not answer ("
                + detail + "); Pub/Sub will redeliver");
  answer_error(
    r, {model::errc::store_unavailable, "the Play Developer API did not answer; retry later"});
}

// The notification is not signed: what it says is only which purchase to look
// at again. The Play Developer API's answer lands on the stored purchase order
// the way a revalidation's would (model::apply_store_verdict), except that only
// a confirmed answer changes it: a rejection never turns a record into fraud
// on the word of an unauthenticated push, it is recorded and logged.
void ask_play(caf::event_based_actor* self, run_ptr r, const model::app& app, rtdn_ptr n,
              model::purchase_order_record stored) {
  const auto& d = *r->deps;
  auto api = model::store_b::asks_subscriptions(*n) ? model::store_b::purchase_api::subscriptions_v2
                                                    : model::store_b::purchase_api::products;
  store_b_check check{r->root.child(),
                      make_app_context(app),
                      stored.package_name,
                      stored.purchase_token,
                      stored.purchase, // its product id: the record's, not the push's
                      api,
                      false,
                      d.clock->steady_now() + d.settings.store_deadline};
  auto shared = std::make_shared<model::purchase_order_record>(std::move(stored));
  self->request(d.store_b, answered_by_deadline, check_atom_v, std::move(check))
    .then(
      [=](store_b_answer& a) {
        switch (a.verdict.outcome) {
          case model::store_outcome::confirmed: {
            auto updated = *shared;
            updated.purchase = std::move(a.purchase);
            model::apply_store_verdict(updated, a.verdict);
            // A voided purchase notification: what the answer confirms of it.
            model::store_b::apply_voided_notification(updated.purchase, *n,
                                                       r->deps->clock->now_ms());
            return record(self, r, app, n, std::move(updated));
          }
          case model::store_outcome::rejected:
            log_limited(*r, log_level::warn, "play unknown " + app.id,
                        "store notification " + n->message_id
                          + ": the Play Developer API does not know purchase order " + shared->id
                          + " (" + a.verdict.detail
                          + "); recorded, the purchase order is left as it is");
            return record(self, r, app, n, std::nullopt);
          case model::store_outcome::unreachable:
            return store_unreachable(*r, app.id, a.verdict.detail);
        }
      },
      [=](caf::error& e) {
        store_unreachable(
          *r, app.id, e == caf::sec::request_timeout ? "store deadline passed" : caf::to_string(e));
      });
}

void handle_rtdn(caf::event_based_actor* self, run_ptr r, const model::app& app, rtdn_ptr n) {
  if (!model::rtdn_token_matches(app, r->in.request.token)) {
    log_refused(*r, "store_b", app.id, "wrong or missing ?token=");
    return answer_error(*r, wrong_push_token());
  }
  r->in.request.credential_verified();
  if (const auto& keys = r->deps->rtdn_oidc_keys) {
    auto verified = model::store_b::verify_push_token(r->in.request.push_bearer, *keys,
                                                      r->deps->rtdn_oidc, r->deps->clock->now_ms());
    if (!verified && verified.err().code() != model::errc::unauthorized)
      return answer_error(*r, verified.err()); // ours (out of memory), not the push's
    if (!verified) {
      log_refused(*r, "store_b", app.id,
                  r->in.request.push_bearer.empty() ? std::string("no Pub/Sub OIDC token")
                                                    : verified.err().message());
      return answer_error(*r,
                          {model::errc::unauthorized,
                           "the push carries no valid Pub/Sub OIDC token "
                           "(Authorization: Bearer, store-b.rtdn-oidc-*)"});
    }
  }
  if (n->package_name != app.package_name) {
    log_refused(*r, "store_b", app.id, "it is for package " + n->package_name.substr(0, 256));
    return answer_error(
      *r, {model::errc::unauthorized, "the notification is for another package than this app's"});
  }
  // A test notification, a pending refund review, a kind receiptd does not
  // know: nothing to look at again, recorded (and acknowledged) only.
  if (!model::store_b::names_purchase(*n))
    return record(self, r, app, n, std::nullopt);
  if (too_old(*r, n->event_time))
    return record(self, r, app, n, std::nullopt, true);
  self
    ->request(r->deps->persistence, caf::infinite, find_order_atom_v, r->root.child(), app.id,
              n->purchase_token)
    .then(
      [=](std::optional<model::purchase_order_record>& stored) {
        // A purchase nobody uploaded (yet): there is nothing to update; the
        // upload, when it comes, asks the store itself.
        if (!stored)
          return record(self, r, app, n, std::nullopt);
        // A proof that failed its own local check (forged signature, another
        // package) stays as it was judged: the store confirming the token does not
        // make that upload's data genuine.
        if (model::rejected_locally(stored->state, stored->fraud))
          return record(self, r, app, n, std::nullopt);
        ask_play(self, r, app, n, std::move(*stored));
      },
      [=](caf::error& e) { storage_failed(*r, e, "finding the purchase order"); });
}

} // namespace

model::error no_such_app() {
  return {model::errc::not_found, "no such app"};
}

model::error wrong_push_token() {
  return {model::errc::unauthorized,
          "the push URL's token is not this app's (receiptctl app rtdn-url)"};
}

void handle_store_b_notification(caf::event_based_actor* self, inbound in,
                                 validator_deps_ptr deps) {
  auto& d = *deps;
  span root(*d.trace, {in.request.trace_id, 0}, "notification", "store_b");
  auto r = std::make_shared<notification_run>(
    notification_run{std::move(in), std::move(deps), std::move(root)});
  auto parsed = model::store_b::parse_rtdn_push(r->in.request.body);
  if (!parsed)
    return answer_error(*r, parsed.err());
  r->in.request.body.clear();
  auto n = std::make_shared<const model::store_b::rtdn>(std::move(parsed).value());
  self->request(d.persistence, caf::infinite, find_app_atom_v, r->in.request.record_id)
    .then(
      [=](std::optional<model::app>& app) {
        // By id only: find_app also matches names, which a URL must not rely on.
        if (!app || app->id != r->in.request.record_id)
          return answer_error(*r, no_such_app());
        handle_rtdn(self, r, *app, n);
      },
      [=](caf::error& e) { storage_failed(*r, e, "finding the app"); });
}

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
          return answer_error(*r, no_such_app());
        r->in.request.credential_verified();
        auto v = model::store_a::verify_notification(*jws, *r->deps->trust, app->bundle_id);
        if (!v) {
          log_refused(*r, "store_a", app->id, v.err().message());
          return answer_error(*r, v.err());
        }
        v->record_only = too_old(*r, v->n.signed_date);
        apply(self, r, *app, std::move(v).value());
      },
      [=](caf::error& e) { storage_failed(*r, e, "finding the app"); });
}

} // namespace receiptd::actors

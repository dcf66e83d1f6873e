// POST /server/customers/{user_identifier}/restore: a customer's App Store
// purchases rebuilt from one of their transactions. The body's transaction
// (a signed one is verified first, like an upload) names the customer's
// transaction history at Apple (Get Transaction History v2, every page); each
// entry, verified like an upload, becomes the customer's transaction record as
// its upload would (model/store_a/transaction_record.hpp), confirmed by Apple's
// answer; the records are saved all or none, and the answer is the customer's
// (GET /server/customers/{user_identifier}).

#include <caf/event_based_actor.hpp>

#include <utility>

#include "actors/app_context.hpp"
#include "actors/log.hpp"
#include "actors/validator_steps.hpp"
#include "model/purchases/requests.hpp"
#include "model/store_a/history.hpp"
#include "model/store_a/transaction_record.hpp"

namespace receiptd::actors::steps {

namespace {

namespace mp = model::purchases;
namespace sa = model::store_a;

// The body's transaction, once checked: its id, and where Apple is asked first.
struct restore_start {
  std::string user;
  std::string user_param; // as the path has it (the customer answer decodes it itself)
  std::string transaction_id;
  bool sandbox_first = false;
  const char* field = "transaction_id"; // what a 422 about it names
};

model::result<restore_start> start_of(upload_run& u) {
  auto user = mp::user_identifier_param(u.in.request.params.at(0));
  auto body = mp::parse_restore_request(std::exchange(u.in.request.body, {}));
  model::field_errors errors;
  for (const auto* e : {user.ok() ? nullptr : &user.err(), body.ok() ? nullptr : &body.err()})
    if (e)
      errors.insert(errors.end(), e->fields().begin(), e->fields().end());
  if (!errors.empty())
    return model::error(std::move(errors));
  const auto& app = u.app->app;
  if (app.bundle_id.empty())
    return model::error(model::errc::app_not_configured,
                        "this app has no Store A bundle id; set it with receiptctl app update");
  restore_start s;
  s.user = *user;
  s.user_param = u.in.request.params.at(0);
  if (body->transaction_id) {
    s.transaction_id = *body->transaction_id;
    return s;
  }
  // A signed transaction is checked as its upload would be, before Apple is asked.
  s.field = "signed_transaction";
  auto v = sa::verify_jws(*body->signed_transaction, *u.deps->trust);
  if (v.internal_error) {
    log_warn("StoreKit 2 verification failed internally: " + v.detail);
    return model::error(model::errc::internal_error,
                        "the transaction could not be checked; retry later");
  }
  model::store_a_transaction_upload upload;
  upload.signed_transaction = *body->signed_transaction;
  auto r = sa::make_record(upload, app, v, u.in.request.peer_ip, u.started_at);
  if (r.state == model::validation_state::rejected)
    return model::error(model::field_errors{
      {"signed_transaction", std::string(model::to_string(r.fraud)), r.store_detail}});
  if (r.env == model::environment::xcode)
    return model::error(model::field_errors{
      {"signed_transaction", "xcode_transaction",
       "an Xcode StoreKit test transaction has no history at the App Store"}});
  s.transaction_id = r.transaction.transaction_id;
  s.sandbox_first = r.env != model::environment::production;
  return s;
}

// A store that did not answer, or whose answer was unusable: 503, asked again
// after its Retry-After when it gave one, else after the code's.
http::reply store_unavailable(const upload_run& u, const model::store_verdict& v) {
  auto reply = http::error_reply(
    {model::errc::store_unavailable,
     "the App Store did not answer with the customer's transaction history; nothing was "
     "restored, retry later"});
  if (v.retry_not_before) {
    auto wait_ms = std::max<model::unix_ms>(*v.retry_not_before - u.deps->clock->now_ms(), 0);
    reply.retry_after_seconds = static_cast<int>(std::max<model::unix_ms>((wait_ms + 999) / 1000, 1));
  }
  return reply;
}

// Each verified entry as the customer's upload of it, confirmed by the history.
std::vector<model::transaction_record> records_of(const upload_run& u, const restore_start& s,
                                                  const std::vector<std::string>& history,
                                                  model::environment env) {
  model::store_verdict confirmed;
  confirmed.outcome = model::store_outcome::confirmed;
  confirmed.env = env;
  confirmed.detail = "confirmed by the App Store's transaction history";
  std::vector<model::transaction_record> out;
  out.reserve(history.size());
  for (const auto& jws : history) {
    model::store_a_transaction_upload upload;
    upload.signed_transaction = jws;
    upload.common.user_identifier = s.user;
    auto v = sa::verify_jws(jws, *u.deps->trust);
    auto r = sa::make_record(upload, u.app->app, v, u.in.request.peer_ip, u.started_at);
    model::apply_store_verdict(r, confirmed);
    r.terms.announce = u.app->app.has_webhooks;
    out.push_back(std::move(r));
  }
  return out;
}

void save_restored(caf::event_based_actor* self, upload_ptr u, const restore_start& s,
                   std::vector<model::transaction_record> records, model::environment env) {
  resource_request r;
  r.target = http::route::server_customer_restore;
  r.app_id = u->app->app.id;
  r.id = s.user_param;
  r.query = {{"environment", std::string(model::to_string(env))}};
  r.rules = u->app->entitlements().matcher;
  r.restored = std::move(records);
  self->request(u->deps->persistence, caf::infinite, resource_atom_v, u->root.child(), std::move(r))
    .then([u](http::reply& answer_) { answer(*u, std::move(answer_)); },
          [u](caf::error&) {
            answer_error(*u, {model::errc::storage_unavailable,
                              "the purchase store is unavailable; nothing was restored"});
          });
}

} // namespace

void restore_customer(caf::event_based_actor* self, upload_ptr u) {
  auto started = start_of(*u);
  if (!started)
    return answer_error(*u, started.err());
  auto s = std::move(started).value();
  store_a_transaction_check check{u->root.child(), u->app, s.transaction_id, s.sandbox_first,
                                  u->deps->clock->steady_now() + u->deps->settings.store_deadline};
  self->request(u->deps->store_a, answered_by_deadline, history_atom_v, std::move(check))
    .then(
      [self, u, s](store_a_history_answer& a) {
        if (a.verdict.outcome == model::store_outcome::rejected)
          return answer_error(*u, model::error(model::field_errors{
                                    {s.field, "unknown_transaction",
                                     "the App Store knows no such transaction of this app"}}));
        if (a.verdict.outcome != model::store_outcome::confirmed)
          return answer(*u, store_unavailable(*u, a.verdict));
        auto verified
          = sa::verified_history(a.signed_transactions, u->app->app.bundle_id, a.env, *u->deps->trust);
        if (!verified) {
          log_warn("restore of app " + u->app->app.id + ", history of transaction "
                   + s.transaction_id + ": App Store Server API answer unusable: "
                   + verified.err().message());
          return answer(*u, store_unavailable(*u, model::unreachable_verdict("unusable")));
        }
        auto env = a.env.value_or(verified->empty() ? model::environment::production
                                                     : verified->front().env);
        save_restored(self, u, s, records_of(*u, s, a.signed_transactions, env), env);
      },
      [u](caf::error& e) { answer(*u, store_unavailable(*u, deadline_verdict(e))); });
}

} // namespace receiptd::actors::steps

#include "actors/store_a_client.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <cctype>
#include <unordered_map>

#include "actors/log.hpp"
#include "actors/outbound_calls.hpp"
#include "model/retry_after.hpp"
#include "model/store_a/app_transaction.hpp"
#include "model/store_a/history.hpp"
#include "model/purchases/refund_request.hpp"
#include "model/store_a/server_api.hpp"
#include "model/store_a/verify_receipt_api.hpp"

namespace receiptd::actors {

namespace {

using model::store_a::verify_endpoint;

// An App Store Server API JWT, made once and used until shortly before it
// expires (one ES256 signature per app every jwt_lifetime − jwt_renew_margin).
struct cached_jwt {
  std::string value;
  model::unix_ms expires_at = 0;
};
constexpr std::chrono::seconds jwt_lifetime = std::chrono::minutes(30);
constexpr std::chrono::milliseconds jwt_renew_margin = std::chrono::minutes(5);

// The instruments of the client's calls (receiptd_store_*{store="store_a"}).
struct call_metrics {
  const store_call* verify_receipt = nullptr;
  const store_call* transaction_info = nullptr;
  const store_call* subscription_statuses = nullptr;
  const store_call* transaction_history = nullptr;
  const metrics::store_client_gauges* gauges = nullptr;
  const store_call* consumption = nullptr;
  const store_call* app_transaction_info = nullptr;
};

struct state {
  config::store_a_settings settings;
  const model::time_source* clock = &model::system_time(); // never null
  outbound_calls calls;
  call_metrics measured; // set when the behaviour starts
  log_limiter warnings;  // operator problems: loud, but once a minute per app
  std::unordered_map<std::string, cached_jwt> jwts; // by jwt_key
  static inline const char* name = "store-a-client";
};

using pointer = store_a_client_actor::stateful_pointer<state>;

store_a_client_actor handle(pointer self) {
  return caf::actor_cast<store_a_client_actor>(self);
}

using deliver_fn = std::function<void(store_a_answer)>;

// Every call's answer is counted before it is classified (outbound_calls::counted).
outbound_calls::continuation counted(pointer self, const store_call& call,
                                     outbound_calls::continuation k) {
  return self->state.calls.counted(call, std::move(k));
}

// The client's gauges, after each message it handled (calls start and end only there).
void publish(pointer self) {
  self->state.calls.publish(*self->state.measured.gauges, self->mailbox().size());
}

bool is_base64_text(const std::string& s) {
  for (unsigned char ch : s)
    if (!std::isalnum(ch) && ch != '+' && ch != '/' && ch != '=')
      return false;
  return true;
}

// verifyReceipt's body, sending the receipt from the upload's own copy: the body is
// built by the model around a marker, and the receipt is read in its place as curl
// sends. Canonical base64 needs no JSON escaping, so the bytes sent are exactly
// what verify_receipt_body would have written. A receipt stored before uploads
// were normalised may hold line breaks: that one is built whole.
void set_body(http::outbound_request& req, const store_a_check& c, bool exclude_old) {
  if (!is_base64_text(*c.receipt_data)) {
    req.body = model::store_a::verify_receipt_body(*c.receipt_data, c.password, exclude_old);
    return;
  }
  constexpr std::string_view marker = "<receipt>"; // not base64, not escaped by JSON
  auto body = model::store_a::verify_receipt_body(marker, c.password, exclude_old);
  auto at = body.find(marker); // "receipt-data" is the first member written
  req.body = body.substr(0, at);
  req.shared_body = c.receipt_data;
  req.body_tail = body.substr(at + marker.size());
}

void ask(pointer self, std::shared_ptr<store_a_check> c, verify_endpoint at, bool flipped,
         deliver_fn deliver) {
  const auto& s = self->state.settings;
  http::outbound_request req;
  req.method = "POST";
  req.url = at == verify_endpoint::sandbox ? s.sandbox_url : s.production_url;
  req.label = "verify_receipt";
  req.headers = {"Content-Type: application/json", "Accept: application/json"};
  set_body(req, *c, s.exclude_old_transactions);
  req.timeout = s.timeout;
  self->state.calls.submit(
    handle(self), c->trace, "store-a-client", std::move(req),
    counted(self, *self->state.measured.verify_receipt,
            [=](http::outbound_response& r) {
              auto a = model::store_a::classify_verify_receipt(r.status, r.body, r.error, at);
              a.verdict.said_at = self->state.clock->now_ms(); // verifyReceipt signs no date
              model::honour_retry_after(a.verdict, r.status, r.retry_after, *a.verdict.said_at);
              if (a.retry_on && !flipped) {
                ask(self, c, *a.retry_on, true, deliver);
                return;
              }
              c->receipt_data.reset(); // back to the validator before it hears the answer
              auto purchases = c->in_app;
              if (a.verdict.outcome == model::store_outcome::confirmed)
                model::store_a::enrich_in_app(purchases, r.body);
              if (a.verdict.operator_problem)
                self->state.warnings.warn(
                  c->app_id,
                  "verifyReceipt refused app " + c->app_id + ": " + a.verdict.detail
                    + " — check the app's shared secret (receiptctl app update)");
              deliver(store_a_answer{std::move(a.verdict), std::move(purchases)});
            }),
    c->deadline);
}

// ---- App Store Server API ------------------------------------------------

model::store_verdict operator_problem(std::string detail) {
  model::store_verdict v;
  v.outcome = model::store_outcome::unreachable;
  v.operator_problem = true;
  v.detail = std::move(detail);
  return v;
}

// Everything the JWT says: a change of key, issuer or bundle makes a new one.
std::string jwt_key(const app_context& app) {
  const auto& key = *app.server_api_key;
  return app.app.id + '\n' + key.key_id() + '\n' + key.issuer_id() + '\n' + app.app.bundle_id;
}

const std::string& jwt_for(pointer self, const app_context& app) {
  auto& entry = self->state.jwts[jwt_key(app)];
  auto now = self->state.clock->now_ms();
  if (entry.value.empty() || now + jwt_renew_margin.count() >= entry.expires_at) {
    entry.value = app.server_api_key->make_jwt(now, app.app.bundle_id, jwt_lifetime);
    entry.expires_at = now + std::chrono::milliseconds(jwt_lifetime).count();
  }
  return entry.value;
}

// One App Store Server API call (Get Transaction Info, Get All Subscription
// Statuses): where it goes and how its answer reads.
template <class Answer>
struct server_api_call {
  const char* label;                         // in its span
  const store_call* call_metrics::*measured; // its instruments in state::measured
  std::string (*url)(std::string_view base_url, std::string_view transaction_id);
  Answer (*classify)(int http_status, std::string_view body, std::string_view transport_error,
                     std::string_view retry_after_header, model::unix_ms now);
};

constexpr server_api_call<model::store_a::transaction_info_answer> transaction_info{
  "transaction_info", &call_metrics::transaction_info, &model::store_a::transaction_info_url,
  &model::store_a::classify_transaction_info};
// Get App Transaction Info (App Store Server API 1.17): its own answer, the
// same host selection, JWT and sandbox fallback as Get Transaction Info.
constexpr server_api_call<model::store_a::app_transaction_info_answer> app_transaction_info{
  "app_transaction_info", &call_metrics::app_transaction_info,
  &model::store_a::app_transaction_info_url, &model::store_a::classify_app_transaction_info};
constexpr server_api_call<model::store_a::subscription_statuses_answer> subscription_statuses{
  "subscription_statuses", &call_metrics::subscription_statuses,
  &model::store_a::subscription_statuses_url, &model::store_a::classify_subscription_statuses};

// A call at one host; a transaction unknown there is asked of the other host
// once (a sandbox purchase uploaded as production, or the reverse).
template <class Answer>
void ask_server_api(pointer self, std::shared_ptr<store_a_transaction_check> c,
                    server_api_call<Answer> call, bool sandbox, bool flipped,
                    std::function<void(Answer)> deliver) {
  const auto& s = self->state.settings;
  const auto& app = *c->app;
  http::outbound_request req;
  req.url = call.url(sandbox ? s.server_api_sandbox_url : s.server_api_url, c->transaction_id);
  req.label = call.label;
  req.headers = {"Authorization: Bearer " + jwt_for(self, app), "Accept: application/json"};
  req.timeout = s.timeout;
  self->state.calls.submit(
    handle(self), c->trace, "store-a-client", std::move(req),
    counted(self, *(self->state.measured.*call.measured),
            [=](http::outbound_response& r) {
              auto a = call.classify(r.status, r.body, r.error, r.retry_after,
                                     self->state.clock->now_ms());
              if (a.transaction_not_found && !flipped) {
                ask_server_api(self, c, call, !sandbox, true, deliver);
                return;
              }
              if (a.verdict.operator_problem) {
                self->state.jwts.erase(jwt_key(*c->app)); // made afresh next time
                self->state.warnings.warn(
                  c->app->app.id,
                  "App Store Server API refused app " + c->app->app.id + ": " + a.verdict.detail
                    + " — check its issuer id, key id and in-app purchase key "
                      "(receiptctl app update)");
              }
              if (a.verdict.outcome == model::store_outcome::confirmed && !a.verdict.env)
                a.verdict.env
                  = sandbox ? model::environment::sandbox : model::environment::production;
              deliver(std::move(a));
            }),
    c->deadline);
}

// Get Transaction History, page after page at the host that knew the
// transaction (a transaction unknown there is asked of the other host once, on
// the first page only), until hasMore is false; `got` holds the pages read so
// far. Any page that is not confirmed ends it with that page's verdict: the
// caller acts on the whole history or not at all.
void ask_history(pointer self, std::shared_ptr<store_a_transaction_check> c, bool sandbox,
                 bool flipped, std::string revision, std::size_t pages,
                 std::shared_ptr<store_a_history_answer> got,
                 std::function<void(store_a_history_answer)> deliver) {
  const auto& s = self->state.settings;
  http::outbound_request req;
  req.url = model::store_a::transaction_history_url(
    sandbox ? s.server_api_sandbox_url : s.server_api_url, c->transaction_id, revision);
  req.label = "transaction_history";
  req.headers = {"Authorization: Bearer " + jwt_for(self, *c->app), "Accept: application/json"};
  req.timeout = s.timeout;
  self->state.calls.submit(
    handle(self), c->trace, "store-a-client", std::move(req),
    counted(self, *self->state.measured.transaction_history,
            [=](http::outbound_response& r) {
              auto page = model::store_a::classify_transaction_history(
                r.status, r.body, r.error, r.retry_after, self->state.clock->now_ms());
              if (page.transaction_not_found && !flipped && pages == 0) {
                ask_history(self, c, !sandbox, true, {}, 0, got, deliver);
                return;
              }
              if (page.verdict.operator_problem) {
                self->state.jwts.erase(jwt_key(*c->app));
                self->state.warnings.warn(
                  c->app->app.id,
                  "App Store Server API refused app " + c->app->app.id + ": " + page.verdict.detail
                    + " — check its issuer id, key id and in-app purchase key "
                      "(receiptctl app update)");
              }
              if (page.verdict.outcome != model::store_outcome::confirmed) {
                deliver(store_a_history_answer{std::move(page.verdict), {}, {}});
                return;
              }
              auto env = page.env ? *page.env
                                  : (sandbox ? model::environment::sandbox
                                             : model::environment::production);
              if (got->env && *got->env != env) {
                deliver(store_a_history_answer{
                  model::unreachable_verdict("transaction history pages name different "
                                             "environments"),
                  {},
                  {}});
                return;
              }
              got->env = env;
              for (auto& t : page.signed_transactions)
                got->signed_transactions.push_back(std::move(t));
              if (page.has_more) {
                if (pages + 1 >= model::store_a::max_history_pages || page.revision == revision) {
                  deliver(store_a_history_answer{
                    model::unreachable_verdict("transaction history does not end"), {}, {}});
                  return;
                }
                ask_history(self, c, sandbox, flipped, page.revision, pages + 1, got, deliver);
                return;
              }
              page.verdict.env = env;
              got->verdict = std::move(page.verdict);
              deliver(std::move(*got));
            }),
    c->deadline);
}

// Send Consumption Information (App Store Server API 1.19): 202 Accepted is
// the answer taken; anything else is the caller's to judge by its status.
void send_consumption(pointer self, store_refund_answer& a,
                      caf::typed_response_promise<store_refund_reply> rp) {
  const auto& s = self->state.settings;
  if (!a.app->server_api_key) {
    rp.deliver(store_refund_reply{0, "app " + a.app->app.id
                                       + " has no usable App Store Server API credentials",
                                  std::nullopt});
    return;
  }
  http::outbound_request req;
  req.method = "PUT";
  req.url = model::purchases::store_a_consumption_url(
    a.sandbox ? s.server_api_sandbox_url : s.server_api_url, a.key);
  req.label = "consumption";
  req.headers = {"Authorization: Bearer " + jwt_for(self, *a.app), "Content-Type: application/json",
                 "Accept: application/json"};
  req.body = std::move(a.body);
  req.timeout = s.timeout;
  auto app_id = a.app->app.id;
  auto app = a.app;
  self->state.calls.submit(
    handle(self), a.trace, "store-a-client", std::move(req),
    counted(self, *self->state.measured.consumption,
            [=](http::outbound_response& r) mutable {
              if (r.status == 401)
                self->state.jwts.erase(jwt_key(*app)); // made afresh next time
              store_refund_reply reply;
              reply.status = r.status;
              reply.detail = r.status == 0 ? r.error
                                           : "HTTP " + std::to_string(r.status) + " "
                                               + r.body.substr(0, 200);
              reply.not_before
                = model::retry_not_before(r.status, r.retry_after, self->state.clock->now_ms());
              rp.deliver(std::move(reply));
            }),
    a.deadline);
}

// The verdict when the app cannot call the Server API at all (logged once a
// minute per app); none when it can.
std::optional<model::store_verdict> without_credentials(pointer self, const app_context& app) {
  if (app.server_api_key)
    return std::nullopt;
  auto why = "app " + app.app.id + " has no usable App Store Server API credentials"
    + (app.server_api_problem.empty() ? std::string() : " (" + app.server_api_problem + ")");
  self->state.warnings.warn(app.app.id, why);
  return operator_problem(why);
}

store_a_client_actor::behavior_type store_a_client(pointer self, config::store_a_settings settings,
                                                   http::outbound_transport* client, tracer* trace,
                                                   const model::time_source* clock,
                                                   metrics* instruments) {
  self->state.measured = {&instruments->store_call_of("store_a", "verify_receipt"),
                          &instruments->store_call_of("store_a", "transaction_info"),
                          &instruments->store_call_of("store_a", "subscription_statuses"),
                          &instruments->store_call_of("store_a", "transaction_history"),
                          &instruments->store_client("store_a"),
                          &instruments->store_call_of("store_a", "consumption"),
                          &instruments->store_call_of("store_a", "app_transaction_info")};
  self->state.calls
    = outbound_calls(*client, settings.max_concurrent, *trace, *clock, settings.max_queued);
  self->state.warnings = log_limiter(*clock);
  self->state.clock = clock;
  self->state.settings = std::move(settings);
  return {
    [=](check_atom, store_a_check& check) -> caf::typed_response_promise<store_a_answer> {
      auto rp = self->make_response_promise<store_a_answer>();
      auto c = std::make_shared<store_a_check>(std::move(check));
      auto first = c->sandbox_first ? verify_endpoint::sandbox : verify_endpoint::production;
      ask(self, c, first, false, [rp](store_a_answer a) mutable { rp.deliver(std::move(a)); });
      publish(self);
      return rp;
    },
    [=](check_atom, store_a_transaction_check& check)
      -> caf::typed_response_promise<store_a_transaction_answer> {
      auto rp = self->make_response_promise<store_a_transaction_answer>();
      auto c = std::make_shared<store_a_transaction_check>(std::move(check));
      if (auto refused = without_credentials(self, *c->app)) {
        rp.deliver(store_a_transaction_answer{std::move(*refused), {}});
        return rp;
      }
      ask_server_api<model::store_a::transaction_info_answer>(
        self, c, transaction_info, c->sandbox_first, false,
        [rp](model::store_a::transaction_info_answer a) mutable {
          rp.deliver(
            store_a_transaction_answer{std::move(a.verdict), std::move(a.signed_transaction_info)});
        });
      publish(self);
      return rp;
    },
    [=](app_transaction_atom, store_a_transaction_check& check)
      -> caf::typed_response_promise<store_a_transaction_answer> {
      auto rp = self->make_response_promise<store_a_transaction_answer>();
      auto c = std::make_shared<store_a_transaction_check>(std::move(check));
      if (auto refused = without_credentials(self, *c->app)) {
        rp.deliver(store_a_transaction_answer{std::move(*refused), {}});
        return rp;
      }
      ask_server_api<model::store_a::app_transaction_info_answer>(
        self, c, app_transaction_info, c->sandbox_first, false,
        [rp](model::store_a::app_transaction_info_answer a) mutable {
          rp.deliver(store_a_transaction_answer{std::move(a.verdict),
                                                std::move(a.signed_app_transaction_info)});
        });
      publish(self);
      return rp;
    },
    [=](refresh_atom,
        store_a_transaction_check& check) -> caf::typed_response_promise<store_a_statuses_answer> {
      auto rp = self->make_response_promise<store_a_statuses_answer>();
      auto c = std::make_shared<store_a_transaction_check>(std::move(check));
      if (auto refused = without_credentials(self, *c->app)) {
        rp.deliver(store_a_statuses_answer{std::move(*refused), {}});
        return rp;
      }
      ask_server_api<model::store_a::subscription_statuses_answer>(
        self, c, subscription_statuses, c->sandbox_first, false,
        [rp](model::store_a::subscription_statuses_answer a) mutable {
          rp.deliver(store_a_statuses_answer{std::move(a.verdict), std::move(a.entries)});
        });
      publish(self);
      return rp;
    },
    [=](history_atom,
        store_a_transaction_check& check) -> caf::typed_response_promise<store_a_history_answer> {
      auto rp = self->make_response_promise<store_a_history_answer>();
      auto c = std::make_shared<store_a_transaction_check>(std::move(check));
      if (auto refused = without_credentials(self, *c->app)) {
        rp.deliver(store_a_history_answer{std::move(*refused), {}, {}});
        return rp;
      }
      ask_history(self, c, c->sandbox_first, false, {}, 0,
                  std::make_shared<store_a_history_answer>(),
                  [rp](store_a_history_answer a) mutable { rp.deliver(std::move(a)); });
      publish(self);
      return rp;
    },
    [=](refund_atom, store_refund_answer& a) -> caf::typed_response_promise<store_refund_reply> {
      auto rp = self->make_response_promise<store_refund_reply>();
      send_consumption(self, a, rp);
      publish(self);
      return rp;
    },
    [=](http_done_atom, http_done& done) {
      self->state.calls.on_done(handle(self), done);
      publish(self);
    },
    [=](tick_atom) {
      self->state.calls.on_tick(handle(self));
      publish(self);
    },
  };
}

} // namespace

store_a_client_actor spawn_store_a_client(caf::actor_system& sys,
                                          const config::store_a_settings& settings,
                                          http::outbound_transport& client, tracer& trace,
                                          const model::time_source& clock, metrics& instruments) {
  return sys.spawn(store_a_client, settings, &client, &trace, &clock, &instruments);
}

} // namespace receiptd::actors

#include "actors/store_b_client.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <unordered_map>

#include "actors/log.hpp"
#include "actors/outbound_calls.hpp"
#include "model/purchases/refund_request.hpp"
#include "model/retry_after.hpp"
#include "model/store_b/orders.hpp"
#include "model/store_b/voided.hpp"
#include "model/url_policy.hpp"

namespace receiptd::actors {

namespace {

using model::store_outcome;
using model::store_verdict;
using model::store_b::purchase_api;

store_verdict operator_problem(std::string detail) {
  store_verdict v;
  v.outcome = store_outcome::unreachable;
  v.operator_problem = true;
  v.detail = std::move(detail);
  return v;
}

// One access token per (app, service account); callers arriving while it is
// being fetched wait for that fetch instead of starting their own.
struct token_entry {
  std::string value;
  model::unix_ms expires_at = 0;
  bool fetching = false;
  // Called with the token, or with the verdict that explains why there is none.
  std::vector<std::function<void(const std::string*, const store_verdict&)>> waiters;
};

// The instruments of the client's calls (receiptd_store_*{store="store_b"}).
struct call_metrics {
  const store_call* token = nullptr;
  const store_call* products = nullptr;
  const store_call* products_v2 = nullptr;
  const store_call* subscriptions_v2 = nullptr;
  const store_call* orders = nullptr;
  const store_call* acknowledge = nullptr;
  const store_call* voided_purchases = nullptr;
  const metrics::store_client_gauges* gauges = nullptr;
  const store_call* review_refund = nullptr;
};

struct state {
  config::store_b_settings settings;
  bool allow_http = false;
  const model::time_source* clock = &model::system_time(); // never null
  outbound_calls calls;
  call_metrics measured; // set when the behaviour starts
  std::unordered_map<std::string, token_entry> tokens;
  // Products whose purchases productsv2 answered 404 for and products.get
  // confirmed (package '\n' product id → until when): asked of products.get
  // first meanwhile, rather than paying a 404 per upload.
  std::unordered_map<std::string, model::unix_ms> v1_products;
  // Packages whose orders orders.get refused (403) or did not know (404) at an
  // upload (package → until when): their orders are left to the batched
  // orders sweep meanwhile instead of costing a call per upload.
  std::unordered_map<std::string, model::unix_ms> orders_by_sweep;
  log_limiter warnings; // operator problems: loud, but once a minute per app
  static inline const char* name = "store-b-client";

  model::unix_ms now_ms() const { return clock->now_ms(); }
};

using pointer = store_b_client_actor::stateful_pointer<state>;
// A strong handle for the curl thread to send completions to.
store_b_client_actor handle(pointer self) {
  return caf::actor_cast<store_b_client_actor>(self);
}

using waiter = std::function<void(const std::string*, const store_verdict&)>;

// Every call's answer is counted before it is classified (outbound_calls::counted).
outbound_calls::continuation counted(pointer self, const store_call* call,
                                     outbound_calls::continuation k) {
  return self->state.calls.counted(*call, std::move(k));
}

// The client's gauges, after each message it handled (calls start and end only there).
void publish(pointer self) {
  self->state.calls.publish(*self->state.measured.gauges, self->mailbox().size());
}

std::string token_key(const app_context& app) {
  return app.app.id + '\n' + app.service_account->client_email();
}

void fetch_token(pointer self, const trace_context& ctx, app_context_ptr app) {
  auto key = token_key(*app);
  const auto& account = *app->service_account;
  if (!model::store_url_allowed(account.token_uri(), self->state.allow_http)) {
    // The signed assertion must not travel in clear, nor the token come back so.
    auto failure = operator_problem("the service account of app " + app->app.id
                                    + " has a token_uri that is not https: "
                                    + model::url_origin(account.token_uri()).substr(0, 200)
                                    + "/… (outbound.allow-http allows http)");
    self->state.warnings.warn(app->app.id, failure.detail);
    auto& entry = self->state.tokens[key];
    auto waiters = std::move(entry.waiters);
    entry.waiters.clear();
    for (auto& w : waiters)
      w(nullptr, failure);
    return;
  }
  http::outbound_request req;
  req.method = "POST";
  req.url = account.token_uri();
  req.label = "token";
  req.headers = {"Content-Type: application/x-www-form-urlencoded", "Accept: application/json"};
  req.body = account.token_request_body(self->state.now_ms());
  req.timeout = self->state.settings.timeout;
  self->state.tokens[key].fetching = true;
  self->state.calls.submit(
    handle(self), ctx, "store-b-client", std::move(req),
    counted(self, self->state.measured.token, [self, key, app](http::outbound_response& r) {
      auto& entry = self->state.tokens[key];
      entry.fetching = false;
      auto waiters = std::move(entry.waiters);
      entry.waiters.clear();
      auto token = model::store_b::parse_token_response(r.status, r.body, self->state.now_ms());
      store_verdict failure;
      if (token) {
        entry.value = token->value;
        entry.expires_at = token->expires_at;
      } else if (r.status == 0 || r.status >= 500 || r.status == 429) {
        failure.outcome = store_outcome::unreachable;
        failure.detail = "token endpoint unreachable: "
          + (r.status ? "HTTP " + std::to_string(r.status) : r.error);
      } else {
        // The credentials were refused: an operator problem, never the buyer's.
        failure
          = operator_problem("token endpoint refused the service account of app " + app->app.id
                             + ": HTTP " + std::to_string(r.status) + " " + r.body.substr(0, 200));
        self->state.warnings.warn(app->app.id, failure.detail);
      }
      for (auto& w : waiters)
        w(token ? &entry.value : nullptr, failure);
    }));
}

void with_token(pointer self, const trace_context& ctx, const app_context_ptr& app, waiter k) {
  auto& entry = self->state.tokens[token_key(*app)];
  auto margin = self->state.settings.token_refresh_margin.count();
  if (!entry.value.empty() && self->state.now_ms() + margin < entry.expires_at) {
    k(&entry.value, store_verdict{});
    return;
  }
  entry.waiters.push_back(std::move(k));
  if (!entry.fetching)
    fetch_token(self, ctx, app);
}

void forget_token(pointer self, const app_context& app) {
  auto& entry = self->state.tokens[token_key(app)];
  entry.value.clear();
  entry.expires_at = 0;
}

using deliver_fn = std::function<void(store_b_answer)>;

void read_order(pointer self, std::shared_ptr<store_b_check> c, store_b_answer answer,
                deliver_fn deliver);

// How long what a store call taught is remembered (a product productsv2 did
// not know, a package whose orders orders.get would not give), and how many
// of each (then that memory starts afresh).
constexpr model::unix_ms remembered_for_ms = 60 * 60 * 1000;
constexpr std::size_t max_remembered = 4096;

std::string v1_product_key(const store_b_check& c) {
  return c.package_name + '\n' + c.purchase.product_id;
}

bool asked_of_v1_first(pointer self, const store_b_check& c) {
  auto& known = self->state.v1_products;
  auto it = known.find(v1_product_key(c));
  if (it == known.end())
    return false;
  if (it->second > self->state.now_ms())
    return true;
  known.erase(it);
  return false;
}

void remember_v1_product(pointer self, const store_b_check& c) {
  auto& known = self->state.v1_products;
  if (known.size() >= max_remembered)
    known.clear();
  known[v1_product_key(c)] = self->state.now_ms() + remembered_for_ms;
}

// Asks `api` about the purchase; on a 401 (any token, even a fresh one, can be
// revoked) drops the token, fetches a new one and asks again, once. A one-time
// product is asked of productsv2, and of products.get only when productsv2
// answers 404 for it; a legacy upload that neither knows is asked of
// subscriptionsv2 before it counts as rejected.
void ask(pointer self, std::shared_ptr<store_b_check> c, purchase_api api, bool token_retried,
         deliver_fn deliver, bool after_v2_404 = false, bool after_v1_404 = false) {
  with_token(self, c->trace, c->app, [=](const std::string* token, const store_verdict& failure) {
    if (!token) {
      deliver(store_b_answer{failure, c->purchase});
      return;
    }
    http::outbound_request req;
    req.url = model::store_b::purchase_url(self->state.settings.api_url, api, c->package_name,
                                           c->purchase.product_id, c->purchase_token);
    req.label = api == purchase_api::products ? "products"
      : api == purchase_api::products_v2      ? "products_v2"
                                              : "subscriptions_v2";
    req.headers = {"Authorization: Bearer " + *token, "Accept: application/json"};
    req.timeout = self->state.settings.timeout;
    auto* call = api == purchase_api::products ? self->state.measured.products
      : api == purchase_api::products_v2       ? self->state.measured.products_v2
                                               : self->state.measured.subscriptions_v2;
    self->state.calls.submit(
      handle(self), c->trace, "store-b-client", std::move(req),
      counted(self, call,
              [=](http::outbound_response& r) {
                if ((r.status == 401) && !token_retried) {
                  forget_token(self, *c->app);
                  ask(self, c, api, true, deliver, after_v2_404, after_v1_404);
                  return;
                }
                // productsv2 does not know it: products.get may (Google keeps
                // both; v1 only where v2 has nothing).
                if (api == purchase_api::products_v2 && r.status == 404 && !after_v1_404) {
                  ask(self, c, purchase_api::products, token_retried, deliver, true);
                  return;
                }
                // Asked of products.get first (a product productsv2 did not
                // know) and it does not know this purchase: productsv2 may.
                if (api == purchase_api::products && r.status == 404 && !after_v2_404) {
                  self->state.v1_products.erase(v1_product_key(*c));
                  ask(self, c, purchase_api::products_v2, token_retried, deliver, false, true);
                  return;
                }
                auto purchase = c->purchase;
                auto verdict = model::store_b::classify_purchase_response(api, r.status, r.body,
                                                                          r.error, purchase);
                verdict.said_at = self->state.clock->now_ms(); // Play says as of its answer
                if (after_v2_404 && verdict.outcome == store_outcome::confirmed)
                  remember_v1_product(self, *c);
                // A quota answer's Retry-After: the record is not asked again before it.
                model::honour_retry_after(verdict, r.status, r.retry_after, *verdict.said_at);
                if (verdict.outcome == store_outcome::rejected && c->fall_back_to_subscriptions
                    && api != purchase_api::subscriptions_v2) {
                  ask(self, c, purchase_api::subscriptions_v2, token_retried, deliver);
                  return;
                }
                if (verdict.operator_problem)
                  self->state.warnings.warn(
                    c->app->app.id,
                    "Play Developer API refused app " + c->app->app.id + " (" + c->package_name
                      + "): " + verdict.detail
                      + " — check the service account's Play Console permissions");
                read_order(self, c, store_b_answer{std::move(verdict), std::move(purchase)},
                           deliver);
              }),
      c->deadline);
  });
}

// Another Play Developer API call (acknowledge, voided purchases): the request
// `make` builds with the app's access token; a 401 drops the token and asks
// once more with a fresh one. `k` gets the response, or none with the verdict
// that explains why there is no token.
using request_maker = std::function<http::outbound_request(const std::string& token)>;

// A GET of `url` with the app's access token, as the reading calls send it.
request_maker bearer_get(std::string url, const char* label) {
  return [url = std::move(url), label](const std::string& token) {
    http::outbound_request req;
    req.url = url;
    req.label = label;
    req.headers = {"Authorization: Bearer " + token, "Accept: application/json"};
    return req;
  };
}
using response_fn = std::function<void(http::outbound_response*, const store_verdict&)>;

void call_api(pointer self, const store_call* call, trace_context ctx, app_context_ptr app,
              request_maker make, store_deadline deadline, bool token_retried, response_fn k) {
  with_token(self, ctx, app, [=](const std::string* token, const store_verdict& failure) {
    if (!token)
      return k(nullptr, failure);
    auto req = make(*token);
    req.timeout = self->state.settings.timeout;
    self->state.calls.submit(handle(self), ctx, "store-b-client", std::move(req),
                             counted(self, call,
                                     [=](http::outbound_response& r) {
                                       if (r.status == 401 && !token_retried) {
                                         forget_token(self, *app);
                                         return call_api(self, call, ctx, app, make, deadline, true,
                                                         k);
                                       }
                                       k(&r, store_verdict{});
                                     }),
                             deadline);
  });
}

bool orders_left_to_sweep(pointer self, const std::string& package_name) {
  auto& later = self->state.orders_by_sweep;
  auto it = later.find(package_name);
  if (it == later.end())
    return false;
  if (it->second > self->state.now_ms())
    return true;
  later.erase(it);
  return false;
}

// After a confirmed answer that names an order not read yet (or another one
// than was read: a renewal's), orders.get fills the purchase's cost. Its
// failure never changes the verdict: the cost stays unknown and the orders
// sweep reads it later (order_read_at stays none); a 404 (no such order, a
// promotional purchase) marks it read. A package whose orders were refused or
// unknown at an upload leaves them to the sweep for an hour.
void read_order(pointer self, std::shared_ptr<store_b_check> c, store_b_answer answer,
                deliver_fn deliver) {
  auto& p = answer.purchase;
  const bool named_before = c->purchase.latest_order_id == p.latest_order_id;
  if (!self->state.settings.orders || answer.verdict.outcome != store_outcome::confirmed
      || !p.latest_order_id || (named_before && p.order_read_at)) {
    deliver(std::move(answer));
    return;
  }
  if (!named_before)
    p.order_read_at.reset();
  if (orders_left_to_sweep(self, c->package_name)) {
    deliver(std::move(answer));
    return;
  }
  auto url = model::store_b::order_url(self->state.settings.api_url, c->package_name,
                                       *p.latest_order_id);
  auto make = bearer_get(url, "orders");
  auto held = std::make_shared<store_b_answer>(std::move(answer));
  call_api(self, self->state.measured.orders, c->trace, c->app, make, c->deadline, false,
           [self, c, held, deliver](http::outbound_response* r, const store_verdict&) {
             if (r) {
               auto order = model::store_b::parse_order(r->status, r->body, r->error);
               auto now = self->state.now_ms();
               if (r->status == 403 || r->status == 404) {
                 auto& later = self->state.orders_by_sweep;
                 if (later.size() >= max_remembered)
                   later.clear();
                 later[c->package_name] = now + remembered_for_ms;
               }
               if (order)
                 model::store_b::apply_order(held->purchase, *order, now);
               else if (r->status == 404)
                 held->purchase.order_read_at = now;
               else if (r->status == 403)
                 self->state.warnings.warn(
                   c->app->app.id, "Play orders API refused app " + c->app->app.id
                                     + ": HTTP 403 — the service account may not see the app's "
                                       "financial data; purchase prices stay unknown");
             }
             deliver(std::move(*held));
           });
}

std::string no_service_account(pointer self, const app_context& app) {
  auto why = "app " + app.app.id + " has no usable Store B service account"
    + (app.store_b_problem.empty() ? std::string() : " (" + app.store_b_problem + ")");
  self->state.warnings.warn(app.app.id, why);
  return why;
}

void acknowledge(pointer self, store_b_acknowledge& a,
                 caf::typed_response_promise<model::store_b::acknowledge_answer> rp) {
  using model::store_b::acknowledge_answer;
  using model::store_b::acknowledge_outcome;
  if (!a.app->service_account) {
    rp.deliver(acknowledge_answer{acknowledge_outcome::retry, no_service_account(self, *a.app)});
    return;
  }
  auto url = model::store_b::acknowledge_url(self->state.settings.api_url, a.record);
  auto make = [url](const std::string& token) {
    http::outbound_request req;
    req.method = "POST";
    req.url = url;
    req.label = "acknowledge";
    req.headers = {"Authorization: Bearer " + token, "Content-Type: application/json",
                   "Accept: application/json"};
    req.body = "{}";
    return req;
  };
  call_api(self, self->state.measured.acknowledge, a.trace, a.app, make, a.deadline, false,
           [rp, self, app_id = a.app->app.id](http::outbound_response* r,
                                              const store_verdict& failure) mutable {
             if (!r) {
               rp.deliver(acknowledge_answer{acknowledge_outcome::retry, failure.detail});
               return;
             }
             auto answer
               = model::store_b::classify_acknowledge_response(r->status, r->body, r->error);
             if (answer.outcome == acknowledge_outcome::token_401)
               answer.outcome = acknowledge_outcome::retry; // refused twice: ask again later
             if (answer.outcome == acknowledge_outcome::retry)
               answer.retry_not_before
                 = model::retry_not_before(r->status, r->retry_after, self->state.now_ms());
             if (answer.outcome == acknowledge_outcome::refused && r->status == 403)
               self->state.warnings.warn(app_id,
                                         "Play Developer API refused to acknowledge for app "
                                           + app_id + ": " + answer.detail
                                           + " — check the service account's permissions");
             rp.deliver(std::move(answer));
           });
}

// orders.reviewrefund: an empty 200 is the answer taken.
void review_refund(pointer self, store_refund_answer& a,
                   caf::typed_response_promise<store_refund_reply> rp) {
  if (!a.app->service_account) {
    rp.deliver(store_refund_reply{0, no_service_account(self, *a.app), std::nullopt});
    return;
  }
  auto url = model::purchases::store_b_review_url(self->state.settings.api_url, a.package_name,
                                                  a.key);
  auto body = std::move(a.body);
  auto make = [url, body](const std::string& token) {
    http::outbound_request req;
    req.method = "POST";
    req.url = url;
    req.label = "review_refund";
    req.headers = {"Authorization: Bearer " + token, "Content-Type: application/json",
                   "Accept: application/json"};
    req.body = body;
    return req;
  };
  call_api(self, self->state.measured.review_refund, a.trace, a.app, make, a.deadline, false,
           [rp, self](http::outbound_response* r, const store_verdict& failure) mutable {
             store_refund_reply reply;
             if (!r) {
               reply.detail = failure.detail;
               rp.deliver(std::move(reply));
               return;
             }
             reply.status = r->status;
             reply.detail = r->status == 0 ? r->error
                                           : "HTTP " + std::to_string(r->status) + " "
                                               + r->body.substr(0, 200);
             reply.not_before = model::retry_not_before(r->status, r->retry_after,
                                                        self->state.now_ms());
             rp.deliver(std::move(reply));
           });
}

void list_voided(pointer self, store_b_voided_query& q,
                 caf::typed_response_promise<model::store_b::voided_page> rp) {
  if (!q.app->service_account) {
    rp.deliver(caf::make_error(caf::sec::runtime_error, no_service_account(self, *q.app)));
    return;
  }
  auto url
    = model::store_b::voided_purchases_url(self->state.settings.api_url, q.app->app.package_name,
                                           q.start_time, q.end_time, q.max_results, q.page_token);
  auto make = bearer_get(url, "voided_purchases");
  call_api(self, self->state.measured.voided_purchases, q.trace, q.app, make, std::nullopt, false,
           [rp](http::outbound_response* r, const store_verdict& failure) mutable {
             if (!r) {
               rp.deliver(caf::make_error(caf::sec::runtime_error, failure.detail));
               return;
             }
             auto page = model::store_b::parse_voided_page(r->status, r->body, r->error);
             if (page)
               rp.deliver(std::move(page).value());
             else
               rp.deliver(caf::make_error(caf::sec::runtime_error, page.err().message()));
           });
}

// One app's orders: orders.get for one, orders.batchGet for more.
void list_orders(pointer self, store_b_orders_query& q,
                 caf::typed_response_promise<play_orders> rp) {
  if (!q.app->service_account) {
    rp.deliver(caf::make_error(caf::sec::runtime_error, no_service_account(self, *q.app)));
    return;
  }
  if (q.order_ids.empty()) {
    rp.deliver(play_orders{});
    return;
  }
  const bool single = q.order_ids.size() == 1;
  const auto& base = self->state.settings.api_url;
  const auto& package = q.app->app.package_name;
  auto url = single ? model::store_b::order_url(base, package, q.order_ids.front())
                    : model::store_b::orders_batch_url(base, package, q.order_ids);
  auto make = bearer_get(url, "orders");
  call_api(self, self->state.measured.orders, q.trace, q.app, make, std::nullopt, false,
           [rp, single](http::outbound_response* r, const store_verdict& failure) mutable {
             if (!r) {
               rp.deliver(caf::make_error(caf::sec::runtime_error, failure.detail));
               return;
             }
             if (single) {
               auto order = model::store_b::parse_order(r->status, r->body, r->error);
               if (order)
                 rp.deliver(play_orders{std::move(*order)});
               else
                 rp.deliver(caf::make_error(caf::sec::runtime_error, order.err().message()));
               return;
             }
             auto orders = model::store_b::parse_orders(r->status, r->body, r->error);
             if (orders)
               rp.deliver(std::move(*orders));
             else
               rp.deliver(caf::make_error(caf::sec::runtime_error, orders.err().message()));
           });
}

store_b_client_actor::behavior_type store_b_client(pointer self, config::store_b_settings settings,
                                                   bool allow_http,
                                                   http::outbound_transport* client, tracer* trace,
                                                   const model::time_source* clock,
                                                   metrics* instruments) {
  self->state.measured = {&instruments->store_call_of("store_b", "token"),
                          &instruments->store_call_of("store_b", "products"),
                          &instruments->store_call_of("store_b", "products_v2"),
                          &instruments->store_call_of("store_b", "subscriptions_v2"),
                          &instruments->store_call_of("store_b", "orders"),
                          &instruments->store_call_of("store_b", "acknowledge"),
                          &instruments->store_call_of("store_b", "voided_purchases"),
                          &instruments->store_client("store_b"),
                          &instruments->store_call_of("store_b", "review_refund")};
  self->state.calls
    = outbound_calls(*client, settings.max_concurrent, *trace, *clock, settings.max_queued);
  self->state.settings = std::move(settings);
  self->state.allow_http = allow_http;
  self->state.clock = clock;
  self->state.warnings = log_limiter(*clock);
  return {
    [=](check_atom, store_b_check& check) -> caf::typed_response_promise<store_b_answer> {
      auto rp = self->make_response_promise<store_b_answer>();
      auto c = std::make_shared<store_b_check>(std::move(check));
      if (!c->app->service_account) {
        auto why = "app " + c->app->app.id + " has no usable Store B service account"
          + (c->app->store_b_problem.empty() ? std::string()
                                             : " (" + c->app->store_b_problem + ")");
        self->state.warnings.warn(c->app->app.id, why);
        rp.deliver(store_b_answer{operator_problem(why), c->purchase});
        return rp;
      }
      auto first = c->api != purchase_api::products ? c->api
        : asked_of_v1_first(self, *c)               ? purchase_api::products
                                                    : purchase_api::products_v2;
      ask(self, c, first, false, [rp](store_b_answer a) mutable { rp.deliver(std::move(a)); });
      publish(self);
      return rp;
    },
    [=](acknowledge_atom,
        store_b_acknowledge& a) -> caf::typed_response_promise<model::store_b::acknowledge_answer> {
      auto rp = self->make_response_promise<model::store_b::acknowledge_answer>();
      acknowledge(self, a, rp);
      publish(self);
      return rp;
    },
    [=](refund_atom, store_refund_answer& a) -> caf::typed_response_promise<store_refund_reply> {
      auto rp = self->make_response_promise<store_refund_reply>();
      review_refund(self, a, rp);
      publish(self);
      return rp;
    },
    [=](voided_atom,
        store_b_voided_query& q) -> caf::typed_response_promise<model::store_b::voided_page> {
      auto rp = self->make_response_promise<model::store_b::voided_page>();
      list_voided(self, q, rp);
      publish(self);
      return rp;
    },
    [=](orders_atom, store_b_orders_query& q) -> caf::typed_response_promise<play_orders> {
      auto rp = self->make_response_promise<play_orders>();
      list_orders(self, q, rp);
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

store_b_client_actor spawn_store_b_client(caf::actor_system& sys,
                                          const config::store_b_settings& settings,
                                          const config::outbound_settings& outbound,
                                          http::outbound_transport& client, tracer& trace,
                                          const model::time_source& clock, metrics& instruments) {
  return sys.spawn(store_b_client, settings, outbound.allow_http, &client, &trace, &clock,
                   &instruments);
}

} // namespace receiptd::actors

#include "actors/validator.hpp"

#include <caf/event_based_actor.hpp>

#include <atomic>
#include <type_traits>
#include <utility>

#include "actors/app_context.hpp"
#include "actors/log.hpp"
#include "actors/validator_steps.hpp"
#include "model/store_a/app_transaction.hpp"
#include "model/store_a/history.hpp"
#include "model/store_a/receipt_record.hpp"
#include "model/store_a/transaction_record.hpp"
#include "model/store_b/acknowledgement.hpp"
#include "model/store_b/purchase_order.hpp"
#include "model/upload_request.hpp"

namespace receiptd::actors {

namespace steps {

namespace {

store_deadline deadline_from_now(const validator_deps& deps) {
  return deps.clock->steady_now() + deps.settings.store_deadline;
}

// A receipt lent to the Store A client (store_a_check::receipt_data) comes back
// without a copy once the client has let go of it, which it does before it
// answers; past the deadline it may still hold it, and then it is copied.
struct lent_receipt {
  model::receipt_record record;
  std::shared_ptr<std::string> receipt;

  model::receipt_record& take_back() {
    auto data = std::move(receipt);
    if (data.use_count() == 1) {
      std::atomic_thread_fence(std::memory_order_acquire); // pairs with the client's release
      record.receipt_data = std::move(*data);
    } else {
      record.receipt_data = *data;
    }
    return record;
  }
};

} // namespace

model::store_verdict deadline_verdict(const caf::error& e) {
  model::store_verdict v;
  v.outcome = model::store_outcome::unreachable;
  v.detail = e == caf::sec::request_timeout ? "store deadline passed"
                                            : "store client: " + caf::to_string(e);
  return v;
}

void answer(upload_run& u, http::reply r) {
  u.root.outcome(std::to_string(r.status));
  u.root.end();
  u.in.reply->send(std::move(r));
}

void answer_error(upload_run& u, const model::error& e) {
  answer(u, http::error_reply(e));
}

void ask_store(caf::event_based_actor* self, const trace_context& ctx, const validator_deps& deps,
               app_context_ptr app, model::purchase_order_record r,
               std::function<void(model::purchase_order_record)> k) {
  store_b_check check{ctx,
                      std::move(app),
                      r.package_name,
                      r.purchase_token,
                      r.purchase,
                      model::store_b::first_api(r),
                      r.is_legacy,
                      deadline_from_now(deps)};
  auto shared = std::make_shared<model::purchase_order_record>(std::move(r));
  // Whether receiptd acknowledges the purchase once the API has spoken.
  auto acknowledges = check.app->app.acknowledge_purchases;
  self->request(deps.store_b, answered_by_deadline, check_atom_v, std::move(check))
    .then(
      [shared, k, acknowledges, clock = deps.clock](store_b_answer& a) {
        if (a.verdict.outcome == model::store_outcome::confirmed)
          shared->purchase = std::move(a.purchase);
        model::apply_store_verdict(*shared, a.verdict);
        model::store_b::settle_acknowledgement(*shared, acknowledges, clock->now_ms());
        k(std::move(*shared));
      },
      [shared, k](caf::error& e) {
        model::apply_store_verdict(*shared, deadline_verdict(e));
        k(std::move(*shared));
      });
}

// A unified receipt confirmed with the App Store Server API (store-a.confirm-with):
// the customer's transaction history is read from the receipt's newest
// transaction, and each of the receipt's purchases is confirmed by it, or
// marked contradicted (model/store_a/history.hpp).
void ask_server_api(caf::event_based_actor* self, const trace_context& ctx,
                    const validator_deps& deps, app_context_ptr app_ctx, model::receipt_record r,
                    std::function<void(model::receipt_record)> k) {
  auto id = model::store_a::transaction_to_confirm(r);
  if (!id) {
    // A receipt without purchases (a paid app, nothing bought in it): Apple's
    // signature and chain are all there is to check, and they checked out.
    model::store_verdict v;
    v.outcome = model::store_outcome::confirmed;
    v.detail = "no in-app transaction to confirm: verified locally";
    model::apply_store_verdict(r, v);
    return k(std::move(r));
  }
  store_a_transaction_check check{ctx, std::move(app_ctx), *id,
                                  model::store_a::first_endpoint(r)
                                    == model::store_a::verify_endpoint::sandbox,
                                  deadline_from_now(deps)};
  auto shared = std::make_shared<model::receipt_record>(std::move(r));
  self->request(deps.store_a, answered_by_deadline, history_atom_v, std::move(check))
    .then(
      [shared, k, id = *id, trust = deps.trust](store_a_history_answer& a) {
        std::vector<model::store_a::signed_transaction> history;
        if (a.verdict.outcome == model::store_outcome::confirmed) {
          auto verified = model::store_a::verified_history(a.signed_transactions,
                                                           shared->bundle_id, a.env, *trust);
          if (!verified) {
            auto why = "App Store Server API answer unusable: " + verified.err().message();
            log_warn("receipt " + shared->id + ", history of transaction " + id + ": " + why);
            a.verdict = model::unreachable_verdict(std::move(why));
          } else {
            history = std::move(verified).value();
          }
        }
        model::store_a::apply_history(*shared, a.verdict, history);
        k(std::move(*shared));
      },
      [shared, k](caf::error& e) {
        model::apply_store_verdict(*shared, deadline_verdict(e));
        k(std::move(*shared));
      });
}

void ask_store(caf::event_based_actor* self, const trace_context& ctx, const validator_deps& deps,
               app_context_ptr app_ctx, model::receipt_record r,
               std::function<void(model::receipt_record)> k) {
  if (model::store_a::confirm_with_server_api(r, deps.settings.confirm_with,
                                              app_ctx->server_api_key != nullptr))
    return ask_server_api(self, ctx, deps, std::move(app_ctx), std::move(r), std::move(k));
  const auto& app = app_ctx->app;
  auto sandbox = model::store_a::first_endpoint(r) == model::store_a::verify_endpoint::sandbox;
  auto receipt = std::make_shared<std::string>(std::move(r.receipt_data));
  store_a_check check{ctx,
                      app.id,
                      receipt,
                      app.store_a_shared_secret,
                      sandbox,
                      r.in_app_purchases,
                      deadline_from_now(deps)};
  auto shared = std::make_shared<lent_receipt>(lent_receipt{std::move(r), std::move(receipt)});
  self->request(deps.store_a, answered_by_deadline, check_atom_v, std::move(check))
    .then(
      [shared, k](store_a_answer& a) {
        auto& r = shared->take_back();
        model::store_a::apply_store_verdict(r, a.verdict, a.in_app);
        k(std::move(r));
      },
      [shared, k](caf::error& e) {
        auto& r = shared->take_back();
        model::store_a::apply_store_verdict(r, deadline_verdict(e), {});
        k(std::move(r));
      });
}

void ask_store(caf::event_based_actor* self, const trace_context& ctx, const validator_deps& deps,
               app_context_ptr app, model::transaction_record r,
               std::function<void(model::transaction_record)> k) {
  store_a_transaction_check check{ctx, std::move(app), r.transaction.transaction_id,
                                  model::store_a::sandbox_first(r), deadline_from_now(deps)};
  auto shared = std::make_shared<model::transaction_record>(std::move(r));
  self->request(deps.store_a, answered_by_deadline, check_atom_v, std::move(check))
    .then(
      [shared, k, trust = deps.trust](store_a_transaction_answer& a) {
        auto unusable = model::store_a::apply_server_answer(*shared, a.verdict,
                                                            a.signed_transaction_info, *trust);
        if (!unusable.empty())
          log_warn("transaction " + shared->transaction.transaction_id + ": " + unusable);
        k(std::move(*shared));
      },
      [shared, k](caf::error& e) {
        model::apply_store_verdict(*shared, deadline_verdict(e));
        k(std::move(*shared));
      });
}

// Get App Transaction Info, by the appTransactionId the JWS names (a record
// without one was settled on its signature and is never pending), at the host
// of its receiptType first.
void ask_store(caf::event_based_actor* self, const trace_context& ctx, const validator_deps& deps,
               app_context_ptr app, model::store_a::app_transaction_record r,
               std::function<void(model::store_a::app_transaction_record)> k) {
  store_a_transaction_check check{ctx, std::move(app),
                                  r.transaction.app_transaction_id.value_or(""),
                                  r.env != model::environment::production,
                                  deadline_from_now(deps)};
  auto shared = std::make_shared<model::store_a::app_transaction_record>(std::move(r));
  self->request(deps.store_a, answered_by_deadline, app_transaction_atom_v, std::move(check))
    .then(
      [shared, k, trust = deps.trust](store_a_transaction_answer& a) {
        auto unusable = model::store_a::apply_server_answer(*shared, a.verdict,
                                                            a.signed_transaction_info, *trust);
        if (!unusable.empty())
          log_warn("app transaction " + shared->transaction.app_transaction_id.value_or(shared->id)
                   + ": " + unusable);
        k(std::move(*shared));
      },
      [shared, k](caf::error& e) {
        model::apply_store_verdict(*shared, deadline_verdict(e));
        k(std::move(*shared));
      });
}

} // namespace steps

namespace {

using namespace steps;

// The body is needed only to be parsed, and freed right after: what the upload
// holds from then on is its record (one copy of the receipt per upload).
std::string take_body(upload_run& u) {
  return std::exchange(u.in.request.body, {});
}

model::error not_configured(const std::string& what) {
  return {model::errc::app_not_configured, what + "; set it with receiptctl app update"};
}

// Each upload kind: its record as uploaded, with the verdict of the checks that
// need no store (a proof that failed them is rejected: stored as fraud without a
// store call), or why it is refused before anything is stored.
model::result<model::purchase_order_record> store_b_record(upload_run& u) {
  auto upload = model::parse_store_b_upload(take_body(u));
  if (!upload)
    return upload.err();
  const auto& ctx = *u.app;
  if (ctx.app.package_name.empty())
    return not_configured("this app has no Store B package name");
  if (!ctx.licence_key)
    return not_configured("this app has no usable Store B licence key");
  auto record = model::store_b::make_record(*upload, ctx.app, u.in.request.peer_ip, u.started_at);
  if (auto fraud = model::store_b::check_locally(*upload, *ctx.licence_key, ctx.app);
      fraud != model::fraud_reason::none)
    model::apply_fraud(record, fraud);
  return record;
}

model::result<model::purchase_order_record> store_b_legacy_record(upload_run& u) {
  auto upload = model::parse_store_b_legacy_upload(take_body(u));
  if (!upload)
    return upload.err();
  const auto& ctx = *u.app;
  if (ctx.app.package_name.empty())
    return not_configured("this app has no Store B package name");
  auto record = model::store_b::make_record(*upload, ctx.app, u.in.request.peer_ip, u.started_at);
  if (auto fraud = model::store_b::check_locally(*upload, ctx.app);
      fraud != model::fraud_reason::none)
    model::apply_fraud(record, fraud);
  return record;
}

model::result<model::receipt_record> store_a_record(upload_run& u) {
  auto upload = model::parse_store_a_upload(take_body(u));
  if (!upload)
    return upload.err();
  const auto& app = u.app->app;
  if (app.bundle_id.empty())
    return not_configured("this app has no Store A bundle id");
  auto verified = model::store_a::verify_receipt(upload->receipt_bytes, *u.deps->trust,
                                                 app.bundle_id, upload->identifier_for_vendor,
                                                 u.deps->settings.store_a_verify);
  // Our failure, not the receipt's: no verdict, nothing stored.
  if (verified.internal_error) {
    log_warn("Store A verification failed internally: " + verified.detail);
    return model::error(model::errc::internal_error,
                        "the receipt could not be checked; retry later");
  }
  return model::store_a::make_record(*upload, app, verified, u.in.request.peer_ip, u.started_at);
}

model::result<model::transaction_record> store_a_transaction_record(upload_run& u) {
  auto upload = model::parse_store_a_transaction_upload(take_body(u));
  if (!upload)
    return upload.err();
  const auto& app = u.app->app;
  if (app.bundle_id.empty())
    return not_configured("this app has no Store A bundle id");
  auto verified = model::store_a::verify_jws(upload->signed_transaction, *u.deps->trust);
  // Our failure, not the transaction's: no verdict, nothing stored.
  if (verified.internal_error) {
    log_warn("StoreKit 2 verification failed internally: " + verified.detail);
    return model::error(model::errc::internal_error,
                        "the transaction could not be checked; retry later");
  }
  return model::store_a::make_record(*upload, app, verified, u.in.request.peer_ip, u.started_at);
}

model::result<model::store_a::app_transaction_record> store_a_app_transaction_record(upload_run& u) {
  auto upload = model::parse_app_transaction_upload(take_body(u));
  if (!upload)
    return upload.err();
  const auto& app = u.app->app;
  if (app.bundle_id.empty())
    return not_configured("this app has no Store A bundle id");
  auto verified = model::store_a::verify_app_transaction_jws(upload->signed_app_transaction,
                                                             *u.deps->trust);
  // Our failure, not the app transaction's: no verdict, nothing stored.
  if (verified.internal_error) {
    log_warn("StoreKit 2 app transaction verification failed internally: " + verified.detail);
    return model::error(model::errc::internal_error,
                        "the app transaction could not be checked; retry later");
  }
  return model::store_a::make_record(*upload, app, verified, u.in.request.peer_ip, u.started_at);
}

// receiptd_fraud_total: the verdict an upload or a revalidation reached.
template <class Record>
void count_fraud(const validator_deps& deps, const Record& r) {
  constexpr auto kind = std::is_same_v<Record, model::purchase_order_record>
    ? model::record_kind::store_b_purchase_order
    : model::record_kind::store_a_receipt; // a store_a kind: the label is the store
  deps.instruments->fraud(kind, r.fraud).add();
}

// The same for every kind: a record settled locally is stored and answered; one
// still pending is put to its store first.
template <class Record>
void settle(caf::event_based_actor* self, upload_ptr u, model::result<Record> record) {
  if (!record)
    return answer_error(*u, record.err());
  if (record->state != model::validation_state::pending) {
    count_fraud(*u->deps, *record);
    model::trim_rejected_proof(*record);
    return save_and_answer(self, u, std::move(record).value());
  }
  ask_store(self, u->root.child(), *u->deps, u->app, std::move(record).value(),
            [self, u](Record r) {
              count_fraud(*u->deps, r);
              save_and_answer(self, u, std::move(r));
            });
}

} // namespace

void validate_upload(caf::event_based_actor* self, inbound in, app_context_ptr app,
                     validator_deps_ptr deps) {
  auto u = std::make_shared<upload_run>(std::move(in), std::move(app), std::move(deps));
  switch (u->in.request.target) {
    case http::route::store_a_upload:
      return settle(self, u, store_a_record(*u));
    case http::route::store_b_upload:
      return settle(self, u, store_b_record(*u));
    case http::route::store_b_legacy_upload:
      return settle(self, u, store_b_legacy_record(*u));
    case http::route::store_a_transaction_upload:
      return settle(self, u, store_a_transaction_record(*u));
    case http::route::store_a_app_transaction_upload:
      return settle(self, u, store_a_app_transaction_record(*u));
    case http::route::server_customer_restore:
      return restore_customer(self, u);
    case http::route::store_a_get:
    case http::route::store_b_get:
    case http::route::store_a_transaction_get:
    case http::route::store_a_app_transaction_get:
    case http::route::store_a_notification:
    case http::route::store_b_notification:
    case http::route::health:
    case http::route::ready:
    case http::route::metrics:
    case http::route::openapi:
    case http::route::purchase_get:
    case http::route::customer_get:
    case http::route::server_customer_get:
    case http::route::server_customer_purchases:
    case http::route::server_grant_add:
    case http::route::server_grant_remove:
    case http::route::server_purchase_consumption:
      break; // not uploads: the supervisor, its handlers and the HTTP layer answer them
  }
}

void revalidate(caf::event_based_actor* self, claimed_job cj, validator_deps_ptr deps,
                retry_scheduler_actor scheduler) {
  auto root = std::make_shared<span>(*deps->trace, trace_context{"job-" + cj.job.id, 0},
                                     "validator", "revalidate");
  auto run = [&](auto record) {
    using record_type = decltype(record);
    auto app = make_app_context(*cj.app);
    if (model::purpose_of(record) != model::job_purpose::revalidate)
      return upkeep_job(self, deps, scheduler, cj.job, std::move(app), std::move(record), root);
    ask_store(self, root->child(), *deps, std::move(app), std::move(record),
              [=, job = cj.job](record_type r) {
                count_fraud(*deps, r);
                finish_job(self, deps, scheduler, job, std::move(r), root);
              });
  };
  if (cj.app && cj.app_transaction) {
    // An app transaction's job only ever revalidates: a settled one (a
    // re-upload settled it since the claim) just ends its job.
    auto app = make_app_context(*cj.app);
    auto record = std::move(*cj.app_transaction);
    if (!model::store_a::needs_job(record)) {
      auto outcome = std::string(model::to_string(record.state));
      return complete_job(self, *deps, cj.job, std::move(record), root,
                          job_reporter(self, scheduler, cj.job.id, root), std::move(outcome));
    }
    using record_type = model::store_a::app_transaction_record;
    return ask_store(self, root->child(), *deps, std::move(app), std::move(record),
                     [=, job = cj.job](record_type r) {
                       count_fraud(*deps, r);
                       finish_job(self, deps, scheduler, job, std::move(r), root);
                     });
  }
  if (cj.app && cj.record)
    return std::visit([&](auto& record) { run(std::move(record)); }, *cj.record);
  log_warn("revalidation job " + cj.job.id + " has no record or app; left for its lease");
  root->outcome("orphan");
  self->send(scheduler, done_atom_v, cj.job.id);
}

} // namespace receiptd::actors

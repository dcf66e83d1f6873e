#include "actors/validator.hpp"

#include <caf/event_based_actor.hpp>

#include <atomic>
#include <utility>

#include "actors/app_context.hpp"
#include "actors/log.hpp"
#include "actors/validator_steps.hpp"
#include "model/store_a/receipt_record.hpp"
#include "model/store_b/purchase_order.hpp"
#include "model/upload_request.hpp"

namespace receiptd::actors {

namespace steps {

namespace {

store_deadline deadline_from_now(const validator_deps& deps) {
  return std::chrono::steady_clock::now() + deps.settings.store_deadline;
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

model::store_verdict deadline_verdict(const caf::error& e) {
  model::store_verdict v;
  v.outcome = model::store_outcome::unreachable;
  v.detail = e == caf::sec::request_timeout ? "store deadline passed"
                                            : "store client: " + caf::to_string(e);
  return v;
}

} // namespace

model::unix_ms now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

double unit_random() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

void answer(upload_run& u, int status, std::string body, std::optional<int> retry_after) {
  u.root.outcome(std::to_string(status));
  u.root.end();
  u.in.reply->send(http::reply{status, std::move(body), retry_after});
}

void answer_errors(upload_run& u, int status, const model::field_errors& errors) {
  answer(u, status, model::error_body(errors), status == 503 ? std::optional<int>(1) : std::nullopt);
}

void ask_store_b(caf::event_based_actor* self, const trace_context& ctx,
                 const validator_deps& deps, app_context_ptr app,
                 model::purchase_order_record r,
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
  self->request(deps.store_b, deps.settings.store_deadline, check_atom_v, std::move(check))
    .then(
      [shared, k](store_b_answer& a) {
        if (a.verdict.outcome == model::store_outcome::confirmed)
          shared->purchase = std::move(a.purchase);
        model::store_b::apply_store_verdict(*shared, a.verdict);
        k(std::move(*shared));
      },
      [shared, k](caf::error& e) {
        model::store_b::apply_store_verdict(*shared, deadline_verdict(e));
        k(std::move(*shared));
      });
}

void ask_store_a(caf::event_based_actor* self, const trace_context& ctx,
                 const validator_deps& deps, const model::app& app, model::receipt_record r,
                 std::function<void(model::receipt_record)> k) {
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
  self->request(deps.store_a, deps.settings.store_deadline, check_atom_v, std::move(check))
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

} // namespace steps

namespace {

using namespace steps;

// The body is needed only to be parsed, and freed right after: what the upload
// holds from then on is its record (one copy of the receipt per upload).
std::string take_body(upload_run& u) {
  return std::exchange(u.in.request.body, {});
}

model::field_errors not_configured(const std::string& what) {
  return {{"", "app_not_configured", what + "; set it with receiptctl app update"}};
}

// A proof that failed locally is stored as fraud and refused without a store
// call; any other is put to the Play Developer API first.
void settle_store_b(caf::event_based_actor* self, upload_ptr u, model::purchase_order_record record,
                    model::fraud_reason local_verdict) {
  if (local_verdict != model::fraud_reason::none) {
    model::store_b::apply_fraud(record, local_verdict);
    return save_and_answer(self, u, std::move(record));
  }
  ask_store_b(self, u->root.child(), *u->deps, u->app, std::move(record),
              [self, u](model::purchase_order_record r) { save_and_answer(self, u, std::move(r)); });
}

void store_b_upload(caf::event_based_actor* self, upload_ptr u) {
  auto upload = model::parse_store_b_upload(take_body(*u));
  if (!upload)
    return answer_errors(*u, 422, upload.errors());
  const auto& ctx = *u->app;
  if (ctx.app.package_name.empty())
    return answer_errors(*u, 422, not_configured("this app has no Store B package name"));
  if (!ctx.licence_key)
    return answer_errors(*u, 422, not_configured("this app has no usable Store B licence key"));
  auto record = model::store_b::make_record(*upload, ctx.app, u->in.request.peer_ip, u->started_at);
  settle_store_b(self, u, std::move(record),
                 model::store_b::check_locally(*upload, *ctx.licence_key, ctx.app));
}

void store_a_upload(caf::event_based_actor* self, upload_ptr u) {
  auto upload = model::parse_store_a_upload(take_body(*u));
  if (!upload)
    return answer_errors(*u, 422, upload.errors());
  const auto& app = u->app->app;
  if (app.bundle_id.empty())
    return answer_errors(*u, 422, not_configured("this app has no Store A bundle id"));
  auto verified = model::store_a::verify_receipt(upload->receipt_bytes, *u->deps->trust,
                                                 app.bundle_id, upload->identifier_for_vendor,
                                                 u->deps->settings.store_a_verify);
  // Our failure, not the receipt's (issue 6 §10): no verdict, nothing stored.
  if (verified.internal_error) {
    log_warn("Store A verification failed internally: " + verified.detail);
    return answer_errors(*u, 500, {{"", "internal_error",
                                    "the receipt could not be checked; retry later"}});
  }
  auto record = model::store_a::make_record(*upload, app, verified, u->in.request.peer_ip,
                                            u->started_at);
  if (record.state != model::validation_state::pending) // settled locally
    return save_and_answer(self, u, std::move(record));
  ask_store_a(self, u->root.child(), *u->deps, app, std::move(record),
              [self, u](model::receipt_record r) { save_and_answer(self, u, std::move(r)); });
}

void store_b_legacy_upload(caf::event_based_actor* self, upload_ptr u) {
  auto upload = model::parse_store_b_legacy_upload(take_body(*u));
  if (!upload)
    return answer_errors(*u, 422, upload.errors());
  const auto& ctx = *u->app;
  if (ctx.app.package_name.empty())
    return answer_errors(*u, 422, not_configured("this app has no Store B package name"));
  auto record = model::store_b::make_record(*upload, ctx.app, u->in.request.peer_ip, u->started_at);
  settle_store_b(self, u, std::move(record), model::store_b::check_locally(*upload, ctx.app));
}

} // namespace

void validate_upload(caf::event_based_actor* self, inbound in, app_context_ptr app,
                     validator_deps_ptr deps) {
  auto u = std::make_shared<upload_run>();
  u->root = span(deps->trace, {in.request.trace_id, 0}, "validator",
                 http::to_string(in.request.target));
  u->in = std::move(in);
  u->app = std::move(app);
  u->deps = std::move(deps);
  u->started_at = now_ms();
  switch (u->in.request.target) {
    case http::route::store_a_upload:
      return store_a_upload(self, u);
    case http::route::store_b_upload:
      return store_b_upload(self, u);
    case http::route::store_b_legacy_upload:
      return store_b_legacy_upload(self, u);
    default:
      return answer_errors(*u, 404, {{"", "not_found", "no such resource"}});
  }
}

void revalidate(caf::event_based_actor* self, claimed_job cj, validator_deps_ptr deps,
                retry_scheduler_actor scheduler) {
  auto root = std::make_shared<span>(deps->trace, trace_context{"job-" + cj.job.id, 0},
                                     "validator", "revalidate");
  if (cj.app && cj.purchase_order) {
    auto app = make_app_context(*cj.app);
    auto job = cj.job;
    ask_store_b(self, root->child(), *deps, std::move(app), std::move(*cj.purchase_order),
                [=](model::purchase_order_record r) {
                  finish_job(self, deps, scheduler, job, std::move(r), root);
                });
    return;
  }
  if (cj.app && cj.receipt) {
    auto job = cj.job;
    ask_store_a(self, root->child(), *deps, *cj.app, std::move(*cj.receipt),
                [=](model::receipt_record r) {
                  finish_job(self, deps, scheduler, job, std::move(r), root);
                });
    return;
  }
  log_warn("revalidation job " + cj.job.id + " has no record or app; left for its lease");
  root->outcome("orphan");
  self->send(scheduler, done_atom_v, cj.job.id);
}

} // namespace receiptd::actors

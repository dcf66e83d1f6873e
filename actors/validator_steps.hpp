#pragma once
// Steps the validator flows share: answering, saving, asking a store, and
// finishing a revalidation job. Internal to actors/validator*.cpp.

#include <caf/event_based_actor.hpp>

#include <algorithm>
#include <functional>

#include "actors/validator.hpp"
#include "http/reply.hpp"
#include "model/resource_json.hpp"

namespace receiptd::actors::steps {

// One upload in flight: shared by the continuations of its asynchronous steps.
struct upload_run {
  upload_run(inbound i, app_context_ptr a, validator_deps_ptr d)
    : in(std::move(i)),
      app(std::move(a)),
      deps(std::move(d)),
      root(*deps->trace, {in.request.trace_id, 0}, "validator", http::info(in.request.target).name),
      started_at(deps->clock->now_ms()) {}

  inbound in;
  app_context_ptr app;
  validator_deps_ptr deps;
  span root;
  model::unix_ms started_at = 0;
};
using upload_ptr = std::shared_ptr<upload_run>;

void answer(upload_run& u, http::reply r);
void answer_error(upload_run& u, const model::error& e);

constexpr model::record_kind kind_of_record(const model::purchase_order_record&) {
  return model::record_kind::store_b_purchase_order;
}
constexpr model::record_kind kind_of_record(const model::receipt_record&) {
  return model::record_kind::store_a_receipt;
}
constexpr model::record_kind kind_of_record(const model::transaction_record&) {
  return model::record_kind::store_a_transaction;
}
constexpr model::record_kind kind_of_record(const model::store_a::app_transaction_record&) {
  return model::record_kind::store_a_app_transaction;
}

// How an app follows a 206 (RFC 9110 §10.2.3, §10.2.2): Retry-After, the seconds
// until the store is asked again (at least 1), and Location, where the record reads.
template <class Record>
void follow_hints(http::reply& r, const Record& stored, model::unix_ms next_attempt_at,
                  model::unix_ms now) {
  if (r.status != 206)
    return;
  auto wait_ms = std::max<model::unix_ms>(next_attempt_at - now, 0);
  r.retry_after_seconds = static_cast<int>(std::max<model::unix_ms>((wait_ms + 999) / 1000, 1));
  r.location = http::record_path(kind_of_record(stored), stored.id);
}

// Saves the record (with a retry job when pending) and answers with what was
// stored: 200, 206 or 402. A failed save answers 503: nothing was promised.
template <class Record>
void save_and_answer(caf::event_based_actor* self, upload_ptr u, Record r) {
  const auto& deps = *u->deps;
  auto first_attempt = model::next_attempt_at(deps.settings.retry, 0, deps.random->unit(),
                                              deps.clock->now_ms(), r.retry_not_before);
  auto own_verdict = r.fraud;
  r.terms.announce = u->app->app.has_webhooks; // the save writes the event
  self
    ->request(deps.persistence, caf::infinite, save_atom_v, u->root.child(), std::move(r),
              first_attempt)
    .then(
      [u, own_verdict, first_attempt](Record& stored) {
        auto a = model::answer_for(stored, own_verdict);
        http::reply reply{a.status, std::move(a.body)};
        follow_hints(reply, stored, first_attempt, u->deps->clock->now_ms());
        answer(*u, std::move(reply));
      },
      [u](caf::error& e) {
        answer_error(
          *u, {model::errc::storage_unavailable, "the upload could not be stored; retry later"});
      });
}

// Asks the record's store (the Play Developer API, verifyReceipt, or the App
// Store Server API) under the
// validator's deadline; the record comes back to `k` with the store's verdict
// applied (a passed deadline counts as unreachable).
void ask_store(caf::event_based_actor* self, const trace_context& ctx, const validator_deps& deps,
               app_context_ptr app, model::purchase_order_record r,
               std::function<void(model::purchase_order_record)> k);
void ask_store(caf::event_based_actor* self, const trace_context& ctx, const validator_deps& deps,
               app_context_ptr app, model::receipt_record r,
               std::function<void(model::receipt_record)> k);
void ask_store(caf::event_based_actor* self, const trace_context& ctx, const validator_deps& deps,
               app_context_ptr app, model::transaction_record r,
               std::function<void(model::transaction_record)> k);
void ask_store(caf::event_based_actor* self, const trace_context& ctx, const validator_deps& deps,
               app_context_ptr app, model::store_a::app_transaction_record r,
               std::function<void(model::store_a::app_transaction_record)> k);

// POST /server/customers/{user}/restore (actors/restore.cpp): the customer's
// App Store transaction history read, verified, saved all or none, answered
// with the customer.
void restore_customer(caf::event_based_actor* self, upload_ptr u);

// A job's work on a record that is not pending (actors/validator_upkeep.cpp): a
// validated Play purchase is acknowledged, or a subscription whose expiry has
// passed is refreshed; the job completes once that is settled, or is rescheduled
// with backoff: an acknowledgement until Google's deadline (then it is failed), a
// refresh until retry.max-attempts (then it completes with the record as it
// was). A Store A record's job has nothing to do and completes.
void upkeep_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, app_context_ptr app,
                model::purchase_order_record r, std::shared_ptr<span> root);
void upkeep_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, app_context_ptr app,
                model::receipt_record r, std::shared_ptr<span> root);
void upkeep_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, app_context_ptr app,
                model::transaction_record r, std::shared_ptr<span> root);

// What a store request that failed at the actor level means: the store client
// died (or, with a timeout, did not answer in time), so the store counts as
// unreachable; never a verdict on the proof.
model::store_verdict deadline_verdict(const caf::error& e);

// How a job's run ends, whatever it did (revalidation, acknowledgement,
// refresh): the span's outcome, then the scheduler told it is done.
using job_report = std::function<void(const std::string&)>;
job_report job_reporter(caf::event_based_actor* self, retry_scheduler_actor scheduler,
                        std::string job_id, std::shared_ptr<span> root);

// The job ends with the record written as `r` says, updated_at now (fenced by
// the claim: "overtaken" when another claim came first); `outcome` is reported.
template <class Record>
void complete_job(caf::event_based_actor* self, const validator_deps& deps,
                  const model::validation_job& job, Record r, const std::shared_ptr<span>& root,
                  job_report report, std::string outcome) {
  r.updated_at = deps.clock->now_ms();
  self->request(deps.persistence, caf::infinite, complete_atom_v, root->child(), job, std::move(r))
    .then([report, outcome](bool applied) { report(applied ? outcome : "overtaken"); },
          [report](caf::error& e) { report("error: " + caf::to_string(e)); });
}

// Not settled yet: asked again after the backoff for job.attempts, but not
// before `not_before` (the store's Retry-After), with `why` kept on the job.
void reschedule_job(caf::event_based_actor* self, const validator_deps& deps,
                    model::validation_job job, const std::string& why,
                    std::optional<model::unix_ms> not_before, const std::shared_ptr<span>& root,
                    job_report report);

// Completes the job with the record's verdict, or — still pending — reschedules
// it with backoff (no earlier than the store's Retry-After), marking the record
// failed once attempts run out.
template <class Record>
void finish_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, Record r,
                std::shared_ptr<span> root) {
  auto report = job_reporter(self, scheduler, job.id, root);
  if (r.state == model::validation_state::pending) {
    ++job.attempts;
    if (!model::attempts_exhausted(deps->settings.retry, job.attempts))
      return reschedule_job(self, *deps, std::move(job), r.store_detail, r.retry_not_before, root,
                            report);
    r.state = model::validation_state::failed;
  }
  auto outcome = std::string(model::to_string(r.state));
  complete_job(self, *deps, job, std::move(r), root, report, outcome);
}

} // namespace receiptd::actors::steps

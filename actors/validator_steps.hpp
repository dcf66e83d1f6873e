#pragma once
// Steps the validator flows share: answering, saving, asking a store, and
// finishing a revalidation job. Internal to actors/validator*.cpp.

#include <caf/event_based_actor.hpp>

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

// Saves the record (with a retry job when pending) and answers with what was
// stored: 200, 206 or 402. A failed save answers 503: nothing was promised.
template <class Record>
void save_and_answer(caf::event_based_actor* self, upload_ptr u, Record r) {
  const auto& deps = *u->deps;
  auto first_attempt
    = deps.clock->now_ms() + model::backoff_delay_ms(deps.settings.retry, 0, deps.random->unit());
  auto own_verdict = r.fraud;
  r.terms.announce = u->app->app.has_webhooks; // the save writes the event (issue 9)
  self
    ->request(deps.persistence, caf::infinite, save_atom_v, u->root.child(), std::move(r),
              first_attempt)
    .then(
      [u, own_verdict](Record& stored) {
        auto a = model::answer_for(stored, own_verdict);
        answer(*u, http::reply{a.status, std::move(a.body)});
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

// A job's work on a record that is not pending (issue 9,
// actors/validator_upkeep.cpp): a validated Play purchase is acknowledged, or a
// subscription whose expiry has passed is refreshed; the job completes once
// that is settled, or is rescheduled with backoff: an acknowledgement until
// Google's deadline (then it is failed), a refresh until retry.max-attempts
// (then it completes with the record as it was). A Store A record's job has
// nothing to do and completes.
void upkeep_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, app_context_ptr app,
                model::purchase_order_record r, std::shared_ptr<span> root);
void upkeep_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, app_context_ptr app,
                model::receipt_record r, std::shared_ptr<span> root);
void upkeep_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, app_context_ptr app,
                model::transaction_record r, std::shared_ptr<span> root);

// Completes the job with the record's verdict, or — still pending — reschedules
// it with backoff, marking the record failed once attempts run out.
template <class Record>
void finish_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, Record r,
                std::shared_ptr<span> root) {
  const auto& settings = deps->settings;
  auto now = deps->clock->now_ms();
  auto report = [self, scheduler, id = job.id, root](const std::string& outcome) {
    root->outcome(outcome);
    root->end();
    self->send(scheduler, done_atom_v, id);
  };
  auto on_error = [report](caf::error& e) { report("error: " + caf::to_string(e)); };
  r.updated_at = now;
  if (r.state == model::validation_state::pending) {
    ++job.attempts;
    job.last_error = r.store_detail;
    if (!model::attempts_exhausted(settings.retry, job.attempts)) {
      job.next_attempt_at
        = now + model::backoff_delay_ms(settings.retry, job.attempts, deps->random->unit());
      self->request(deps->persistence, caf::infinite, reschedule_atom_v, root->child(), job)
        .then([report](bool) { report("rescheduled"); }, on_error);
      return;
    }
    r.state = model::validation_state::failed;
  }
  auto outcome = std::string(model::to_string(r.state));
  self->request(deps->persistence, caf::infinite, complete_atom_v, root->child(), job, std::move(r))
    .then([report, outcome](bool applied) { report(applied ? outcome : "overtaken"); }, on_error);
}

} // namespace receiptd::actors::steps

#pragma once
// Steps the validator flows share: answering, saving, asking a store, and
// finishing a revalidation job. Internal to actors/validator*.cpp.

#include <caf/event_based_actor.hpp>

#include <functional>
#include <random>

#include "actors/validator.hpp"
#include "http/reply.hpp"
#include "model/resource_json.hpp"

namespace receiptd::actors::steps {

model::unix_ms now_ms();

// A draw in [0, 1) for backoff jitter.
double unit_random();

// One upload in flight: shared by the continuations of its asynchronous steps.
struct upload_run {
  inbound in;
  app_context_ptr app;
  validator_deps_ptr deps;
  span root;
  model::unix_ms started_at = 0;
};
using upload_ptr = std::shared_ptr<upload_run>;

void answer(upload_run& u, int status, std::string body,
            std::optional<int> retry_after = std::nullopt);
void answer_errors(upload_run& u, int status, const model::field_errors& errors);

// Saves the record (with a retry job when pending) and answers with what was
// stored: 200, 206 or 402. A failed save answers 503: nothing was promised.
template <class Record>
void save_and_answer(caf::event_based_actor* self, upload_ptr u, Record r) {
  const auto& deps = *u->deps;
  auto first_attempt = now_ms()
                       + model::backoff_delay_ms(deps.settings.retry, 0, unit_random());
  auto own_verdict = r.fraud;
  self->request(deps.persistence, caf::infinite, save_atom_v, u->root.child(),
                std::move(r), first_attempt)
    .then(
      [u, own_verdict](Record& stored) {
        auto a = model::answer_for(stored, own_verdict);
        answer(*u, a.status, std::move(a.body));
      },
      [u](caf::error& e) {
        answer_errors(*u, 503,
                      {{"", "storage_unavailable",
                        "the upload could not be stored; retry later"}});
      });
}

// Asks the Store B client under the validator's deadline; the record comes back
// with the store's verdict applied (a passed deadline counts as unreachable).
void ask_store_b(caf::event_based_actor* self, const trace_context& ctx,
                 const validator_deps& deps, app_context_ptr app,
                 model::purchase_order_record r,
                 std::function<void(model::purchase_order_record)> k);

// Asks the Store A client (verifyReceipt) under the validator's deadline.
void ask_store_a(caf::event_based_actor* self, const trace_context& ctx,
                 const validator_deps& deps, const model::app& app, model::receipt_record r,
                 std::function<void(model::receipt_record)> k);

// Completes the job with the record's verdict, or — still pending — reschedules
// it with backoff, marking the record failed once attempts run out.
template <class Record>
void finish_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, Record r,
                std::shared_ptr<span> root) {
  const auto& settings = deps->settings;
  auto now = now_ms();
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
        = now + model::backoff_delay_ms(settings.retry, job.attempts, unit_random());
      self->request(deps->persistence, caf::infinite, reschedule_atom_v,
                    root->child(), job)
        .then([report](bool) { report("rescheduled"); }, on_error);
      return;
    }
    r.state = model::validation_state::failed;
  }
  auto outcome = std::string(model::to_string(r.state));
  self->request(deps->persistence, caf::infinite, complete_atom_v, root->child(),
                job, std::move(r))
    .then([report, outcome](bool applied) { report(applied ? outcome : "overtaken"); },
          on_error);
}

} // namespace receiptd::actors::steps

// The validator's jobs on records that are not pending: Play
// acknowledgements and subscription refreshes (Play and StoreKit 2), and the steps that end any job
// (actors/validator_steps.hpp).
#include <caf/event_based_actor.hpp>

#include "actors/log.hpp"
#include "actors/validator_steps.hpp"
#include "model/store_a/refresh.hpp"
#include "model/store_a/transaction_record.hpp"
#include "model/store_b/acknowledgement.hpp"
#include "model/store_b/purchase_order.hpp"
#include "model/store_b/refresh.hpp"

namespace receiptd::actors::steps {

namespace {

void acknowledge(caf::event_based_actor* self, validator_deps_ptr deps,
                 retry_scheduler_actor scheduler, model::validation_job job, app_context_ptr app,
                 model::purchase_order_record r, std::shared_ptr<span> root) {
  auto report = job_reporter(self, scheduler, job.id, root);
  store_b_acknowledge ask{root->child(), std::move(app), r,
                          deps->clock->steady_now() + deps->settings.store_deadline};
  auto shared = std::make_shared<model::purchase_order_record>(std::move(r));
  auto land = [=](const model::store_b::acknowledge_answer& a) mutable {
    ++job.attempts;
    // Not bounded by retry.max-attempts: asked again until Google's deadline.
    if (!model::store_b::apply_acknowledgement(*shared, a, deps->clock->now_ms(), false))
      return reschedule_job(self, *deps, job, a.detail, a.retry_not_before, root, report);
    if (shared->acknowledgement == model::acknowledgement_state::failed)
      log_warn("purchase order " + shared->id
               + " could not be acknowledged: " + shared->store_detail);
    auto outcome
      = std::string("acknowledgement ") + std::string(model::to_string(*shared->acknowledgement));
    complete_job(self, *deps, job, std::move(*shared), root, report, outcome);
  };
  self->request(deps->store_b, answered_by_deadline, acknowledge_atom_v, std::move(ask))
    .then([land](model::store_b::acknowledge_answer& a) mutable { land(a); },
          [land](caf::error& e) mutable {
            land({model::store_b::acknowledge_outcome::retry, deadline_verdict(e).detail});
          });
}

// A refresh's end, for both stores: completed when the answer settled the record;
// else the attempt counts and the job is rescheduled until retry.max-attempts,
// then completed with the record as it was ("refresh given up", updated_at now),
// so the sweep asks again after the store's refresh interval.
template <class Record>
void end_refresh(caf::event_based_actor* self, const validator_deps& deps,
                 model::validation_job& job, Record& r, bool settled,
                 const model::store_verdict& v, const std::shared_ptr<span>& root,
                 const job_report& report) {
  if (settled)
    return complete_job(self, deps, job, std::move(r), root, report, "refreshed");
  ++job.attempts;
  if (!model::attempts_exhausted(deps.settings.retry, job.attempts))
    return reschedule_job(self, deps, job, v.detail, v.retry_not_before, root, report);
  complete_job(self, deps, job, std::move(r), root, report, "refresh given up");
}

void refresh(caf::event_based_actor* self, validator_deps_ptr deps, retry_scheduler_actor scheduler,
             model::validation_job job, app_context_ptr app, model::purchase_order_record r,
             std::shared_ptr<span> root) {
  auto report = job_reporter(self, scheduler, job.id, root);
  store_b_check check{root->child(),  std::move(app),
                      r.package_name, r.purchase_token,
                      r.purchase,     model::store_b::first_api(r),
                      false,          deps->clock->steady_now() + deps->settings.store_deadline};
  auto shared = std::make_shared<model::purchase_order_record>(std::move(r));
  auto land = [=](const model::store_verdict& v, model::play_purchase answered) mutable {
    bool settled = model::store_b::apply_refresh(*shared, v, std::move(answered));
    end_refresh(self, *deps, job, *shared, settled, v, root, report);
  };
  self->request(deps->store_b, answered_by_deadline, check_atom_v, std::move(check))
    .then([land](store_b_answer& a) mutable { land(a.verdict, std::move(a.purchase)); },
          [land, shared](caf::error& e) mutable { land(deadline_verdict(e), shared->purchase); });
}

// A StoreKit 2 subscription past its expiry, asked again: Get All
// Subscription Statuses, landed like a notification (model/store_a/refresh.hpp).
void refresh(caf::event_based_actor* self, validator_deps_ptr deps, retry_scheduler_actor scheduler,
             model::validation_job job, app_context_ptr app, model::transaction_record r,
             std::shared_ptr<span> root) {
  auto report = job_reporter(self, scheduler, job.id, root);
  store_a_transaction_check check{root->child(), std::move(app), r.transaction.transaction_id,
                                  model::store_a::sandbox_first(r),
                                  deps->clock->steady_now() + deps->settings.store_deadline};
  auto shared = std::make_shared<model::transaction_record>(std::move(r));
  auto land = [=](model::store_verdict v,
                  const std::vector<model::store_a::subscription_status_entry>& entries) mutable {
    std::optional<model::store_a::subscription_status> status;
    if (v.outcome == model::store_outcome::confirmed) {
      auto found = model::store_a::status_of(*shared, entries, *deps->trust);
      if (found) {
        status = std::move(*found);
      } else {
        log_warn("transaction " + shared->transaction.transaction_id + ": "
                 + found.err().message());
        v.outcome = model::store_outcome::unreachable;
        v.detail = found.err().message();
      }
    }
    bool settled = model::store_a::apply_refresh(*shared, v, status);
    end_refresh(self, *deps, job, *shared, settled, v, root, report);
  };
  self->request(deps->store_a, answered_by_deadline, refresh_atom_v, std::move(check))
    .then([land](store_a_statuses_answer& a) mutable { land(std::move(a.verdict), a.entries); },
          [land](caf::error& e) mutable { land(deadline_verdict(e), {}); });
}

// A job with nothing to do: completed with the record as it is.
template <class Record>
void settle_as_is(caf::event_based_actor* self, validator_deps_ptr deps,
                  retry_scheduler_actor scheduler, const model::validation_job& job, Record r,
                  std::shared_ptr<span> root) {
  complete_job(self, *deps, job, std::move(r), root, job_reporter(self, scheduler, job.id, root),
               "nothing to do");
}

} // namespace

job_report job_reporter(caf::event_based_actor* self, retry_scheduler_actor scheduler,
                        std::string job_id, std::shared_ptr<span> root) {
  return [self, scheduler, job_id, root](const std::string& outcome) {
    root->outcome(outcome);
    root->end();
    self->send(scheduler, done_atom_v, job_id);
  };
}

void reschedule_job(caf::event_based_actor* self, const validator_deps& deps,
                    model::validation_job job, const std::string& why,
                    std::optional<model::unix_ms> not_before, const std::shared_ptr<span>& root,
                    job_report report) {
  job.last_error = why;
  job.next_attempt_at = model::next_attempt_at(deps.settings.retry, job.attempts,
                                               deps.random->unit(), deps.clock->now_ms(), not_before);
  self->request(deps.persistence, caf::infinite, reschedule_atom_v, root->child(), job)
    .then([report](bool) { report("rescheduled"); },
          [report](caf::error& e) { report("error: " + caf::to_string(e)); });
}

void upkeep_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, app_context_ptr app,
                model::purchase_order_record r, std::shared_ptr<span> root) {
  if (model::purpose_of(r) == model::job_purpose::acknowledge)
    return acknowledge(self, std::move(deps), scheduler, std::move(job), std::move(app),
                       std::move(r), std::move(root));
  refresh(self, std::move(deps), scheduler, std::move(job), std::move(app), std::move(r),
          std::move(root));
}

void upkeep_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, app_context_ptr,
                model::receipt_record r, std::shared_ptr<span> root) {
  settle_as_is(self, std::move(deps), scheduler, job, std::move(r), std::move(root));
}

void upkeep_job(caf::event_based_actor* self, validator_deps_ptr deps,
                retry_scheduler_actor scheduler, model::validation_job job, app_context_ptr app,
                model::transaction_record r, std::shared_ptr<span> root) {
  if (model::purpose_of(r) == model::job_purpose::refresh)
    return refresh(self, std::move(deps), scheduler, std::move(job), std::move(app), std::move(r),
                   std::move(root));
  settle_as_is(self, std::move(deps), scheduler, job, std::move(r), std::move(root));
}

} // namespace receiptd::actors::steps

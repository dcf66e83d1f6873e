// A persistence worker: one database session on a thread of its own (spawned
// detached: SOCI blocks). Every call runs inside a span; model::error values
// become caf::error values.

#include "actors/persistence_worker.hpp"
#include "actors/resource_requests.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>


#include <chrono>

#include "actors/customer_answers.hpp"
#include "actors/log.hpp"
#include "actors/work_notice.hpp"
#include "db/database.hpp"
#include "db/work_written.hpp"
#include "model/resource_json.hpp"

namespace receiptd::actors {

namespace {

// ---- worker ---------------------------------------------------------------

struct worker_state {
  std::string url;
  std::unique_ptr<db::database> db;
  tracer* trace = &tracer::off();                          // never null
  const model::time_source* clock = &model::system_time(); // never null
  metrics* instruments = &metrics::off();                  // never null
  http::turn_hook* turns = nullptr; // each answer is handed on in a turn (reply())
  work_notice* notice = nullptr;    // told what each call wrote to be claimed (reply())
  customer_changes* changes = nullptr; // counts the calls that may change customers (reply())
  bool changed_customers = false;      // set by a reads_only call that wrote after all
  // Database errors, each kind at most every 10 s (with the count left out): a
  // database that is away fails every request, and the log must stay readable.
  log_limiter errors;
  static inline const char* name = "persistence-worker";

  void log_failure(const std::string& kind, const std::string& text) {
    errors.log(log_level::error, kind, text);
  }

  // The session, (re)opened on demand: a database that was down at start or
  // went away is retried on the next request instead of failing forever.
  model::result<db::database*> session() {
    if (!db) {
      auto opened = db::database::open(url);
      if (!opened)
        return opened.err();
      db = std::move(opened).value();
    }
    return db.get();
  }
};

using worker_pointer = persistence_worker_actor::stateful_pointer<worker_state>;

// Whether a call may change what a customer lookup answers (actors/customer_answers.hpp):
// any call but those that only read, or write nothing a customer's answer shows
// (claims, leases, deliveries). When unsure, may_change: a needless count only
// costs kept answers.
enum class effect { may_change_customers, reads_only };

// Answers the call being handled, in a turn of this thread (scheduler_turns): when
// no scheduler thread is awake, the actor work the answer causes (the pool master,
// the upload's validator and its reply) runs on this thread before it waits for
// the next call, instead of waking a scheduler thread for it. Before that, the
// work the call wrote for the background actors is told to them (committed by now).
// The count of changes rises first, so that no customer answer read before the
// call is given again once its caller has the answer.
template <class T>
caf::result<T> reply(worker_pointer self, caf::expected<T> out,
                     effect e = effect::may_change_customers) {
  if (auto written = db::take_work_written(); self->state.notice)
    self->state.notice->tell(written);
  const bool changed = e == effect::may_change_customers
    || std::exchange(self->state.changed_customers, false);
  if (changed && self->state.changes)
    self->state.changes->written();
  auto rp = self->template make_response_promise<T>();
  http::turn t(self->state.turns);
  if (out)
    rp.deliver(std::move(*out));
  else
    rp.deliver(std::move(out.error()));
  return rp;
}

// Runs one database call inside a span; turns model::error into caf::error.
// Work outside any upload (claims) carries no trace id and records no span.
template <class T, class F>
caf::result<T> run(worker_pointer self, const trace_context& ctx, const char* what, F&& f,
                   effect e = effect::may_change_customers) {
  caf::expected<T> answer = caf::error{};
  {
    span s(ctx.trace_id.empty() ? tracer::off() : *self->state.trace, ctx, "persistence", what);
    auto db = self->state.session();
    if (!db) {
      s.outcome("error");
      self->state.instruments->db_errors.add();
      self->state.log_failure("session", "cannot reach the database: " + db.err().message());
      answer = db_failure(db.err().message());
    } else if (auto out = f(**db); !out) {
      s.outcome("error");
      self->state.instruments->db_errors.add();
      self->state.log_failure(what,
                              std::string("database ") + what + " failed: " + out.err().message());
      answer = db_failure(out.err().message());
    } else {
      s.outcome("ok");
      answer = std::move(out).value();
    }
  } // the span ends before the answer is handed on
  return reply<T>(self, std::move(answer), e);
}

// Group commit: the saves of many uploads in one transaction. Each upload's span
// ends before the answers are handed on.
caf::expected<save_batch_result> save(worker_pointer self, save_batch& batch) {
  std::vector<span> spans;
  std::vector<db::batch_save> saves;
  spans.reserve(batch.size());
  saves.reserve(batch.size());
  for (auto& item : batch) {
    spans.emplace_back(*self->state.trace, item.trace, "persistence", "save");
    saves.push_back(std::move(item.save));
  }
  auto db = self->state.session();
  auto started = self->state.clock->steady_now();
  auto out = db ? (*db)->save_batch(saves) : model::result<save_batch_result>(db.err());
  const auto& m = *self->state.instruments;
  if (!out) {
    m.db_errors.add();
    self->state.log_failure("save",
                            "database save of " + std::to_string(batch.size())
                              + " uploads failed: " + out.err().message());
    for (auto& s : spans)
      s.outcome("error");
    return db_failure(out.err().message());
  }
  m.commit_duration.observe(self->state.clock->steady_now() - started);
  m.save_batch_size.observe(static_cast<double>(batch.size()));
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto& saved = (*out)[i];
    spans[i].outcome(saved ? "ok (batch of " + std::to_string(batch.size()) + ")" : "error");
    if (!saved) {
      m.db_errors.add();
      self->state.log_failure("save one", "database save failed: " + saved.err().message());
    }
  }
  return std::move(out).value();
}

caf::expected<auth_batch_result> authenticate(worker_pointer self, const auth_batch& batch) {
  std::vector<span> spans;
  std::vector<std::string> hashes;
  for (const auto& [ctx, hash] : batch) {
    spans.emplace_back(*self->state.trace, ctx, "persistence", "authenticate");
    hashes.push_back(hash);
  }
  auto db = self->state.session();
  auto out = db ? (*db)->apps_by_token_hashes(hashes) : model::result<db::token_lookups>(db.err());
  for (auto& s : spans)
    s.outcome(out ? "ok" : "error");
  if (!out) {
    self->state.instruments->db_errors.add();
    self->state.log_failure("token lookup", "token lookup failed: " + out.err().message());
    return db_failure(out.err().message());
  }
  auth_batch_result answers;
  answers.reserve(out->owners.size());
  for (auto& owner : out->owners) { // each tagged with the revision of their common snapshot
    if (owner)
      answers.push_back({std::move(owner->app), out->revision, owner->kind});
    else
      answers.push_back({std::nullopt, out->revision});
  }
  return answers;
}

persistence_worker_actor::behavior_type
persistence_worker(worker_pointer self, std::string url, tracer* trace,
                   const model::time_source* clock, metrics* instruments, http::turn_hook* turns,
                   work_notice* notice, customer_changes* changes) {
  self->state.url = std::move(url);
  self->state.turns = turns;
  self->state.notice = notice;
  self->state.changes = changes;
  self->state.trace = trace;
  self->state.clock = clock;
  self->state.instruments = instruments;
  self->state.errors = log_limiter(*clock, std::chrono::seconds(10));
  return {
    [=](save_atom, save_batch& batch) -> caf::result<save_batch_result> {
      return reply<save_batch_result>(self, save(self, batch));
    },
    [=](authenticate_atom, const auth_batch& batch) -> caf::result<auth_batch_result> {
      return reply<auth_batch_result>(self, authenticate(self, batch), effect::reads_only);
    },
    // Outside any upload: no trace, no span.
    [=](auth_revision_atom) -> caf::result<std::int64_t> {
      return run<std::int64_t>(self, trace_context{}, "auth_revision",
                               [](db::database& db) { return db.auth_revision(); },
                               effect::reads_only);
    },
    // GET /metrics and /readyz, on a worker of their own: outside any upload.
    [=](queue_figures_atom) -> caf::result<db::job_queue_figures> {
      return run<db::job_queue_figures>(
        self, trace_context{}, "queue_figures",
        [&](db::database& db) { return db.queue_figures(self->state.clock->now_ms()); },
        effect::reads_only);
    },
    [=](ready_atom) -> caf::result<std::int32_t> {
      return run<std::int32_t>(self, trace_context{}, "missing_migrations",
                               [](db::database& db) -> model::result<std::int32_t> {
                                 auto missing = db.missing_migrations();
                                 if (!missing)
                                   return missing.err();
                                 return static_cast<std::int32_t>(*missing);
                               },
                               effect::reads_only);
    },
    [=](get_atom, const trace_context& ctx, model::record_kind kind,
        const std::string& id) -> caf::result<found_record> {
      return run<found_record>(
        self, ctx, "get", [&](db::database& db) -> model::result<found_record> {
          found_record out;
          if (kind == model::record_kind::store_a_app_transaction) {
            auto t = db.find_app_transaction(id);
            if (!t)
              return t.err();
            if (*t) {
              out.app_id = (*t)->app_id;
              out.json = model::resource_text(**t);
            }
            return out;
          }
          auto r = find_record(db, kind, id);
          if (!r)
            return r.err();
          if (*r) {
            // With the purchases it names, as the upload's answer had them.
            auto now = self->state.clock->now_ms();
            auto purchases = db.purchases_of(**r, now);
            if (!purchases)
              return purchases.err();
            std::visit(
              [&](auto& record) {
                record.purchases = *purchases;
                out.app_id = record.app_id;
                out.json = model::resource_text(record);
              },
              **r);
          }
          return out;
        },
        effect::reads_only);
    },
    [=](resource_atom, const trace_context& ctx,
        const resource_request& r) -> caf::result<http::reply> {
      return run<http::reply>(
        self, ctx, "resource",
        [&](db::database& db) -> model::result<http::reply> {
          return answer_resource(db, r, self->state.clock->now_ms());
        },
        writes(r) ? effect::may_change_customers : effect::reads_only);
    },
    [=](customer_atom, const trace_context& ctx,
        const resource_request& r) -> caf::result<customer_answer> {
      return run<customer_answer>(
        self, ctx, "customer",
        [&](db::database& db) -> model::result<customer_answer> {
          return answer_customer(db, r, self->state.clock->now_ms());
        },
        effect::reads_only);
    },
    [=](expire_atom, std::int32_t limit) -> caf::result<std::int32_t> {
      return run<std::int32_t>(self, trace_context{}, "expire_due",
                               [&](db::database& db) -> model::result<std::int32_t> {
                                 auto handled = db.expire_due(self->state.clock->now_ms(), limit);
                                 if (!handled)
                                   return handled.err();
                                 // Most runs find nothing due: no change then.
                                 self->state.changed_customers = *handled > 0;
                                 return static_cast<std::int32_t>(*handled);
                               },
                               effect::reads_only);
    },
    [=](claim_atom, const std::string& owner, std::int64_t lease_ms,
        std::int32_t limit) -> caf::result<claimed_jobs> {
      return run<claimed_jobs>(self, trace_context{}, "claim",
                               [&](db::database& db) -> model::result<claimed_jobs> {
                                 auto now = self->state.clock->now_ms();
                                 auto jobs = db.claim_due_jobs(owner, now, now + lease_ms, limit);
                                 if (!jobs)
                                   return jobs.err();
                                 claimed_jobs out;
                                 for (auto& job : *jobs) {
                                   claimed_job c;
                                   c.job = std::move(job);
                                   bool found = false;
                                   if (c.job.kind == model::record_kind::store_a_app_transaction) {
                                     auto r = db.find_app_transaction(c.job.record_id);
                                     if (!r)
                                       return r.err();
                                     c.app_transaction = std::move(*r);
                                     found = c.app_transaction.has_value();
                                   } else {
                                     auto r = find_record(db, c.job.kind, c.job.record_id);
                                     if (!r)
                                       return r.err();
                                     c.record = std::move(*r);
                                     found = c.record.has_value();
                                   }
                                   auto a = db.find_app(c.job.app_id);
                                   if (!a)
                                     return a.err();
                                   c.app = std::move(*a);
                                   if (!found || !c.app) {
                                     // Deleted by hand, or its app is: nothing
                                     // left to revalidate, so the job goes too.
                                     if (auto dropped = db.drop_job(c.job); !dropped)
                                       return dropped.err();
                                     log_warn("job " + c.job.id + " dropped: its "
                                              + (found ? "app" : "record") + " is gone");
                                     continue;
                                   }
                                   out.push_back(std::move(c));
                                 }
                                 return out;
                               },
                               effect::reads_only);
    },
    [=](complete_atom, const trace_context& ctx, const model::validation_job& job,
        const model::purchase_order_record& r) -> caf::result<bool> {
      return run<bool>(self, ctx, "complete_job",
                       [&](db::database& db) { return db.complete_job(job, r); });
    },
    [=](complete_atom, const trace_context& ctx, const model::validation_job& job,
        const model::receipt_record& r) -> caf::result<bool> {
      return run<bool>(self, ctx, "complete_job",
                       [&](db::database& db) { return db.complete_job(job, r); });
    },
    [=](complete_atom, const trace_context& ctx, const model::validation_job& job,
        const model::transaction_record& r) -> caf::result<bool> {
      return run<bool>(self, ctx, "complete_job",
                       [&](db::database& db) { return db.complete_job(job, r); });
    },
    [=](complete_atom, const trace_context& ctx, const model::validation_job& job,
        const model::store_a::app_transaction_record& r) -> caf::result<bool> {
      return run<bool>(self, ctx, "complete_job",
                       [&](db::database& db) { return db.complete_job(job, r); });
    },
    [=](save_atom, const trace_context& ctx, const model::store_a::app_transaction_record& r,
        model::unix_ms first_attempt_at) -> caf::result<model::store_a::app_transaction_record> {
      return run<model::store_a::app_transaction_record>(
        self, ctx, "save_app_transaction",
        [&](db::database& db) -> model::result<model::store_a::app_transaction_record> {
          auto saved = db.save_app_transaction(r, first_attempt_at);
          if (!saved)
            return saved.err();
          return std::move(saved->record);
        });
    },
    [=](reschedule_atom, const trace_context& ctx,
        const model::validation_job& job) -> caf::result<bool> {
      return run<bool>(self, ctx, "reschedule_job",
                       [&](db::database& db) { return db.reschedule_job(job); },
                       effect::reads_only); // the job only
    },
    [=](find_app_atom, const std::string& id) -> caf::result<std::optional<model::app>> {
      return run<std::optional<model::app>>(self, trace_context{}, "find_app",
                                            [&](db::database& db) { return db.find_app(id); },
                                            effect::reads_only);
    },
    [=](apply_atom, const trace_context& ctx, const std::string& app_id,
        const model::store_a::verified_notification& v) -> caf::result<notification_result> {
      return run<notification_result>(
        self, ctx, "apply_notification",
        [&](db::database& db) -> model::result<notification_result> {
          auto applied = db.apply_store_a_notification(app_id, v, self->state.clock->now_ms());
          if (!applied)
            return applied.err();
          return notification_result{applied->duplicate, applied->records_changed, applied->events};
        });
    },
    [=](find_order_atom, const trace_context& ctx, const std::string& app_id,
        const std::string& token) -> caf::result<std::optional<model::purchase_order_record>> {
      return run<std::optional<model::purchase_order_record>>(
        self, ctx, "find_purchase_order",
        [&](db::database& db) { return db.find_purchase_order_by_token(app_id, token); },
        effect::reads_only);
    },
    [=](apply_atom, const trace_context& ctx, const std::string& app_id,
        const model::store_b::rtdn& n, const std::optional<model::purchase_order_record>& updated)
      -> caf::result<notification_result> {
      return run<notification_result>(
        self, ctx, "apply_notification",
        [&](db::database& db) -> model::result<notification_result> {
          auto applied
            = db.apply_store_b_notification(app_id, n, updated, self->state.clock->now_ms());
          if (!applied)
            return applied.err();
          return notification_result{applied->duplicate, applied->records_changed, applied->events};
        });
    },
    // Outside any upload: no trace, no span.
    [=](claim_deliveries_atom, const std::string& owner, std::int64_t lease_ms, std::int32_t limit,
        std::int32_t per_endpoint) -> caf::result<webhook_deliveries> {
      return run<webhook_deliveries>(
        self, trace_context{}, "claim_deliveries", [&](db::database& db) {
          auto now = self->state.clock->now_ms();
          return db.claim_deliveries(owner, now, now + lease_ms, limit, per_endpoint);
        },
        effect::reads_only);
    },
    [=](finish_atom, const model::webhook_delivery& d) -> caf::result<bool> {
      return run<bool>(self, trace_context{}, "finish_delivery",
                       [&](db::database& db) { return db.finish_delivery(d); },
                       effect::reads_only);
    },
    [=](claim_refunds_atom, const std::string& owner, std::int64_t lease_ms,
        std::int32_t limit) -> caf::result<refund_works> {
      return run<refund_works>(self, trace_context{}, "claim_refund_requests",
                               [&](db::database& db) {
                                 auto now = self->state.clock->now_ms();
                                 return db.claim_refund_requests(owner, now, now + lease_ms, limit);
                               },
                               effect::reads_only);
    },
    [=](finish_atom, const model::purchases::refund_request& r) -> caf::result<bool> {
      return run<bool>(self, trace_context{}, "finish_refund_request", [&](db::database& db) {
        return db.finish_refund_request(r, self->state.clock->now_ms());
      });
    },
    [=](refresh_atom, model::record_kind kind, std::int64_t stale_ms,
        std::int32_t limit) -> caf::result<std::int32_t> {
      return run<std::int32_t>(self, trace_context{}, "enqueue_refreshes",
                               [&](db::database& db) -> model::result<std::int32_t> {
                                 auto now = self->state.clock->now_ms();
                                 auto made = db.enqueue_refreshes(kind, now, now - stale_ms, limit);
                                 if (!made)
                                   return made.err();
                                 return static_cast<std::int32_t>(*made);
                               },
                               effect::reads_only); // jobs only
    },
    [=](claim_voided_atom, const std::string& owner, std::int64_t lease_ms,
        std::int32_t limit) -> caf::result<voided_polls> {
      return run<voided_polls>(self, trace_context{}, "claim_voided_polls", [&](db::database& db) {
        auto now = self->state.clock->now_ms();
        return db.claim_voided_polls(owner, now, now + lease_ms, limit);
      },
      effect::reads_only);
    },
    [=](apply_voided_atom, const std::string& owner, const model::store_b::voided_poll& poll,
        const voided_purchases& page,
        std::optional<std::int64_t> keep_lease_ms) -> caf::result<std::optional<std::int32_t>> {
      return run<std::optional<std::int32_t>>(
        self, trace_context{}, "apply_voided_page",
        [&](db::database& db) -> model::result<std::optional<std::int32_t>> {
          auto now = self->state.clock->now_ms();
          std::optional<model::unix_ms> until;
          if (keep_lease_ms)
            until = now + *keep_lease_ms;
          auto changed = db.apply_voided_page(owner, poll, page, now, until);
          if (!changed)
            return changed.err();
          if (!*changed)
            return std::optional<std::int32_t>();
          // Most pages void nothing receiptd holds: no change then.
          self->state.changed_customers = **changed > 0;
          return std::optional<std::int32_t>(static_cast<std::int32_t>(**changed));
        },
        effect::reads_only);
    },
    [=](orders_atom, std::int32_t limit) -> caf::result<orders_due_list> {
      return run<orders_due_list>(self, trace_context{}, "orders_due",
                                  [&](db::database& db) { return db.orders_due(limit); },
                                  effect::reads_only);
    },
    [=](apply_orders_atom, const std::string& app_id,
        const order_reads& reads) -> caf::result<std::int32_t> {
      return run<std::int32_t>(self, trace_context{}, "apply_orders",
                               [&](db::database& db) -> model::result<std::int32_t> {
                                 auto changed
                                   = db.apply_orders(app_id, reads, self->state.clock->now_ms());
                                 if (!changed)
                                   return changed.err();
                                 self->state.changed_customers = *changed > 0;
                                 return static_cast<std::int32_t>(*changed);
                               },
                               effect::reads_only);
    },
  };
}

} // namespace

persistence_worker_actor spawn_persistence_worker(caf::actor_system& sys, const std::string& url,
                                                  tracer& trace, const model::time_source& clock,
                                                  metrics& instruments, http::turn_hook* turns,
                                                  work_notice* notice, customer_changes* changes) {
  return sys.spawn<caf::detached>(persistence_worker, url, &trace, &clock, &instruments, turns,
                                  notice, changes);
}

} // namespace receiptd::actors

#include "actors/persistence.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <boost/json/serialize.hpp>

#include <chrono>

#include "actors/log.hpp"
#include "db/database.hpp"
#include "db/url.hpp"
#include "model/resource_json.hpp"

namespace receiptd::actors {

namespace {

model::unix_ms now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

caf::error db_failure(const std::string& what) {
  return caf::make_error(caf::sec::runtime_error, "database: " + what);
}

// ---- worker ---------------------------------------------------------------

struct worker_state {
  std::string url;
  std::unique_ptr<db::database> db;
  tracer* trace = nullptr;
  static inline const char* name = "persistence-worker";

  // The session, (re)opened on demand: a database that was down at start or
  // went away is retried on the next request instead of failing forever.
  db::database* session(std::string& problem) {
    if (!db) {
      auto opened = db::database::open(url);
      if (!opened) {
        problem = opened.err().message;
        return nullptr;
      }
      db = std::move(opened).value();
    }
    return db.get();
  }
};

using worker_pointer = persistence_actor::stateful_pointer<worker_state>;

// Runs one database call inside a span; turns db::error into caf::error.
// Work outside any upload (claims) carries no trace id and records no span.
template <class T, class F>
caf::result<T> run(worker_pointer self, const trace_context& ctx, const char* what, F&& f) {
  span s(ctx.trace_id.empty() ? nullptr : self->state.trace, ctx, "persistence", what);
  std::string problem;
  auto* db = self->state.session(problem);
  if (!db) {
    s.outcome("error");
    return db_failure(problem);
  }
  auto out = f(*db);
  if (!out) {
    s.outcome("error");
    log_error(std::string("database ") + what + " failed: " + out.err().message);
    return db_failure(out.err().message);
  }
  s.outcome("ok");
  return std::move(out).value();
}

persistence_actor::behavior_type persistence_worker(worker_pointer self, std::string url,
                                                    tracer* trace) {
  self->state.url = std::move(url);
  self->state.trace = trace;
  return {
    [=](authenticate_atom, const trace_context& ctx,
        const std::string& token_hash) -> caf::result<std::optional<model::app>> {
      return run<std::optional<model::app>>(self, ctx, "authenticate", [&](db::database& db) {
        return db.app_by_token_hash(token_hash);
      });
    },
    [=](save_atom, const trace_context& ctx, const model::purchase_order_record& r,
        model::unix_ms first_attempt_at) -> caf::result<model::purchase_order_record> {
      return run<model::purchase_order_record>(
        self, ctx, "save_purchase_order",
        [&](db::database& db) -> db::outcome<model::purchase_order_record> {
          auto saved = db.save_purchase_order(r, first_attempt_at);
          if (!saved)
            return saved.err();
          return std::move(saved->record);
        });
    },
    [=](save_atom, const trace_context& ctx, const model::receipt_record& r,
        model::unix_ms first_attempt_at) -> caf::result<model::receipt_record> {
      return run<model::receipt_record>(
        self, ctx, "save_receipt", [&](db::database& db) -> db::outcome<model::receipt_record> {
          auto saved = db.save_receipt(r, first_attempt_at);
          if (!saved)
            return saved.err();
          return std::move(saved->record);
        });
    },
    [=](get_atom, const trace_context& ctx, model::record_kind kind,
        const std::string& id) -> caf::result<found_record> {
      return run<found_record>(self, ctx, "get", [&](db::database& db) -> db::outcome<found_record> {
        found_record out;
        if (kind == model::record_kind::store_b_purchase_order) {
          auto r = db.find_purchase_order(id);
          if (!r)
            return r.err();
          if (*r) {
            out.app_id = (*r)->app_id;
            out.json = boost::json::serialize(model::purchase_order_json(**r));
          }
        } else {
          auto r = db.find_receipt(id);
          if (!r)
            return r.err();
          if (*r) {
            out.app_id = (*r)->app_id;
            out.json = boost::json::serialize(model::receipt_json(**r));
          }
        }
        return out;
      });
    },
    [=](claim_atom, const std::string& owner, std::int64_t lease_ms,
        std::int32_t limit) -> caf::result<claimed_jobs> {
      return run<claimed_jobs>(
        self, trace_context{}, "claim", [&](db::database& db) -> db::outcome<claimed_jobs> {
          auto now = now_ms();
          auto jobs = db.claim_due_jobs(owner, now, now + lease_ms, limit);
          if (!jobs)
            return jobs.err();
          claimed_jobs out;
          for (auto& job : *jobs) {
            claimed_job c;
            c.job = std::move(job);
            if (c.job.kind == model::record_kind::store_b_purchase_order) {
              auto r = db.find_purchase_order(c.job.record_id);
              if (!r)
                return r.err();
              c.purchase_order = std::move(*r);
            } else {
              auto r = db.find_receipt(c.job.record_id);
              if (!r)
                return r.err();
              c.receipt = std::move(*r);
            }
            auto a = db.find_app(c.job.app_id);
            if (!a)
              return a.err();
            c.app = std::move(*a);
            out.push_back(std::move(c));
          }
          return out;
        });
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
    [=](reschedule_atom, const trace_context& ctx,
        const model::validation_job& job) -> caf::result<bool> {
      return run<bool>(self, ctx, "reschedule_job",
                       [&](db::database& db) { return db.reschedule_job(job); });
    },
  };
}

// ---- master ---------------------------------------------------------------

struct pool_state {
  std::vector<persistence_actor> workers;
  std::vector<std::size_t> load; // requests sent to each worker, not yet answered
  std::size_t queued = 0;
  std::size_t max_queued = 0;
  // SQLite with more than one worker: every write goes to worker 0, reads to the
  // others. SQLite runs one writer at a time anyway; spread over several sessions,
  // the writers met in its busy handler (sleeps of 1–100 ms: p99 1.4 s at 3k
  // uploads/s) and each write found its page cache dropped by the other sessions'
  // writes. One writing session keeps its cache and needs no lock waits.
  bool single_writer = false;
  static inline const char* name = "persistence-pool";

  std::size_t least_loaded(bool write) const {
    if (single_writer && load.size() > 1) {
      if (write)
        return 0;
      std::size_t best = 1;
      for (std::size_t i = 2; i < load.size(); ++i)
        if (load[i] < load[best])
          best = i;
      return best;
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < load.size(); ++i)
      if (load[i] < load[best])
        best = i;
    return best;
  }
};

using pool_pointer = persistence_actor::stateful_pointer<pool_state>;

enum class op { read, write };

template <class Reply, class... Ts>
caf::result<Reply> forward(pool_pointer self, op kind, Ts... xs) {
  auto& st = self->state;
  if (st.queued >= st.max_queued)
    return caf::make_error(caf::sec::runtime_error, "database: persistence pool overloaded");
  auto w = st.least_loaded(kind == op::write);
  ++st.load[w];
  ++st.queued;
  auto rp = self->template make_response_promise<Reply>();
  auto release = [self, w] {
    --self->state.load[w];
    --self->state.queued;
  };
  self->request(st.workers[w], caf::infinite, std::move(xs)...)
    .then(
      [=](Reply& r) mutable {
        release();
        rp.deliver(std::move(r));
      },
      [=](caf::error& e) mutable {
        release();
        rp.deliver(std::move(e));
      });
  return rp;
}

persistence_actor::behavior_type pool_master(pool_pointer self,
                                             std::vector<persistence_actor> workers,
                                             std::size_t max_queued, bool single_writer) {
  self->state.load.assign(workers.size(), 0);
  self->state.workers = std::move(workers);
  self->state.max_queued = max_queued;
  self->state.single_writer = single_writer;
  for (auto& w : self->state.workers)
    self->link_to(w);
  using po = model::purchase_order_record;
  using rr = model::receipt_record;
  return {
    [=](authenticate_atom a, trace_context ctx, std::string hash) {
      return forward<std::optional<model::app>>(self, op::read, a, std::move(ctx), std::move(hash));
    },
    [=](save_atom a, trace_context ctx, po r, model::unix_ms at) {
      return forward<po>(self, op::write, a, std::move(ctx), std::move(r), at);
    },
    [=](save_atom a, trace_context ctx, rr r, model::unix_ms at) {
      return forward<rr>(self, op::write, a, std::move(ctx), std::move(r), at);
    },
    [=](get_atom a, trace_context ctx, model::record_kind k, std::string id) {
      return forward<found_record>(self, op::read, a, std::move(ctx), k, std::move(id));
    },
    [=](claim_atom a, std::string owner, std::int64_t lease, std::int32_t limit) {
      return forward<claimed_jobs>(self, op::write, a, std::move(owner), lease, limit);
    },
    [=](complete_atom a, trace_context ctx, model::validation_job j, po r) {
      return forward<bool>(self, op::write, a, std::move(ctx), std::move(j), std::move(r));
    },
    [=](complete_atom a, trace_context ctx, model::validation_job j, rr r) {
      return forward<bool>(self, op::write, a, std::move(ctx), std::move(j), std::move(r));
    },
    [=](reschedule_atom a, trace_context ctx, model::validation_job j) {
      return forward<bool>(self, op::write, a, std::move(ctx), std::move(j));
    },
  };
}

} // namespace

persistence_actor spawn_persistence_pool(caf::actor_system& sys,
                                         const persistence_settings& settings,
                                         tracer* trace) {
  std::vector<persistence_actor> workers;
  for (std::size_t i = 0; i < settings.workers; ++i)
    workers.push_back(sys.spawn<caf::detached>(persistence_worker, settings.db_url, trace));
  bool sqlite = db::dialect_of(settings.db_url) == db::dialect::sqlite;
  return sys.spawn(pool_master, std::move(workers), settings.max_queued, sqlite);
}

} // namespace receiptd::actors

// The persistence pool master: the pool's one handle. Each worker runs one request
// at a time, handed to it by the master in order of priority:
//  1. the token path: token lookups (gathered into one batch) and the token
//     cache's auth revision checks. Every upload whose token is not cached waits
//     for one, and a check that does not answer makes the cache distrust itself.
//  2. saves, as a group commit: they wait while one save batch is being committed
//     (or no worker is free) and then go out as one batch (the uploads of that
//     moment share one transaction, one fsync and one thread hop; alone, an
//     upload goes out at once as a batch of one). A heavy save (a receipt of
//     hundreds of purchases, over a batch's row or byte limit by itself) commits
//     alone, beside the others rather than ahead of them: a save waits for no
//     heavy one, and heavy ones hold at most half the workers that save.
//  3. everything else (GET record lookups, store notifications, revalidation
//     jobs, webhook deliveries, the upkeep), in arrival order, on all workers of
//     its kind but one: a flood of cheap or unauthenticated requests, or a burst of
//     background work, never holds a lookup or a save for longer than one short
//     call, and one worker is left to them whatever waits.

#include "actors/persistence.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <type_traits>

#include "actors/persistence_worker.hpp"
#include "actors/resource_requests.hpp"
#include "db/url.hpp"

namespace receiptd::actors {

namespace {

// A save batch holds at most this many saves, rows and bytes: its transaction
// (and the wait of every save behind it) stays short whatever the records are. A
// receipt is one row per in-app purchase besides its own: 256 small uploads share
// one commit, while a 2,000-purchase receipt of 1 MB has a batch to itself and
// the small ones behind it share the next. (By count alone, four connections
// re-sending such receipts took small uploads' p99 from 15 to 544 ms.) Such a
// receipt is a heavy save: its commit takes seconds on a busy database (two
// thousand purchases to look up and fold), so small saves do not wait for it,
// and heavy saves hold at most half the workers (three connections re-sending
// them held the small uploads of another app for 13 s).
constexpr std::size_t max_save_batch = 256;
constexpr std::size_t max_save_batch_rows = 1024;
constexpr std::size_t max_save_batch_bytes = 1024 * 1024;
constexpr std::size_t max_auth_batch = 512;

template <class Reply>
using promise = caf::typed_response_promise<Reply>;

// What a save costs its batch: rows written and bytes of proof and annotations.
struct save_cost {
  std::size_t rows = 1;
  std::size_t bytes = 0;
  // Over a batch's limits by itself: it commits alone (pool_state::heavy_saves).
  bool heavy() const {
    return rows >= max_save_batch_rows || bytes >= max_save_batch_bytes;
  }
};

template <class Record>
save_cost cost_of(const Record& r) {
  save_cost c;
  auto echo = [&](const model::echo_fields& e) {
    return (e.metadata ? e.metadata->size() : 0)
      + (e.user_identifier ? e.user_identifier->size() : 0);
  };
  c.bytes = echo(r.echo);
  if constexpr (std::is_same_v<Record, model::receipt_record>) {
    c.rows += r.in_app_purchases.size();
    c.bytes += r.receipt_data.size();
  } else if constexpr (std::is_same_v<Record, model::transaction_record>) {
    c.bytes += r.signed_transaction.size();
  } else {
    c.bytes += r.purchase_data.size() + r.purchase_signature.size();
  }
  return c;
}

// A save or token lookup waiting for a worker, with where its result goes.
template <class Item, class Result>
struct pending {
  Item item;
  std::function<void(Result&)> deliver;
  std::function<void(const caf::error&)> fail;
  save_cost cost; // saves: what it adds to its batch
};
using pending_save = pending<batched_save, db::batch_saved>;
using pending_auth = pending<auth_batch::value_type, authenticated>;

// Any other call waiting for a worker: `start` sends it to the worker given.
struct pending_call {
  bool write = false;
  std::uint64_t arrived = 0; // arrival order among the other calls
  std::function<void(std::size_t)> start;
};

// What a worker is doing (one request at a time).
enum class duty { idle, token_path, save, other };

struct pool_state {
  std::vector<persistence_worker_actor> workers;
  std::vector<duty> duties; // per worker
  std::vector<pending_save> saves;       // the group commit's
  save_cost queued{0, 0};                // of those, together
  std::vector<pending_save> heavy_saves; // each committed alone
  std::vector<pending_auth> auths;
  std::deque<pending_call> token_calls;  // auth revision checks
  std::deque<pending_call> other_reads;  // the rest, by kind: on SQLite they go to
  std::deque<pending_call> other_writes; // different workers
  std::uint64_t arrivals = 0;
  std::size_t saving = 0;       // group commit batches sent to workers, not yet answered
  std::size_t saving_heavy = 0; // heavy saves sent to workers, not yet answered
  std::size_t max_queued = 0;
  metrics* instruments = &metrics::off(); // never null
  // SQLite with more than one worker: every write goes to worker 0, reads to the
  // others. SQLite runs one writer at a time anyway; spread over several sessions,
  // the writers met in its busy handler (sleeps of 1–100 ms: p99 1.4 s at 3k
  // uploads/s) and each write found its page cache dropped by the other sessions'
  // writes. One writing session keeps its cache and needs no lock waits.
  bool single_writer = false;
  static inline const char* name = "persistence-pool";

  std::size_t busy() const {
    return static_cast<std::size_t>(
      std::count_if(duties.begin(), duties.end(), [](duty d) { return d != duty::idle; }));
  }

  std::size_t outstanding() const {
    return saves.size() + heavy_saves.size() + auths.size() + token_calls.size()
      + other_reads.size() + other_writes.size() + busy();
  }

  bool sqlite_split() const { return single_writer && workers.size() > 1; }
  bool may_read(std::size_t w) const { return !sqlite_split() || w > 0; }
  bool may_write(std::size_t w) const { return !sqlite_split() || w == 0; }
  bool save_due() const {
    // A full batch by any of its limits goes out beside the one being committed.
    return !saves.empty()
      && (saving == 0 || saves.size() >= max_save_batch || queued.rows >= max_save_batch_rows
          || queued.bytes >= max_save_batch_bytes);
  }

  // Heavy saves hold at most half the workers that may save (at least one): the
  // others stay for everything else, of which there is more under load.
  bool heavy_due() const {
    std::size_t writers = 0;
    for (std::size_t i = 0; i < workers.size(); ++i)
      writers += may_write(i);
    return !heavy_saves.empty() && saving_heavy < std::max<std::size_t>(1, writers / 2);
  }

  // The workers other calls may hold at once: all that may take them but one,
  // which stays for the token path and saves (none to spare with a single worker
  // of that kind: there the priority alone orders the work).
  bool room_for_other(std::size_t w) const {
    std::size_t eligible = 0, holding = 0;
    for (std::size_t i = 0; i < workers.size(); ++i)
      if (may_read(i) == may_read(w) && may_write(i) == may_write(w)) {
        ++eligible;
        holding += duties[i] == duty::other;
      }
    return holding < std::max<std::size_t>(1, eligible - 1);
  }

  // The other call worker `w` takes next, the one that arrived first among those
  // it may run; none when it must stay free.
  std::deque<pending_call>* other_for(std::size_t w) {
    auto* reads = may_read(w) && !other_reads.empty() ? &other_reads : nullptr;
    auto* writes = may_write(w) && !other_writes.empty() ? &other_writes : nullptr;
    auto* q = reads && writes ? (reads->front().arrived < writes->front().arrived ? reads : writes)
      : reads                 ? reads
                              : writes;
    if (!q || !room_for_other(w))
      return nullptr;
    return q;
  }
};

using pool_pointer = persistence_actor::stateful_pointer<pool_state>;

// The pool's gauges, after every change: called where work arrives or leaves
// (pump). Its mailbox is read by itself (fifo_inbox::size moves what arrived into
// the queue it reads from anyway).
void publish(pool_pointer self) {
  const auto& st = self->state;
  const auto& m = *st.instruments;
  m.persistence_queued.set(static_cast<double>(st.outstanding() - st.busy()));
  m.persistence_at_workers.set(static_cast<double>(st.busy()));
  m.persistence_saving.set(static_cast<double>(st.saving + st.saving_heavy));
  m.persistence_mailbox.set(static_cast<double>(self->mailbox().size()));
}

caf::error overloaded() {
  return db_failure("persistence pool overloaded");
}

void pump(pool_pointer self);

// How much one batch may hold: requests, and of saves their rows and bytes.
struct batch_limits {
  std::size_t count;
  std::size_t rows = std::numeric_limits<std::size_t>::max();
  std::size_t bytes = std::numeric_limits<std::size_t>::max();
};
constexpr batch_limits save_batch_limits{max_save_batch, max_save_batch_rows, max_save_batch_bytes};

// Takes a batch out of `queue`: the first request whatever it costs, then, in
// order, each that still fits the limits (one that does not waits for the next
// batch, where it comes first or sooner: none waits for ever).
template <class Item, class Result>
std::vector<pending<Item, Result>> take_batch(std::vector<pending<Item, Result>>& queue,
                                              const batch_limits& limits) {
  std::vector<pending<Item, Result>> batch;
  std::size_t rows = 0, bytes = 0;
  auto kept = queue.begin();
  for (auto it = queue.begin(); it != queue.end(); ++it) {
    // (A first request above the limits leaves no room: nothing joins it.)
    bool fits = batch.empty()
      || (batch.size() < limits.count && rows + it->cost.rows <= limits.rows
          && bytes + it->cost.bytes <= limits.bytes);
    if (fits) {
      rows += it->cost.rows;
      bytes += it->cost.bytes;
      batch.push_back(std::move(*it));
    } else {
      if (kept != it)
        *kept = std::move(*it);
      ++kept;
    }
  }
  queue.erase(kept, queue.end());
  return batch;
}

// Sends a batch of waiting requests of one kind (take_batch) to worker `w`: each
// gets its own result, or the error of the whole batch. `answered` runs first when
// the batch comes back.
template <class Atom, class Item, class Result>
void send_batch(
  pool_pointer self, std::size_t w, duty d, Atom atom, std::vector<pending<Item, Result>>& queue,
  const batch_limits& limits, std::function<void()> answered = [] {}) {
  auto& st = self->state;
  auto waiting = std::make_shared<std::vector<pending<Item, Result>>>(take_batch(queue, limits));
  auto n = waiting->size();
  if constexpr (std::is_same_v<Item, batched_save>)
    if (&queue == &st.saves) // heavy saves are not counted there
      for (const auto& p : *waiting) {
        st.queued.rows -= p.cost.rows;
        st.queued.bytes -= p.cost.bytes;
      }
  std::vector<Item> batch;
  batch.reserve(n);
  for (auto& p : *waiting) // the items travel once; only the callbacks stay here
    batch.push_back(std::move(p.item));
  st.duties[w] = d;
  self->request(st.workers[w], caf::infinite, atom, std::move(batch))
    .then(
      [=](std::vector<Result>& results) {
        self->state.duties[w] = duty::idle;
        answered();
        for (std::size_t i = 0; i < waiting->size(); ++i)
          (*waiting)[i].deliver(results.at(i));
        pump(self);
      },
      [=](caf::error& e) {
        self->state.duties[w] = duty::idle;
        answered();
        for (auto& p : *waiting)
          p.fail(e);
        pump(self);
      });
}

void start(pool_pointer self, std::size_t w, duty d, std::deque<pending_call>& queue) {
  auto call = std::move(queue.front());
  queue.pop_front();
  self->state.duties[w] = d;
  call.start(w);
}

// Hands waiting work to idle workers, in order of priority (the top of this file).
// Saves wait while one save batch is being committed, unless a full batch is
// waiting: at everyday load the uploads that arrive during one commit share the
// next one (one transaction, one fsync, one thread hop, instead of one each on as
// many sessions), and under load batches run side by side on the idle workers. A
// save waits at most one commit, never a heavy save's (those go out one by one,
// after the group, while a worker that saves stays free of them).
void pump(pool_pointer self) {
  auto& st = self->state;
  for (std::size_t w = 0; w < st.workers.size(); ++w) {
    if (st.duties[w] != duty::idle)
      continue;
    if (st.may_read(w) && !st.auths.empty()) {
      send_batch(self, w, duty::token_path, authenticate_atom_v, st.auths,
                 batch_limits{max_auth_batch});
    } else if (st.may_read(w) && !st.token_calls.empty()) {
      start(self, w, duty::token_path, st.token_calls);
    } else if (st.may_write(w) && st.save_due()) {
      ++st.saving;
      send_batch(self, w, duty::save, save_atom_v, st.saves, save_batch_limits,
                 [self] { --self->state.saving; });
    } else if (st.may_write(w) && st.heavy_due()) {
      ++st.saving_heavy;
      send_batch(self, w, duty::save, save_atom_v, st.heavy_saves, batch_limits{1},
                 [self] { --self->state.saving_heavy; });
    } else if (auto* q = st.other_for(w)) {
      start(self, w, duty::other, *q);
    }
  }
  publish(self);
}

template <class Record>
caf::result<Record> enqueue_save(pool_pointer self, trace_context ctx, Record r,
                                 model::unix_ms first_attempt_at) {
  auto& st = self->state;
  if (st.outstanding() >= st.max_queued)
    return overloaded();
  auto rp = self->make_response_promise<Record>();
  auto cost = cost_of(r);
  if (!cost.heavy()) {
    st.queued.rows += cost.rows;
    st.queued.bytes += cost.bytes;
  }
  (cost.heavy() ? st.heavy_saves : st.saves)
    .push_back(
    pending_save{batched_save{std::move(ctx), db::batch_save{std::move(r), first_attempt_at}},
                 [rp](db::batch_saved& saved) mutable {
                   if (!saved)
                     rp.deliver(db_failure(saved.err().message()));
                   else
                     rp.deliver(std::get<Record>(std::move(saved).value()));
                 },
                 [rp](const caf::error& e) mutable { rp.deliver(e); }, cost});
  pump(self);
  return rp;
}

// Where a call waits for its worker: with the token lookups, or with the rest.
enum class lane { token_path, other };

// Queues one call for the next worker free to take it; `seen` looks at its answer
// first.
template <class Reply, class Seen, class... Ts>
caf::result<Reply> forward_seen(pool_pointer self, lane l, bool write, Seen seen, Ts... xs) {
  auto& st = self->state;
  if (st.outstanding() >= st.max_queued)
    return overloaded();
  auto rp = self->template make_response_promise<Reply>();
  pending_call call{write, st.arrivals++,
                    [self, rp, seen, ... xs = std::move(xs)](std::size_t w) mutable {
                      self->request(self->state.workers[w], caf::infinite, std::move(xs)...)
                        .then(
                          [=](Reply& r) mutable {
                            self->state.duties[w] = duty::idle;
                            seen(r);
                            rp.deliver(std::move(r));
                            pump(self);
                          },
                          [=](caf::error& e) mutable {
                            self->state.duties[w] = duty::idle;
                            rp.deliver(std::move(e));
                            pump(self);
                          });
                    }};
  auto& queue = l == lane::token_path ? st.token_calls : write ? st.other_writes : st.other_reads;
  queue.push_back(std::move(call));
  pump(self);
  return rp;
}

template <class Reply, class... Ts>
caf::result<Reply> forward(pool_pointer self, bool write, Ts... xs) {
  return forward_seen<Reply>(
    self, lane::other, write, [](const Reply&) {}, std::move(xs)...);
}

// A job's completion, counted by how it ended: with the record marked failed
// (retry.max-attempts ran out: given up), with another verdict (completed), or
// fenced out by a newer claim (overtaken).
template <class Record>
caf::result<bool> complete(pool_pointer self, trace_context& ctx, model::validation_job& job,
                           Record& r) {
  auto* m = self->state.instruments;
  bool failed = r.state == model::validation_state::failed;
  return forward_seen<bool>(
    self, lane::other, true,
    [m, failed](bool applied) {
      (!applied ? m->jobs_overtaken : failed ? m->jobs_given_up : m->jobs_completed).add();
    },
    complete_atom_v, std::move(ctx), std::move(job), std::move(r));
}

persistence_actor::behavior_type pool_master(pool_pointer self,
                                             std::vector<persistence_worker_actor> workers,
                                             std::size_t max_queued, bool single_writer,
                                             metrics* instruments) {
  auto& st = self->state;
  st.instruments = instruments;
  st.duties.assign(workers.size(), duty::idle);
  st.workers = std::move(workers);
  st.max_queued = max_queued;
  st.single_writer = single_writer;
  for (auto& w : st.workers)
    self->link_to(w);
  using po = model::purchase_order_record;
  using rr = model::receipt_record;
  using tr = model::transaction_record;
  using at = model::store_a::app_transaction_record;
  constexpr bool read = false, write = true;
  return {
    [=](authenticate_atom, trace_context ctx, std::string hash) -> caf::result<authenticated> {
      auto& st = self->state;
      if (st.outstanding() >= st.max_queued)
        return overloaded();
      auto rp = self->make_response_promise<authenticated>();
      st.auths.push_back(
        pending_auth{{std::move(ctx), std::move(hash)},
                     [rp](authenticated& found) mutable { rp.deliver(std::move(found)); },
                     [rp](const caf::error& e) mutable { rp.deliver(e); },
                     save_cost{}});
      pump(self);
      return rp;
    },
    // By reference, then moved: a record (with its receipt) is not copied out of
    // the message (CAF 0.17 hands handlers the message's own values).
    [=](save_atom, trace_context& ctx, po& r, model::unix_ms at) {
      return enqueue_save(self, std::move(ctx), std::move(r), at);
    },
    [=](save_atom, trace_context& ctx, rr& r, model::unix_ms at) {
      return enqueue_save(self, std::move(ctx), std::move(r), at);
    },
    [=](save_atom, trace_context& ctx, tr& r, model::unix_ms at) {
      return enqueue_save(self, std::move(ctx), std::move(r), at);
    },
    [=](get_atom a, trace_context ctx, model::record_kind k, std::string id) {
      return forward<found_record>(self, read, a, std::move(ctx), k, std::move(id));
    },
    [=](claim_atom a, std::string owner, std::int64_t lease, std::int32_t limit) {
      return forward<claimed_jobs>(self, write, a, std::move(owner), lease, limit);
    },
    [=](complete_atom, trace_context& ctx, model::validation_job& j, po& r) {
      return complete(self, ctx, j, r);
    },
    [=](complete_atom, trace_context& ctx, model::validation_job& j, rr& r) {
      return complete(self, ctx, j, r);
    },
    [=](complete_atom, trace_context& ctx, model::validation_job& j, tr& r) {
      return complete(self, ctx, j, r);
    },
    [=](complete_atom, trace_context& ctx, model::validation_job& j, at& r) {
      return complete(self, ctx, j, r);
    },
    // An app transaction is saved alone, not in a group commit: it folds into
    // no purchase, and app transactions are uploaded once per install.
    [=](save_atom a, trace_context& ctx, at& r, model::unix_ms first_attempt_at) {
      return forward<at>(self, write, a, std::move(ctx), std::move(r), first_attempt_at);
    },
    [=](reschedule_atom a, trace_context ctx, model::validation_job j) {
      auto* m = self->state.instruments;
      return forward_seen<bool>(
        self, lane::other, write,
        [m](bool applied) { (applied ? m->jobs_rescheduled : m->jobs_overtaken).add(); }, a,
        std::move(ctx), std::move(j));
    },
    [=](resource_atom a, trace_context ctx, resource_request& r) {
      bool w = writes(r);
      return forward<http::reply>(self, w, a, std::move(ctx), std::move(r));
    },
    [=](customer_atom a, trace_context ctx, resource_request& r) {
      return forward<customer_answer>(self, read, a, std::move(ctx), std::move(r));
    },
    [=](expire_atom a, std::int32_t limit) {
      return forward<std::int32_t>(self, write, a, limit);
    },
    // The token cache's check: on the token path, since a check that does not
    // answer in time makes the cache distrust every token it holds.
    [=](auth_revision_atom a) {
      return forward_seen<std::int64_t>(
        self, lane::token_path, read, [](std::int64_t) {}, a);
    },
    [=](find_app_atom a, std::string id) {
      return forward<std::optional<model::app>>(self, read, a, std::move(id));
    },
    [=](apply_atom a, trace_context& ctx, std::string& app_id,
        model::store_a::verified_notification& v) {
      return forward<notification_result>(self, write, a, std::move(ctx), std::move(app_id),
                                          std::move(v));
    },
    [=](find_order_atom a, trace_context ctx, std::string app_id, std::string token) {
      return forward<std::optional<po>>(self, read, a, std::move(ctx), std::move(app_id),
                                        std::move(token));
    },
    [=](apply_atom a, trace_context& ctx, std::string& app_id, model::store_b::rtdn& n,
        std::optional<po>& updated) {
      return forward<notification_result>(self, write, a, std::move(ctx), std::move(app_id),
                                          std::move(n), std::move(updated));
    },
    [=](claim_deliveries_atom a, std::string owner, std::int64_t lease, std::int32_t limit,
        std::int32_t per_endpoint) {
      return forward<webhook_deliveries>(self, write, a, std::move(owner), lease, limit,
                                         per_endpoint);
    },
    [=](finish_atom a, model::webhook_delivery& d) {
      return forward<bool>(self, write, a, std::move(d));
    },
    [=](claim_refunds_atom a, std::string owner, std::int64_t lease, std::int32_t limit) {
      return forward<refund_works>(self, write, a, std::move(owner), lease, limit);
    },
    [=](finish_atom a, model::purchases::refund_request& r) {
      return forward<bool>(self, write, a, std::move(r));
    },
    [=](refresh_atom a, model::record_kind kind, std::int64_t stale_ms, std::int32_t limit) {
      return forward<std::int32_t>(self, write, a, kind, stale_ms, limit);
    },
    [=](claim_voided_atom a, std::string owner, std::int64_t lease, std::int32_t limit) {
      return forward<voided_polls>(self, write, a, std::move(owner), lease, limit);
    },
    [=](apply_voided_atom a, std::string& owner, model::store_b::voided_poll& poll,
        voided_purchases& page, std::optional<std::int64_t> keep_lease_ms) {
      return forward<std::optional<std::int32_t>>(self, write, a, std::move(owner), std::move(poll),
                                                  std::move(page), keep_lease_ms);
    },
    [=](orders_atom a, std::int32_t limit) {
      return forward<orders_due_list>(self, write, a, limit);
    },
    [=](apply_orders_atom a, std::string& app_id, order_reads& reads) {
      return forward<std::int32_t>(self, write, a, std::move(app_id), std::move(reads));
    },
  };
}

} // namespace

persistence_actor spawn_persistence_pool(caf::actor_system& sys,
                                         const persistence_settings& settings, tracer& trace,
                                         const model::time_source& clock, metrics& instruments) {
  std::vector<persistence_worker_actor> workers;
  for (std::size_t i = 0; i < settings.workers; ++i)
    workers.push_back(
      spawn_persistence_worker(sys, settings.db_url, trace, clock, instruments, settings.turns,
                               settings.notice, settings.changes));
  bool sqlite = db::dialect_of(settings.db_url) == db::dialect::sqlite;
  return sys.spawn(pool_master, std::move(workers), settings.max_queued, sqlite, &instruments);
}

operational_db_actor spawn_operational_session(caf::actor_system& sys,
                                               const persistence_settings& settings, tracer& trace,
                                               const model::time_source& clock,
                                               metrics& instruments) {
  return caf::actor_cast<operational_db_actor>(
    spawn_persistence_worker(sys, settings.db_url, trace, clock, instruments, settings.turns));
}

} // namespace receiptd::actors

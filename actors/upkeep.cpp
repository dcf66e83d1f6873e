#include "actors/upkeep.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>

#include "actors/app_context.hpp"
#include "actors/log.hpp"
#include "model/store_b/voided.hpp"

namespace receiptd::actors {

namespace {

// Due polls are looked for this often at most (and at the poll interval when
// it is shorter).
constexpr std::chrono::milliseconds voided_claim_every = std::chrono::minutes(1);
constexpr std::int32_t voided_claim_batch = 8;

// Period-end timers (a subscription's period or grace period ends, a grant runs
// out): due ones are looked for this often, so a change by time passing is
// noticed within this much (plus the handling), and handled this many at a time.
constexpr std::chrono::milliseconds expire_every = std::chrono::seconds(10);
constexpr std::int32_t expire_batch = 256;

// One store's subscription refresh sweep.
struct refresh_sweep {
  std::chrono::milliseconds interval{0}; // 0: off
  std::size_t batch = 0;
};

struct state {
  config::store_b_settings settings;
  refresh_sweep store_a_refresh; // StoreKit 2 transactions (store-a.refresh-*)
  std::chrono::milliseconds lease{60000};
  std::string owner;
  upkeep_deps deps;
  std::size_t polls_running = 0;
  static inline const char* name = "upkeep";
};

using pointer = upkeep_actor::stateful_pointer<state>;

std::chrono::milliseconds voided_tick(const state& st) {
  return std::min(st.settings.voided_purchases_interval, voided_claim_every);
}

// ---- the subscription refresh sweeps ---------------------------------------------

refresh_sweep sweep_of(const state& st, model::record_kind kind) {
  if (kind == model::record_kind::store_a_transaction)
    return st.store_a_refresh;
  return {st.settings.refresh_interval, st.settings.refresh_batch};
}

void sweep(pointer self, model::record_kind kind) {
  auto& st = self->state;
  const auto s = sweep_of(st, kind);
  const std::string store = kind == model::record_kind::store_a_transaction ? "StoreKit 2" : "Play";
  self
    ->request(st.deps.persistence, caf::infinite, refresh_atom_v, kind,
              static_cast<std::int64_t>(s.interval.count()), static_cast<std::int32_t>(s.batch))
    .then(
      [=](std::int32_t made) {
        if (made > 0)
          log_info(store + " subscription refresh: " + std::to_string(made)
                   + " subscription(s) past their expiry will be asked again");
        self->delayed_send(self, s.interval, refresh_atom_v, kind);
      },
      [=](caf::error& e) {
        log_error(store + " subscription refresh sweep failed: " + caf::to_string(e));
        self->delayed_send(self, s.interval, refresh_atom_v, kind);
      });
}

// ---- voided purchases ------------------------------------------------------------

struct poll_run {
  model::store_b::voided_poll poll;
  app_context_ptr app;
  model::unix_ms end_time = 0; // fixed for the whole window's pages
  int changed = 0;
};
using run_ptr = std::shared_ptr<poll_run>;

void poll_done(pointer self) {
  if (self->state.polls_running > 0)
    --self->state.polls_running;
}

// The poll failed: its cursor stays (less the page token, which may be what
// failed: the window is read again from its start), due again after the
// interval, with the error for operators.
void fail_poll(pointer self, run_ptr run, const std::string& why) {
  auto& st = self->state;
  log_warn("voided purchases of app " + run->poll.app_id + ": " + why);
  run->poll.cursor.page_token.clear();
  run->poll.last_error = why.substr(0, 500);
  run->poll.next_poll_at = st.deps.clock->now_ms() + st.settings.voided_purchases_interval.count();
  self
    ->request(st.deps.persistence, caf::infinite, apply_voided_atom_v, st.owner, run->poll,
              voided_purchases{}, std::optional<std::int64_t>())
    .then([=](std::optional<std::int32_t>&) { poll_done(self); },
          [=](caf::error& e) {
            log_error("voided purchases of app " + run->poll.app_id
                      + ": storing the failed poll: " + caf::to_string(e));
            poll_done(self);
          });
}

void read_page(pointer self, run_ptr run) {
  auto& st = self->state;
  auto now = st.deps.clock->now_ms();
  store_b_voided_query q{trace_context{"voided-" + run->poll.app_id, 0},
                         run->app,
                         model::store_b::voided_start_time(run->poll.cursor, now),
                         run->end_time,
                         static_cast<std::int32_t>(st.settings.voided_purchases_page_size),
                         run->poll.cursor.page_token};
  self->request(st.deps.store_b, caf::infinite, voided_atom_v, std::move(q))
    .then(
      [=](model::store_b::voided_page& page) {
        auto& st = self->state;
        bool last = page.next_page_token.empty();
        run->poll.cursor
          = model::store_b::advance_voided_cursor(run->poll.cursor, page, run->end_time);
        run->poll.last_error.clear();
        run->poll.next_poll_at
          = st.deps.clock->now_ms() + st.settings.voided_purchases_interval.count();
        std::optional<std::int64_t> keep;
        if (!last)
          keep = st.lease.count();
        self
          ->request(st.deps.persistence, caf::infinite, apply_voided_atom_v, st.owner, run->poll,
                    std::move(page.purchases), keep)
          .then(
            [=](std::optional<std::int32_t>& changed) {
              if (!changed) {
                log_warn("voided purchases of app " + run->poll.app_id
                         + ": the poll's lease was taken over; stopped");
                return poll_done(self);
              }
              run->changed += *changed;
              if (!last)
                return read_page(self, run);
              if (run->changed > 0)
                log_info("voided purchases of app " + run->poll.app_id + ": "
                         + std::to_string(run->changed) + " purchase order(s) marked refunded");
              poll_done(self);
            },
            [=](caf::error& e) { fail_poll(self, run, "storing a page: " + caf::to_string(e)); });
      },
      [=](caf::error& e) { fail_poll(self, run, caf::to_string(e)); });
}

void claim_polls(pointer self) {
  auto& st = self->state;
  if (st.polls_running > 0) // one claim's polls at a time
    return;
  self
    ->request(st.deps.persistence, caf::infinite, claim_voided_atom_v, st.owner,
              static_cast<std::int64_t>(st.lease.count()), voided_claim_batch)
    .then(
      [=](voided_polls& polls) {
        auto now = self->state.deps.clock->now_ms();
        for (auto& claimed : polls) {
          auto run = std::make_shared<poll_run>();
          run->poll = std::move(claimed.poll);
          run->app = make_app_context(claimed.app);
          run->end_time = now;
          ++self->state.polls_running;
          read_page(self, run);
        }
      },
      [=](caf::error& e) { log_error("claiming voided purchases polls: " + caf::to_string(e)); });
}

// ---- orders ---------------------------------------------------------------------

// One app's due orders, read in batches of store-b.orders-batch. A batch Play
// refuses with 404 names an order it does not know (Google fails the whole
// batchGet then): its orders are read one by one, and those Play does not know
// are marked read. Any other failure leaves them to the next sweep.
void read_orders(pointer self, app_context_ptr app, std::vector<model::store_b::order_ref> refs) {
  auto& st = self->state;
  if (refs.empty())
    return;
  const auto batch = std::max<std::size_t>(1, st.settings.orders_batch);
  if (refs.size() > batch) {
    std::vector<model::store_b::order_ref> rest(refs.begin() + static_cast<std::ptrdiff_t>(batch),
                                                refs.end());
    refs.resize(batch);
    read_orders(self, app, std::move(rest));
  }
  store_b_orders_query q{trace_context{"orders-" + app->app.id, 0}, app, {}};
  for (const auto& r : refs)
    q.order_ids.push_back(r.order_id);
  self->request(st.deps.store_b, caf::infinite, orders_atom_v, std::move(q))
    .then(
      [=](play_orders& orders) {
        order_reads reads;
        for (const auto& ref : refs) {
          model::store_b::order_read read{ref.purchase_token, std::nullopt};
          for (const auto& o : orders)
            if (o.order_id == ref.order_id)
              read.order = o;
          if (read.order || refs.size() == 1)
            reads.push_back(std::move(read));
        }
        self
          ->request(self->state.deps.persistence, caf::infinite, apply_orders_atom_v, app->app.id,
                    std::move(reads))
          .then([=](std::int32_t changed) {
                  if (changed > 0)
                    log_info("orders of app " + app->app.id + ": " + std::to_string(changed)
                             + " purchase order(s) got their price");
                },
                [=](caf::error& e) {
                  log_error("orders of app " + app->app.id + ": storing: " + caf::to_string(e));
                });
      },
      [=](caf::error& e) {
        auto why = caf::to_string(e);
        if (refs.size() == 1 && why.find("HTTP 404") != std::string::npos) {
          order_reads reads{{refs.front().purchase_token, std::nullopt}};
          self->request(self->state.deps.persistence, caf::infinite, apply_orders_atom_v,
                        app->app.id, std::move(reads))
            .then([](std::int32_t) {},
                  [=](caf::error& e) {
                    log_error("orders of app " + app->app.id + ": storing: " + caf::to_string(e));
                  });
          return;
        }
        if (refs.size() > 1 && why.find("HTTP 404") != std::string::npos) {
          for (const auto& ref : refs)
            read_orders(self, app, {ref});
          return;
        }
        log_warn("orders of app " + app->app.id + ": " + why);
      });
}

void sweep_orders(pointer self) {
  auto& st = self->state;
  self
    ->request(st.deps.persistence, caf::infinite, orders_atom_v,
              static_cast<std::int32_t>(std::min<std::size_t>(st.settings.orders_batch * 4, 4000)))
    .then(
      [=](orders_due_list& due) {
        for (auto& group : due)
          read_orders(self, make_app_context(group.app), std::move(group.orders));
        self->delayed_send(self, self->state.settings.orders_interval, orders_atom_v);
      },
      [=](caf::error& e) {
        log_error("orders sweep failed: " + caf::to_string(e));
        self->delayed_send(self, self->state.settings.orders_interval, orders_atom_v);
      });
}

// ---- period-end timers --------------------------------------------------------------

// Handles the due timers a batch at a time; a full batch asks again at once.
void expire(pointer self) {
  self->request(self->state.deps.persistence, caf::infinite, expire_atom_v, expire_batch)
    .then(
      [=](std::int32_t handled) {
        self->delayed_send(self, handled >= expire_batch ? std::chrono::milliseconds(0) : expire_every,
                           expire_atom_v);
      },
      [=](caf::error& e) {
        log_error("handling period-end timers: " + caf::to_string(e));
        self->delayed_send(self, expire_every, expire_atom_v);
      });
}

upkeep_actor::behavior_type upkeep(pointer self, refresh_sweep store_a_refresh,
                                   config::store_b_settings settings,
                                   std::chrono::milliseconds lease, std::string owner,
                                   upkeep_deps deps) {
  auto& st = self->state;
  st.store_a_refresh = store_a_refresh;
  st.settings = std::move(settings);
  st.lease = lease;
  st.owner = std::move(owner);
  st.deps = std::move(deps);
  for (auto kind :
       {model::record_kind::store_b_purchase_order, model::record_kind::store_a_transaction})
    if (sweep_of(st, kind).interval.count() > 0)
      self->send(self, refresh_atom_v, kind);
  if (st.settings.voided_purchases)
    self->send(self, voided_atom_v);
  self->send(self, expire_atom_v);
  if (st.settings.orders)
    self->send(self, orders_atom_v);
  return {
    [=](refresh_atom, model::record_kind kind) { sweep(self, kind); },
    [=](voided_atom) {
      claim_polls(self);
      self->delayed_send(self, voided_tick(self->state), voided_atom_v);
    },
    [=](expire_atom) { expire(self); },
    [=](orders_atom) { sweep_orders(self); },
  };
}

} // namespace

upkeep_actor spawn_upkeep(caf::actor_system& sys, const config::store_a_settings& store_a,
                          const config::store_b_settings& store_b, std::chrono::milliseconds lease,
                          std::string owner, upkeep_deps deps) {
  return sys.spawn(upkeep, refresh_sweep{store_a.refresh_interval, store_a.refresh_batch}, store_b,
                   lease, std::move(owner), std::move(deps));
}

} // namespace receiptd::actors

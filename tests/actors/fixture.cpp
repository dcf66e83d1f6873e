#include "fixture.hpp"

#include <stdexcept>
#include <utility>

namespace receiptd::test {

using namespace actors;

namespace {

authenticated authentication_answer(const persistence_log& log, const std::string& hash) {
  authenticated out;
  out.revision = log.lookup_revision.value_or(log.auth_revision);
  if (auto it = log.apps_by_token_hash.find(hash); it != log.apps_by_token_hash.end())
    out.app = it->second;
  if (log.server_token_hashes.count(hash))
    out.kind = model::token_kind::server;
  return out;
}

// Not a SHA-256 in hex: no token's hash.
constexpr const char* release_held_lookups = "release held lookups";

} // namespace

void answer_authentications(const persistence_actor& persistence) {
  caf::anon_send(persistence, authenticate_atom_v, trace_context{},
                 std::string(release_held_lookups));
}

void answer_app_lookups(const persistence_actor& persistence) {
  caf::anon_send(persistence, find_app_atom_v, std::string(release_held_lookups));
}

persistence_actor::behavior_type fake_persistence(persistence_actor::pointer self,
                                                  std::shared_ptr<persistence_log> log) {
  return {
    [=](authenticate_atom, const trace_context&,
        const std::string& hash) -> caf::result<authenticated> {
      if (hash == release_held_lookups) { // answer_authentications(): from here, as the actor
        auto held = std::exchange(log->unanswered_authentications, {});
        for (auto& [rp, held_hash] : held) {
          if (log->authentication_fails)
            rp.deliver(caf::make_error(caf::sec::runtime_error, "database: connection refused"));
          else
            rp.deliver(authentication_answer(*log, held_hash));
        }
        return caf::make_error(caf::sec::runtime_error, "not a lookup");
      }
      ++log->authentications;
      if (log->authentication_fails)
        return caf::make_error(caf::sec::runtime_error, "database: connection refused");
      if (log->authentication_hangs) {
        auto rp = self->make_response_promise<authenticated>();
        log->unanswered_authentications.emplace_back(rp, hash);
        return rp;
      }
      return authentication_answer(*log, hash);
    },
    [=](auth_revision_atom) -> caf::result<std::int64_t> {
      ++log->revision_checks;
      if (log->revision_check_fails)
        return caf::make_error(caf::sec::runtime_error, "database: connection refused");
      if (log->revision_check_hangs) {
        auto rp = self->make_response_promise<std::int64_t>();
        log->unanswered_checks.push_back(rp);
        return rp;
      }
      return log->auth_revision;
    },
    [=](save_atom, const trace_context&, model::purchase_order_record r,
        model::unix_ms first_attempt) {
      if (r.id.empty())
        r.id = "record-" + std::to_string(log->saved.size() + 1);
      log->saved.push_back(r);
      log->first_attempts.push_back(first_attempt);
      return r;
    },
    [=](save_atom, const trace_context&, model::receipt_record r, model::unix_ms) { return r; },
    [=](save_atom, const trace_context&, model::transaction_record r, model::unix_ms) { return r; },
    [=](get_atom, const trace_context&, model::record_kind, const std::string& id) {
      auto it = log->records.find(id);
      return it == log->records.end() ? found_record{} : it->second;
    },
    [=](claim_atom, const std::string&, std::int64_t, std::int32_t limit) {
      ++log->claims;
      log->claim_limits.push_back(limit);
      auto out = std::move(log->to_claim);
      log->to_claim.clear();
      return out;
    },
    [=](complete_atom, const trace_context&, const model::validation_job& j,
        const model::purchase_order_record& r) {
      log->completed.emplace_back(j, r);
      return true;
    },
    [=](complete_atom, const trace_context&, const model::validation_job&,
        const model::receipt_record&) { return true; },
    [=](complete_atom, const trace_context&, const model::validation_job& j,
        const model::transaction_record& r) {
      log->completed_transactions.emplace_back(j, r);
      return true;
    },
    [=](complete_atom, const trace_context&, const model::validation_job&,
        const model::store_a::app_transaction_record&) { return true; },
    [=](save_atom, const trace_context&, model::store_a::app_transaction_record r,
        model::unix_ms) { return r; },
    [=](reschedule_atom, const trace_context&, const model::validation_job& j) {
      log->rescheduled.push_back(j);
      return true;
    },
    [=](resource_atom, const trace_context&, const resource_request&) {
      return http::reply{404, R"({"errors":[{"code":"not_found"}]})"};
    },
    [=](customer_atom, const trace_context&, const resource_request& r) {
      ++log->customer_lookups;
      if (log->customer)
        return log->customer(r);
      customer_answer none;
      none.reply = http::reply{404, R"({"errors":[{"code":"not_found"}]})"};
      return none;
    },
    [=](expire_atom, std::int32_t) { return std::int32_t{0}; },
    [=](find_app_atom, const std::string& id) -> caf::result<std::optional<model::app>> {
      auto find = [log](const std::string& app_id) -> std::optional<model::app> {
        auto it = log->apps_by_id.find(app_id);
        if (it == log->apps_by_id.end())
          return std::nullopt;
        return it->second;
      };
      if (id == release_held_lookups) { // answer_app_lookups(): from here, as the actor
        for (auto& [rp, held_id] : std::exchange(log->unanswered_app_lookups, {}))
          rp.deliver(find(held_id));
        return caf::make_error(caf::sec::runtime_error, "not a lookup");
      }
      ++log->app_lookups;
      if (log->app_lookup_hangs) {
        auto rp = self->make_response_promise<std::optional<model::app>>();
        log->unanswered_app_lookups.emplace_back(rp, id);
        return rp;
      }
      return find(id);
    },
    [=](apply_atom, const trace_context&, const std::string& app_id,
        const model::store_a::verified_notification& v) {
      log->notifications.emplace_back(app_id, v);
      return actors::notification_result{false, 1, 0};
    },
    [=](find_order_atom, const trace_context&, const std::string& app_id,
        const std::string& token) -> std::optional<model::purchase_order_record> {
      ++log->order_lookups;
      auto it = log->orders_by_token.find(token);
      if (it == log->orders_by_token.end() || it->second.app_id != app_id)
        return std::nullopt;
      return it->second;
    },
    [=](apply_atom, const trace_context&, const std::string& app_id, const model::store_b::rtdn& n,
        const std::optional<model::purchase_order_record>& updated) {
      log->store_b_notifications.push_back({app_id, n, updated});
      return actors::notification_result{false, updated ? 1 : 0, 0};
    },
    // As the database does: in order, at most per_endpoint held (claimed, not
    // finished) per endpoint.
    [=](claim_deliveries_atom, const std::string&, std::int64_t, std::int32_t limit,
        std::int32_t per_endpoint) -> actors::webhook_deliveries {
      ++log->delivery_claims;
      actors::webhook_deliveries out;
      auto& waiting = log->deliveries_to_claim;
      for (auto it = waiting.begin();
           it != waiting.end() && static_cast<std::int32_t>(out.size()) < limit;) {
        auto& held = log->deliveries_held[it->endpoint_id];
        if (held >= per_endpoint) {
          ++it;
          continue;
        }
        ++held;
        out.push_back(std::move(*it));
        it = waiting.erase(it);
      }
      return out;
    },
    [=](finish_atom, const model::webhook_delivery& d) {
      log->finished.push_back(d);
      --log->deliveries_held[d.endpoint_id];
      return true;
    },
    [=](claim_refunds_atom, const std::string&, std::int64_t, std::int32_t) {
      return actors::refund_works{};
    },
    [=](finish_atom, const model::purchases::refund_request&) { return true; },
    [=](refresh_atom, model::record_kind kind, std::int64_t, std::int32_t) {
      ++log->refresh_sweeps;
      log->refresh_kinds.push_back(kind);
      return std::int32_t{0};
    },
    [=](claim_voided_atom, const std::string&, std::int64_t, std::int32_t) {
      return std::exchange(log->voided_to_claim, {});
    },
    [=](apply_voided_atom, const std::string&, const model::store_b::voided_poll& poll,
        const actors::voided_purchases& page,
        std::optional<std::int64_t> keep) -> std::optional<std::int32_t> {
      if (log->apply_voided_overtaken)
        return std::nullopt;
      log->voided_pages.push_back({poll, page, keep});
      return static_cast<std::int32_t>(page.size());
    },
    [=](orders_atom, std::int32_t) { return actors::orders_due_list{}; },
    [=](apply_orders_atom, const std::string&, const actors::order_reads&) {
      return std::int32_t{0};
    },
  };
}

operational_db_actor::behavior_type fake_operational_db(operational_db_actor::pointer self,
                                                        std::shared_ptr<persistence_log> log) {
  return {
    [=](queue_figures_atom) -> caf::result<db::job_queue_figures> {
      ++log->queue_reads;
      if (log->operational_hangs) {
        log->unanswered_queue_reads.push_back(self->make_response_promise<db::job_queue_figures>());
        return log->unanswered_queue_reads.back();
      }
      if (log->database_down)
        return caf::make_error(caf::sec::runtime_error, "database: connection refused");
      return log->queue;
    },
    [=](ready_atom) -> caf::result<std::int32_t> {
      ++log->ready_checks;
      if (log->operational_hangs) {
        log->unanswered_ready_checks.push_back(self->make_response_promise<std::int32_t>());
        return log->unanswered_ready_checks.back();
      }
      if (log->database_down)
        return caf::make_error(caf::sec::runtime_error, "database: connection refused");
      return log->missing_migrations;
    },
  };
}

namespace {

// Keeps `c` unanswered and has `self` told (tick_atom) when its deadline comes.
template <class Self>
caf::typed_response_promise<store_b_answer> hold(Self* self, store_b_check& c,
                                                 const model::time_source* clock) {
  auto rp = self->template make_response_promise<store_b_answer>();
  self->state.unanswered.push_back({rp, c.purchase, c.deadline});
  if (c.deadline)
    self->delayed_send(
      self,
      std::max(*c.deadline - clock->steady_now(), model::time_source::steady_time::duration{}),
      tick_atom_v);
  return rp;
}

// A tick: the held check with the earliest deadline has come to it (one tick
// per held check, in the order of their deadlines), answered as the real client
// answers it.
template <class Self>
void answer_past_deadline(Self* self) {
  auto& held = self->state.unanswered;
  auto first = held.end();
  for (auto it = held.begin(); it != held.end(); ++it)
    if (it->deadline && (first == held.end() || *it->deadline < *first->deadline))
      first = it;
  if (first == held.end())
    return;
  first->promise.deliver(store_b_answer{
    verdict(model::store_outcome::unreachable, "store deadline passed"), first->purchase});
  held.erase(first);
}

} // namespace

store_b_client_actor::behavior_type
fake_store_b(store_b_client_actor::stateful_pointer<store_b_fake_state> self,
             std::optional<model::store_verdict> v, const model::time_source* clock) {
  return {
    [=](check_atom, store_b_check& c) -> caf::typed_response_promise<store_b_answer> {
      ++self->state.checks;
      if (!v)
        return hold(self, c, clock);
      auto rp = self->make_response_promise<store_b_answer>();
      rp.deliver(store_b_answer{*v, c.purchase});
      return rp;
    },
    [=](acknowledge_atom, store_b_acknowledge&) {
      ++self->state.acknowledgements;
      return self->state.acknowledged;
    },
    [=](refund_atom, store_refund_answer&) { return store_refund_reply{}; },
    [=](voided_atom, store_b_voided_query& q) -> caf::result<model::store_b::voided_page> {
      self->state.voided_queries.push_back(q);
      auto& pages = self->state.voided_pages;
      if (pages.empty() && self->state.voided_error)
        return caf::make_error(caf::sec::runtime_error, *self->state.voided_error);
      if (pages.empty())
        return model::store_b::voided_page{};
      auto page = std::move(pages.front());
      pages.erase(pages.begin());
      return page;
    },
    [=](orders_atom, store_b_orders_query&) {
      return caf::result<actors::play_orders>(caf::make_error(caf::sec::unexpected_message));
    },
    [=](http_done_atom, http_done&) {},
    [=](tick_atom) { answer_past_deadline(self); },
  };
}

store_b_client_actor::behavior_type
holding_store(store_b_client_actor::stateful_pointer<holding_store_state> self, callers_ptr callers,
              const model::time_source* clock) {
  return {
    [=](check_atom, store_b_check& c) -> caf::typed_response_promise<store_b_answer> {
      callers->push_back(self->current_sender());
      return hold(self, c, clock);
    },
    [=](acknowledge_atom, store_b_acknowledge&) {
      return caf::result<model::store_b::acknowledge_answer>(
        caf::make_error(caf::sec::unexpected_message));
    },
    [=](voided_atom, store_b_voided_query&) {
      return caf::result<model::store_b::voided_page>(
        caf::make_error(caf::sec::unexpected_message));
    },
    [=](orders_atom, store_b_orders_query&) {
      return caf::result<actors::play_orders>(caf::make_error(caf::sec::unexpected_message));
    },
    [=](refund_atom, store_refund_answer&) {
      return caf::result<store_refund_reply>(caf::make_error(caf::sec::unexpected_message));
    },
    [=](http_done_atom, http_done&) {},
    [=](tick_atom) { answer_past_deadline(self); },
  };
}

void fake_transport::submit(http::outbound_request req, callback done) {
  if (req.shared_body) { // what the curl client would send, and let go of
    req.body += *req.shared_body + req.body_tail;
    req.shared_body.reset();
    req.body_tail.clear();
  }
  calls.push_back({std::move(req), std::move(done)});
}

void fake_transport::answer(std::size_t i, int status, std::string body) {
  auto done = std::exchange(calls.at(i).done, nullptr);
  if (!done)
    throw std::logic_error("request " + std::to_string(i) + " was answered already");
  http::outbound_response r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = "application/json";
  done(std::move(r));
}

bool has_header(const http::outbound_request& request, const std::string& header) {
  for (const auto& h : request.headers)
    if (h == header)
      return true;
  return false;
}

actor_fixture::actor_fixture() {
  cfg.set("scheduler.policy", caf::atom("testing"));
  sys = std::make_unique<caf::actor_system>(cfg);
  sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
}

actor_fixture::~actor_fixture() {
  for (auto& a : kept)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  run();
}

model::store_verdict verdict(model::store_outcome outcome, std::string detail) {
  model::store_verdict v;
  v.outcome = outcome;
  v.detail = std::move(detail);
  return v;
}

} // namespace receiptd::test

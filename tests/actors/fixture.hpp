#pragma once
// A CAF actor system on the deterministic test coordinator, with fakes for the
// persistence pool, the store clients, the outbound HTTP transport and the HTTP
// reply channel.

#include <functional>
#include <caf/all.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/fwd.hpp"
#include "actors/validator.hpp"
#include "tests/support/time/manual_time.hpp"

namespace receiptd::test {

struct recording_sink : http::reply_sink {
  std::vector<http::reply> replies;
  bool done = false;
  bool send(http::reply r) override {
    if (done)
      return false;
    done = true;
    replies.push_back(std::move(r));
    return true;
  }
  bool sent() const override { return done; }
};

// What the fake persistence pool was asked to do.
struct persistence_log {
  std::vector<model::purchase_order_record> saved;
  std::vector<model::unix_ms> first_attempts;
  std::vector<std::pair<model::validation_job, model::purchase_order_record>> completed;
  std::vector<std::pair<model::validation_job, model::transaction_record>> completed_transactions;
  std::vector<model::validation_job> rescheduled;
  actors::claimed_jobs to_claim;
  int claims = 0;
  std::vector<std::int32_t> claim_limits; // what each claim asked for at most
  // authenticate: token hash → app (model::access_token_hash); every call counted.
  std::map<std::string, model::app> apps_by_token_hash;
  // The hashes of server tokens (model::token_kind::server); any other is a client token.
  std::set<std::string> server_token_hashes;
  int authentications = 0;
  bool authentication_fails = false; // answer with an error, as a database down would
  // Keep lookups unanswered (a slow database), with the token hash each asked for,
  // until answer_authentications().
  bool authentication_hangs = false;
  std::vector<std::pair<caf::typed_response_promise<actors::authenticated>, std::string>>
    unanswered_authentications;
  // The auth revision: what a revision check answers, and what lookups are tagged
  // with unless lookup_revision says otherwise (a lookup read before a change).
  std::int64_t auth_revision = 0;
  std::optional<std::int64_t> lookup_revision;
  int revision_checks = 0;
  bool revision_check_fails = false; // answer checks with an error, as a database down would
  bool revision_check_hangs = false; // never answer them (kept unanswered below)
  std::vector<caf::typed_response_promise<std::int64_t>> unanswered_checks;
  // get: record id → what the pool finds (absent: no such record).
  std::map<std::string, actors::found_record> records;
  // Store notifications: find_app answers from apps_by_id, every call counted (held
  // unanswered while app_lookup_hangs, until answer_app_lookups()); applied
  // notifications are recorded.
  std::map<std::string, model::app> apps_by_id;
  int app_lookups = 0;
  bool app_lookup_hangs = false;
  std::vector<std::pair<caf::typed_response_promise<std::optional<model::app>>, std::string>>
    unanswered_app_lookups;
  std::vector<std::pair<std::string, model::store_a::verified_notification>> notifications;
  // Store B notifications: find_order answers from orders_by_token; applied
  // pushes are recorded with the purchase order they carried.
  std::map<std::string, model::purchase_order_record> orders_by_token;
  int order_lookups = 0;
  struct store_b_applied {
    std::string app_id;
    model::store_b::rtdn n;
    std::optional<model::purchase_order_record> updated;
  };
  std::vector<store_b_applied> store_b_notifications;
  // Webhook deliveries: what claims hand out (in order, at most per_endpoint
  // held per endpoint, as the database counts them), and what was finished.
  std::vector<model::webhook_delivery> deliveries_to_claim;
  int delivery_claims = 0;
  std::map<std::string, int> deliveries_held; // by endpoint: claimed, not finished
  std::vector<model::webhook_delivery> finished;
  // The Play upkeep: sweeps counted; voided polls handed out by
  // claims, and the pages applied (fenced: apply_voided_overtaken answers none).
  int refresh_sweeps = 0;
  std::vector<model::record_kind> refresh_kinds; // each sweep's store, in order
  actors::voided_polls voided_to_claim;
  struct voided_applied {
    model::store_b::voided_poll poll;
    actors::voided_purchases page;
    std::optional<std::int64_t> keep_lease_ms;
  };
  std::vector<voided_applied> voided_pages;
  bool apply_voided_overtaken = false;
  // The operational endpoints (fake_operational_db): what the queue
  // figures and the readiness check answer, or an error for both while
  // database_down; each counted.
  db::job_queue_figures queue;
  int queue_reads = 0;
  std::int32_t missing_migrations = 0;
  int ready_checks = 0;
  bool database_down = false;
  // Never answer them (a database that hangs): the asker's deadline decides.
  bool operational_hangs = false;
  std::vector<caf::typed_response_promise<db::job_queue_figures>> unanswered_queue_reads;
  std::vector<caf::typed_response_promise<std::int32_t>> unanswered_ready_checks;
  // Customer lookups: counted, answered by `customer` (404 when unset).
  int customer_lookups = 0;
  std::function<actors::customer_answer(const actors::resource_request&)> customer;
};

// Has the fake persistence answer the lookups it holds (authentication_hangs),
// as it answers any: an error while authentication_fails. Run the actors then.
void answer_authentications(const actors::persistence_actor& persistence);
// The same for the app lookups it holds (app_lookup_hangs).
void answer_app_lookups(const actors::persistence_actor& persistence);

actors::persistence_actor::behavior_type fake_persistence(actors::persistence_actor::pointer self,
                                                          std::shared_ptr<persistence_log> log);

// The operational endpoints' session (actors/operational.hpp), answering from `log`.
actors::operational_db_actor::behavior_type
fake_operational_db(actors::operational_db_actor::pointer self,
                    std::shared_ptr<persistence_log> log);

// A check the fake has not answered, and the purchase to answer it with.
struct unanswered_check {
  caf::typed_response_promise<actors::store_b_answer> promise;
  model::play_purchase purchase;
  actors::store_deadline deadline;
};

struct store_b_fake_state {
  std::vector<unanswered_check> unanswered;
  int checks = 0;
  // Acknowledgements answer `acknowledged` (done unless a test says otherwise);
  // voided purchases queries answer the next of `voided_pages` (an empty last
  // page when none is left).
  int acknowledgements = 0;
  model::store_b::acknowledge_answer acknowledged{model::store_b::acknowledge_outcome::done,
                                                  "HTTP 204"};
  std::vector<actors::store_b_voided_query> voided_queries;
  std::vector<model::store_b::voided_page> voided_pages;
  // When set, a voided purchases query with no page left is answered with this
  // error (as a Play API failure is) instead of an empty last page.
  std::optional<std::string> voided_error;
};

// Answers every check with `verdict`; when it is nullopt, as a silent store's
// client does: unreachable ("store deadline passed") at the check's deadline,
// read on `clock` (the validators' clock; the scheduler's time moves it there).
actors::store_b_client_actor::behavior_type
fake_store_b(actors::store_b_client_actor::stateful_pointer<store_b_fake_state> self,
             std::optional<model::store_verdict> verdict, const model::time_source* clock);

// A Store B client for a silent store that remembers who asked (so that a test can
// kill the validator waiting on it): each check is answered unreachable at its
// deadline, as the real client does.
struct holding_store_state {
  std::vector<unanswered_check> unanswered;
};
using callers_ptr = std::shared_ptr<std::vector<caf::strong_actor_ptr>>;

actors::store_b_client_actor::behavior_type
holding_store(actors::store_b_client_actor::stateful_pointer<holding_store_state> self,
              callers_ptr callers, const model::time_source* clock);

// Where a store client sends its HTTP requests: each is recorded, and answered
// only when the test calls answer(), as the curl thread would complete it (the
// client's http_done message then waits for run()).
struct fake_transport final : http::outbound_transport {
  struct call {
    http::outbound_request request; // shared_body already folded into body
    callback done;                  // empty once answered
  };
  std::vector<call> calls;

  void submit(http::outbound_request req, callback done) override;
  void answer(std::size_t i, int status, std::string body = "");
  std::size_t size() const { return calls.size(); }
  const http::outbound_request& operator[](std::size_t i) const { return calls.at(i).request; }
};

// true when `request` carries the header line `header` ("Name: value").
bool has_header(const http::outbound_request& request, const std::string& header);

struct actor_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  // What the actors under test read as time and randomness (hand them to deps).
  manual_time clock;
  fixed_random random{0.5};

  actor_fixture();
  ~actor_fixture(); // stops what keep() holds, so the system can shut down

  void run() { sched->run(); }

  // Sends `check` (under `Atom`) to a store client from a short-lived actor; the
  // answer lands in the returned slot once run() has delivered it.
  template <class Answer, class Atom = actors::check_atom, class Handle, class Check>
  std::shared_ptr<std::optional<Answer>> ask(const Handle& client, Check check) {
    auto out = std::make_shared<std::optional<Answer>>();
    // Spawned with its arguments, not capturing them: CAF 0.17 dereferences the
    // (null) argument tuple of an argument-less spawn, which UBSan reports.
    sys->spawn(
      [](caf::event_based_actor* self, Handle client, Check check,
         std::shared_ptr<std::optional<Answer>> out) {
        self->request(client, caf::infinite, Atom{}, check).then([out](Answer& a) {
          *out = std::move(a);
        });
      },
      client, std::move(check), out);
    return out;
  }

  // Long-lived actors of a test: stopped when the fixture ends.
  template <class Handle>
  Handle keep(Handle h) {
    kept.push_back(caf::actor_cast<caf::actor>(h));
    return h;
  }
  std::vector<caf::actor> kept;
};

model::store_verdict verdict(model::store_outcome outcome, std::string detail = "");

} // namespace receiptd::test

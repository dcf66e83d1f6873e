#pragma once
// A CAF actor system on the deterministic test coordinator, with fakes for the
// persistence pool, the store client and the HTTP reply channel.

#include <caf/all.hpp>

#include <memory>
#include <optional>
#include <vector>

#include "actors/fwd.hpp"
#include "actors/validator.hpp"

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
  std::vector<model::validation_job> rescheduled;
  actors::claimed_jobs to_claim;
  int claims = 0;
};

actors::persistence_actor::behavior_type
fake_persistence(actors::persistence_actor::pointer self, std::shared_ptr<persistence_log> log);

struct store_b_fake_state {
  std::vector<caf::typed_response_promise<actors::store_b_answer>> unanswered;
  int checks = 0;
};

// Answers every check with `verdict`, or never answers when it is nullopt.
actors::store_b_client_actor::behavior_type
fake_store_b(actors::store_b_client_actor::stateful_pointer<store_b_fake_state> self,
             std::optional<model::store_verdict> verdict);

struct actor_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;

  actor_fixture();
  ~actor_fixture(); // stops what keep() holds, so the system can shut down

  void run() { sched->run(); }

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

// The supervisor on the deterministic scheduler: tokens (unknown, cached, lookup
// failing), the token cache's revocation check, admission (count and bytes),
// record lookups, and the answer it owes for a validator that dies.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "actors/supervisor.hpp"
#include "fixture.hpp"
#include "http/admission.hpp"
#include "model/access_token.hpp"
#include "model/purchases/customer.hpp"
#include "model/timestamp.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

constexpr const char* good_token = "rcpt_good";
const std::string legacy_body
  = R"({"package_name":"com.example","purchase_token":"tok","product_id":"gold"})";

struct supervisor_bench : actor_fixture {
  std::shared_ptr<persistence_log> log = std::make_shared<persistence_log>();
  callers_ptr store_callers = std::make_shared<std::vector<caf::strong_actor_ptr>>();
  validator_deps_ptr deps;
  config::validator_settings admission;
  config::auth_settings auth;
  supervisor_options options;
  http::credential_view view{clock};
  supervisor_actor supervisor;

  supervisor_bench() {
    model::app a;
    a.id = "app-1";
    a.package_name = "com.example";
    log->apps_by_token_hash[model::access_token_hash(good_token)] = a;
    auto d = std::make_shared<validator_deps>();
    d->persistence = keep(sys->spawn(fake_persistence, log));
    d->store_b = keep(sys->spawn(holding_store, store_callers, &clock)); // validators wait on it
    d->settings.store_deadline = std::chrono::seconds(5);
    d->settings.retry = {.initial_ms = 1000, .max_ms = 60000, .multiplier = 2.0, .max_attempts = 5};
    d->clock = &clock;
    d->random = &random;
    deps = d;
  }

  // Validators still waiting on the store would outlive the test (their deadline
  // is on the test clock, which stops here): end them with it.
  ~supervisor_bench() {
    for (auto& v : *store_callers)
      caf::anon_send_exit(caf::actor_cast<caf::actor>(v), caf::exit_reason::kill);
  }

  void start() {
    options.credentials = &view;
    supervisor = keep(spawn_supervisor(*sys, admission, auth, deps, options));
  }

  // The lookups the database held (persistence_log::authentication_hangs) answer.
  void answer_lookups() {
    answer_authentications(deps->persistence);
    run();
  }

  // Time passes for the actors (timers) and for their clock alike.
  void pass(std::chrono::milliseconds d) {
    clock.advance(d);
    sched->advance_time(d);
    run();
  }

  std::shared_ptr<recording_sink> send(http::inbound_request req) {
    auto sink = std::make_shared<recording_sink>();
    caf::anon_send(supervisor, upload_atom_v, inbound{std::move(req), sink});
    run();
    return sink;
  }

  std::shared_ptr<recording_sink> upload(const std::string& token = good_token,
                                         const std::string& body = legacy_body,
                                         const std::string& peer_ip = "203.0.113.1") {
    http::inbound_request req(http::route::store_b_legacy_upload);
    req.token = token;
    req.body = body;
    req.peer_ip = peer_ip;
    req.trace_id = "t-upload";
    return send(std::move(req));
  }

  // A credential judged while its body arrives: the verdicts it got (none yet: empty).
  std::shared_ptr<std::vector<std::optional<model::error>>>
  check(http::route target, const std::string& secret, const std::string& app_id = "") {
    auto verdicts = std::make_shared<std::vector<std::optional<model::error>>>();
    caf::anon_send(supervisor, vet_atom_v,
                   http::credential_check{target, http::credential_key(target, secret, app_id),
                                          secret, app_id,
                                          [verdicts](std::optional<model::error> e) {
                                            verdicts->push_back(std::move(e));
                                          }});
    run();
    return verdicts;
  }

  std::shared_ptr<recording_sink> get(const std::string& id,
                                      const std::string& token = good_token) {
    http::inbound_request req(http::route::store_b_get);
    req.token = token;
    req.record_id = id;
    req.trace_id = "t-get";
    return send(std::move(req));
  }
};

// Answered 429 (an upload let through waits on the store, unanswered).
bool limited(const std::shared_ptr<recording_sink>& sink) {
  return !sink->replies.empty() && sink->replies[0].status == 429;
}

std::string error_code(const http::reply& r) {
  return std::string(boost::json::parse(r.body).at("errors").at(0).at("code").as_string());
}

} // namespace

TEST_CASE("an unknown token is a 401 and starts no validator", "[actors][supervisor]") {
  supervisor_bench b;
  b.start();
  auto sink = b.upload("rcpt_unknown");
  REQUIRE(sink->replies.size() == 1);
  CHECK(sink->replies[0].status == 401);
  CHECK(error_code(sink->replies[0]) == "unauthorized");
  CHECK_FALSE(sink->replies[0].retry_after_seconds.has_value());
  CHECK(b.log->authentications == 1);
  CHECK(b.store_callers->empty());
}

TEST_CASE("a server token on a client route is a 401 naming the kind, cached or looked up",
          "[actors][supervisor][token_kind]") {
  supervisor_bench b;
  const bool caching = GENERATE(false, true);
  if (!caching)
    b.auth.token_cache_ttl = std::chrono::milliseconds(0);
  const std::string server_token = "rcpt_server";
  auto hash = model::access_token_hash(server_token);
  b.log->apps_by_token_hash[hash] = b.log->apps_by_token_hash[model::access_token_hash(good_token)];
  b.log->server_token_hashes.insert(hash);
  b.log->records["po-1"] = found_record{"app-1", R"({"id":"po-1"})"};
  b.start();
  for (int i = 0; i < 2; ++i) { // the second from the cache when there is one
    for (auto sink : {b.upload(server_token), b.get("po-1", server_token)}) {
      REQUIRE(sink->replies.size() == 1);
      CHECK(sink->replies[0].status == 401);
      CHECK(error_code(sink->replies[0]) == "unauthorized");
      CHECK(boost::json::parse(sink->replies[0].body).at("errors").at(0).at("message")
            == "this path takes a client token, not a server token");
    }
  }
  CHECK(b.log->authentications == (caching ? 1 : 4));
  CHECK(b.store_callers->empty()); // no validator started
  // The app's client token still works, in the same cache.
  CHECK(b.upload()->replies.empty()); // admitted: its validator waits on the store
  auto got = b.get("po-1");
  REQUIRE(got->replies.size() == 1);
  CHECK(got->replies[0].status == 200);
}

TEST_CASE("beyond max-in-flight uploads: 503 overloaded until a validator ends",
          "[actors][supervisor]") {
  supervisor_bench b;
  b.admission.max_in_flight = 1;
  b.start();
  auto first = b.upload();
  CHECK(first->replies.empty()); // its validator waits on the store
  REQUIRE(b.store_callers->size() == 1);
  auto second = b.upload();
  REQUIRE(second->replies.size() == 1);
  CHECK(second->replies[0].status == 503);
  CHECK(second->replies[0].retry_after_seconds == 1);
  CHECK(error_code(second->replies[0]) == "overloaded");
  // The first validator ends at the store deadline (206), and gives its place back.
  b.sched->advance_time(std::chrono::seconds(5));
  b.run();
  REQUIRE(first->replies.size() == 1);
  CHECK(first->replies[0].status == 206);
  auto third = b.upload();
  CHECK(third->replies.empty());
  CHECK(b.store_callers->size() == 2);
}

TEST_CASE("beyond max-in-flight-bytes: 503 overloaded", "[actors][supervisor]") {
  supervisor_bench b;
  SECTION("one byte short of two bodies: the second is refused") {
    b.admission.max_in_flight_bytes = 2 * legacy_body.size() - 1;
    b.start();
    CHECK(b.upload()->replies.empty());
    auto second = b.upload();
    REQUIRE(second->replies.size() == 1);
    CHECK(second->replies[0].status == 503);
    CHECK(second->replies[0].retry_after_seconds == 1);
    CHECK(error_code(second->replies[0]) == "overloaded");
    CHECK(b.store_callers->size() == 1);
  }
  SECTION("exactly two bodies: both are admitted") {
    b.admission.max_in_flight_bytes = 2 * legacy_body.size();
    b.start();
    CHECK(b.upload()->replies.empty());
    CHECK(b.upload()->replies.empty());
    CHECK(b.store_callers->size() == 2);
  }
}

TEST_CASE("the token cache: the database is asked again once the TTL has passed",
          "[actors][supervisor]") {
  supervisor_bench b;
  b.auth.token_cache_ttl = std::chrono::seconds(10);
  b.log->records["po-1"] = found_record{"app-1", R"({"id":"po-1"})"};
  b.start();
  auto get_ok = [&] {
    auto sink = b.get("po-1");
    REQUIRE(sink->replies.size() == 1);
    CHECK(sink->replies[0].status == 200);
  };
  get_ok();
  CHECK(b.log->authentications == 1);
  get_ok();
  CHECK(b.log->authentications == 1); // cached
  b.clock.advance(std::chrono::milliseconds(9999));
  get_ok();
  CHECK(b.log->authentications == 1); // still within the TTL
  b.clock.advance(std::chrono::milliseconds(1));
  get_ok();
  CHECK(b.log->authentications == 2); // 10 s after it was cached
  get_ok();
  CHECK(b.log->authentications == 2); // cached again from that lookup
}

TEST_CASE("without a token cache every request asks the database", "[actors][supervisor]") {
  supervisor_bench b;
  b.auth.token_cache_ttl = std::chrono::milliseconds(0);
  b.log->records["po-1"] = found_record{"app-1", R"({"id":"po-1"})"};
  b.start();
  b.get("po-1");
  b.get("po-1");
  CHECK(b.log->authentications == 2);
  b.pass(std::chrono::seconds(10));
  CHECK(b.log->revision_checks == 0); // nothing cached, nothing to check
}

TEST_CASE("the token cache is on by default: a second upload does no lookup",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b; // the shipped auth settings
  CHECK(b.auth.token_cache_ttl == std::chrono::minutes(5));
  CHECK(b.auth.revocation_check == std::chrono::seconds(1));
  b.start();
  CHECK(b.upload()->replies.empty()); // admitted: its validator waits on the store
  CHECK(b.upload()->replies.empty());
  CHECK(b.log->authentications == 1);
  CHECK(b.store_callers->size() == 2);
}

TEST_CASE("a revoked token is refused once a revision check saw the revision grow",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  b.start();
  CHECK(b.upload()->replies.empty());
  CHECK(b.log->authentications == 1);
  // Revoked elsewhere (receiptctl, SQL, another instance): the token is gone and
  // the database's triggers bumped the revision.
  b.log->apps_by_token_hash.clear();
  b.log->auth_revision = 1;
  CHECK(b.upload()->replies.empty()); // within the check interval: still the cached answer
  CHECK(b.log->authentications == 1);
  CHECK(b.log->revision_checks == 0);
  b.pass(b.auth.revocation_check);
  CHECK(b.log->revision_checks == 1);
  auto refused = b.upload();
  REQUIRE(refused->replies.size() == 1);
  CHECK(refused->replies[0].status == 401);
  CHECK(error_code(refused->replies[0]) == "unauthorized");
  CHECK(b.log->authentications == 2); // looked up again
  CHECK(b.store_callers->size() == 2);
}

TEST_CASE("a grown revision sends a still valid token to the database once",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  b.start();
  b.upload();
  b.pass(b.auth.revocation_check); // same revision: the entry stays
  b.upload();
  CHECK(b.log->revision_checks == 1);
  CHECK(b.log->authentications == 1);
  b.log->auth_revision = 7; // e.g. another app's token was issued, or this app updated
  b.pass(b.auth.revocation_check);
  CHECK(b.log->revision_checks == 2);
  b.upload();
  CHECK(b.log->authentications == 2); // looked up again, at revision 7
  b.upload();
  CHECK(b.log->authentications == 2); // and cached again
  CHECK(b.store_callers->size() == 4);
}

TEST_CASE("the auth revision's notices reach the token cache at once; checks slow while heard",
          "[actors][supervisor][token_cache]") {
  actors::auth_notices notices; // outlives the supervisor
  supervisor_bench b;
  b.options.notices = &notices;
  b.start();
  CHECK_FALSE(notices.wanted()); // nothing cached: nobody listens
  CHECK(b.upload()->replies.empty());
  CHECK(b.log->authentications == 1);
  CHECK(notices.wanted()); // a token is cached: listen
  notices.hearing(true);   // the listener is in: what was read before is suspect
  b.run();
  CHECK(b.log->revision_checks == 1); // asked at once
  b.upload();
  CHECK(b.log->authentications == 1); // the cache is trusted meanwhile, as between checks
  b.pass(b.auth.revocation_check);
  b.upload();
  CHECK(b.log->revision_checks == 1); // heard: no check after one interval

  SECTION("a revocation elsewhere: its notice starts a check, and the token is refused") {
    b.log->apps_by_token_hash.clear();
    b.log->auth_revision = 1;
    notices.noticed();
    b.run();
    CHECK(b.log->revision_checks == 2); // asked at once, no upload needed
    auto refused = b.upload();
    REQUIRE(refused->replies.size() == 1);
    CHECK(refused->replies[0].status == 401);
    CHECK(b.log->authentications == 2); // looked up again
  }
  SECTION("the check stays as a safety net, every 10 s") {
    b.pass(std::chrono::seconds(8));
    CHECK(b.log->revision_checks == 1);
    b.pass(std::chrono::seconds(1));
    CHECK(b.log->revision_checks == 2);
    b.upload();
    CHECK(b.log->authentications == 1);
  }
  SECTION("notices no longer heard: asked at once, then every interval again") {
    notices.hearing(false);
    b.upload();
    CHECK(b.log->revision_checks == 2);
    b.pass(b.auth.revocation_check);
    CHECK(b.log->revision_checks == 3);
    CHECK(b.log->authentications == 1);
  }
}

TEST_CASE("the cache polls the revision only while it holds tokens in use",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  b.start();
  b.pass(std::chrono::seconds(10));
  CHECK(b.log->revision_checks == 0); // idle: no query at all
  auto unknown = b.upload("rcpt_unknown");
  REQUIRE(unknown->replies.size() == 1);
  CHECK(unknown->replies[0].status == 401);
  b.pass(std::chrono::seconds(10));
  CHECK(b.log->revision_checks == 0); // an unknown token is never cached
  CHECK(b.log->authentications == 1);

  b.upload(); // cached: polling starts
  b.pass(b.auth.revocation_check);
  CHECK(b.log->revision_checks == 1);
  b.upload(); // used since that check
  b.pass(b.auth.revocation_check);
  CHECK(b.log->revision_checks == 2);
  CHECK(b.log->authentications == 2);
  // Unused for a whole interval: dropped at the next tick, without a query, and
  // the polling stops.
  b.pass(b.auth.revocation_check);
  b.pass(std::chrono::seconds(10));
  CHECK(b.log->revision_checks == 2);
  b.upload();
  CHECK(b.log->authentications == 3); // looked up again
}

TEST_CASE("while revision checks fail, a cached token is trusted for one interval only",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  b.start();
  b.upload(); // cached at t0
  b.log->revision_check_fails = true;
  b.pass(b.auth.revocation_check); // one interval after t0: the check fails
  CHECK(b.log->revision_checks == 1);
  b.upload(); // the entry is one interval old: not trusted
  CHECK(b.log->authentications == 2);
  b.upload(); // the lookup just made is
  CHECK(b.log->authentications == 2);
  b.log->revision_check_fails = false;
  b.pass(b.auth.revocation_check); // the check answers again
  CHECK(b.log->revision_checks == 2);
  b.pass(b.auth.revocation_check / 2);
  b.upload(); // confirmed current by that check
  CHECK(b.log->authentications == 2);
}

TEST_CASE("a revision check unanswered for an interval counts as failed",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  b.start();
  b.upload(); // cached at t0
  // e.g. a database that does not accept connections (PostgreSQL's connect timeout)
  b.log->revision_check_hangs = true;
  b.pass(b.auth.revocation_check); // one interval after t0: a check goes out
  CHECK(b.log->revision_checks == 1);
  b.upload(); // the check may still answer: trusted
  CHECK(b.log->authentications == 1);
  b.pass(b.auth.revocation_check); // t0 + 2 s: no answer, the check failed
  b.upload();
  CHECK(b.log->authentications == 2);
}

TEST_CASE("a lookup read before a change the cache knows of is not cached",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  b.log->auth_revision = 1;
  b.start();
  b.upload(); // cached at revision 1
  // A change commits; a lookup racing it was read in the snapshot before it.
  b.log->auth_revision = 2;
  b.log->lookup_revision = 1;
  b.pass(b.auth.revocation_check); // the check sees 2: the entry goes
  b.upload();
  b.upload();
  CHECK(b.log->authentications == 3); // each answered, neither cached
  b.log->lookup_revision.reset();
  b.upload();
  b.upload();
  CHECK(b.log->authentications == 4);
  CHECK(b.store_callers->size() == 5);
}

TEST_CASE("uploads that arrive while their token is looked up share that lookup",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  b.log->authentication_hangs = true;
  b.start();
  std::vector<std::shared_ptr<recording_sink>> sinks;
  for (int i = 0; i < 5; ++i)
    sinks.push_back(b.upload());
  CHECK(b.log->authentications == 1);
  b.answer_lookups();
  CHECK(b.store_callers->size() == 5); // all admitted: each validator asks the store
  for (auto& sink : sinks)
    CHECK(sink->replies.empty());
  b.log->authentication_hangs = false;
  b.upload();
  CHECK(b.log->authentications == 1); // and the answer was cached
}

TEST_CASE("a burst with an unknown token asks the database once: every upload is a 401",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  b.log->authentication_hangs = true;
  b.start();
  std::vector<std::shared_ptr<recording_sink>> sinks;
  for (int i = 0; i < 4; ++i)
    sinks.push_back(b.upload("rcpt_unknown"));
  CHECK(b.log->authentications == 1);
  b.answer_lookups();
  for (auto& sink : sinks) {
    REQUIRE(sink->replies.size() == 1);
    CHECK(sink->replies[0].status == 401);
  }
  CHECK(b.store_callers->empty());
  b.upload("rcpt_unknown"); // unknown tokens are never cached: this one asks again
  CHECK(b.log->authentications == 2);
}

TEST_CASE("a lookup out for a revocation check interval is not joined",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  b.log->authentication_hangs = true;
  b.start();
  b.upload();
  b.clock.advance(b.auth.revocation_check - std::chrono::milliseconds(1));
  b.upload();
  CHECK(b.log->authentications == 1); // joined: asked less than an interval ago
  b.clock.advance(std::chrono::milliseconds(1));
  b.upload();
  CHECK(b.log->authentications == 2); // that one is too old to stand for a fresh answer
  b.answer_lookups();
  CHECK(b.store_callers->size() == 3);
}

TEST_CASE("a lookup asked before a change the cache has learnt of is not joined",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  constexpr const char* other_token = "rcpt_other";
  b.log->apps_by_token_hash[model::access_token_hash(other_token)]
    = b.log->apps_by_token_hash[model::access_token_hash(good_token)];
  b.start();
  b.upload(); // revision 0 seen
  b.log->authentication_hangs = true;
  b.upload(other_token); // its lookup is held, asked at revision 0
  CHECK(b.log->authentications == 2);
  b.log->authentication_hangs = false;
  b.log->auth_revision = 1; // a change commits (e.g. a token revoked)
  b.upload("rcpt_unknown"); // answered at revision 1: the cache learns of the change
  CHECK(b.log->authentications == 3);
  b.upload(other_token);
  CHECK(b.log->authentications == 4); // not joined to the lookup read before the change
  CHECK(b.store_callers->size() == 2);
  b.answer_lookups();
  CHECK(b.store_callers->size() == 3);
}

TEST_CASE("a failed lookup answers every upload that waited for it: 503",
          "[actors][supervisor][token_cache]") {
  supervisor_bench b;
  b.log->authentication_hangs = true;
  b.start();
  auto first = b.upload();
  auto second = b.upload();
  CHECK(b.log->authentications == 1);
  b.log->authentication_fails = true;
  b.answer_lookups();
  for (auto& sink : {first, second}) {
    REQUIRE(sink->replies.size() == 1);
    CHECK(sink->replies[0].status == 503);
    CHECK(error_code(sink->replies[0]) == "storage_unavailable");
  }
  CHECK(b.store_callers->empty());
}

TEST_CASE("a failed token lookup is a 503 storage_unavailable", "[actors][supervisor]") {
  supervisor_bench b;
  b.log->authentication_fails = true;
  b.start();
  auto sink = b.upload();
  REQUIRE(sink->replies.size() == 1);
  CHECK(sink->replies[0].status == 503);
  CHECK(sink->replies[0].retry_after_seconds == 1);
  CHECK(error_code(sink->replies[0]) == "storage_unavailable");
  CHECK(b.store_callers->empty());
}

TEST_CASE("a record is shown only to the app that owns it", "[actors][supervisor]") {
  supervisor_bench b;
  b.log->records["po-mine"] = found_record{"app-1", R"({"id":"po-mine"})"};
  b.log->records["po-theirs"] = found_record{"app-2", R"({"id":"po-theirs"})"};
  b.start();
  auto mine = b.get("po-mine");
  REQUIRE(mine->replies.size() == 1);
  CHECK(mine->replies[0].status == 200);
  CHECK(mine->replies[0].body == R"({"id":"po-mine"})");
  for (auto id : {"po-theirs", "po-missing"}) {
    auto sink = b.get(id);
    REQUIRE(sink->replies.size() == 1);
    CHECK(sink->replies[0].status == 404);
    CHECK(error_code(sink->replies[0]) == "not_found");
    CHECK(sink->replies[0].body.find("po-theirs") == std::string::npos);
  }
}

TEST_CASE("a validator that dies without answering: 500 internal_error, place given back",
          "[actors][supervisor]") {
  supervisor_bench b;
  b.admission.max_in_flight = 1;
  b.start();
  auto sink = b.upload();
  REQUIRE(b.store_callers->size() == 1); // the validator, waiting on the store
  CHECK(sink->replies.empty());
  caf::anon_send_exit(caf::actor_cast<caf::actor>(b.store_callers->front()),
                      caf::exit_reason::kill);
  b.run();
  REQUIRE(sink->replies.size() == 1);
  CHECK(sink->replies[0].status == 500);
  CHECK(error_code(sink->replies[0]) == "internal_error");
  CHECK(b.log->saved.empty());
  auto next = b.upload();
  CHECK(next->replies.empty()); // admitted: the dead validator's place is free
  CHECK(b.store_callers->size() == 2);
}

// A GET's body bytes are taken from max-in-flight-bytes at admission; the lookup
// gives them back (it gave back 0 before: every GET sent with a body shrank the
// byte budget for good).
TEST_CASE("a GET with a body gives its bytes back", "[actors][supervisor]") {
  supervisor_bench b;
  b.admission.max_in_flight_bytes = legacy_body.size();
  b.log->records["po-1"] = found_record{"app-1", R"({"id":"po-1"})"};
  b.start();
  http::inbound_request req(http::route::store_b_get);
  req.token = good_token;
  req.record_id = "po-1";
  req.body = "x";
  auto got = b.send(std::move(req));
  REQUIRE(got->replies.size() == 1);
  CHECK(got->replies[0].status == 200);
  auto upload = b.upload();
  CHECK(upload->replies.empty()); // admitted: the byte budget is whole again
}

// ---- upload rates (limits.app-rate; the client's is the HTTP layer's) ---------------

TEST_CASE("beyond its app's rate an upload is 429; a large body counts once per 64 KiB",
          "[actors][supervisor][limits]") {
  supervisor_bench b;
  b.options.limits = {.client_rate = 0, .app_rate = 10, .app_burst = 20};
  b.start();
  // 17 of the 20 at once: a 1 MiB body (refused as a body, 422, not by the limit).
  auto big = b.upload(good_token, std::string(1024 * 1024, ' '), "198.51.100.1");
  REQUIRE(big->replies.size() == 1);
  CHECK(big->replies[0].status == 422);
  for (int i = 0; i < 3; ++i)
    CHECK_FALSE(limited(b.upload(good_token, legacy_body, "198.51.100." + std::to_string(2 + i))));
  auto over = b.upload(good_token, legacy_body, "198.51.100.9");
  REQUIRE(limited(over));
  CHECK(over->replies[0].retry_after_seconds == 1); // 100 ms, in whole seconds
  // A token nobody issued is a 401, not a place in the app's budget.
  CHECK(b.upload("rcpt_unknown", legacy_body, "198.51.100.9")->replies[0].status == 401);
  // Record lookups are not uploads.
  b.log->records["rec-1"] = {"app-1", R"({"id":"rec-1"})"};
  CHECK(b.get("rec-1")->replies[0].status == 200);
}

// ---- credentials judged while a body arrives (http/admission.hpp) -------------------

TEST_CASE("a check of a token shares the lookup an upload makes, and tells good from unknown",
          "[actors][supervisor][admission]") {
  supervisor_bench b;
  b.log->authentication_hangs = true;
  b.start();
  auto early = b.check(http::route::store_b_upload, good_token);
  auto held = b.upload();
  auto unknown = b.check(http::route::store_b_upload, "rcpt_made_up");
  CHECK(early->empty());
  CHECK(held->replies.empty());
  b.answer_lookups();
  CHECK(b.log->authentications == 2); // one per token
  REQUIRE(early->size() == 1);
  CHECK_FALSE(early->at(0).has_value());
  REQUIRE(unknown->size() == 1);
  REQUIRE(unknown->at(0).has_value());
  CHECK(unknown->at(0)->code() == model::errc::unauthorized);
  // A cached token is good at once, without a lookup.
  b.log->authentication_hangs = false;
  auto cached = b.check(http::route::store_a_get, good_token);
  REQUIRE(cached->size() == 1);
  CHECK_FALSE(cached->at(0).has_value());
  CHECK(b.log->authentications == 2);
}

TEST_CASE("what lookups find is published for the HTTP layer: cached tokens while they are "
          "cached, refused ones for one revocation check",
          "[actors][supervisor][admission]") {
  supervisor_bench b;
  b.start();
  auto good = http::credential_key(http::route::store_b_upload, good_token, "");
  auto bad = http::credential_key(http::route::store_b_upload, "rcpt_made_up", "");
  CHECK(b.view.look(good).kind == http::credential_view::state::unknown);
  b.upload();
  CHECK(b.view.look(good).kind == http::credential_view::state::good);
  CHECK(b.upload("rcpt_made_up")->replies[0].status == 401);
  CHECK(b.view.look(bad).kind == http::credential_view::state::refused);
  b.pass(b.auth.revocation_check);
  CHECK(b.view.look(bad).kind == http::credential_view::state::unknown);
  // A token the cache lets go of (read before a change, or unused for an
  // interval) leaves the view with it.
  b.log->auth_revision = 7;
  b.pass(b.auth.revocation_check);
  CHECK(b.view.look(good).kind == http::credential_view::state::unknown);

  SECTION("without a token cache nothing is remembered as refused") {
    supervisor_bench nb;
    nb.auth.token_cache_ttl = std::chrono::milliseconds(0);
    nb.start();
    CHECK(nb.upload("rcpt_made_up")->replies[0].status == 401);
    CHECK(nb.view.look(bad).kind == http::credential_view::state::unknown);
    CHECK(nb.view.good_count() == 0);
  }
}

TEST_CASE("a notification URL is checked by its app and a Play push's secret",
          "[actors][supervisor][admission]") {
  supervisor_bench b;
  model::app a;
  a.id = "app-9";
  a.rtdn_token = "push-secret";
  b.log->apps_by_id[a.id] = a;
  b.start();
  auto apple = b.check(http::route::store_a_notification, "", "app-9");
  REQUIRE(apple->size() == 1);
  CHECK_FALSE(apple->at(0).has_value());
  CHECK(b.view.look("a:app-9").kind == http::credential_view::state::good);
  auto nobody = b.check(http::route::store_a_notification, "", "no-such-app");
  REQUIRE(nobody->size() == 1);
  REQUIRE(nobody->at(0).has_value());
  CHECK(nobody->at(0)->code() == model::errc::not_found);
  auto play = b.check(http::route::store_b_notification, "push-secret", "app-9");
  REQUIRE(play->size() == 1);
  CHECK_FALSE(play->at(0).has_value());
  auto wrong = b.check(http::route::store_b_notification, "guess", "app-9");
  REQUIRE(wrong->size() == 1);
  REQUIRE(wrong->at(0).has_value());
  CHECK(wrong->at(0)->code() == model::errc::unauthorized);
  CHECK(b.view.look(http::credential_key(http::route::store_b_notification, "guess", "app-9")).kind
        == http::credential_view::state::refused);
}

TEST_CASE("checks of a notification URL that arrive while it is looked up share that lookup",
          "[actors][supervisor][admission]") {
  // A flood of one made-up URL while the database is slow: before, each check
  // asked again, and thousands of lookups queued at the persistence pool.
  supervisor_bench b;
  model::app a;
  a.id = "app-9";
  b.log->apps_by_id[a.id] = a;
  b.log->app_lookup_hangs = true;
  b.start();
  auto first = b.check(http::route::store_a_notification, "", "no-such-app");
  auto second = b.check(http::route::store_a_notification, "", "no-such-app");
  auto known = b.check(http::route::store_a_notification, "", "app-9");
  CHECK(b.log->app_lookups == 2); // one per URL
  CHECK(first->empty());
  CHECK(second->empty());
  answer_app_lookups(b.deps->persistence);
  b.run();
  for (const auto& refused : {first, second}) {
    REQUIRE(refused->size() == 1);
    REQUIRE(refused->at(0).has_value());
    CHECK(refused->at(0)->code() == model::errc::not_found);
  }
  REQUIRE(known->size() == 1);
  CHECK_FALSE(known->at(0).has_value());
  // Answered: a later check asks again.
  b.check(http::route::store_a_notification, "", "no-such-app");
  CHECK(b.log->app_lookups == 3);
}

// ---- customer answers given again (actors/customer_answers.hpp) ----------------

namespace {

// An answer as a worker gives it: requested_at last, the same until `until`.
customer_answer answer_for(const std::string& user, model::unix_ms now,
                           std::optional<model::unix_ms> until) {
  auto body = R"({"customer":{"user_identifier":")" + user + R"(","requested_at":)"
    + boost::json::serialize(model::timestamp_json(now)) + "}}";
  customer_answer a;
  a.reply = http::reply{200, body};
  a.asked_at = now;
  a.same_until = until;
  a.head = model::purchases::answer_head(body, now).value();
  return a;
}

struct customer_bench : supervisor_bench {
  customer_changes changes;

  customer_bench() {
    changes.hearing(true);
    options.changes = &changes;
    options.answer_cache_bytes = 1 << 20;
    log->customer = [this](const resource_request& r) {
      auto now = clock.now_ms();
      return answer_for(r.id, now, now + 60'000);
    };
  }

  std::shared_ptr<recording_sink> lookup(const std::string& user) {
    http::inbound_request req(http::route::customer_get);
    req.token = good_token;
    req.record_id = user;
    req.trace_id = "t-customer";
    return send(std::move(req));
  }

  // The answer's requested_at, in ms.
  static std::int64_t requested_at(const std::shared_ptr<recording_sink>& sink) {
    auto v = boost::json::parse(sink->replies.at(0).body);
    return v.at("customer").at("requested_at").at("ms").as_int64();
  }
};

} // namespace

TEST_CASE("a customer answer is given again with its own requested_at until a write or its time",
          "[actors][supervisor][customers]") {
  customer_bench b;
  b.start();
  auto first = b.lookup("u1");
  REQUIRE(first->replies.at(0).status == 200);
  CHECK(b.log->customer_lookups == 1);

  b.pass(std::chrono::seconds(1));
  auto again = b.lookup("u1");
  REQUIRE(again->replies.at(0).status == 200);
  CHECK(b.log->customer_lookups == 1); // given again
  CHECK(customer_bench::requested_at(again) == b.clock.now_ms());
  CHECK(again->replies[0].body == answer_for("u1", b.clock.now_ms(), std::nullopt).reply.body);

  b.lookup("u2"); // another customer's is its own
  CHECK(b.log->customer_lookups == 2);

  b.changes.written(); // a write committed (here or, heard, elsewhere)
  b.lookup("u1");
  CHECK(b.log->customer_lookups == 3);
  b.lookup("u1");
  CHECK(b.log->customer_lookups == 3);

  b.pass(std::chrono::seconds(60)); // its time came: a period ended
  b.lookup("u1");
  CHECK(b.log->customer_lookups == 4);
}

TEST_CASE("no customer answer is kept while other instances' writes are not heard",
          "[actors][supervisor][customers]") {
  customer_bench b;
  b.changes.hearing(false);
  b.start();
  b.lookup("u1");
  b.lookup("u1");
  CHECK(b.log->customer_lookups == 2);
  b.changes.hearing(true);
  b.lookup("u1");
  b.lookup("u1");
  CHECK(b.log->customer_lookups == 3);
  b.changes.hearing(false); // the listening session went away
  b.lookup("u1");
  CHECK(b.log->customer_lookups == 4);
}

TEST_CASE("a customer answer read while a write committed, or not a 200, is not kept",
          "[actors][supervisor][customers]") {
  customer_bench b;
  auto answer = b.log->customer;
  b.log->customer = [&](const resource_request& r) {
    b.changes.written(); // committed between the ask and the answer
    return answer(r);
  };
  b.start();
  b.lookup("u1");
  b.lookup("u1");
  CHECK(b.log->customer_lookups == 2);

  b.log->customer = [](const resource_request&) {
    customer_answer refused;
    refused.reply = http::reply{422, R"({"errors":[{"code":"invalid"}]})"};
    return refused;
  };
  b.lookup("bad id");
  b.lookup("bad id");
  CHECK(b.log->customer_lookups == 4);
}

TEST_CASE("without customer-answer bytes every customer lookup asks the database",
          "[actors][supervisor][customers]") {
  customer_bench b;
  b.options.answer_cache_bytes = 0;
  b.start();
  b.lookup("u1");
  b.lookup("u1");
  CHECK(b.log->customer_lookups == 2);
}

// receiptd: the receipt validation service. Reads the configuration once, opens
// and migrates the database, wires the actors, serves HTTP until SIGINT/SIGTERM,
// then drains in-flight uploads and stops in order.

#include <caf/actor_system.hpp>
#include <caf/send.hpp>

#include <csignal>
#include <fstream>
#include <sstream>
#include <iostream>
#include <optional>
#include <thread>

#include "actors/auth_notices.hpp"
#include "actors/customer_answers.hpp"
#include "actors/log.hpp"
#include "actors/operational.hpp"
#include "actors/persistence.hpp"
#include "actors/retry_scheduler.hpp"
#include "actors/scheduler.hpp"
#include "actors/upkeep.hpp"
#include "actors/refund_answerer.hpp"
#include "actors/webhook_dispatcher.hpp"
#include "actors/work_notice.hpp"
#include "actors/store_a_client.hpp"
#include "actors/store_b_client.hpp"
#include "actors/supervisor.hpp"
#include "cmd/startup.hpp"
#include "config/options.hpp"
#include "db/change_listener.hpp"
#include "db/url.hpp"
#include "http/outbound_client.hpp"
#include "http/server.hpp"
#include "model/access_token.hpp"
#include "model/encoding.hpp"
#include "model/store_a/server_api.hpp"
#include "model/store_b/pubsub_oidc.hpp"

using namespace receiptd;

namespace {

// On a new database: an app to start with, its token printed once (empty when
// there is none to print).
model::result<std::string> bootstrap_first_app(db::database& db,
                                               const config::bootstrap_settings& b) {
  if (!b.create_first_app)
    return std::string();
  auto apps = db.list_apps();
  if (!apps)
    return apps.err();
  if (!apps->empty())
    return std::string();
  model::app a;
  a.name = b.app_name;
  a.bundle_id = b.bundle_id;
  a.package_name = b.package_name;
  auto created = db.create_app(a);
  if (!created)
    return created.err();
  auto token = model::make_access_token();
  auto added
    = db.add_token(created->id, model::access_token_hash(token), model::system_time().now_ms());
  if (!added)
    return added.err();
  std::cout << "Created app \"" << created->name << "\" (id " << created->id << ", bundle id "
            << created->bundle_id << ", package name " << created->package_name
            << ") on the new database.\n"
            << "Its access token, shown only now (receiptd keeps a hash):\n\n  " << token << "\n\n"
            << std::flush;
  return token;
}

void print_try_it(const std::string& token, const std::string& address, std::uint16_t port,
                  const config::bootstrap_settings& b) {
  if (token.empty())
    return;
  std::cout << "Try it (a legacy Store B upload; without store credentials it is\n"
               "stored and queued for revalidation: 206):\n\n"
            << "  curl -s -X POST http://" << address << ":" << port
            << "/client/store_b/purchase_orders/legacy \\\n"
            << "    -H 'Authorization: Bearer " << token << "' \\\n"
            << "    -H 'Content-Type: application/json' \\\n"
            << "    -d '{\"package_name\":\"" << b.package_name
            << "\",\"purchase_token\":\"demo-token-1\",\"product_id\":\"demo.product\"}'\n\n"
            << "Manage apps and tokens with receiptctl (receiptctl --help).\n"
            << std::flush;
}

// Reads the Store A trust material the configuration names; fails naming the
// option and file.
std::shared_ptr<const model::store_a::trust_anchors> load_trust(const config::store_a_settings& s) {
  model::store_a::trust_config tc;
  auto read
    = [](const std::string& option, const std::string& path, std::vector<std::string>& into) {
        std::ifstream in(path);
        if (!in) {
          actors::log_error("cannot read " + option + " file " + path,
                            actors::log_context{}.with("option", option).with("file", path));
          return false;
        }
        std::ostringstream text;
        text << in.rdbuf();
        into.push_back(text.str());
        return true;
      };
  for (const auto& f : s.trust_roots)
    if (!read("store-a.trust-roots", f, tc.root_pems))
      return nullptr;
  for (const auto& f : s.intermediates)
    if (!read("store-a.intermediates", f, tc.intermediate_pems))
      return nullptr;
  if (!s.storekit_test_root.empty()
      && !read("store-a.storekit-test-root", s.storekit_test_root, tc.sandbox_root_pems))
    return nullptr;
  auto anchors = model::store_a::load_trust_anchors(tc);
  if (!anchors) {
    actors::log_error("bad store-a trust material: " + anchors.errors().front().message);
    return nullptr;
  }
  return *anchors;
}

// store-b.rtdn-oidc-jwks: Google's OIDC keys for Pub/Sub push tokens (null
// when the option is empty), or an error naming the option and file.
model::result<std::shared_ptr<const model::store_b::oidc_keys>>
load_rtdn_oidc(const config::store_b_settings& s) {
  using keys_ptr = std::shared_ptr<const model::store_b::oidc_keys>;
  if (s.rtdn_oidc_jwks.empty())
    return keys_ptr();
  std::ifstream in(s.rtdn_oidc_jwks);
  if (!in)
    return model::error(model::errc::internal_error,
                        "cannot read store-b.rtdn-oidc-jwks file " + s.rtdn_oidc_jwks);
  std::ostringstream text;
  text << in.rdbuf();
  auto keys = model::store_b::oidc_keys::parse_jwks(text.str());
  if (!keys)
    return model::error(model::errc::internal_error,
                        "bad store-b.rtdn-oidc-jwks file " + s.rtdn_oidc_jwks + ": "
                          + keys.err().message());
  return keys_ptr(*keys);
}

} // namespace

int main(int argc, char** argv) {
  // Signals are handled in one place: block them before any thread starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  cmd::raise_file_limit();

  config::receiptd_config cfg;
  if (auto loaded = cfg.load(argc, argv, std::cout); !loaded) {
    std::cerr << "receiptd: " << loaded.err().message() << "\n";
    return 2;
  }
  if (cfg.help_printed)
    return 0;
  if (auto serving = cfg.check_serving(); !serving) {
    std::cerr << "receiptd: " << serving.err().message() << "\n";
    return 2;
  }
  const auto& s = cfg.values();
  // From here on, every line to stderr is a log line in [log]'s format.
  actors::configure_log(s.log);

  auto trust = load_trust(s.store_a);
  if (!trust)
    return 2;
  auto rtdn_oidc_keys = load_rtdn_oidc(s.store_b);
  if (!rtdn_oidc_keys) {
    actors::log_error(rtdn_oidc_keys.err().message());
    return 2;
  }
  auto db = cmd::open_database(s.db.url, [](const std::string& why) { actors::log_error(why); });
  if (!db)
    return 1;
  auto first_token = bootstrap_first_app(*db, s.bootstrap);
  if (!first_token) {
    actors::log_error("cannot create the first app: " + first_token.err().message());
    return 1;
  }
  db.reset();

  const auto& clock = model::system_time();
  actors::tracer trace(s.trace, clock);
  actors::metrics instruments(s.metrics.token, clock); // GET /metrics
  // The reactors' and the outbound thread's turns run the actor work they cause
  // when the scheduler's threads sleep (actors/scheduler.hpp); attached below.
  actors::scheduler_turns turns;
  http::outbound_client outbound(
    {.ca_file = s.outbound.ca_file,
     .connect_timeout = s.outbound.connect_timeout,
     .max_connections_per_host = s.outbound.max_connections_per_host,
     .max_open_connections = s.store_a.max_concurrent + s.store_b.max_concurrent + s.webhooks.batch,
     .turns = &turns});
  // The store clients' calls at outbound.store-http-version; webhooks at curl's choice.
  http::versioned_transport store_calls(
    outbound, model::parse_http_version(s.outbound.store_http_version).value());
  // Request bodies held at once, what is known of credentials before a body is in,
  // and the client networks' upload rates: the HTTP layer judges requests by them
  // once their headers are in, the supervisor publishes what lookups find. They
  // outlive both.
  http::body_budget bodies(s.validator.max_in_flight_bytes, s.validator.max_unverified_bytes);
  http::credential_view credentials(clock);
  http::client_rates clients(s.limits.client_rate, s.limits.client_burst, clock);
  // The work this instance writes for its background actors, told to them when
  // it falls due (actors/work_notice.hpp); attached below, detached before the
  // actors stop.
  actors::work_notice notice(clock);
  // What may have changed customer answers, and (PostgreSQL) the other
  // instances' writes heard: answers are kept only while they are
  // (actors/customer_answers.hpp). Both outlive the actors.
  // The listener is declared after what its thread calls: it stops first.
  db::change_listener* listening = nullptr;
  actors::customer_changes changes([&listening] {
    if (listening)
      listening->wake();
  });
  std::optional<db::change_listener> listener;
  const bool keep_answers
    = s.db.customer_answer_bytes > 0 && db::dialect_of(s.db.url) == db::dialect::postgresql;
  if (keep_answers)
    listener.emplace(s.db.url, db::change_listener::channel::customers,
                     db::change_listener::callbacks{
                       .noticed = [&changes] { changes.written(); },
                       .hearing = [&changes](bool up) { changes.hearing(up); },
                       .wanted = [&changes, &clock] { return changes.wanted(clock.now_ms()); }});
  if (listener)
    listening = &*listener;
  // The auth revision's notices (PostgreSQL), listened for while tokens are cached:
  // a change anyone makes reaches the token cache at once (actors/auth_notices.hpp).
  db::change_listener* auth_listening = nullptr;
  actors::auth_notices notices([&auth_listening] {
    if (auth_listening)
      auth_listening->wake();
  });
  std::optional<db::change_listener> auth_listener;
  if (s.auth.token_cache_ttl.count() > 0 && db::dialect_of(s.db.url) == db::dialect::postgresql)
    auth_listener.emplace(s.db.url, db::change_listener::channel::auth,
                          db::change_listener::callbacks{
                            .noticed = [&notices] { notices.noticed(); },
                            .hearing = [&notices](bool up) { notices.hearing(up); },
                            .wanted = [&notices] { return notices.wanted(); }});
  if (auth_listener)
    auth_listening = &*auth_listener;
  std::uint16_t port = 0;
  if (s.scheduler_policy == "sharing")
    actors::use_sharing_scheduler(cfg);
  {
    caf::actor_system sys{cfg};
    turns.attach(sys);
    actors::persistence_settings pool{
      .db_url = s.db.url,
      .workers = s.db.pool_size,
      .turns = &turns,
      .notice = &notice,
      .changes = &changes};
    auto persistence = actors::spawn_persistence_pool(sys, pool, trace, clock, instruments);
    // GET /metrics and /readyz: a session and a thread of their own, off the pool.
    auto operational = actors::spawn_operational(
      sys, {.queue_interval = s.metrics.queue_interval},
      {.db = actors::spawn_operational_session(sys, pool, trace, clock, instruments),
       .instruments = &instruments,
       .trace = &trace,
       .clock = &clock});
    auto store_b = actors::spawn_store_b_client(sys, s.store_b, s.outbound, store_calls, trace,
                                                clock, instruments);
    auto store_a
      = actors::spawn_store_a_client(sys, s.store_a, store_calls, trace, clock, instruments);
    auto deps = std::make_shared<actors::validator_deps>();
    deps->persistence = persistence;
    deps->operational = operational;
    deps->store_a = store_a;
    deps->store_b = store_b;
    deps->trust = trust;
    deps->rtdn_oidc_keys = *rtdn_oidc_keys;
    deps->rtdn_oidc.audience = s.store_b.rtdn_oidc_audience;
    deps->rtdn_oidc.service_account = s.store_b.rtdn_oidc_service_account;
    deps->trace = &trace;
    deps->instruments = &instruments;
    deps->clock = &clock;
    deps->notification_log = std::make_shared<actors::shared_log_limiter>(clock);
    deps->random = &model::system_random();
    deps->settings.store_deadline = s.validator.store_deadline;
    deps->settings.notification_max_age = s.notifications.max_age;
    deps->settings.store_a_verify.max_in_app_purchases = s.store_a.max_in_app_purchases;
    deps->settings.store_a_verify.clock = &clock;
    deps->settings.confirm_with = *model::store_a::parse_confirmation(s.store_a.confirm_with);
    deps->settings.retry = {.initial_ms = s.retry.initial.count(),
                            .max_ms = s.retry.max.count(),
                            .multiplier = s.retry.multiplier,
                            .max_attempts = static_cast<int>(s.retry.max_attempts)};
    auto supervisor = actors::spawn_supervisor(
      sys, s.validator, s.auth, deps,
      {.limits = s.limits,
       .credentials = &credentials,
       .changes = keep_answers ? &changes : nullptr,
       .answer_cache_bytes = s.db.customer_answer_bytes,
       .notices = auth_listener ? &notices : nullptr});
    http::admission gate{bodies, credentials, clients, [supervisor](http::credential_check c) {
                           caf::anon_send(supervisor, actors::vet_atom_v, std::move(c));
                         }};
    auto instance = "receiptd-" + model::hex_encode(model::random_bytes(6)); // lease owner
    auto retry = actors::spawn_retry_scheduler(
      sys, s.retry, {.store_a = s.store_a.retry_rate, .store_b = s.store_b.retry_rate}, instance,
      deps);
    auto webhooks = actors::spawn_webhook_dispatcher(
      sys, s.webhooks, instance,
      {.persistence = persistence, .transport = &outbound, .trace = &trace, .clock = &clock});
    // The stores' refund requests, on the revalidation jobs' retry schedule.
    auto refunds = actors::spawn_refund_answerer(
      sys,
      {.poll_interval = s.retry.poll_interval,
       .lease = s.retry.lease,
       .call_deadline = s.validator.store_deadline,
       .retry = deps->settings.retry},
      instance,
      {.persistence = persistence,
       .store_a = store_a,
       .store_b = store_b,
       .clock = &clock,
       .random = &model::system_random(),
       .instruments = &instruments});
    auto upkeep
      = actors::spawn_upkeep(sys, s.store_a, s.store_b, s.retry.lease, instance,
                             {.persistence = persistence, .store_b = store_b, .clock = &clock});

    notice.attach(retry, webhooks, refunds);
    auto stop_actors = [&] {
      notice.detach();
      notices.on_notice({}); // the supervisor stops: nobody to tell
      for (auto a :
           {caf::actor_cast<caf::actor>(retry), caf::actor_cast<caf::actor>(webhooks),
            caf::actor_cast<caf::actor>(refunds),
            caf::actor_cast<caf::actor>(upkeep), caf::actor_cast<caf::actor>(supervisor),
            caf::actor_cast<caf::actor>(store_a), caf::actor_cast<caf::actor>(store_b),
            caf::actor_cast<caf::actor>(persistence), caf::actor_cast<caf::actor>(operational)})
        caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    };

    http::server server(
      s.http,
      [supervisor](http::inbound_request r, http::reply_sink_ptr sink) {
        caf::anon_send(supervisor, actors::upload_atom_v,
                       actors::inbound{std::move(r), std::move(sink)});
      },
      &turns, &gate);
    try {
      port = server.start();
    } catch (const std::exception& e) {
      actors::log_error("cannot listen on " + s.http.address + ":" + std::to_string(s.http.port)
                        + ": " + e.what());
      stop_actors();
      return 1;
    }
    std::string database = s.db.url.rfind("sqlite3", 0) == 0 ? "SQLite" : "PostgreSQL";
    auto listening = actors::log_context{}
                       .with("address", s.http.address)
                       .with("port", std::int64_t{port})
                       .with("database", database)
                       .with("instance", instance); // the lease holder receiptctl jobs shows
    if (!s.config_file.empty())
      listening.with("config_file", s.config_file);
    actors::log_info("receiptd listening on http://" + s.http.address + ":" + std::to_string(port)
                       + " (database " + database
                       + (s.config_file.empty() ? "" : ", config " + s.config_file) + ")",
                     listening);
    if (server.max_connections() < s.http.max_connections)
      actors::log_warn(
        "http.max-connections=" + std::to_string(s.http.max_connections)
          + " does not fit the open-file limit (two descriptors per connection): " + "at most "
          + std::to_string(server.max_connections()) + " client connections",
        actors::log_context{}.with("max_connections",
                                   static_cast<std::int64_t>(server.max_connections())));
    print_try_it(*first_token, s.http.address, port, s.bootstrap);

    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::string signal_name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    actors::log_info("stopping (" + signal_name + "): draining in-flight uploads",
                     actors::log_context{}.with("signal", signal_name));
    server.begin_draining();
    auto deadline = clock.steady_now() + s.http.drain_timeout;
    while (server.in_flight() > 0 && clock.steady_now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    server.stop();
    stop_actors();
  }
  actors::log_info("stopped");
  return 0;
}

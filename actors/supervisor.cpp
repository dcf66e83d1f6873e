#include "actors/supervisor.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "actors/app_context.hpp"
#include "actors/log.hpp"
#include "actors/notification_handler.hpp"
#include "actors/operational_handler.hpp"
#include "model/access_token.hpp"
#include "model/rate_limit.hpp"
#include "model/resource_json.hpp"

namespace receiptd::actors {

namespace {

using steady_time = model::time_source::steady_time;

// A token lookup kept for auth.token-cache-ttl. It stays only while the auth
// revision (bumped by every change to apps or tokens) is not above the one it was
// read at: the revocation check drops it as soon as the revision grows.
struct cached_token {
  std::string app_id;
  model::token_kind kind = model::token_kind::client;
  std::int64_t revision = 0; // the auth revision its lookup was read at
  steady_time asked;         // when that lookup was asked: it is at least this current
  steady_time expires;
  bool used = true; // since the last revocation check: an unused entry is dropped then
};

// An app's context, and the newest auth revision its row was read at.
struct known_app {
  app_context_ptr context;
  std::int64_t revision = 0;
};

// Requests held at one stage: how many, and how many body bytes (shown in the
// stage's gauges, receiptd_admission_*).
struct budget {
  std::size_t count = 0;
  std::size_t bytes = 0;
  gauge count_gauge, bytes_gauge;

  bool take(std::size_t n, const config::validator_settings& s) {
    if (count >= s.max_in_flight || bytes + n > s.max_in_flight_bytes)
      return false;
    ++count;
    bytes += n;
    publish();
    return true;
  }

  void give_back(std::size_t n) {
    --count;
    bytes -= n;
    publish();
  }

  void publish() const {
    count_gauge.set(static_cast<double>(count));
    bytes_gauge.set(static_cast<double>(bytes));
  }
};

// GET /metrics and /readyz held at once, apart from the uploads' admission: a
// scrape or a readiness probe is answered under any upload load, and a flood of
// them holds no more than this.
constexpr std::size_t max_operational = 16;

struct admitted {
  http::reply_sink_ptr reply;
  std::size_t bytes = 0;
};

// An upload waiting for its token's lookup, with what admission took for it.
struct waiting_upload {
  inbound in;
  span s;
  std::size_t bytes = 0;
};

// Where a credential check's verdict goes (http::credential_check::verdict).
using check_verdict = std::function<void(std::optional<model::error>)>;

// A token lookup out to the database, and the uploads with the same token that
// arrived while it was: they share its answer (a burst of uploads with a token
// not cached yet, e.g. after a start or a revision change, asks the database once
// instead of once per upload; so does a flood with an unknown token). So do the
// checks of requests whose body is still arriving.
struct token_lookup {
  steady_time asked;
  std::optional<std::int64_t> revision; // the newest auth revision seen when it was asked
  std::uint64_t notices = 0;            // the auth notices heard when it was asked
  std::vector<waiting_upload> uploads;
  std::vector<check_verdict> checks;
};

struct state {
  config::validator_settings settings; // admission: max-in-flight, max-in-flight-bytes
  config::auth_settings auth;          // token-cache-ttl, revocation-check
  validator_deps_ptr deps;
  model::keyed_buckets app_rates{0, 1}; // limits.app-rate, per app
  // The HTTP layer's view of credentials (null: none), and the notification URLs
  // published in it as good (forgotten with the apps read before a change).
  http::credential_view* credentials = nullptr;
  std::unordered_set<std::string> published_urls;
  budget authenticating; // token being looked up
  budget in_flight;      // admitted: a validator or a record lookup runs
  std::unordered_map<caf::actor_addr, admitted> validators;
  // Operational handlers (actors/operational_handler.hpp), apart from admission.
  std::unordered_map<caf::actor_addr, http::reply_sink_ptr> operational;
  std::unordered_map<std::string, known_app> apps;      // by app id
  std::unordered_map<std::string, cached_token> tokens; // by token hash (ttl > 0)
  // By app id: a hash of the entitlement rules last applied (and logged).
  std::unordered_map<std::string, std::size_t> rules_applied;
  // Lookups out, by token hash (ttl > 0): the waiting uploads' answers are owed.
  std::unordered_map<std::string, std::shared_ptr<token_lookup>> lookups;
  // Notification URL checks out, by credential key: a flood of one URL asks the
  // database once at a time, however slowly it answers.
  std::unordered_map<std::string, std::vector<check_verdict>> url_checks;
  // Customer answers given again, and what may have changed them (both or neither).
  std::optional<answer_cache> answers;
  customer_changes* changes = nullptr;
  // The revocation check (only while tokens are cached, so an idle service asks nothing).
  std::optional<std::int64_t> revision; // the newest auth revision seen
  steady_time confirmed;                // when the last check that answered was asked
  bool check_scheduled = false;
  std::uint64_t check_schedule = 0; // of the tick to act on: a check run at once leaves one stale
  bool checking = false;       // a check is out
  bool checks_failing = false; // the last check failed: trust entries one interval only
  // The auth revision's notices (PostgreSQL; null: none), and how many of them the
  // last check that answered had heard: when more were, the revision is asked for
  // at once.
  auth_notices* notices = nullptr;
  std::uint64_t notices_checked = 0;
  // Failed token lookups, at most one line every 10 s (a database that is away
  // fails every upload; the persistence workers log the cause).
  log_limiter errors;
  static inline const char* name = "supervisor";

  bool caching() const { return auth.token_cache_ttl.count() > 0; }
};

using pointer = supervisor_actor::stateful_pointer<state>;

void refuse(const inbound& in, model::errc code, std::string message) {
  in.reply->send(http::error_reply({code, std::move(message)}));
}

void refuse_overloaded(const inbound& in) {
  refuse(in, model::errc::overloaded, "too many uploads in flight; retry shortly");
}

std::size_t bytes_of(const inbound& in) {
  return in.request.body.size();
}

model::error unknown_token() {
  return {model::errc::unauthorized, "the access token is unknown or revoked"};
}

// An upload beyond its app's rate (limits.app-rate): 429 with the Retry-After its
// bucket needs. (The client network's rate is judged by the HTTP layer, from the
// headers.)
bool beyond_app_rate(pointer self, const inbound& in, const std::string& app_id) {
  auto& st = self->state;
  auto wait
    = st.app_rates.take(app_id, model::upload_cost(bytes_of(in)), st.deps->clock->steady_now());
  if (wait == wait.zero())
    return false;
  in.reply->send(http::error_reply(http::rate_limited(wait, "app")));
  return true;
}

// ---- what the HTTP layer's credential view shows ------------------------------

void publish_good(pointer self, const std::string& key) {
  if (auto* view = self->state.credentials)
    view->good(key);
}

void publish_forgotten(pointer self, const std::string& key) {
  if (auto* view = self->state.credentials)
    view->forget(key);
}

// Refusals are remembered only while tokens are cached (auth.token-cache-ttl > 0:
// the operator accepts answers up to one revocation check old); a credential made
// good meanwhile is taken within that interval.
void publish_refused(pointer self, const std::string& key, const model::error& why) {
  auto& st = self->state;
  if (st.credentials && st.caching())
    st.credentials->refuse(key, why, st.auth.revocation_check);
}

std::string token_key(const std::string& hash) {
  return "t:" + hash;
}

// An app's entitlement rules as a running receiptd applies them, logged once per
// change (compiled here, once per version of the row): the operator who changed
// them sees when they took effect. Unusable rules are logged by their compilation.
void note_entitlement_rules(pointer self, const app_context& ctx) {
  auto version = std::hash<std::string>{}(ctx.app.entitlement_rules);
  auto [seen, first] = self->state.rules_applied.try_emplace(ctx.app.id, version);
  if (!first && seen->second == version)
    return;
  seen->second = version;
  const auto& compiled = ctx.entitlements();
  const auto& rules = compiled.matcher->source();
  if (!compiled.problem.empty() || (first && rules.empty()))
    return;
  log_info("app " + ctx.app.id + ": entitlement rules applied: " + describe(rules));
}

// The app's context, parsed once per version of its row; `revision`: the auth
// revision the row was read at. An older row never replaces a newer one: cached
// tokens find their app here.
app_context_ptr context_for(pointer self, const model::app& a, std::int64_t revision) {
  auto& slot = self->state.apps[a.id];
  if (slot.context && slot.context->app == a) {
    slot.revision = std::max(slot.revision, revision);
    return slot.context;
  }
  auto context = make_app_context(a); // built from another version of the row
  note_entitlement_rules(self, *context);
  if (!slot.context || revision >= slot.revision)
    slot = {context, revision};
  return context;
}

// Apps or tokens changed since `seen`'s predecessors were read: what was read
// before it may be stale (a revoked token, an app's new credentials).
void advance_revision(pointer self, std::int64_t seen) {
  auto& st = self->state;
  if (st.revision && seen <= *st.revision)
    return;
  st.revision = seen;
  std::erase_if(st.tokens, [&](const auto& entry) {
    bool stale = entry.second.revision < seen;
    if (stale)
      publish_forgotten(self, token_key(entry.first));
    return stale;
  });
  std::erase_if(st.apps, [&](const auto& entry) { return entry.second.revision < seen; });
  for (const auto& url : st.published_urls)
    publish_forgotten(self, url);
  st.published_urls.clear();
}

void check_revision(pointer self);

// While the revision's notices are heard, the check is the safety net.
constexpr std::chrono::seconds heard_check_interval{10};

// Polls only while tokens are cached: an idle service asks the database nothing
// (nor listens for the revision's notices).
void schedule_check(pointer self) {
  auto& st = self->state;
  if (st.notices)
    st.notices->want(!st.tokens.empty());
  if (st.check_scheduled || st.checking || st.tokens.empty())
    return;
  st.check_scheduled = true;
  auto every = st.auth.revocation_check;
  if (st.notices && st.notices->hearing())
    every = std::max<std::chrono::milliseconds>(every, heard_check_interval);
  self->delayed_send(self, every, tick_atom_v, ++st.check_schedule);
}

// Notices heard since the last check that answered: the revision grew, or the
// notices started or stopped arriving.
bool notices_since_check(const state& st) {
  return st.notices && st.notices->count() != st.notices_checked;
}

// Every auth.revocation-check while tokens are cached (every 10 s while the
// revision's notices are heard, and at once when one was): when the auth revision
// grew, the entries read before it go (whoever changed the apps or tokens:
// receiptctl, SQL by hand, another instance). A check that does not answer within
// auth.revocation-check counts as failed.
void check_revision(pointer self) {
  auto& st = self->state;
  st.check_scheduled = false;
  auto now = st.deps->clock->steady_now();
  // An entry unused since the last check goes: a cache nobody uses empties and the
  // polling stops, and polling never costs more queries than the cache saves.
  std::erase_if(st.tokens, [&](const auto& entry) {
    bool gone = !entry.second.used || entry.second.expires <= now;
    if (gone)
      publish_forgotten(self, token_key(entry.first));
    return gone;
  });
  if (st.tokens.empty()) {
    if (st.notices)
      st.notices->want(false);
    return;
  }
  for (auto& entry : st.tokens)
    entry.second.used = false;
  st.checking = true;
  const auto heard = st.notices ? st.notices->count() : 0;
  self->request(st.deps->persistence, st.auth.revocation_check, auth_revision_atom_v)
    .then(
      [=](std::int64_t revision) {
        auto& st = self->state;
        st.checking = false;
        if (st.checks_failing)
          log_info("auth revision check works again: cached tokens are trusted again");
        st.checks_failing = false;
        st.confirmed = now;
        st.notices_checked = heard;
        advance_revision(self, revision);
        if (notices_since_check(st))
          check_revision(self); // a notice came while this check was out
        else
          schedule_check(self);
      },
      [=](caf::error& e) {
        auto& st = self->state;
        st.checking = false;
        if (!st.checks_failing)
          log_error("auth revision check failed, cached tokens are looked up again: "
                    + caf::to_string(e));
        st.checks_failing = true;
        schedule_check(self);
      });
}

// A known token: its app and its kind.
struct token_holder {
  app_context_ptr app;
  model::token_kind kind = model::token_kind::client;
};

// The app and kind of a cached token, or none when the token must be looked up.
std::optional<token_holder> cached(pointer self, const std::string& hash) {
  auto& st = self->state;
  auto it = st.tokens.find(hash);
  if (it == st.tokens.end())
    return std::nullopt;
  auto& entry = it->second;
  auto now = st.deps->clock->steady_now();
  if (now >= entry.expires)
    return std::nullopt;
  // While checks fail a revocation would go unseen: an entry is trusted for one
  // check interval after it was last known current, as if the checks still ran.
  if (st.checks_failing && now >= std::max(entry.asked, st.confirmed) + st.auth.revocation_check)
    return std::nullopt;
  auto app = st.apps.find(entry.app_id);
  if (app == st.apps.end())
    return std::nullopt;
  entry.used = true;
  return token_holder{app->second.context, entry.kind};
}

// A lookup's answer, asked at `asked`: the token cache learns from it. Unknown
// tokens are never cached; nor is a lookup read before a change the cache already
// knows of (it raced a revocation).
void remember(pointer self, const std::string& hash, const authenticated& found,
              steady_time asked) {
  auto& st = self->state;
  advance_revision(self, found.revision);
  if (!found.app) {
    publish_refused(self, token_key(hash), unknown_token());
    return;
  }
  if (found.revision < *st.revision)
    return;
  st.tokens[hash]
    = {found.app->id, found.kind, found.revision, asked, asked + st.auth.token_cache_ttl};
  publish_good(self, token_key(hash));
  schedule_check(self);
}

// `bytes`: what admission took for the request, given back with the answer.
void lookup(pointer self, inbound in, app_context_ptr app, model::record_kind kind,
            std::size_t bytes, span s) {
  auto& deps = *self->state.deps;
  auto ctx = s.child();
  auto shared_span = std::make_shared<span>(std::move(s));
  self->request(deps.persistence, caf::infinite, get_atom_v, ctx, kind, in.request.record_id)
    .then(
      [=](found_record& found) {
        self->state.in_flight.give_back(bytes);
        shared_span->outcome(found.app_id == app->app.id ? "200" : "404");
        if (found.app_id == app->app.id)
          in.reply->send(http::reply{200, std::move(found.json)});
        else
          refuse(in, model::errc::not_found, "no such record for this app");
      },
      [=](caf::error& e) {
        self->state.in_flight.give_back(bytes);
        shared_span->outcome("503");
        refuse(in, model::errc::storage_unavailable, "the record store is unavailable");
      });
}

// A customer lookup: given again when an answer is kept for it
// (actors/customer_answers.hpp), else answered by a persistence worker and kept
// when it may be.
void customer(pointer self, inbound in, resource_request r, std::size_t bytes, span s) {
  auto& st = self->state;
  auto& deps = *st.deps;
  answer_cache::key key{r.app_id, r.id, asked_environment(r.query)};
  std::optional<std::uint64_t> asked; // the count of changes when asked, if notices are heard
  if (st.answers) {
    const auto now = deps.clock->now_ms();
    st.changes->asked(now);
    const auto changes = st.changes->count();
    if (auto body = st.answers->find(key, r.rules, changes, now)) {
      st.in_flight.give_back(bytes);
      deps.instruments->customer_answers_kept.add();
      s.outcome("200 (kept)");
      in.reply->send(http::reply{200, std::move(*body)});
      return;
    }
    if (st.changes->hearing())
      asked = changes;
  }
  auto rules = r.rules;
  auto ctx = s.child();
  auto shared_span = std::make_shared<span>(std::move(s));
  self->request(deps.persistence, caf::infinite, customer_atom_v, ctx, std::move(r))
    .then(
      [=](customer_answer& answer) {
        auto& st = self->state;
        st.in_flight.give_back(bytes);
        shared_span->outcome(std::to_string(answer.reply.status));
        if (asked && st.answers)
          st.answers->keep(key, rules, *asked, st.changes->count(), answer);
        in.reply->send(std::move(answer.reply));
      },
      [=](caf::error&) {
        self->state.in_flight.give_back(bytes);
        shared_span->outcome("503");
        refuse(in, model::errc::storage_unavailable, "the purchase store is unavailable");
      });
}

// A purchase-layer request (purchases, customers, grants): answered by a
// persistence worker, for the app the token belongs to.
void resource(pointer self, inbound in, app_context_ptr app, std::size_t bytes, span s) {
  auto& deps = *self->state.deps;
  if (in.request.target == http::route::customer_get
      && !model::may_look_up_customers(app->app.customer_lookup, model::token_kind::client)) {
    self->state.in_flight.give_back(bytes);
    s.outcome("403");
    return refuse(in, model::errc::forbidden,
                  "this app's customers are looked up with a server token only, at "
                  "/server/customers/{user_identifier}");
  }
  resource_request r;
  r.target = in.request.target;
  r.app_id = app->app.id;
  r.id = std::move(in.request.record_id);
  r.params = std::move(in.request.params);
  r.query = std::move(in.request.query);
  r.body = std::move(in.request.body);
  if (r.target == http::route::server_grant_add)
    for (const auto& e : app->entitlements().matcher->source().entitlements)
      r.entitlement_names.push_back(e.name);
  if (r.target == http::route::customer_get || r.target == http::route::server_customer_get) {
    r.rules = app->entitlements().matcher;
    return customer(self, std::move(in), std::move(r), bytes, std::move(s));
  }
  auto ctx = s.child();
  auto shared_span = std::make_shared<span>(std::move(s));
  self->request(deps.persistence, caf::infinite, resource_atom_v, ctx, std::move(r))
    .then(
      [=](http::reply& answer) {
        self->state.in_flight.give_back(bytes);
        shared_span->outcome(std::to_string(answer.status));
        in.reply->send(std::move(answer));
      },
      [=](caf::error&) {
        self->state.in_flight.give_back(bytes);
        shared_span->outcome("503");
        refuse(in, model::errc::storage_unavailable, "the purchase store is unavailable");
      });
}

// Admission, once the token is known to be good: a token of the kind the route
// takes (http/routes.hpp), else 401 whatever else it is.
void dispatch(pointer self, inbound in, token_holder holder, span s) {
  auto& st = self->state;
  const auto& route = http::info(in.request.target);
  if (holder.kind != route.token) {
    s.outcome("401");
    return refuse(in, model::errc::unauthorized,
                  http::wrong_token_kind_message(route, holder.kind));
  }
  auto app = std::move(holder.app);
  in.request.credential_verified();
  if (http::is_upload(in.request.target) && beyond_app_rate(self, in, app->app.id)) {
    s.outcome("429");
    return;
  }
  auto bytes = bytes_of(in);
  if (!st.in_flight.take(bytes, st.settings)) {
    s.outcome("503");
    return refuse_overloaded(in);
  }
  if (http::info(in.request.target).resource)
    return resource(self, std::move(in), std::move(app), bytes, std::move(s));
  if (auto kind = http::info(in.request.target).lookup)
    return lookup(self, std::move(in), std::move(app), *kind, bytes, std::move(s));
  s.outcome("spawn");
  auto reply = in.reply;
  auto v = self->spawn<caf::monitored>(validate_upload, std::move(in), std::move(app), st.deps);
  st.validators.emplace(v.address(), admitted{std::move(reply), bytes});
}

// A store notification: no bearer token (Apple's signature, or the secret in a
// Play push's URL, authenticates it, checked by its handler), the same admission
// as uploads, one monitored handler actor.
void admit_notification(pointer self, inbound in) {
  auto& st = self->state;
  auto bytes = bytes_of(in);
  if (!st.in_flight.take(bytes, st.settings))
    return refuse_overloaded(in);
  auto reply = in.reply;
  auto handler = in.request.target == http::route::store_b_notification
    ? handle_store_b_notification
    : handle_store_a_notification;
  auto h = self->spawn<caf::monitored>(handler, std::move(in), st.deps);
  st.validators.emplace(h.address(), admitted{std::move(reply), bytes});
}

// GET /metrics or /readyz: its own handler actor, outside the uploads' admission,
// and not counted as an upload (receiptd_uploads_total).
void admit_operational(pointer self, inbound in) {
  auto& st = self->state;
  if (st.operational.size() >= max_operational)
    return refuse(in, model::errc::overloaded,
                  "too many metrics or readiness requests at once; retry shortly");
  auto reply = in.reply;
  auto h = self->spawn<caf::monitored>(handle_operational, std::move(in), st.deps);
  st.operational.emplace(h.address(), std::move(reply));
  st.deps->instruments->operational_requests.set(static_cast<double>(st.operational.size()));
}

// The uploads that waited for a lookup leave the authenticating stage: admitted
// with the app it found, or refused; the checks that waited learn the verdict.
void settle(pointer self, token_lookup& waiting, const authenticated& found) {
  auto& st = self->state;
  app_context_ptr app;
  if (found.app)
    app = context_for(self, *found.app, found.revision);
  for (auto& verdict : waiting.checks)
    verdict(app ? std::nullopt : std::optional(unknown_token()));
  for (auto& u : waiting.uploads) {
    st.authenticating.give_back(u.bytes);
    if (!app) {
      u.s.outcome("401");
      refuse(u.in, model::errc::unauthorized, unknown_token().message());
      continue;
    }
    dispatch(self, std::move(u.in), {app, found.kind}, std::move(u.s));
  }
}

// The checks that waited stay undecided: their requests are judged whole.
void fail(pointer self, token_lookup& waiting, const caf::error& e) {
  auto& st = self->state;
  st.errors.log(log_level::error, "token lookup", "token lookup failed: " + caf::to_string(e));
  for (auto& u : waiting.uploads) {
    st.authenticating.give_back(u.bytes);
    u.s.outcome("503");
    refuse(u.in, model::errc::storage_unavailable,
           "the service cannot check access tokens right now");
  }
}

// The lookup of this token that is out, when a newcomer may join it: it is at
// least as current as a cached answer would be (asked less than one revocation
// check ago, and before no change the cache has learnt of since). Only while
// tokens are cached: otherwise every request asks the database.
token_lookup* joinable(pointer self, const std::string& hash) {
  auto& st = self->state;
  if (!st.caching())
    return nullptr;
  auto it = st.lookups.find(hash);
  if (it == st.lookups.end())
    return nullptr;
  auto& lookup = *it->second;
  if (lookup.revision != st.revision
      || st.deps->clock->steady_now() >= lookup.asked + st.auth.revocation_check
      || (st.notices && lookup.notices != st.notices->count()))
    return nullptr;
  return &lookup;
}

// Asks the database who owns the token now; whoever waits on the returned lookup
// gets the answer.
token_lookup& ask(pointer self, const std::string& hash, trace_context ctx) {
  auto& st = self->state;
  auto lookup = std::make_shared<token_lookup>();
  lookup->asked = st.deps->clock->steady_now();
  lookup->revision = st.revision;
  lookup->notices = st.notices ? st.notices->count() : 0;
  if (st.caching())
    st.lookups[hash] = lookup;
  // Once answered, the lookup leaves the map before its waiters are settled: none
  // joins it after that.
  auto take = [self, hash, lookup] {
    auto& lookups = self->state.lookups;
    if (auto it = lookups.find(hash); it != lookups.end() && it->second == lookup)
      lookups.erase(it);
    return token_lookup{lookup->asked, lookup->revision, lookup->notices,
                        std::move(lookup->uploads), std::move(lookup->checks)};
  };
  self->request(st.deps->persistence, caf::infinite, authenticate_atom_v, std::move(ctx), hash)
    .then(
      [=](authenticated& found) {
        auto waiting = take();
        if (self->state.caching())
          remember(self, hash, found, waiting.asked);
        settle(self, waiting, found);
      },
      [=](caf::error& e) {
        auto waiting = take();
        fail(self, waiting, e);
      });
  return *lookup;
}

// Called with the request counted in `authenticating`; it leaves that stage here.
void authenticate(pointer self, inbound in) {
  auto& st = self->state;
  auto bytes = bytes_of(in);
  span s(*st.deps->trace, {in.request.trace_id, 0}, "supervisor", "authenticate");
  // Tokens are compared through their SHA-256: the database finds the row by
  // the hash, so timing depends only on a digest the caller cannot steer byte by
  // byte, which is what a constant-time comparison of the tokens guarantees.
  auto hash = model::access_token_hash(in.request.token);
  if (st.caching()) {
    if (auto holder = cached(self, hash)) {
      st.authenticating.give_back(bytes);
      return dispatch(self, std::move(in), std::move(*holder), std::move(s));
    }
  }
  auto* lookup = joinable(self, hash);
  if (!lookup)
    lookup = &ask(self, hash, s.child());
  lookup->uploads.push_back({std::move(in), std::move(s), bytes});
}

// A notification URL: its app must exist, and a Play push's secret be the app's.
// The requests with the same URL that arrive while it is looked up share the
// answer (before, each asked again while the database was slow to answer: a flood
// of one made-up URL queued thousands of lookups at the persistence pool).
void check_notification_url(pointer self, http::credential_check c) {
  auto& st = self->state;
  auto [out, first] = st.url_checks.try_emplace(c.key);
  out->second.push_back(std::move(c.verdict));
  if (!first)
    return;
  auto shared = std::make_shared<http::credential_check>(std::move(c));
  auto take = [self, key = shared->key] {
    auto& checks = self->state.url_checks;
    auto waiting = std::move(checks.at(key));
    checks.erase(key);
    return waiting;
  };
  self->request(st.deps->persistence, caf::infinite, find_app_atom_v, shared->app_id)
    .then(
      [=](std::optional<model::app>& app) {
        std::optional<model::error> refusal;
        // By id only: find_app also matches names, which a URL must not rely on.
        if (!app || app->id != shared->app_id)
          refusal = no_such_app();
        else if (shared->target == http::route::store_b_notification
                 && !model::rtdn_token_matches(*app, shared->secret))
          refusal = wrong_push_token();
        if (refusal) {
          publish_refused(self, shared->key, *refusal);
        } else {
          self->state.published_urls.insert(shared->key);
          publish_good(self, shared->key);
        }
        for (auto& verdict : take())
          verdict(refusal);
      },
      [=](caf::error&) { take(); }); // undecided: each request is judged whole
}

// A credential to judge while its request's body arrives (http/admission.hpp).
void check(pointer self, http::credential_check c) {
  auto& st = self->state;
  if (!http::info(c.target).bearer)
    return check_notification_url(self, std::move(c));
  auto hash = model::access_token_hash(c.secret);
  if (auto holder = st.caching() ? cached(self, hash) : std::nullopt) {
    const auto& route = http::info(c.target);
    if (holder->kind != route.token)
      return c.verdict(
        model::error{model::errc::unauthorized, http::wrong_token_kind_message(route, holder->kind)});
    return c.verdict(std::nullopt);
  }
  auto* lookup = joinable(self, hash);
  if (!lookup)
    lookup = &ask(self, hash, {});
  lookup->checks.push_back(std::move(c.verdict));
}

supervisor_actor::behavior_type supervisor(pointer self, config::validator_settings admission,
                                           config::auth_settings auth, validator_deps_ptr deps,
                                           supervisor_options options) {
  self->state.settings = admission;
  self->state.auth = auth;
  self->state.deps = std::move(deps);
  const auto& limits = options.limits;
  self->state.app_rates = model::keyed_buckets(limits.app_rate, limits.app_burst);
  self->state.credentials = options.credentials;
  if (options.changes && options.answer_cache_bytes > 0) {
    self->state.changes = options.changes;
    self->state.answers.emplace(options.answer_cache_bytes);
  }
  self->state.notices = options.notices;
  if (options.notices) // each notice starts a check at once (the tick numbered 0)
    options.notices->on_notice([addr = self->address()] {
      if (auto me = caf::actor_cast<supervisor_actor>(addr))
        caf::anon_send(me, tick_atom_v, std::uint64_t{0});
    });
  self->state.errors = log_limiter(*self->state.deps->clock, std::chrono::seconds(10));
  const auto& instruments = *self->state.deps->instruments;
  self->state.authenticating.count_gauge = instruments.authenticating_requests;
  self->state.authenticating.bytes_gauge = instruments.authenticating_bytes;
  self->state.in_flight.count_gauge = instruments.admitted_requests;
  self->state.in_flight.bytes_gauge = instruments.admitted_bytes;
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (auto op = st.operational.find(dm.source); op != st.operational.end()) {
      if (!op->second->sent())
        op->second->send(
          http::error_reply({model::errc::internal_error, "the request could not be answered"}));
      st.operational.erase(op);
      st.deps->instruments->operational_requests.set(static_cast<double>(st.operational.size()));
      return;
    }
    auto it = st.validators.find(dm.source);
    if (it == st.validators.end())
      return;
    if (!it->second.reply->sent()) {
      log_error("validator died without answering: " + caf::to_string(dm.reason));
      it->second.reply->send(
        http::error_reply({model::errc::internal_error, "the upload could not be processed"}));
    }
    st.in_flight.give_back(it->second.bytes);
    st.validators.erase(it);
  });
  return {
    [=](upload_atom, inbound& in) {
      auto& st = self->state;
      // Its own mailbox, read by itself (CAF 0.17: fifo_inbox::size, which moves what
      // arrived into the queue it reads from anyway): how far behind it is.
      st.deps->instruments->supervisor_mailbox.set(static_cast<double>(self->mailbox().size()));
      const auto& route = http::info(in.request.target);
      if (route.operational)
        return admit_operational(self, std::move(in));
      in.reply = st.deps->instruments->observe(in.request.target, std::move(in.reply));
      if (!route.bearer)
        return admit_notification(self, std::move(in));
      if (!st.authenticating.take(bytes_of(in), st.settings))
        return refuse_overloaded(in);
      authenticate(self, std::move(in));
    },
    [=](vet_atom, http::credential_check& c) { check(self, std::move(c)); },
    [=](tick_atom, std::uint64_t schedule) {
      auto& st = self->state;
      if (schedule == 0) { // a notice: unless a check is out (its answer sees the notice)
        if (!st.checking)
          check_revision(self);
        return;
      }
      // A tick scheduled before a notice's check ran is stale: the next one is due later.
      if (schedule == st.check_schedule)
        check_revision(self);
    },
  };
}

} // namespace

supervisor_actor spawn_supervisor(caf::actor_system& sys,
                                  const config::validator_settings& admission,
                                  const config::auth_settings& auth, validator_deps_ptr deps,
                                  const supervisor_options& options) {
  return sys.spawn(supervisor, admission, auth, std::move(deps), options);
}

} // namespace receiptd::actors

#include "actors/supervisor.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <unordered_map>

#include "actors/app_context.hpp"
#include "actors/log.hpp"
#include "model/access_token.hpp"
#include "model/resource_json.hpp"

namespace receiptd::actors {

namespace {

struct cached_token {
  std::string app_id;
  model::time_source::steady_time expires;
};

// Requests held at one stage: how many, and how many body bytes.
struct budget {
  std::size_t count = 0;
  std::size_t bytes = 0;

  bool take(std::size_t n, const config::validator_settings& s) {
    if (count >= s.max_in_flight || bytes + n > s.max_in_flight_bytes)
      return false;
    ++count;
    bytes += n;
    return true;
  }

  void give_back(std::size_t n) {
    --count;
    bytes -= n;
  }
};

struct admitted {
  http::reply_sink_ptr reply;
  std::size_t bytes = 0;
};

struct state {
  config::validator_settings settings; // admission: max-in-flight, max-in-flight-bytes
  std::chrono::milliseconds token_cache_ttl{0};
  validator_deps_ptr deps;
  budget authenticating; // token being looked up
  budget in_flight;      // admitted: a validator or a record lookup runs
  std::unordered_map<caf::actor_addr, admitted> validators;
  std::unordered_map<std::string, app_context_ptr> apps; // by app id
  std::unordered_map<std::string, cached_token> tokens;  // by token hash (ttl > 0)
  static inline const char* name = "supervisor";
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

app_context_ptr context_for(pointer self, const model::app& a) {
  auto& slot = self->state.apps[a.id];
  if (!slot || slot->app != a) // built from another version of the row
    slot = make_app_context(a);
  return slot;
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

// Admission, once the token is known to be good.
void dispatch(pointer self, inbound in, app_context_ptr app, span s) {
  auto& st = self->state;
  auto bytes = bytes_of(in);
  if (!st.in_flight.take(bytes, st.settings)) {
    s.outcome("503");
    return refuse_overloaded(in);
  }
  if (auto kind = http::info(in.request.target).lookup)
    return lookup(self, std::move(in), std::move(app), *kind, bytes, std::move(s));
  s.outcome("spawn");
  auto reply = in.reply;
  auto v = self->spawn<caf::monitored>(validate_upload, std::move(in), std::move(app), st.deps);
  st.validators.emplace(v.address(), admitted{std::move(reply), bytes});
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
  if (st.token_cache_ttl.count() > 0) {
    auto it = st.tokens.find(hash);
    if (it != st.tokens.end() && it->second.expires > st.deps->clock->steady_now()) {
      auto app = st.apps.find(it->second.app_id);
      if (app != st.apps.end()) {
        st.authenticating.give_back(bytes);
        return dispatch(self, std::move(in), app->second, std::move(s));
      }
    }
  }
  auto ctx = s.child();
  auto shared = std::make_shared<std::pair<inbound, span>>(std::move(in), std::move(s));
  self->request(st.deps->persistence, caf::infinite, authenticate_atom_v, ctx, hash)
    .then(
      [=](std::optional<model::app>& found) {
        auto& [req, sp] = *shared;
        self->state.authenticating.give_back(bytes);
        if (!found) {
          sp.outcome("401");
          return refuse(req, model::errc::unauthorized, "the access token is unknown or revoked");
        }
        auto app = context_for(self, *found);
        auto& st = self->state;
        if (st.token_cache_ttl.count() > 0)
          st.tokens[hash] = {found->id, st.deps->clock->steady_now() + st.token_cache_ttl};
        dispatch(self, std::move(req), std::move(app), std::move(sp));
      },
      [=](caf::error& e) {
        auto& [req, sp] = *shared;
        self->state.authenticating.give_back(bytes);
        sp.outcome("503");
        log_error("token lookup failed: " + caf::to_string(e));
        refuse(req, model::errc::storage_unavailable,
               "the service cannot check access tokens right now");
      });
}

supervisor_actor::behavior_type supervisor(pointer self, config::validator_settings admission,
                                           std::chrono::milliseconds token_cache_ttl,
                                           validator_deps_ptr deps) {
  self->state.settings = admission;
  self->state.token_cache_ttl = token_cache_ttl;
  self->state.deps = std::move(deps);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
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
      if (!st.authenticating.take(bytes_of(in), st.settings))
        return refuse_overloaded(in);
      authenticate(self, std::move(in));
    },
  };
}

} // namespace

supervisor_actor spawn_supervisor(caf::actor_system& sys,
                                  const config::validator_settings& admission,
                                  const config::auth_settings& auth, validator_deps_ptr deps) {
  return sys.spawn(supervisor, admission, auth.token_cache_ttl, std::move(deps));
}

} // namespace receiptd::actors

#pragma once
// What the HTTP layer holds for requests before they are answered, and what it
// knows of their credentials before their bodies arrive (README "What one request
// may cost"). Thread-safe: the reactor threads reserve and look up, whichever
// thread answers releases, the supervisor publishes what token lookups found.
//
// Why: Pistache 0.0.5 hands a handler only whole requests, and a body is held
// from its first byte to its answer. Without a bound shared by all connections,
// 3,000 connections announcing 1 MB with a made-up token and stalling held
// 3.6 GiB, whatever validator.max-in-flight-bytes said (it counted only
// complete requests).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "http/routes.hpp"
#include "model/clock.hpp"
#include "model/rate_limit.hpp"
#include "model/result.hpp"

namespace receiptd::http {

// The body bytes held by all requests at once, from their headers (a
// Content-Length reserved whole, a chunked body as it is decoded, bytes a client
// pipelined behind a request being answered) until they are answered:
// at most `max_bytes` (validator.max-in-flight-bytes), and of them at most
// `max_unverified_bytes` (validator.max-unverified-bytes) for requests whose
// credential is not yet known to be good. Beyond either: 503.
class body_budget {
public:
  body_budget(std::size_t max_bytes, std::size_t max_unverified_bytes);

  // Takes `n` bytes (also from the unverified share when `unverified`); false,
  // taking nothing, when they do not fit.
  bool take(std::size_t n, bool unverified);
  void give_back(std::size_t n, bool unverified);
  // `n` bytes taken as unverified leave that share (they stay in the whole).
  void verified(std::size_t n);

  std::size_t held() const;
  std::size_t held_unverified() const;

private:
  mutable std::mutex mutex_;
  const std::size_t max_, max_unverified_;
  std::size_t held_ = 0, unverified_ = 0;
};

// One request's share of the budget, given back when the ticket is released or
// destroyed, whichever comes first. Shared by the connection (while the body
// arrives), the reply (until it is answered) and a credential lookup (which
// may verify it meanwhile).
class body_ticket {
public:
  // Null when `n` bytes do not fit.
  static std::shared_ptr<body_ticket> take(body_budget& budget, std::size_t n, bool unverified);
  ~body_ticket();
  body_ticket(const body_ticket&) = delete;
  body_ticket& operator=(const body_ticket&) = delete;

  // Grows the share to `n` bytes (a chunked body as it is decoded); false, leaving
  // it as it is, when they do not fit.
  bool grow_to(std::size_t n);
  // The credential turned out good: the bytes leave the unverified share.
  void verified();
  void release();
  std::size_t bytes() const;

  body_ticket(body_budget& budget, std::size_t n, bool unverified);

private:
  mutable std::mutex mutex_;
  body_budget* budget_; // null once released
  std::size_t bytes_;
  bool unverified_;
};
using ticket_ptr = std::shared_ptr<body_ticket>;

// The key of a request's credential (credential_view): its bearer token's hash;
// for a store notification, the app its path names and, for a Play push, the
// hash of the URL's secret. Empty for routes whose credential is not an app's
// (the operational ones).
std::string credential_key(route target, std::string_view secret, std::string_view app_id);

// What the service found out about credentials, by key: good ones (tokens the
// supervisor has cached, notification URLs a lookup confirmed) for as long as it
// keeps them, and refused ones for a short while (auth.revocation-check: a token
// issued right after a refusal works that much later at most). The refused ones
// are bounded: past `max_refused` the oldest go. Reading it is a hash lookup
// under a mutex: never a blocking call on a reactor thread.
class credential_view {
public:
  struct state {
    enum { unknown, good, refused } kind = unknown;
    std::optional<model::error> why; // refused: the answer (401, 404)
  };

  explicit credential_view(const model::time_source& clock, std::size_t max_refused = 10000);

  state look(const std::string& key) const;
  void good(const std::string& key);
  void forget(const std::string& key);
  void refuse(const std::string& key, model::error why, std::chrono::milliseconds for_how_long);

  std::size_t good_count() const;
  std::size_t refused_count() const;

private:
  struct refusal {
    model::error why;
    model::time_source::steady_time until;
    std::uint64_t seq = 0; // which place in refused_order_ is this refusal's
  };

  const model::time_source& clock_;
  const std::size_t max_refused_;
  mutable std::mutex mutex_;
  std::unordered_set<std::string> good_;
  std::unordered_map<std::string, refusal> refused_;
  std::deque<std::pair<std::string, std::uint64_t>> refused_order_; // oldest first
  std::uint64_t refusals_ = 0;
};

// Uploads a client network may send (limits.client-rate, limits.client-burst),
// judged from the headers — the peer's address and the Content-Length — before
// the body is read: a client beyond its rate costs no body. Thread-safe.
class client_rates {
public:
  client_rates(double per_second, double burst, const model::time_source& clock);

  // Zero when an upload of `body_bytes` from `peer_ip` may go (it is counted), else
  // how long until it could (model::keyed_buckets, model::client_network,
  // model::upload_cost).
  model::token_bucket::duration take(std::string_view peer_ip, std::size_t body_bytes);

private:
  const model::time_source& clock_;
  std::mutex mutex_;
  model::keyed_buckets buckets_;
};

// The refusal of an upload beyond one of its rates: 429, and Retry-After in whole
// seconds (at least one: the header has no finer unit).
model::error rate_limited(model::token_bucket::duration wait, std::string_view whose);

// A credential the HTTP layer wants judged while the body is still arriving,
// and where the verdict goes (called once, from any thread): none when it is
// good, the refusal otherwise. Undecided (the database did not answer) calls
// nothing: the request goes on and is judged whole.
struct credential_check {
  route target = route::health;
  std::string key;    // credential_key
  std::string secret; // the bearer token, or a Play push's ?token=
  std::string app_id; // a notification's path
  std::function<void(std::optional<model::error>)> verdict;
};

// Everything the HTTP layer judges requests by before their body: the budget,
// the view, and how a check reaches the actors (which publish into the view).
struct admission {
  body_budget& budget;
  credential_view& credentials;
  client_rates& clients;
  std::function<void(credential_check)> check;
};

} // namespace receiptd::http

#include "config/options.hpp"

#include <caf/config_option_set.hpp>
#include <caf/config_value.hpp>
#include <caf/settings.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>
#include <type_traits>

#include "model/client_address.hpp"
#include "model/config_paths.hpp"
#include "model/database_url.hpp"
#include "model/store_a/server_api.hpp"
#include "model/url_policy.hpp"
#include "model/version.hpp"

namespace receiptd::config {

namespace {

// Our option groups, in the order --help and config/receiptd.ini list them.
constexpr const char* our_categories[]
  = {"http",  "db",       "auth",          "validator", "limits",  "outbound",  "store-a",
     "store-b", "retry", "webhooks", "notifications", "trace",  "log",     "metrics",   "bootstrap",
     "scheduler"};

caf::timespan ts(milliseconds ms) {
  return std::chrono::duration_cast<caf::timespan>(ms);
}

milliseconds ms(caf::timespan t) {
  return std::chrono::duration_cast<milliseconds>(t);
}

// A duration as the INI file writes it, in the largest unit that states it exactly.
std::string duration_text(milliseconds d) {
  using namespace std::chrono;
  if (d.count() != 0 && d % hours(1) == milliseconds(0))
    return std::to_string(duration_cast<hours>(d).count()) + "h";
  if (d.count() != 0 && d % minutes(1) == milliseconds(0))
    return std::to_string(duration_cast<minutes>(d).count()) + "min";
  if (d.count() != 0 && d % seconds(1) == milliseconds(0))
    return std::to_string(duration_cast<seconds>(d).count()) + "s";
  return std::to_string(d.count()) + "ms";
}

bool ours(caf::string_view category) {
  for (auto c : our_categories)
    if (category == c)
      return true;
  return false;
}

std::string str(caf::string_view v) {
  return std::string(v.begin(), v.end());
}

} // namespace

// Declares the options of one [section]: each on its settings field (whose
// initial value is the default), with its name, description and bounds.
class receiptd_config::section {
public:
  section(receiptd_config& cfg, const char* category)
    : cfg_(cfg), group_(cfg.custom_options_, category), category_(category) {}

  template <class T>
  section& add(T& field, const char* name, const char* description) {
    group_.add(field, name, description);
    return *this;
  }

  // A number within [min, max].
  template <class T>
  section& add(T& field, const char* name, const char* description, std::type_identity_t<T> min,
               std::type_identity_t<T> max = std::numeric_limits<T>::max()) {
    add(field, name, description);
    auto rule = max == std::numeric_limits<T>::max()
      ? "must be at least " + std::to_string(min)
      : "must be " + std::to_string(min) + ".." + std::to_string(max);
    bound(
      name, [p = &field, min, max] { return *p >= min && *p <= max; }, std::move(rule));
    return *this;
  }

  // A duration of at least `min` (a positive one unless said otherwise).
  section& add(milliseconds& field, const char* name, const char* description,
               milliseconds min = milliseconds(1)) {
    add_duration(field, name, description);
    bound(
      name, [p = &field, min] { return *p >= min; },
      min.count() == 1 ? "must be positive"
                       : "must be at least " + std::to_string(min.count()) + "ms");
    return *this;
  }

  // A duration within [min, max].
  section& add(milliseconds& field, const char* name, const char* description, milliseconds min,
               milliseconds max) {
    add_duration(field, name, description);
    bound(
      name, [p = &field, min, max] { return *p >= min && *p <= max; },
      "must be " + duration_text(min) + ".." + duration_text(max));
    return *this;
  }

  // A condition on the section's values, checked after parsing.
  section& require(const char* name, std::function<bool()> holds, std::string rule) {
    bound(name, std::move(holds), std::move(rule));
    return *this;
  }

  // An option naming a file (or files): a relative path in it is relative to the
  // config file's folder, unless the command line gave it (options.hpp).
  section& add_path(std::string& field, const char* name, const char* description) {
    add(field, name, description);
    return relative_to_config(name, [p = &field](const std::filesystem::path& base) {
      *p = model::resolve_config_path(base, *p);
    });
  }
  section& add_path(std::vector<std::string>& field, const char* name, const char* description) {
    add(field, name, description);
    return relative_to_config(name, [p = &field](const std::filesystem::path& base) {
      for (auto& path : *p)
        path = model::resolve_config_path(base, path);
    });
  }
  // A database URL: the files among its parameters, likewise (SQLite's database).
  section& add_database_url(std::string& field, const char* name, const char* description) {
    add(field, name, description);
    return relative_to_config(name, [p = &field](const std::filesystem::path& base) {
      *p = model::resolve_database_url(base, *p);
    });
  }

private:
  section& relative_to_config(const char* name,
                              std::function<void(const std::filesystem::path&)> resolve) {
    cfg_.paths_.push_back({category_ + "." + name, std::move(resolve)});
    return *this;
  }

  void add_duration(milliseconds& field, const char* name, const char* description) {
    auto slot = std::make_unique<caf::timespan>(ts(field));
    group_.add(*slot, name, description);
    cfg_.durations_.push_back({std::move(slot), &field});
  }

  void bound(const char* name, std::function<bool()> holds, std::string rule) {
    cfg_.bounds_.push_back({category_ + "." + name, std::move(holds), std::move(rule)});
  }

  receiptd_config& cfg_;
  caf::actor_system_config::opt_group group_;
  std::string category_;
};

receiptd_config::receiptd_config() {
  auto& s = s_;
  // Conditions read the settings through `this`: they run after parsing.
  auto allowed_url = [this](const std::string& url) {
    return model::store_url_allowed(url, s_.outbound.allow_http);
  };
  const char* https_rule
    = "must be an https URL (http only to a loopback host, or with outbound.allow-http=true)";

  section{*this, "http"}
    .add(s.http.address, "address", "address to listen on")
    .add(s.http.port, "port", "TCP port to listen on (0: any free port)")
    .add(s.http.threads, "threads", "HTTP reactor threads", 1, 64)
    .add(s.http.max_body_bytes, "max-body-bytes", "largest request body accepted (413 above)", 1024,
         64u << 20)
    .add(s.http.drain_timeout, "drain-timeout",
         "on shutdown, how long in-flight uploads may finish", milliseconds(0))
    .add(s.http.header_timeout, "header-timeout",
         "request line and headers must arrive within this (408 and closed); also bounds the "
         "answer's time, so longer than validator.store-deadline")
    .add(s.http.body_timeout, "body-timeout",
         "the whole request must arrive within this (408 and closed)")
    .add(s.http.keepalive_timeout, "keepalive-timeout",
         "an idle kept-alive connection is closed after this")
    .add(s.http.max_connections, "max-connections",
         "open client connections; beyond it a new one gets 503 and is closed", 1)
    .add(s.http.public_url, "public-url",
         "the URL the stores reach receiptd at, for the push URLs receiptctl prints (app "
         "rtdn-url); empty: http://<http.address>:<http.port>")
    .require(
      "public-url",
      [this] {
        const auto& u = s_.http.public_url;
        return u.empty() || u.rfind("https://", 0) == 0 || u.rfind("http://", 0) == 0;
      },
      "must be empty or an http(s) URL")
    .add(s.http.trusted_proxies, "trusted-proxies",
         "reverse proxies (addresses or CIDR networks) whose Forwarded or X-Forwarded-For "
         "header names the client's address; anyone else's is ignored (empty: the peer's "
         "address, always)")
    .require(
      "trusted-proxies",
      [this] { return model::trusted_proxies::parse(s_.http.trusted_proxies).ok(); },
      "must list IPv4 or IPv6 addresses or networks, e.g. [\"127.0.0.1\", \"10.0.0.0/8\"]");
  section{*this, "db"}
    .add_database_url(s.db.url, "url",
                      "database: sqlite3://db=FILE timeout=10, postgresql://host=… dbname=… "
                      "user=… (libpq's keywords), or a URI "
                      "postgresql://user:password@host:port/dbname?sslmode=…")
    .require(
      "url",
      [this] {
        return s_.db.url.rfind("sqlite3://", 0) == 0 || s_.db.url.rfind("postgresql://", 0) == 0;
      },
      "must start with sqlite3://, postgresql:// or postgres://")
    .add(s.db.pool_size, "pool-size",
         "persistence workers, one database session each (GET /metrics and /readyz have one "
         "more of their own)",
         1, 64)
    .add(s.db.customer_answer_bytes, "customer-answer-bytes",
         "PostgreSQL: customer answers kept in memory to be given again while nothing "
         "changed them (every instance hears the others' writes by LISTEN/NOTIFY); when full, "
         "all are dropped (0: none kept; SQLite keeps none)");
  section{*this, "auth"}
    .add(s.auth.token_cache_ttl, "token-cache-ttl",
         "how long a looked-up token may be used without asking the database again (0: no "
         "cache, every request asks); revocations still take effect within "
         "auth.revocation-check",
         milliseconds(0), std::chrono::hours(1))
    .add(s.auth.revocation_check, "revocation-check",
         "while tokens are cached, how often the database is asked whether apps or tokens "
         "changed: a revoked token is refused within this (PostgreSQL: as soon as its "
         "notice is heard, and checked every 10 s while notices arrive)",
         milliseconds(100), std::chrono::seconds(60));
  section{*this, "validator"}
    .add(s.validator.max_in_flight, "max-in-flight",
         "uploads validated at once; beyond it 503 + Retry-After", 1)
    .add(s.validator.max_in_flight_bytes, "max-in-flight-bytes",
         "request body bytes held at once, all connections together, from a request's headers "
         "(its Content-Length) until it is answered; beyond it 503 + Retry-After")
    .require(
      "max-in-flight-bytes",
      [this] { return s_.validator.max_in_flight_bytes >= s_.http.max_body_bytes; },
      "must be at least http.max-body-bytes")
    .add(s.validator.max_unverified_bytes, "max-unverified-bytes",
         "of those, the bytes of requests whose credential (bearer token, notification URL) is "
         "not yet known to be good; beyond it 503 + Retry-After (above max-in-flight-bytes it "
         "adds no bound)")
    .require(
      "max-unverified-bytes",
      [this] { return s_.validator.max_unverified_bytes >= s_.http.max_body_bytes; },
      "must be at least http.max-body-bytes")
    .add(s.validator.store_deadline, "store-deadline",
         "overall deadline of the synchronous store check; past it 206 + retry job");
  section{*this, "limits"}
    .add(s.limits.client_rate, "client-rate",
         "uploads a second from one client network (an IPv4 address, an IPv6 /64), an upload "
         "counting once per started 64 KiB of body; beyond it 429 + Retry-After, judged from "
         "the headers (0: no limit)",
         0.0, 1e9)
    .add(s.limits.client_burst, "client-burst",
         "uploads one client network may send at once before its rate applies", 1.0, 1e9)
    .add(s.limits.app_rate, "app-rate",
         "uploads a second for one app (its tokens together), counted likewise; beyond it 429 + "
         "Retry-After (0: no limit)",
         0.0, 1e9)
    .add(s.limits.app_burst, "app-burst",
         "uploads one app may send at once before its rate applies", 1.0, 1e9);
  section{*this, "outbound"}
    .add_path(s.outbound.ca_file, "ca-file", "CA bundle for store HTTPS (empty: the system's)")
    .add(s.outbound.connect_timeout, "connect-timeout", "TCP + TLS connect timeout of store calls")
    .add(s.outbound.max_connections_per_host, "max-connections-per-host",
         "open connections per store host (0: bounded by store-*.max-concurrent only)")
    .add(s.outbound.allow_http, "allow-http",
         "allow plain-http store URLs and service-account token_uri on non-loopback hosts "
         "(loopback http is always allowed; otherwise https is required)")
    .add(s.outbound.store_http_version, "store-http-version",
         "HTTP version of the store calls: 'auto' (HTTP/2 over TLS when the store offers it, "
         "the calls to one store multiplexed on its connections; HTTP/1.1 on plain http) or "
         "'1.1' (HTTP/1.1 keep-alive always)")
    .require(
      "store-http-version",
      [this] { return model::parse_http_version(s_.outbound.store_http_version).has_value(); },
      "must be 'auto' or '1.1'");
  section{*this, "store-a"}
    .add(s.store_a.production_url, "production-url", "verifyReceipt production URL")
    .require(
      "production-url", [=, this] { return allowed_url(s_.store_a.production_url); }, https_rule)
    .add(s.store_a.sandbox_url, "sandbox-url", "verifyReceipt sandbox URL")
    .require(
      "sandbox-url", [=, this] { return allowed_url(s_.store_a.sandbox_url); }, https_rule)
    .add(s.store_a.server_api_url, "server-api-url",
         "App Store Server API production URL (StoreKit 2 transactions)")
    .require(
      "server-api-url", [=, this] { return allowed_url(s_.store_a.server_api_url); }, https_rule)
    .add(s.store_a.server_api_sandbox_url, "server-api-sandbox-url",
         "App Store Server API sandbox URL")
    .require(
      "server-api-sandbox-url",
      [=, this] { return allowed_url(s_.store_a.server_api_sandbox_url); }, https_rule)
    .add(s.store_a.confirm_with, "confirm-with",
         "how unified receipts are confirmed: auto (the App Store Server API for apps with its "
         "credentials, verifyReceipt otherwise), verify-receipt or server-api")
    .require(
      "confirm-with",
      [this] { return model::store_a::parse_confirmation(s_.store_a.confirm_with).has_value(); },
      "must be auto, verify-receipt or server-api")
    .add(s.store_a.timeout, "timeout", "timeout of one verifyReceipt or App Store Server API call")
    .add(s.store_a.max_concurrent, "max-concurrent",
         "verifyReceipt and App Store Server API calls in flight at once", 1)
    .add(
      s.store_a.max_queued, "max-queued",
      "verifyReceipt calls waiting for a free slot; beyond it the upload is stored pending (206)")
    .add(
      s.store_a.retry_rate, "retry-rate",
      "revalidations started per second against Store A, in bursts of a tenth of a second's worth "
      "(0: unlimited)",
      0.0, 100000.0)
    .add(s.store_a.exclude_old_transactions, "exclude-old-transactions",
         "sent with every verifyReceipt call")
    .add_path(s.store_a.trust_roots, "trust-roots", "PEM files of trusted root certificates")
    .require(
      "trust-roots", [this] { return !s_.store_a.trust_roots.empty(); }, "needs at least one file")
    .add_path(s.store_a.intermediates, "intermediates",
              "PEM files of intermediates receipts may omit")
    // Each purchase is a stored row and part of every answer, which must fit
    // http's response limit.
    .add(s.store_a.max_in_app_purchases, "max-in-app-purchases",
         "in-app purchases one receipt may hold; more is malformed_receipt (402)", 1, 5000)
    .add_path(s.store_a.storekit_test_root, "storekit-test-root",
              "PEM of the Xcode StoreKit test root; receipts under it are sandbox (empty: refused)")
    .add(s.store_a.refresh_interval, "refresh-interval",
         "how often validated StoreKit 2 subscriptions whose expiry has passed are asked again "
         "(App Store Server API; 0: never); one is not asked again sooner",
         milliseconds(0))
    .add(s.store_a.refresh_batch, "refresh-batch",
         "StoreKit 2 subscriptions given a refresh job per sweep", 1, 100000);
  section{*this, "store-b"}
    .add(s.store_b.api_url, "api-url", "Play Developer API base URL")
    .require(
      "api-url", [=, this] { return allowed_url(s_.store_b.api_url); }, https_rule)
    .add(s.store_b.timeout, "timeout", "timeout of one Play API or token call")
    .add(s.store_b.max_concurrent, "max-concurrent", "Play API calls in flight at once", 1)
    .add(s.store_b.max_queued, "max-queued",
         "Play API calls waiting for a free slot; beyond it the upload is stored pending (206)")
    .add(
      s.store_b.retry_rate, "retry-rate",
      "revalidations started per second against Store B, in bursts of a tenth of a second's worth "
      "(0: unlimited)",
      0.0, 100000.0)
    .add(s.store_b.token_refresh_margin, "token-refresh-margin",
         "refresh an OAuth access token this long before it expires", milliseconds(0))
    .add(s.store_b.voided_purchases, "voided-purchases",
         "poll each app's Play voided purchases list and mark the refunded purchase orders")
    .add(s.store_b.voided_purchases_interval, "voided-purchases-interval",
         "how often each app's voided purchases list is read", milliseconds(1000))
    .add(s.store_b.voided_purchases_page_size, "voided-purchases-page-size",
         "voided purchases asked for per page (Google allows 1000)", 1, 1000)
    .add(s.store_b.orders, "orders",
         "read each Play purchase's order (orders API: price, currency, tax, refunds)")
    .add(s.store_b.orders_interval, "orders-interval",
         "how often the purchase orders whose order is still to be read are read, in batches",
         milliseconds(1000))
    .add(s.store_b.orders_batch, "orders-batch",
         "orders read per call (orders.batchGet; Google allows 1000)", 1, 1000)
    .add(s.store_b.refresh_interval, "refresh-interval",
         "how often validated subscriptions whose expiry has passed are asked again (0: never); "
         "one is not asked again sooner",
         milliseconds(0))
    .add(s.store_b.refresh_batch, "refresh-batch", "subscriptions given a refresh job per sweep", 1,
         100000)
    .add_path(s.store_b.rtdn_oidc_jwks, "rtdn-oidc-jwks",
              "JWKS file of Google's OIDC signing keys: when set, every RTDN push must carry a "
              "Pub/Sub OIDC token that verifies under them (empty: the ?token= alone)")
    .add(s.store_b.rtdn_oidc_audience, "rtdn-oidc-audience",
         "the audience the push subscription's OIDC tokens must name")
    .require(
      "rtdn-oidc-audience",
      [this] {
        return s_.store_b.rtdn_oidc_jwks.empty() || !s_.store_b.rtdn_oidc_audience.empty();
      },
      "must be set when store-b.rtdn-oidc-jwks is")
    .add(s.store_b.rtdn_oidc_service_account, "rtdn-oidc-service-account",
         "the push subscription's service account email its OIDC tokens must name (empty: any)");
  section{*this, "retry"}
    .add(s.retry.initial, "initial", "first revalidation delay (full jitter below it)")
    .add(s.retry.max, "max", "largest revalidation delay")
    .require(
      "max", [this] { return s_.retry.max >= s_.retry.initial; }, "must be at least retry.initial")
    .add(s.retry.multiplier, "multiplier", "delay growth per failed attempt", 1.0, 100.0)
    .add(s.retry.max_attempts, "max-attempts", "attempts before a record is marked failed", 1)
    .add(s.retry.poll_interval, "poll-interval",
         "how often due jobs and refund requests written elsewhere (other instances, "
         "receiptctl, leases run out) are looked for; this instance's own are claimed when "
         "they fall due")
    .add(s.retry.batch, "batch", "jobs claimed at once", 1, 10000)
    .add(s.retry.lease, "lease",
         "how long a claimed job is ours before another instance may take it")
    .require(
      "lease", [this] { return s_.retry.lease > s_.validator.store_deadline; },
      "must be longer than validator.store-deadline")
    .add(s.retry.claim_timeout, "claim-timeout",
         "how long a claim of due jobs may take before the next poll tries again");
  section{*this, "notifications"}
    .add(s.notifications.max_age, "max-age",
         "a store notification signed (Play: sent) longer ago is recorded and answered but "
         "changes nothing (a replay)");
  section{*this, "webhooks"}
    .add(s.webhooks.allow_http, "allow-http",
         "allow plain-http endpoint URLs beyond loopback hosts (receiptctl webhook add)")
    .add(s.webhooks.timeout, "timeout", "timeout of one delivery: connect, send, answer")
    .add(s.webhooks.initial_backoff, "initial-backoff",
         "first redelivery delay after a failed delivery (full jitter below it)")
    .add(s.webhooks.max_backoff, "max-backoff", "largest redelivery delay")
    .require(
      "max-backoff", [this] { return s_.webhooks.max_backoff >= s_.webhooks.initial_backoff; },
      "must be at least webhooks.initial-backoff")
    .add(s.webhooks.max_attempts, "max-attempts",
         "deliveries tried before an event is dead for that endpoint", 1, 1000)
    .add(s.webhooks.max_concurrent_per_endpoint, "max-concurrent-per-endpoint",
         "deliveries in flight at once to one endpoint from this instance: a claim takes no "
         "more of an endpoint's, the endpoints taking turns, so one that hangs delays no other",
         1, 1000)
    .add(s.webhooks.poll_interval, "poll-interval",
         "how often due deliveries written elsewhere (other instances, receiptctl webhook "
         "redeliver, leases run out) are looked for; this instance's own are claimed when "
         "they fall due")
    .add(s.webhooks.batch, "batch", "deliveries claimed at once, and held at most by this instance",
         1, 10000)
    .add(s.webhooks.lease, "lease",
         "how long a claimed delivery is ours before another instance may take it")
    .require(
      "lease", [this] { return s_.webhooks.lease > s_.webhooks.timeout; },
      "must be longer than webhooks.timeout");
  section{*this, "trace"}
    .add(s.trace.enabled, "enabled", "record a span per actor hop")
    .add_path(s.trace.file, "file", "span lines (JSON) are appended here (empty: none)")
    .add(s.trace.max_file_bytes, "max-file-bytes",
         "past this size the file moves to FILE.1 and a new one starts (0: no limit)")
    .add(s.trace.log_spans, "log-spans", "also print span lines to stderr")
    .add(s.trace.buffer, "buffer", "spans buffered before new ones are dropped (and counted)", 1);
  section{*this, "log"}
    .add(s.log.format, "format",
         "text (one line per event) or json (one object per line, for log shippers)")
    .require(
      "format", [this] { return s_.log.format == "text" || s_.log.format == "json"; },
      "must be text or json")
    .add(s.log.level, "level", "the least severe lines written: debug, info, warning or error")
    .require(
      "level",
      [this] {
        const auto& l = s_.log.level;
        return l == "debug" || l == "info" || l == "warning" || l == "error";
      },
      "must be debug, info, warning or error");
  section{*this, "metrics"}
    .add(s.metrics.token, "token",
         "when set, GET /metrics must send Authorization: Bearer <token>; empty: anyone who "
         "reaches the port may scrape, allowed only while http.address is a loopback address")
    .require(
      "token",
      [this] {
        // What the HTTP layer accepts as a bearer token (http/request_rules.hpp).
        const auto& t = s_.metrics.token;
        return t.size() <= 512
          && std::all_of(t.begin(), t.end(), [](char c) { return c > 0x20 && c < 0x7F; });
      },
      "must be at most 512 visible ASCII characters, no spaces")
    .add(s.metrics.queue_interval, "queue-interval",
         "the revalidation queue figures (a scan of the jobs table) are read from the database "
         "at most this often, whatever the number of scrapes; scrapes in between show the last "
         "ones read",
         milliseconds(1), std::chrono::hours(1));
  section{*this, "bootstrap"}
    .add(s.bootstrap.create_first_app, "create-first-app",
         "on an empty database, create an app and print its token")
    .add(s.bootstrap.app_name, "app-name", "name of that first app")
    .add(s.bootstrap.bundle_id, "bundle-id", "its Store A bundle id")
    .add(s.bootstrap.package_name, "package-name", "its Store B package name");

  // CAF's own scheduler options, with receiptd's defaults (a file or the command line
  // still wins). Work sharing: one queue, idle workers sleep on a condition variable
  // until work arrives. CAF's default, work stealing, has idle workers poll with
  // 50 µs sleeps for ~25 ms after every wake-up: 20–30 ms of CPU per request at
  // 10 requests/s, and ~40 % more CPU per upload at 16 connections (bench/README.md).
  // Half the cores: the actors' work per upload is small next to the HTTP reactors',
  // the outbound thread's, the database sessions' and the database's own, and every
  // message to an actor wakes an idle worker when one sleeps (a futex and a context
  // switch, on one core more than the work itself).
  set("scheduler.policy", caf::atom("sharing"));
  set("scheduler.max-threads", std::size_t{std::max(1u, std::thread::hardware_concurrency() / 2)});
}

model::result<std::set<std::string>> receiptd_config::check_file(const std::string& path) {
  auto bad
    = [](std::string message) { return model::error(model::errc::invalid_request, message); };
  std::ifstream in(path);
  if (!in)
    return bad("cannot read config file " + path);
  auto raw = parse_config(in);
  if (!raw)
    return bad(path + ": " + caf::to_string(raw.error()));
  std::set<std::string> named;
  for (const auto& [category, group] : *raw) {
    auto* entries = caf::get_if<caf::settings>(&group);
    if (!entries)
      return bad(path + ": option " + category + " must be inside a [section]");
    for (const auto& [name, value] : *entries) {
      auto full = category + "." + name;
      auto opt = custom_options_.qualified_name_lookup(full);
      if (!opt)
        return bad(path + ": unknown option " + full);
      // A string option's value is not repeated: it may hold a secret
      // (db.url's password, metrics.token).
      if (auto err = opt->check(value))
        return bad(path + ": bad value for " + full + " (expected " + str(opt->type_name()) + ")"
                   + (opt->type_name() == "string" ? std::string(": write it in double quotes")
                                                   : ": " + caf::to_string(value)));
      named.insert(full);
    }
  }
  return named;
}

// Each option's own bounds, in the order the options are declared.
model::status receiptd_config::check_bounds() const {
  for (const auto& b : bounds_)
    if (!b.holds())
      return model::error(model::errc::invalid_request,
                          "bad value for " + b.option + ": " + b.rule);
  return model::done{};
}

// What depends on options of other sections.
model::status receiptd_config::check_relations() const {
  const auto& s = s_;
  auto need = [](bool ok, const char* option, const char* rule) -> model::status {
    if (ok)
      return model::done{};
    return model::error(model::errc::invalid_request,
                        std::string("bad value for ") + option + ": " + rule);
  };
  for (auto check : {
         need(s.http.header_timeout > s.validator.store_deadline, "http.header-timeout",
              "must be longer than validator.store-deadline (it also bounds the time to answer)"),
         need(s.http.body_timeout >= s.http.header_timeout, "http.body-timeout",
              "must be at least http.header-timeout"),
         need(s.scheduler_threads >= 1, "scheduler.max-threads", "must be at least 1"),
         need(s.scheduler_policy == "sharing" || s.scheduler_policy == "stealing",
              "scheduler.policy", "must be 'sharing' or 'stealing'"),
       })
    if (!check)
      return check;
  return model::done{};
}

// A scrape is cheap to ask and costs the service work: beyond loopback it needs
// the token (docs/operating.md, "Who may scrape /metrics").
model::status receiptd_config::check_serving() const {
  if (model::is_loopback_host(s_.http.address) || !s_.metrics.token.empty())
    return model::done{};
  return model::error(model::errc::invalid_request,
                      "bad value for metrics.token: must be set when http.address is not a "
                      "loopback address (127.0.0.0/8, ::1, localhost): GET /metrics would be "
                      "open to anyone who reaches the port");
}

// A path resolves against where it was written: the config file's folder for a
// value the file names; the working directory for the command line (left as
// is); and, for a default, the folder of the default config file (config/ under
// the working directory), since the defaults are written as config/receiptd.ini
// writes them. So a small config file of one's own elsewhere keeps the shipped
// trust files, and the installed receiptd.ini, which names every option, has
// them beside it. Absolute, so the paths say where they point in every message.
void receiptd_config::resolve_paths(const std::string& file, const std::set<std::string>& from_file,
                                    const std::set<std::string>& from_command_line) {
  auto folder_of = [](const std::string& path) {
    std::error_code ec;
    auto absolute = std::filesystem::absolute(path, ec);
    return ec ? std::filesystem::path(path).parent_path() : absolute.parent_path();
  };
  const auto file_folder = folder_of(file.empty() ? default_config_file : file);
  const auto default_folder = folder_of(default_config_file);
  for (const auto& p : paths_) {
    if (from_command_line.count(p.option))
      continue;
    p.resolve(from_file.count(p.option) ? file_folder : default_folder);
  }
}

void receiptd_config::print_help(std::ostream& out) const {
  out << "receiptd " << model::version
      << ": validates and stores in-app purchase receipts.\n\n"
         "usage: receiptd [--config-file=PATH] [--section.option=VALUE …]\n"
         "       receiptd --help | --version\n"
         "Every option can be set in the config file (CAF INI: [section] then\n"
         "option=value; strings in double quotes) or on the command line, which wins.\n"
         "Default config file: "
      << default_config_file
      << " when it exists.\n"
         "Relative paths in the config file, and in the defaults below, are relative to\n"
         "the config file's folder; on the command line, to the working directory.\n";
  for (auto category : our_categories) {
    out << "\n[" << category << "]\n";
    if (std::string_view(category) == "scheduler") {
      // CAF's own options: receiptd's defaults and words, not CAF's.
      out << "  --scheduler.policy=<atom> (default "
          << caf::to_string(caf::get_or(content, "scheduler.policy", caf::atom("sharing")))
          << ")\n      'sharing' (one queue; idle threads sleep until work arrives; receiptd's "
             "variant of CAF's, actors/scheduler.hpp) or 'stealing' (CAF's own default: idle "
             "threads poll)\n"
          << "  --scheduler.max-threads=<uint64> (default "
          << caf::get_or(content, "scheduler.max-threads", std::size_t{1})
          << ")\n      CAF scheduler threads running the actors (default: half the cores)\n";
      continue;
    }
    for (const auto& opt : custom_options_) {
      if (opt.category() != category)
        continue;
      std::string value;
      if (auto v = opt.get())
        value = caf::to_string(*v);
      out << "  --" << opt.full_name() << "=<" << opt.type_name() << ">"
          << (value.empty() ? "" : " (default " + value + ")") << "\n      " << opt.description()
          << "\n";
    }
  }
}

model::status receiptd_config::load(int argc, char** argv, std::ostream& help_out) {
  auto bad
    = [](std::string message) { return model::error(model::errc::invalid_request, message); };
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const auto& a : args) {
    if (a == "--help" || a == "-h" || a == "-?") {
      print_help(help_out);
      help_printed = true;
      return model::done{};
    }
    if (a == "--version") {
      help_out << "receiptd " << model::version << "\n";
      help_printed = true;
      return model::done{};
    }
  }
  std::string file;
  for (const auto& a : args)
    if (a.rfind("--config-file=", 0) == 0)
      file = a.substr(14);
  if (file.empty() && std::filesystem::exists(default_config_file)) {
    file = default_config_file;
    args.push_back("--config-file=" + file);
  }
  std::set<std::string> from_file;
  if (!file.empty()) {
    auto checked = check_file(file);
    if (!checked)
      return checked.err();
    from_file = std::move(checked).value();
  }
  // CAF takes a boolean on the command line only as a bare flag; "--x=false"
  // is applied here, after CAF has read the file, so the command line wins.
  std::vector<std::string> caf_args;
  std::vector<std::pair<const caf::config_option*, bool>> flags;
  std::set<std::string> from_command_line;
  for (const auto& a : args) {
    if (a.rfind("--", 0) != 0)
      return bad("unexpected argument " + a);
    auto eq = a.find('=');
    auto name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (name == "config-file") {
      caf_args.push_back(a);
      continue;
    }
    auto opt = custom_options_.qualified_name_lookup(name);
    if (!opt || !(ours(opt->category()) || name.rfind("logger.", 0) == 0))
      return bad("unknown option --" + name);
    from_command_line.insert(name);
    if (opt->is_flag() && eq != std::string::npos) {
      auto value = a.substr(eq + 1);
      if (value != "true" && value != "false")
        return bad("bad value for " + name + ": expected true or false, got " + value);
      flags.emplace_back(opt, value == "true");
      continue;
    }
    if (eq == std::string::npos && !opt->is_flag())
      return bad("option --" + name + " needs a value (--" + name + "=VALUE)");
    if (eq != std::string::npos) {
      auto value = a.substr(eq + 1);
      auto parsed = opt->parse(value);
      if (!parsed || opt->check(*parsed))
        return bad("bad value for " + name + " (expected " + str(opt->type_name()) + "): " + value);
    }
    caf_args.push_back(a);
  }
  if (auto err = parse(caf_args, file.empty() ? nullptr : file.c_str()))
    return bad("bad option: " + caf::to_string(err));
  for (auto [opt, value] : flags)
    opt->store(caf::config_value{value});
  s_.config_file = file;
  for (auto& d : durations_)
    *d.field = ms(*d.parsed);
  // A PostgreSQL URI takes SOCI's keyword form before its file paths resolve.
  // The message never repeats the URL: it may hold a password.
  auto keywords = model::keyword_database_url(s_.db.url);
  if (!keywords)
    return bad("bad value for db.url: " + keywords.err().message());
  s_.db.url = std::move(keywords).value();
  resolve_paths(file, from_file, from_command_line);
  s_.scheduler_threads = caf::get_or(content, "scheduler.max-threads", size_t{0});
  s_.scheduler_policy = caf::to_string(caf::get_or(content, "scheduler.policy", caf::atom("")));
  if (auto bounded = check_bounds(); !bounded)
    return bounded;
  return check_relations();
}

} // namespace receiptd::config

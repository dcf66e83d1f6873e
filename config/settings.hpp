#pragma once
// Plain settings structs: main() reads the configuration once and hands each
// component its own struct. Nothing below config/ sees the configuration object.
// Defaults here are the documented defaults of config/receiptd.ini. Relative
// paths are as that file writes them: relative to the config file's folder
// (config/ when no file is read); config/options.cpp resolves them at load.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace receiptd::config {

using std::chrono::milliseconds;
using namespace std::chrono_literals;

struct http_settings {
  std::string address = "127.0.0.1";
  std::uint16_t port = 8080;
  std::size_t threads = 2;
  std::size_t max_body_bytes = 1024 * 1024;
  milliseconds drain_timeout = 10s;
  // Slow clients (Pistache 0.0.5 counts each from the connection, or from the end of
  // the previous request on it; see http/server.cpp).
  milliseconds header_timeout = 15s;
  milliseconds body_timeout = 30s;
  milliseconds keepalive_timeout = 15s;
  std::size_t max_connections = 10000;
  // Where the stores reach receiptd from outside (the push URLs receiptctl prints:
  // `app rtdn-url`); empty: http://<address>:<port>.
  std::string public_url;
  // Reverse proxies whose Forwarded / X-Forwarded-For name the client
  // (model/client_address.hpp): addresses or CIDR networks; empty: none.
  std::vector<std::string> trusted_proxies;
};

struct db_settings {
  std::string url = "sqlite3://db=../var/receiptd.db timeout=10";
  std::size_t pool_size = 4;
  // Customer answers kept to be given again (actors/customer_answers.hpp); 0: none.
  std::size_t customer_answer_bytes = 32 * 1024 * 1024;
};

struct auth_settings {
  milliseconds token_cache_ttl = 5min; // 0: no cache, every request checks the database
  milliseconds revocation_check = 1s;  // while tokens are cached: is the auth revision newer?
};

struct validator_settings {
  std::size_t max_in_flight = 10000;
  // Request body bytes held at once, from their headers to their answer.
  std::size_t max_in_flight_bytes = 256 * 1024 * 1024;
  // Of them, those of requests whose credential is not yet known to be good.
  std::size_t max_unverified_bytes = 32 * 1024 * 1024;
  milliseconds store_deadline = 5s;
};

// Upload rates (uploads a second and bursts; an upload counts once per started
// 64 KiB, model::upload_cost): per client network and per app. 0: no limit.
struct limits_settings {
  double client_rate = 50;
  double client_burst = 200;
  double app_rate = 1000;
  double app_burst = 2000;
};

struct outbound_settings {
  std::string ca_file; // empty: the system's CA bundle
  milliseconds connect_timeout = 2s;
  std::size_t max_connections_per_host = 0; // 0: bounded by store-*.max-concurrent only
  bool allow_http = false; // plain-http store URLs beyond loopback (model/url_policy.hpp)
  std::string store_http_version = "auto"; // model::parse_http_version
};

struct store_a_settings {
  std::string production_url = "https://buy.itunes.apple.com/verifyReceipt";
  std::string sandbox_url = "https://sandbox.itunes.apple.com/verifyReceipt";
  // Apple's recommended hosts since 2026-05-05 (model/store_a/server_api.hpp).
  std::string server_api_url = "https://api.storekit.apple.com";
  std::string server_api_sandbox_url = "https://api.storekit-sandbox.apple.com";
  // Unified receipts: "auto" (the Server API for apps with its credentials),
  // "verify-receipt" or "server-api" (model::store_a::parse_confirmation).
  std::string confirm_with = "auto";
  milliseconds timeout = 4s;
  std::size_t max_concurrent = 4096;
  std::size_t max_queued = 4096; // calls waiting for one of max_concurrent
  double retry_rate = 50;        // revalidations started per second (0: unlimited)
  bool exclude_old_transactions = true;
  // Apple Root CA (receipts) and Apple Root CA - G3 (StoreKit 2 JWS).
  std::vector<std::string> trust_roots{"trust/apple-root-ca.pem", "trust/apple-root-ca-g3.pem"};
  std::vector<std::string> intermediates{"trust/apple-itunes-store-ca.pem",
                                         "trust/apple-wwdr-ca.pem"};
  std::string storekit_test_root;          // empty: Xcode StoreKit test receipts are refused
  std::size_t max_in_app_purchases = 2000; // more in one receipt: malformed_receipt (402)
  // StoreKit 2 subscriptions whose expiry passed while live, asked again through
  // Get All Subscription Statuses (0: never).
  milliseconds refresh_interval = 1h;
  std::size_t refresh_batch = 100;
};

struct store_b_settings {
  std::string api_url = "https://androidpublisher.googleapis.com";
  milliseconds timeout = 4s;
  std::size_t max_concurrent = 4096;
  std::size_t max_queued = 4096; // calls waiting for one of max_concurrent
  double retry_rate = 50;        // revalidations started per second (0: unlimited)
  milliseconds token_refresh_margin = 5min;
  // Play upkeep: each app's voided purchases list, polled this often;
  // validated subscriptions whose expiry passed, refreshed (0: never).
  bool voided_purchases = true;
  milliseconds voided_purchases_interval = 15min;
  std::size_t voided_purchases_page_size = 1000;
  milliseconds refresh_interval = 1h;
  std::size_t refresh_batch = 100;
  // Play's orders API: each purchase's order read for its price (at upload,
  // and by a sweep this often for those whose order is still to be read).
  bool orders = true;
  milliseconds orders_interval = 5min;
  std::size_t orders_batch = 1000;
  // Pub/Sub push authentication (optional): with a JWKS file, every
  // RTDN push must carry an OIDC token that verifies under it, for this
  // audience (and from this service account, when set).
  std::string rtdn_oidc_jwks;
  std::string rtdn_oidc_audience;
  std::string rtdn_oidc_service_account;
};

struct retry_settings {
  milliseconds initial = 5s;
  milliseconds max = 15min;
  double multiplier = 2.0;
  std::size_t max_attempts = 20;
  // This instance's own jobs are claimed when they fall due (actors/work_notice.hpp);
  // the poll finds the others.
  milliseconds poll_interval = 10s;
  std::size_t batch = 100;
  milliseconds lease = 60s;
  milliseconds claim_timeout = 30s;
};

// Webhooks out: the delivery of events to apps' endpoints.
struct webhook_settings {
  bool allow_http = false;    // plain-http endpoint URLs beyond loopback
  milliseconds timeout = 10s; // one delivery: connect, send, answer
  milliseconds initial_backoff = 10s;
  milliseconds max_backoff = 1h;
  std::size_t max_attempts = 20; // then the delivery is dead (receiptctl webhook redeliver)
  std::size_t max_concurrent_per_endpoint = 4;
  milliseconds poll_interval = 10s; // as retry's: this instance's own are claimed when due
  std::size_t batch = 100;
  milliseconds lease = 60s;
};

// Store notifications in (App Store Server Notifications, Play RTDN).
struct notification_settings {
  // One signed (or, for Play, sent) longer ago than this is recorded and answered
  // but changes nothing: stores retry for days (Apple about 6.5, Pub/Sub keeps 7),
  // an older one is a replay.
  milliseconds max_age = 240h;
};

struct trace_settings {
  bool enabled = true;
  std::string file = "../var/trace.jsonl";       // span lines (JSON); empty: none
  std::size_t max_file_bytes = 64 * 1024 * 1024; // then FILE becomes FILE.1; 0: no limit
  bool log_spans = false;                        // also print span lines to stderr
  std::size_t buffer = 65536;                    // spans held before dropping
};

// Operator log lines on stderr (actors/log.hpp).
struct log_settings {
  std::string format = "text"; // text or json (one object per line)
  std::string level = "info";  // debug, info, warning or error: the least severe written
};

// GET /metrics.
struct metrics_settings {
  // Empty: anyone who reaches the port may scrape, which receiptd allows only while
  // http.address is a loopback address; else Authorization: Bearer <token>.
  std::string token;
  // The revalidation queue figures (a scan of validation_jobs) are read at most
  // this often, whatever the number of scrapes.
  milliseconds queue_interval = 10s;
};

struct bootstrap_settings {
  bool create_first_app = true; // on an empty database
  std::string app_name = "first-app";
  std::string bundle_id = "com.example.app";
  std::string package_name = "com.example.app";
};

struct settings {
  std::string config_file; // the file read, empty when none
  http_settings http;
  db_settings db;
  auth_settings auth;
  validator_settings validator;
  limits_settings limits;
  outbound_settings outbound;
  store_a_settings store_a;
  store_b_settings store_b;
  retry_settings retry;
  webhook_settings webhooks;
  notification_settings notifications;
  trace_settings trace;
  log_settings log;
  metrics_settings metrics;
  bootstrap_settings bootstrap;
  std::size_t scheduler_threads = 0; // CAF's scheduler.max-threads (default: half the cores)
  std::string scheduler_policy;      // CAF's scheduler.policy (default: sharing)
};

} // namespace receiptd::config

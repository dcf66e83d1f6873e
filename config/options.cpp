#include "config/options.hpp"

#include <caf/config_option_set.hpp>
#include <caf/config_value.hpp>
#include <caf/settings.hpp>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "model/url_policy.hpp"

namespace receiptd::config {

namespace {

// Our option groups, in the order --help and config/receiptd.ini list them.
constexpr const char* our_categories[] = {"http",    "db",    "auth",  "validator",
                                          "outbound", "store-a", "store-b", "retry",
                                          "trace",   "bootstrap", "scheduler"};

constexpr const char* default_config_file = "config/receiptd.ini";

caf::timespan ts(milliseconds ms) {
  return std::chrono::duration_cast<caf::timespan>(ms);
}

milliseconds ms(caf::timespan t) {
  return std::chrono::duration_cast<milliseconds>(t);
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

bool is_url(const std::string& s, bool allow_http) {
  return model::store_url_allowed(s, allow_http);
}

} // namespace

receiptd_config::receiptd_config() {
  auto& s = s_;
  drain_timeout_ = ts(s.http.drain_timeout);
  header_timeout_ = ts(s.http.header_timeout);
  body_timeout_ = ts(s.http.body_timeout);
  keepalive_timeout_ = ts(s.http.keepalive_timeout);
  token_cache_ttl_ = ts(s.auth.token_cache_ttl);
  store_deadline_ = ts(s.validator.store_deadline);
  connect_timeout_ = ts(s.outbound.connect_timeout);
  store_a_timeout_ = ts(s.store_a.timeout);
  store_b_timeout_ = ts(s.store_b.timeout);
  refresh_margin_ = ts(s.store_b.token_refresh_margin);
  retry_initial_ = ts(s.retry.initial);
  retry_max_ = ts(s.retry.max);
  poll_interval_ = ts(s.retry.poll_interval);
  lease_ = ts(s.retry.lease);

  opt_group{custom_options_, "http"}
    .add(s.http.address, "address", "address to listen on")
    .add(s.http.port, "port", "TCP port to listen on (0: any free port)")
    .add(s.http.threads, "threads", "HTTP reactor threads")
    .add(s.http.max_body_bytes, "max-body-bytes", "largest request body accepted (413 above)")
    .add(drain_timeout_, "drain-timeout", "on shutdown, how long in-flight uploads may finish")
    .add(header_timeout_, "header-timeout", "request line and headers must arrive within this (408 and closed); also bounds the answer's time, so longer than validator.store-deadline")
    .add(body_timeout_, "body-timeout", "the whole request must arrive within this (408 and closed)")
    .add(keepalive_timeout_, "keepalive-timeout", "an idle kept-alive connection is closed after this")
    .add(s.http.max_connections, "max-connections", "open client connections; beyond it a new one gets 503 and is closed");
  opt_group{custom_options_, "db"}
    .add(s.db.url, "url", "database: sqlite3://db=FILE timeout=10 or postgresql://host=… dbname=… user=…")
    .add(s.db.pool_size, "pool-size", "persistence workers, one database session each");
  opt_group{custom_options_, "auth"}
    .add(token_cache_ttl_, "token-cache-ttl", "how long a looked-up token is trusted without the database (0: always ask; revocations take this long)");
  opt_group{custom_options_, "validator"}
    .add(s.validator.max_in_flight, "max-in-flight", "uploads validated at once; beyond it 503 + Retry-After")
    .add(s.validator.max_in_flight_bytes, "max-in-flight-bytes", "request bytes held by uploads being authenticated or validated; beyond it 503 + Retry-After")
    .add(store_deadline_, "store-deadline", "overall deadline of the synchronous store check; past it 206 + retry job");
  opt_group{custom_options_, "outbound"}
    .add(s.outbound.ca_file, "ca-file", "CA bundle for store HTTPS (empty: the system's)")
    .add(connect_timeout_, "connect-timeout", "TCP + TLS connect timeout of store calls")
    .add(s.outbound.max_connections_per_host, "max-connections-per-host", "open connections per store host (0: bounded by store-*.max-concurrent only)")
    .add(s.outbound.allow_http, "allow-http", "allow plain-http store URLs and service-account token_uri on non-loopback hosts (loopback http is always allowed; otherwise https is required)");
  opt_group{custom_options_, "store-a"}
    .add(s.store_a.production_url, "production-url", "verifyReceipt production URL")
    .add(s.store_a.sandbox_url, "sandbox-url", "verifyReceipt sandbox URL")
    .add(store_a_timeout_, "timeout", "timeout of one verifyReceipt call")
    .add(s.store_a.max_concurrent, "max-concurrent", "verifyReceipt calls in flight at once")
    .add(s.store_a.max_queued, "max-queued", "verifyReceipt calls waiting for a free slot; beyond it the upload is stored pending (206)")
    .add(s.store_a.exclude_old_transactions, "exclude-old-transactions", "sent with every verifyReceipt call")
    .add(s.store_a.trust_roots, "trust-roots", "PEM files of trusted root certificates")
    .add(s.store_a.intermediates, "intermediates", "PEM files of intermediates receipts may omit")
    .add(s.store_a.max_in_app_purchases, "max-in-app-purchases", "in-app purchases one receipt may hold; more is malformed_receipt (402)")
    .add(s.store_a.storekit_test_root, "storekit-test-root", "PEM of the Xcode StoreKit test root; receipts under it are sandbox (empty: refused)");
  opt_group{custom_options_, "store-b"}
    .add(s.store_b.api_url, "api-url", "Play Developer API base URL")
    .add(store_b_timeout_, "timeout", "timeout of one Play API or token call")
    .add(s.store_b.max_concurrent, "max-concurrent", "Play API calls in flight at once")
    .add(s.store_b.max_queued, "max-queued", "Play API calls waiting for a free slot; beyond it the upload is stored pending (206)")
    .add(refresh_margin_, "token-refresh-margin", "refresh an OAuth access token this long before it expires");
  opt_group{custom_options_, "retry"}
    .add(retry_initial_, "initial", "first revalidation delay (full jitter below it)")
    .add(retry_max_, "max", "largest revalidation delay")
    .add(s.retry.multiplier, "multiplier", "delay growth per failed attempt")
    .add(s.retry.max_attempts, "max-attempts", "attempts before a record is marked failed")
    .add(poll_interval_, "poll-interval", "how often due jobs are claimed")
    .add(s.retry.batch, "batch", "jobs claimed at once")
    .add(lease_, "lease", "how long a claimed job is ours before another instance may take it");
  opt_group{custom_options_, "trace"}
    .add(s.trace.enabled, "enabled", "record a span per actor hop")
    .add(s.trace.file, "file", "span lines (JSON) are appended here (empty: none)")
    .add(s.trace.max_file_bytes, "max-file-bytes", "past this size the file moves to FILE.1 and a new one starts (0: no limit)")
    .add(s.trace.log_spans, "log-spans", "also print span lines to stderr")
    .add(s.trace.buffer, "buffer", "spans buffered before new ones are dropped (and counted)");
  opt_group{custom_options_, "bootstrap"}
    .add(s.bootstrap.create_first_app, "create-first-app", "on an empty database, create an app and print its token")
    .add(s.bootstrap.app_name, "app-name", "name of that first app")
    .add(s.bootstrap.bundle_id, "bundle-id", "its Store A bundle id")
    .add(s.bootstrap.package_name, "package-name", "its Store B package name");
}

std::string receiptd_config::check_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return "cannot read config file " + path;
  auto raw = parse_config(in);
  if (!raw)
    return path + ": " + caf::to_string(raw.error());
  for (const auto& [category, group] : *raw) {
    auto* entries = caf::get_if<caf::settings>(&group);
    if (!entries)
      return path + ": option " + category + " must be inside a [section]";
    for (const auto& [name, value] : *entries) {
      auto full = category + "." + name;
      auto opt = custom_options_.qualified_name_lookup(full);
      if (!opt)
        return path + ": unknown option " + full;
      if (auto err = opt->check(value))
        return path + ": bad value for " + full + " (expected "
               + str(opt->type_name()) + "): " + caf::to_string(value);
    }
  }
  return {};
}

std::string receiptd_config::check_ranges() {
  auto& s = s_;
  std::ostringstream e;
  const char* https_rule
    = "must be an https URL (http only to a loopback host, or with outbound.allow-http=true)";
  auto need = [&](bool ok, const char* option, const char* rule) {
    if (!ok && e.tellp() == 0)
      e << "bad value for " << option << ": " << rule;
  };
  need(s.http.threads >= 1 && s.http.threads <= 64, "http.threads", "must be 1..64");
  need(s.http.max_body_bytes >= 1024 && s.http.max_body_bytes <= 64u << 20,
       "http.max-body-bytes", "must be 1024..67108864");
  need(s.db.url.rfind("sqlite3://", 0) == 0 || s.db.url.rfind("postgresql://", 0) == 0,
       "db.url", "must start with sqlite3:// or postgresql://");
  need(s.db.pool_size >= 1 && s.db.pool_size <= 64, "db.pool-size", "must be 1..64");
  need(s.http.header_timeout > s.validator.store_deadline, "http.header-timeout",
       "must be longer than validator.store-deadline (it also bounds the time to answer)");
  need(s.http.body_timeout >= s.http.header_timeout, "http.body-timeout",
       "must be at least http.header-timeout");
  need(s.http.keepalive_timeout.count() > 0, "http.keepalive-timeout", "must be positive");
  need(s.http.max_connections >= 1, "http.max-connections", "must be at least 1");
  need(s.validator.max_in_flight >= 1, "validator.max-in-flight", "must be at least 1");
  need(s.validator.max_in_flight_bytes >= s.http.max_body_bytes, "validator.max-in-flight-bytes",
       "must be at least http.max-body-bytes");
  need(s.validator.store_deadline.count() > 0, "validator.store-deadline", "must be positive");
  need(s.outbound.connect_timeout.count() > 0, "outbound.connect-timeout", "must be positive");
  need(is_url(s.store_a.production_url, s.outbound.allow_http), "store-a.production-url", https_rule);
  need(is_url(s.store_a.sandbox_url, s.outbound.allow_http), "store-a.sandbox-url", https_rule);
  need(s.store_a.timeout.count() > 0, "store-a.timeout", "must be positive");
  need(s.store_a.max_concurrent >= 1, "store-a.max-concurrent", "must be at least 1");
  need(!s.store_a.trust_roots.empty(), "store-a.trust-roots", "needs at least one file");
  need(s.store_a.max_in_app_purchases >= 1 && s.store_a.max_in_app_purchases <= 5000,
       "store-a.max-in-app-purchases",
       "must be 1..5000 (each purchase is a stored row and part of every answer, which must fit http's response limit)");
  need(is_url(s.store_b.api_url, s.outbound.allow_http), "store-b.api-url", https_rule);
  need(s.store_b.timeout.count() > 0, "store-b.timeout", "must be positive");
  need(s.store_b.max_concurrent >= 1, "store-b.max-concurrent", "must be at least 1");
  need(s.retry.initial.count() > 0, "retry.initial", "must be positive");
  need(s.retry.max >= s.retry.initial, "retry.max", "must be at least retry.initial");
  need(s.retry.multiplier >= 1.0 && s.retry.multiplier <= 100.0, "retry.multiplier",
       "must be 1..100");
  need(s.retry.max_attempts >= 1, "retry.max-attempts", "must be at least 1");
  need(s.retry.poll_interval.count() > 0, "retry.poll-interval", "must be positive");
  need(s.retry.batch >= 1 && s.retry.batch <= 10000, "retry.batch", "must be 1..10000");
  need(s.retry.lease > s.validator.store_deadline, "retry.lease",
       "must be longer than validator.store-deadline");
  need(s.trace.buffer >= 1, "trace.buffer", "must be at least 1");
  need(!caf::get_if(&content, "scheduler.max-threads") || s.scheduler_threads >= 1,
       "scheduler.max-threads", "must be at least 1");
  return e.str();
}

void receiptd_config::print_help(std::ostream& out) const {
  out << "receiptd: validates and stores in-app purchase receipts.\n\n"
         "usage: receiptd [--config-file=PATH] [--section.option=VALUE …]\n"
         "Every option can be set in the config file (CAF INI: [section] then\n"
         "option=value; strings in double quotes) or on the command line, which wins.\n"
         "Default config file: "
      << default_config_file << " when it exists.\n";
  for (auto category : our_categories) {
    out << "\n[" << category << "]\n";
    for (const auto& opt : custom_options_) {
      if (opt.category() != category)
        continue;
      if (std::string_view(category) == "scheduler" && opt.long_name() != "max-threads")
        continue;
      std::string value;
      if (auto v = opt.get())
        value = caf::to_string(*v);
      out << "  --" << opt.full_name() << "=<" << opt.type_name() << ">"
          << (value.empty() ? "" : " (default " + value + ")") << "\n      "
          << opt.description() << "\n";
    }
  }
}

std::string receiptd_config::load(int argc, char** argv, std::ostream& help_out) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const auto& a : args) {
    if (a == "--help" || a == "-h" || a == "-?") {
      print_help(help_out);
      help_printed = true;
      return {};
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
  if (!file.empty())
    if (auto msg = check_file(file); !msg.empty())
      return msg;
  // CAF takes a boolean on the command line only as a bare flag; "--x=false"
  // is applied here, after CAF has read the file, so the command line wins.
  std::vector<std::string> caf_args;
  std::vector<std::pair<const caf::config_option*, bool>> flags;
  for (const auto& a : args) {
    if (a.rfind("--", 0) != 0)
      return "unexpected argument " + a;
    auto eq = a.find('=');
    auto name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (name == "config-file") {
      caf_args.push_back(a);
      continue;
    }
    auto opt = custom_options_.qualified_name_lookup(name);
    if (!opt || !(ours(opt->category()) || name.rfind("logger.", 0) == 0))
      return "unknown option --" + name;
    if (opt->is_flag() && eq != std::string::npos) {
      auto value = a.substr(eq + 1);
      if (value != "true" && value != "false")
        return "bad value for " + name + ": expected true or false, got " + value;
      flags.emplace_back(opt, value == "true");
      continue;
    }
    if (eq == std::string::npos && !opt->is_flag())
      return "option --" + name + " needs a value (--" + name + "=VALUE)";
    if (eq != std::string::npos) {
      auto value = a.substr(eq + 1);
      auto parsed = opt->parse(value);
      if (!parsed || opt->check(*parsed))
        return "bad value for " + name + " (expected " + str(opt->type_name()) + "): " + value;
    }
    caf_args.push_back(a);
  }
  if (auto err = parse(caf_args, file.empty() ? nullptr : file.c_str()))
    return "bad option: " + caf::to_string(err);
  for (auto [opt, value] : flags)
    opt->store(caf::config_value{value});
  s_.config_file = file;
  s_.http.drain_timeout = ms(drain_timeout_);
  s_.http.header_timeout = ms(header_timeout_);
  s_.http.body_timeout = ms(body_timeout_);
  s_.http.keepalive_timeout = ms(keepalive_timeout_);
  s_.auth.token_cache_ttl = ms(token_cache_ttl_);
  s_.validator.store_deadline = ms(store_deadline_);
  s_.outbound.connect_timeout = ms(connect_timeout_);
  s_.store_a.timeout = ms(store_a_timeout_);
  s_.store_b.timeout = ms(store_b_timeout_);
  s_.store_b.token_refresh_margin = ms(refresh_margin_);
  s_.retry.initial = ms(retry_initial_);
  s_.retry.max = ms(retry_max_);
  s_.retry.poll_interval = ms(poll_interval_);
  s_.retry.lease = ms(lease_);
  s_.scheduler_threads = caf::get_or(content, "scheduler.max-threads", size_t{0});
  return check_ranges();
}

} // namespace receiptd::config

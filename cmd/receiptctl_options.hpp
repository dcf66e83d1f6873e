#pragma once
// receiptctl's own options, each declared once (name, type, default, one-line
// description) in a caf::config_option_set, the way config/options.cpp declares
// receiptd's (STYLE.md §4, §9). The usage text lists them from these declarations.
// Parsing refuses an unknown command (suggesting the nearest one), any other
// option, and any option of another command, before anything else runs. The database options
// (--db.*, --config-file, --trace.*),
// --http.* and --webhooks.* are receiptd's: they are handed on untouched to
// config::receiptd_config.

#include <caf/config_option_set.hpp>

#include <chrono>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"

namespace receiptd::cmd {

class ctl_options {
public:
  ctl_options();
  ctl_options(const ctl_options&) = delete; // the declarations point into this object
  ctl_options& operator=(const ctl_options&) = delete;

  // Reads argv; an error names the offending command or option (exit status 2).
  // Then see `help`, `version` and `words`.
  model::status parse(int argc, char** argv);

  // Whether the option with this long name was on the command line.
  bool given(std::string_view name) const { return given_.count(std::string(name)) > 0; }

  // The whole usage text, its option lines generated from the declarations.
  std::string usage() const;
  // `receiptctl COMMAND --help`: the command's synopsis, what it does, and only
  // the options it takes; for a group word alone ("app"), its commands.
  std::string command_usage() const;

  // The command named by `words` ("app create", "jobs"), empty when none.
  const std::string& command() const { return command_; }
  // Whether it only reads: it never creates a database (cmd/receiptctl.cpp).
  bool reads_only() const;
  // Whether it reads the database at all (trace reads the span file).
  bool uses_database() const { return command_ != "trace"; }

  // The command and its arguments, e.g. {"app", "update", "my-game"}.
  std::vector<std::string> words;
  // argv[0] and receiptd's options, for config::receiptd_config::load.
  std::vector<std::string> receiptd_args;

  // --help or -h: print the usage (of the command given, if any), nothing else.
  bool help = false;
  // --version: print the version, nothing else.
  bool version = false;
  // Every command: JSON instead of text.
  bool json = false;
  // app create, app update (only those given change the app).
  std::string name, bundle_id, package_name, license_key, license_key_file, service_account_file,
    shared_secret;
  bool accept_storekit_test_receipts = false;
  bool acknowledge_purchases = false; // receiptd acknowledges the app's Play purchases
  // Refund requests: model::purchases::refund_preference as text; the app
  // collects its customers' consent; it offers a sample before purchase.
  std::string refund_preference = "none";
  bool refund_consent = false;
  bool sample_content_provided = false;
  std::string transfer_policy = "transfer";
  // App Store Server API credentials.
  std::string app_store_issuer_id, app_store_key_id, app_store_private_key_file;
  bool clear_app_store_credentials = false;
  // Customers: model::customer_lookup_policy and model::customer_id_source, as text.
  std::string customer_lookup = "client", customer_id_from = "none";
  // token issue (token create): model::token_kind, as text.
  std::string token_kind = "client";
  // entitlement set / remove: the offering, and every --pattern given, in order.
  std::string offering;
  std::vector<std::string> patterns;
  // entitlement set: a pattern on, or a bound of, the customer's original
  // application version (StoreKit 2 app transactions).
  std::string original_version, original_version_before;
  // trace (not given: receiptd's trace.file), and how long to wait for its spans.
  std::string trace_file;
  std::chrono::nanoseconds wait = std::chrono::seconds(5);
  // webhook add: the endpoint's URL and the events it wants ("": every one).
  std::string url, events;
  // webhook deliveries: how many, newest event first.
  int limit = 50;
  // app rtdn-url: the push URL's base (default: receiptd's http.public-url), and
  // whether to replace the app's token.
  std::string base_url;
  bool rotate = false;

private:
  model::status store(const caf::config_option& opt, const std::string& arg);

  caf::config_option_set declared_;
  std::set<std::string> given_;
  std::string command_;
  std::string pattern_; // where --pattern is stored; `patterns` keeps every one
};

} // namespace receiptd::cmd

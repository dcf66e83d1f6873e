#include "cmd/receiptctl_options.hpp"

#include <caf/config_option_adder.hpp>
#include <caf/config_value.hpp>

#include <algorithm>
#include <optional>
#include <sstream>
#include <vector>

#include "model/version.hpp"

namespace receiptd::cmd {

namespace {

// Every command: its words, its arguments, what it does, the group (category) of
// the options it takes besides the global ones, and whether it only reads.
struct command_doc {
  const char* name;     // "app create"
  const char* synopsis; // its arguments, as the usage shows them
  const char* summary;
  const char* group; // its options' category, "" when it takes none of its own
  bool reads_only;
  const char* section; // the usage's heading above it
};
constexpr command_doc commands[] = {
  {"app create", "--name=NAME [APP OPTIONS]", "create an app and issue its first token", "app",
   false, "Apps and tokens"},
  {"app update", "APP [APP OPTIONS]", "change an app (APP: its id or name)", "app", false, ""},
  {"app list", "", "list apps", "", true, ""},
  {"app show", "APP", "one app, with its tokens", "", true, ""},
  {"app rtdn-url", "APP [RTDN OPTIONS]",
   "the app's Google Play RTDN push URL (for its Pub/Sub push subscription); makes its "
   "secret token on first use",
   "rtdn", false, ""},
  {"token issue", "APP [--kind=client|server]",
   "a new access token (printed once): client (default) for the app's mobile clients, server "
   "for its own backend",
   "token", false, ""},
  {"token create", "APP [--kind=client|server]", "the same as token issue", "token", false, ""},
  {"token revoke", "TOKEN-OR-ID", "revoke by the token itself or its id", "", false, ""},
  {"token list", "APP", "an app's tokens (ids and kinds, never the tokens)", "", true, ""},
  {"entitlement set",
   "APP ENTITLEMENT --offering=NAME [--pattern=RE ...] [--original-application-version=RE] "
   "[--original-application-version-before=VERSION]",
   "set the offering's product-id patterns (RE2, matched anywhere unless anchored), or what "
   "the original application version of the customer's app transaction must be",
   "entitlement", false, "Entitlements (what a purchase unlocks, by product id)"},
  {"entitlement list", "APP", "the app's entitlements, offerings and patterns", "", true, ""},
  {"entitlement remove", "APP ENTITLEMENT [--offering=NAME]",
   "remove an entitlement, or one of its offerings", "entitlement", false, ""},
  {"record show", "ID", "a stored receipt, transaction, app transaction or purchase order", "",
   true,
   "Records and operations"},
  {"jobs", "", "pending revalidation and upkeep jobs", "", true, ""},
  {"trace", "TRACE-ID [TRACE OPTIONS]",
   "an upload's spans as a timeline (--json: Trace Event JSON for Perfetto or "
   "chrome://tracing); waits for spans still being written",
   "trace", true, ""},
  {"webhook add", "APP --url=URL [--events=LIST]",
   "an endpoint of the app; prints its id and its secret (the secret only now)", "webhook", false,
   "Webhooks (signed event deliveries to an app's backend)"},
  {"webhook list", "[APP]", "endpoints, of one app or all (no secrets)", "", true, ""},
  {"webhook remove", "ID", "remove an endpoint and its pending deliveries", "", false, ""},
  {"webhook redeliver", "EVENT-ID", "send an event to its endpoints again", "", false, ""},
  {"webhook deliveries", "[APP] [--limit=N]", "deliveries, newest event first", "deliveries", true,
   ""},
};

// The words that start a two-word command.
bool is_group_word(std::string_view w) {
  return w == "app" || w == "token" || w == "record" || w == "webhook" || w == "entitlement";
}

const command_doc* find_command(std::string_view name) {
  for (const auto& c : commands)
    if (name == c.name)
      return &c;
  return nullptr;
}

// Levenshtein distance, for "did you mean".
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      auto above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// `unknown command "app creat" (did you mean "app create"?)`.
std::string unknown_command(const std::string& given) {
  const command_doc* nearest = nullptr;
  std::size_t best = 3; // at most two edits away
  for (const auto& c : commands)
    if (auto d = distance(given, c.name); d < best) {
      best = d;
      nearest = &c;
    }
  return "unknown command \"" + given + "\""
    + (nearest ? " (did you mean \"" + std::string(nearest->name) + "\"?)" : std::string())
    + "; receiptctl --help lists the commands";
}

constexpr const char* usage_tail
  = "\nThe database and the span file are receiptd's: receiptctl reads receiptd's config\n"
    "file (--config-file=PATH, e.g. /etc/receiptd/receiptd.ini; default\n"
    "config/receiptd.ini in the working directory) and takes its --db.*, --trace.*,\n"
    "--http.* and --webhooks.* options. Without either, it stops (exit status 2)\n"
    "rather than make a database of its own. Output is text; --json prints JSON.\n";

// "app create", "token issue", "jobs", "trace": the words that name the command.
std::string command_of(const std::vector<std::string>& words) {
  if (words.size() > 1 && is_group_word(words[0]))
    return words[0] + " " + words[1];
  return words.empty() ? std::string() : words[0];
}

model::error refused(std::string message) {
  return {model::errc::invalid_request, std::move(message)};
}

bool is_receiptd_option(const std::string& arg) {
  return arg.rfind("--db.", 0) == 0 || arg.rfind("--trace.", 0) == 0 || arg.rfind("--http.", 0) == 0
    || arg.rfind("--webhooks.", 0) == 0 || arg.rfind("--config-file=", 0) == 0;
}

std::string str(caf::string_view v) {
  return std::string(v.begin(), v.end());
}

// "  --name=<type>   description (default …)", the description from `column` on,
// wrapped before `width`. A flag is off unless given, so its default goes unsaid.
void print_option(std::ostream& out, const caf::config_option& opt) {
  constexpr size_t column = 33, width = 80;
  auto text = str(opt.description());
  if (auto v = opt.get(); v && !opt.is_flag()) {
    auto* s = caf::get_if<std::string>(&*v);
    if (auto value = s ? *s : caf::to_string(*v); !value.empty())
      text += " (default " + value + ")";
  }
  std::string line = "  --" + str(opt.long_name())
    + (opt.is_flag() ? "[=true|false]" : "=<" + str(opt.type_name()) + ">");
  if (line.size() + 1 > column) {
    out << line << "\n";
    line.clear();
  }
  line.resize(column, ' ');
  bool empty = true; // nothing after the column yet
  std::istringstream words(text);
  for (std::string word; words >> word; empty = false) {
    if (!empty && line.size() + 1 + word.size() > width) {
      out << line << "\n";
      line.assign(column, ' ');
      empty = true;
    }
    line += (empty ? "" : " ") + word;
  }
  out << line << "\n";
}

} // namespace

ctl_options::ctl_options() {
  caf::config_option_adder{declared_, "global"}.add(json, "json", "print JSON");
  // "?app": the category is app, the command-line name has none (--bundle-id).
  caf::config_option_adder{declared_, "?app"}
    .add(name, "name", "the app's name (app create needs it)")
    .add(bundle_id, "bundle-id", "Store A bundle id")
    .add(package_name, "package-name", "Store B package name")
    .add(license_key, "license-key", "Play licence key (base64 X.509 SubjectPublicKeyInfo)")
    .add(license_key_file, "license-key-file", "the Play licence key, read from this file")
    .add(service_account_file, "service-account-file",
         "Google service-account JSON for the Play Developer API")
    .add(shared_secret, "shared-secret", "App Store shared secret for verifyReceipt")
    .add(accept_storekit_test_receipts, "accept-storekit-test-receipts",
         "accept Xcode StoreKit test receipts (environment xcode, verified locally only)")
    .add(acknowledge_purchases, "acknowledge-purchases",
         "receiptd acknowledges the app's validated Play purchases (Google refunds one left "
         "unacknowledged for three days); =false leaves it to the app")
    .add(refund_preference, "refund-preference",
         "how the stores' refund requests are answered: decline, grant, grant-prorated, or "
         "none (answer nothing)")
    .add(refund_consent, "refund-consent",
         "the app has its customers' consent to send their consumption data to the store "
         "(Apple takes consumption information only with consent)")
    .add(sample_content_provided, "sample-content-provided",
         "the app offers a free sample, trial or description of the purchase before it is made")
    .add(transfer_policy, "transfer-policy",
         "a re-upload naming another user_identifier: transfer (previous owners are "
         "recorded), keep (409 bound_to_other_user) or reject_after=N")
    .add(app_store_issuer_id, "app-store-issuer-id",
         "App Store Server API: the issuer id of the in-app purchase key (App Store Connect)")
    .add(app_store_key_id, "app-store-key-id", "App Store Server API: the in-app purchase key's id")
    .add(app_store_private_key_file, "app-store-private-key-file",
         "App Store Server API: the in-app purchase key's .p8 file (EC P-256), read and stored")
    .add(clear_app_store_credentials, "clear-app-store-credentials",
         "remove the App Store Server API credentials (issuer id, key id, private key)")
    .add(customer_lookup, "customer-lookup",
         "which tokens may look the app's customers up: client (client and server tokens) "
         "or server-only")
    .add(customer_id_from, "customer-id-from",
         "what else names a customer: none, or app_account_token (StoreKit 2's "
         "appAccountToken, Google Play's obfuscatedExternalAccountId)");
  caf::config_option_adder{declared_, "?token"}.add(
    token_kind, "kind", "client (the app's mobile clients) or server (the app's own backend)");
  caf::config_option_adder{declared_, "?entitlement"}
    .add(offering, "offering", "the offering (entitlement set needs it)")
    .add(pattern_, "pattern",
         "a product-id regular expression (RE2 syntax; matched anywhere unless anchored with "
         "^ and $); repeat it for several")
    .add(original_version, "original-application-version",
         "an RE2 pattern on the original application version of the customer's StoreKit 2 "
         "app transaction (AppTransaction.originalAppVersion)")
    .add(original_version_before, "original-application-version-before",
         "grant to customers whose app transaction's original application version comes "
         "before this one (dotted numbers compared numerically: 1.9 < 1.10 < 2)");
  caf::config_option_adder{declared_, "?trace"}
    .add(trace_file, "trace-file", "the span file to read (default: receiptd's trace.file)")
    .add(wait, "wait",
         "how long to wait for the trace's spans to be written (receiptd writes them about "
         "once a second); 0s: read the file once");
  caf::config_option_adder{declared_, "?webhook"}
    .add(url, "url",
         "where events are POSTed: https, or http to a loopback host (any http with "
         "receiptd's webhooks.allow-http=true)")
    .add(events, "events",
         "the events it receives, comma-separated (receipt.created, receipt.updated, "
         "purchase_order.created, purchase_order.updated, transaction.created, "
         "transaction.updated); default every event");
  caf::config_option_adder{declared_, "?rtdn"}
    .add(base_url, "base-url",
         "where the stores reach receiptd (default: receiptd's http.public-url, else "
         "http://<http.address>:<http.port>)")
    .add(rotate, "rotate", "make a new token: the old URL stops working");
  caf::config_option_adder{declared_, "?deliveries"}.add(limit, "limit",
                                                         "how many deliveries to list (1-10000)");
}

model::status ctl_options::parse(int argc, char** argv) {
  receiptd_args = {argv[0]};
  std::optional<model::error> bad_option; // reported once the command is known
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help = true;
      continue;
    }
    if (arg == "--version") {
      version = true;
      return model::done{};
    }
    if (is_receiptd_option(arg)) {
      receiptd_args.push_back(arg);
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      words.push_back(arg);
      continue;
    }
    if (bad_option)
      continue;
    auto eq = arg.find('=');
    auto name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    // Flat names only: "--app.name" is not an option of receiptctl.
    auto* opt
      = name.find('.') == std::string::npos ? declared_.cli_long_name_lookup(name) : nullptr;
    if (!opt) {
      bad_option = refused("unknown option --" + name + " (see receiptctl --help)");
      continue;
    }
    if (auto stored = store(*opt, arg); !stored) {
      bad_option = stored.err();
      continue;
    }
    if (name == "pattern") // repeatable: every one is kept
      patterns.push_back(pattern_);
    given_.insert(name);
  }
  if (words.empty())
    return bad_option && !help ? model::status(*bad_option) : model::done{};
  // A misspelled command first: its options cannot be judged.
  auto named = command_of(words);
  if (find_command(named)) {
    command_ = named;
  } else if (words.size() == 1 && is_group_word(words[0])) {
    if (!help) { // "app --help" lists the app commands
      std::string list;
      for (const auto& c : commands)
        if (std::string_view(c.name).starts_with(words[0] + " "))
          list += (list.empty() ? "" : ", ") + std::string(c.name);
      return refused("\"" + words[0] + "\" needs a command: " + list);
    }
  } else {
    return refused(unknown_command(named));
  }
  if (help)
    return model::done{};
  if (bad_option)
    return *bad_option;
  // Each option must belong to the command used.
  std::string group = find_command(command_)->group;
  for (const auto& name : given_) {
    auto category = declared_.cli_long_name_lookup(name)->category();
    if (category != "global" && category != group)
      return refused("option --" + name + " does not apply to " + command_ + " (see receiptctl "
                     + command_ + " --help)");
  }
  return model::done{};
}

bool ctl_options::reads_only() const {
  auto* c = find_command(command_);
  return c && c->reads_only;
}

// "--flag", "--flag=true|false", "--name=VALUE". A string is taken as typed: CAF's
// parser would unquote a value that starts with a double quote.
model::status ctl_options::store(const caf::config_option& opt, const std::string& arg) {
  auto eq = arg.find('=');
  auto option = arg.substr(0, eq);
  if (eq == std::string::npos) {
    if (!opt.is_flag())
      return refused("option " + option + " needs a value (" + option + "=VALUE)");
    opt.store(caf::config_value{true});
    return model::done{};
  }
  auto value = arg.substr(eq + 1);
  if (opt.is_flag()) {
    if (value != "true" && value != "false")
      return refused(option + " takes true or false, not \"" + value + "\"");
    opt.store(caf::config_value{value == "true"});
  } else if (opt.type_name() == "string") {
    opt.store(caf::config_value{value});
  } else if (auto parsed = opt.parse(value); parsed && !opt.check(*parsed)) {
    opt.store(*parsed);
  } else {
    return refused("bad value for " + option + " (expected " + str(opt.type_name())
                   + "): " + value);
  }
  return model::done{};
}

namespace {

constexpr const char* options_heading(std::string_view group) {
  if (group == "app")
    return "APP OPTIONS";
  if (group == "rtdn")
    return "RTDN OPTIONS";
  if (group == "token")
    return "TOKEN ISSUE OPTIONS";
  if (group == "entitlement")
    return "ENTITLEMENT OPTIONS";
  if (group == "trace")
    return "TRACE OPTIONS";
  if (group == "webhook")
    return "WEBHOOK ADD OPTIONS";
  return "WEBHOOK DELIVERIES OPTIONS";
}

// "  app create --name=NAME [APP OPTIONS]   create an app…", wrapped at 80 columns.
void print_command(std::ostream& out, const command_doc& c) {
  constexpr std::size_t column = 41, width = 80;
  std::string line = "  " + std::string(c.name) + (*c.synopsis ? " " : "") + c.synopsis;
  if (line.size() + 1 > column) {
    out << line << "\n";
    line.clear();
  }
  line.resize(column, ' ');
  bool empty = true;
  std::istringstream words(c.summary);
  for (std::string word; words >> word; empty = false) {
    if (!empty && line.size() + 1 + word.size() > width) {
      out << line << "\n";
      line.assign(column, ' ');
      empty = true;
    }
    line += (empty ? "" : " ") + word;
  }
  out << line << "\n";
}

} // namespace

std::string ctl_options::usage() const {
  std::ostringstream out;
  out << "receiptctl " << model::version << ": receiptd's operator tool.\n\n"
      << "usage: receiptctl [--config-file=PATH | --db.url=URL] [--json] COMMAND [ARGS]\n"
      << "       receiptctl COMMAND --help | --help | --version\n";
  for (const auto& c : commands) {
    if (*c.section)
      out << "\n" << c.section << ":\n";
    print_command(out, c);
  }
  out << "\n";
  auto section = [&](const std::string& category, const std::string& title) {
    out << title << ":\n";
    for (const auto& opt : declared_)
      if (str(opt.category()) == category)
        print_option(out, opt);
  };
  for (const char* group : {"app", "rtdn", "token", "entitlement", "trace", "webhook", "deliveries"})
    section(group, options_heading(group));
  section("global", "Every command");
  out << "  --help                         this text (after a command: that command's)\n";
  out << "  --version                      receiptctl's version\n";
  out << usage_tail;
  return out.str();
}

std::string ctl_options::command_usage() const {
  std::ostringstream out;
  if (command_.empty()) { // a group word alone: its commands
    out << "receiptctl " << words[0] << " commands:\n";
    for (const auto& c : commands)
      if (std::string_view(c.name).starts_with(words[0] + " "))
        print_command(out, c);
    out << "\nreceiptctl " << words[0] << " COMMAND --help says more about one.\n";
    return out.str();
  }
  const auto& c = *find_command(command_);
  out << "usage: receiptctl [--config-file=PATH | --db.url=URL] [--json] " << c.name
      << (*c.synopsis ? " " : "") << c.synopsis << "\n\n"
      << c.summary << (c.reads_only ? " (reads only)" : "") << "\n\n";
  auto section = [&](const std::string& category, const std::string& title) {
    out << title << ":\n";
    for (const auto& opt : declared_)
      if (str(opt.category()) == category)
        print_option(out, opt);
    out << "\n";
  };
  if (*c.group)
    section(c.group, options_heading(c.group));
  section("global", "Every command");
  out << usage_tail + 1; // its leading blank line is there already
  return out.str();
}

} // namespace receiptd::cmd

#include "cmd/receiptctl_options.hpp"

#include <caf/config_option_adder.hpp>
#include <caf/config_value.hpp>

#include <sstream>

namespace receiptd::cmd {

namespace {

// The commands that take options of their own, and the group (category) they take;
// every command takes the "global" ones.
struct command_group {
  const char* command;
  const char* group;
};
constexpr command_group commands_with_options[]
  = {{"app create", "app"}, {"app update", "app"},      {"app rtdn-url", "rtdn"},
     {"trace", "trace"},    {"webhook add", "webhook"}, {"webhook deliveries", "deliveries"}};

constexpr const char* usage_head
  = R"(usage: receiptctl [--db.url=URL | --config-file=PATH] [--json] COMMAND

Apps and tokens:
  app create --name=NAME [APP OPTIONS]   create an app and issue its first token
  app update APP [APP OPTIONS]           change an app (APP: its id or name)
  app list                               list apps
  app show APP                           one app, with its tokens
  app rtdn-url APP [RTDN OPTIONS]        the app's Google Play RTDN push URL (for its
                                         Pub/Sub push subscription); makes its secret
                                         token on first use
  token issue APP                        a new access token (printed once)
  token revoke TOKEN-OR-ID               revoke by the token itself or its id
  token list APP                         an app's tokens (ids, never the tokens)
Records and operations:
  record show ID                         a stored receipt or purchase order
  jobs                                   pending revalidation jobs
  trace TRACE-ID [TRACE OPTIONS]         an upload's spans as Trace Event JSON
                                         (open in Perfetto or chrome://tracing)
Webhooks (signed event deliveries to an app's backend):
  webhook add APP --url=URL [--events=LIST]
                                         an endpoint of the app; prints its id and
                                         its secret (the secret only now)
  webhook list [APP]                     endpoints, of one app or all (no secrets)
  webhook remove ID                      remove an endpoint and its pending deliveries
  webhook redeliver EVENT-ID             send an event to its endpoints again
  webhook deliveries [APP] [--limit=N]   deliveries, newest event first
)";

constexpr const char* usage_tail
  = "Database: the options and config file of receiptd (default config/receiptd.ini);\n"
    "webhook add also reads receiptd's webhooks.allow-http there.\n";

// "app create", "token issue", "jobs", "trace": what names the command in messages.
std::string command_of(const std::vector<std::string>& words) {
  if (words.size() > 1
      && (words[0] == "app" || words[0] == "token" || words[0] == "record"
          || words[0] == "webhook"))
    return words[0] + " " + words[1];
  return words.empty() ? std::string() : words[0];
}

std::string group_of(const std::string& command) {
  for (const auto& c : commands_with_options)
    if (command == c.command)
      return c.group;
  return {};
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
    .add(transfer_policy, "transfer-policy",
         "a re-upload naming another user_identifier: transfer (previous owners are "
         "recorded), keep (409 bound_to_other_user) or reject_after=N")
    .add(app_store_issuer_id, "app-store-issuer-id",
         "App Store Server API: the issuer id of the in-app purchase key (App Store Connect)")
    .add(app_store_key_id, "app-store-key-id", "App Store Server API: the in-app purchase key's id")
    .add(app_store_private_key_file, "app-store-private-key-file",
         "App Store Server API: the in-app purchase key's .p8 file (EC P-256), read and stored")
    .add(clear_app_store_credentials, "clear-app-store-credentials",
         "remove the App Store Server API credentials (issuer id, key id, private key)");
  caf::config_option_adder{declared_, "?trace"}.add(
    trace_file, "trace-file", "the span file to read (default: receiptd's trace.file)");
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
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help = true;
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
    auto eq = arg.find('=');
    auto name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    // Flat names only: "--app.name" is not an option of receiptctl.
    auto* opt
      = name.find('.') == std::string::npos ? declared_.cli_long_name_lookup(name) : nullptr;
    if (!opt)
      return refused("unknown option --" + name + " (see receiptctl --help)");
    if (auto stored = store(*opt, arg); !stored)
      return stored;
    given_.insert(name);
  }
  // Each option must belong to the command used (checked once the command is known).
  if (words.empty())
    return model::done{}; // the caller prints the usage
  auto command = command_of(words);
  auto group = group_of(command);
  for (const auto& name : given_) {
    auto category = declared_.cli_long_name_lookup(name)->category();
    if (category != "global" && category != group)
      return refused("option --" + name + " does not apply to " + command
                     + " (see receiptctl --help)");
  }
  return model::done{};
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

std::string ctl_options::usage() const {
  std::ostringstream out;
  out << usage_head;
  auto section = [&](caf::string_view category, const std::string& title) {
    out << title << ":\n";
    for (const auto& opt : declared_)
      if (opt.category() == category)
        print_option(out, opt);
  };
  section("app", "APP OPTIONS");
  section("rtdn", "RTDN OPTIONS");
  section("trace", "TRACE OPTIONS");
  section("webhook", "WEBHOOK ADD OPTIONS");
  section("deliveries", "WEBHOOK DELIVERIES OPTIONS");
  section("global", "Every command");
  out << "  --help                         this text\n";
  out << usage_tail;
  return out.str();
}

} // namespace receiptd::cmd

// receiptctl: the operator's tool. Creates and lists apps, sets their store
// credentials, issues and revokes access tokens (printed once, stored as a
// SHA-256 hash), shows records, jobs and an upload's trace. Same database
// options as receiptd (--db.url, --config-file).

#include <boost/json.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <optional>
#include <sstream>

#include "cmd/startup.hpp"
#include "config/options.hpp"
#include "model/access_token.hpp"
#include "model/resource_json.hpp"
#include "model/store_b/licence_key.hpp"
#include "model/store_b/service_account.hpp"

using namespace receiptd;
namespace json = boost::json;

namespace {

constexpr const char* usage = R"(usage: receiptctl [--db.url=URL | --config-file=PATH] [--json] COMMAND

Apps and tokens:
  app create --name=NAME [APP OPTIONS]   create an app and issue its first token
  app update APP [APP OPTIONS]           change an app (APP: its id or name)
  app list                               list apps
  app show APP                           one app, with its tokens
  token issue APP                        a new access token (printed once)
  token revoke TOKEN-OR-ID               revoke by the token itself or its id
  token list APP                         an app's tokens (ids, never the tokens)
Records and operations:
  record show ID                         a stored receipt or purchase order
  jobs                                   pending revalidation jobs
  trace TRACE-ID [--trace-file=PATH]     an upload's spans as Trace Event JSON
                                         (open in Perfetto or chrome://tracing)
APP OPTIONS:
  --bundle-id=ID                 Store A bundle id
  --package-name=NAME            Store B package name
  --license-key=BASE64           Play licence key (base64 X.509 SubjectPublicKeyInfo)
  --license-key-file=PATH        … read from a file
  --service-account-file=PATH    Google service-account JSON for the Play Developer API
  --shared-secret=SECRET         App Store shared secret for verifyReceipt
  --accept-storekit-test-receipts[=true|false]
                                 accept Xcode StoreKit test receipts (environment
                                 xcode, verified locally only; default false)
  --transfer-policy=POLICY       a re-upload naming another user_identifier:
                                 transfer (default; previous owners are recorded),
                                 keep (409 bound_to_other_user), reject_after=N
Database: the options and config file of receiptd (default config/receiptd.ini).
)";

struct args {
  std::vector<std::string> words;
  std::map<std::string, std::string> opts;
  bool json = false;
};

int fail(const std::string& message, int code = 1) {
  std::cerr << "receiptctl: " << message << "\n";
  return code;
}

std::string read_file(const std::string& path, bool& ok) {
  std::ifstream in(path);
  ok = static_cast<bool>(in);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

json::object app_json(const model::app& a) {
  return {{"id", a.id},
          {"name", a.name},
          {"bundle_id", a.bundle_id},
          {"package_name", a.package_name},
          {"store_a_shared_secret_set", !a.store_a_shared_secret.empty()},
          {"store_b_license_key_set", !a.store_b_public_key.empty()},
          {"store_b_service_account_set", !a.store_b_service_account.empty()},
          {"accept_storekit_test_receipts", a.accept_storekit_test_receipts},
          {"transfer_policy", model::to_string(a.transfers)}};
}

// The options receiptctl knows besides the database ones; any other is refused
// (a misspelled option must not be ignored silently).
const std::set<std::string>& known_options() {
  static const std::set<std::string> names{
    "name",          "bundle-id",          "package-name",
    "license-key",   "license-key-file",   "service-account-file",
    "shared-secret", "accept-storekit-test-receipts", "transfer-policy",
    "trace-file"};
  return names;
}

// Options that may be given without a value (meaning true).
bool is_flag(const std::string& name) { return name == "accept-storekit-test-receipts"; }

json::object token_json(const db::token_info& t) {
  json::object o{{"id", t.id}, {"app_id", t.app_id}, {"created_at", model::timestamp_json(t.created_at)}};
  o["revoked_at"] = model::timestamp_json(t.revoked_at);
  return o;
}

// An app's tokens (ids and dates, never the tokens themselves).
std::optional<json::array> tokens_json(db::database& db, const std::string& app_id,
                                       std::string& problem) {
  auto tokens = db.list_tokens(app_id);
  if (!tokens) {
    problem = tokens.err().message;
    return std::nullopt;
  }
  json::array list;
  for (const auto& t : *tokens)
    list.push_back(token_json(t));
  return list;
}

void print(const args& a, const json::value& v, const std::string& human) {
  if (a.json)
    std::cout << json::serialize(v) << "\n";
  else
    std::cout << human;
}

// Applies the APP OPTIONS to `app`, checking each credential before it is stored.
std::string apply_app_options(const args& a, model::app& app) {
  auto opt = [&](const char* k) -> const std::string* {
    auto it = a.opts.find(k);
    return it == a.opts.end() ? nullptr : &it->second;
  };
  if (auto v = opt("name"))
    app.name = *v;
  if (auto v = opt("bundle-id"))
    app.bundle_id = *v;
  if (auto v = opt("package-name"))
    app.package_name = *v;
  if (auto v = opt("shared-secret"))
    app.store_a_shared_secret = *v;
  if (auto v = opt("accept-storekit-test-receipts")) {
    if (*v != "true" && *v != "false")
      return "--accept-storekit-test-receipts takes true or false, not \"" + *v + "\"";
    app.accept_storekit_test_receipts = *v == "true";
  }
  if (auto v = opt("transfer-policy")) {
    auto policy = model::parse_transfer_policy(*v);
    if (!policy)
      return "--transfer-policy takes transfer, keep or reject_after=N, not \"" + *v + "\"";
    app.transfers = *policy;
  }
  std::string key;
  bool ok = true;
  if (auto v = opt("license-key"))
    key = *v;
  if (auto v = opt("license-key-file"))
    key = read_file(*v, ok);
  if (!ok)
    return "cannot read " + a.opts.at("license-key-file");
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' '))
    key.pop_back();
  if (!key.empty()) {
    if (auto parsed = model::store_b::licence_key::parse(key); !parsed)
      return "the licence key is unusable: " + parsed.errors().front().message;
    app.store_b_public_key = key;
  }
  if (auto v = opt("service-account-file")) {
    auto text = read_file(*v, ok);
    if (!ok)
      return "cannot read " + *v;
    if (auto parsed = model::store_b::service_account::parse(text); !parsed)
      return "the service account is unusable: " + parsed.errors().front().message;
    app.store_b_service_account = text;
  }
  return {};
}

std::optional<model::app> find_app(db::database& db, const std::string& key, std::string& problem) {
  auto found = db.find_app(key);
  if (!found) {
    problem = found.err().message;
    return std::nullopt;
  }
  if (!*found)
    problem = "no app with id or name " + key;
  return *found;
}

int issue_token(const args& a, db::database& db, const model::app& app) {
  auto token = model::make_access_token();
  auto info = db.add_token(app.id, model::access_token_hash(token), cmd::now_ms());
  if (!info)
    return fail(info.err().message);
  auto o = token_json(*info);
  o["token"] = token;
  print(a, o,
        "Access token for app " + app.name + " (token id " + info->id
          + "), shown only now:\n\n  " + token + "\n\n");
  return 0;
}

int app_command(const args& a, db::database& db) {
  auto sub = a.words.size() > 1 ? a.words[1] : "";
  std::string problem;
  if (sub == "create") {
    if (!a.opts.count("name"))
      return fail("app create needs --name=NAME", 2);
    model::app app;
    if (auto err = apply_app_options(a, app); !err.empty())
      return fail(err, 2);
    auto created = db.create_app(app);
    if (!created)
      return fail(created.err().message);
    auto token = model::make_access_token();
    auto info = db.add_token(created->id, model::access_token_hash(token), cmd::now_ms());
    if (!info)
      return fail(info.err().message);
    auto o = app_json(*created);
    o["token"] = token;
    o["token_id"] = info->id;
    print(a, o,
          "Created app " + created->name + " (id " + created->id
            + ").\nIts access token, shown only now:\n\n  " + token + "\n\n");
    return 0;
  }
  if (sub == "update" && a.words.size() > 2) {
    auto app = find_app(db, a.words[2], problem);
    if (!app)
      return fail(problem);
    if (auto err = apply_app_options(a, *app); !err.empty())
      return fail(err, 2);
    auto updated = db.update_app(*app);
    if (!updated)
      return fail(updated.err().message);
    print(a, app_json(*app), "Updated app " + app->name + " (id " + app->id + ").\n");
    return 0;
  }
  if (sub == "list") {
    auto apps = db.list_apps();
    if (!apps)
      return fail(apps.err().message);
    json::array list;
    std::string human;
    for (const auto& app : *apps) {
      list.push_back(app_json(app));
      human += app.id + "  " + app.name + "  bundle=" + app.bundle_id + "  package="
               + app.package_name + "\n";
    }
    print(a, list, human.empty() ? "No apps yet.\n" : human);
    return 0;
  }
  if (sub == "show" && a.words.size() > 2) {
    auto app = find_app(db, a.words[2], problem);
    if (!app)
      return fail(problem);
    auto tokens = tokens_json(db, app->id, problem);
    if (!tokens)
      return fail(problem);
    auto o = app_json(*app);
    o["tokens"] = std::move(*tokens);
    print(a, o, json::serialize(o) + "\n");
    return 0;
  }
  return fail(std::string("unknown app command\n") + usage, 2);
}

int token_command(const args& a, db::database& db) {
  auto sub = a.words.size() > 1 ? a.words[1] : "";
  std::string problem;
  if (sub == "issue" && a.words.size() > 2) {
    auto app = find_app(db, a.words[2], problem);
    if (!app)
      return fail(problem);
    return issue_token(a, db, *app);
  }
  if (sub == "revoke" && a.words.size() > 2) {
    const auto& key = a.words[2];
    // A token is revoked by its hash (the token itself) or by its id.
    auto by_hash = db.revoke_token(model::access_token_hash(key), cmd::now_ms());
    if (!by_hash)
      return fail(by_hash.err().message);
    bool revoked = *by_hash;
    if (!revoked) {
      auto by_id = db.revoke_token(key, cmd::now_ms());
      if (!by_id)
        return fail(by_id.err().message);
      revoked = *by_id;
    }
    if (!revoked)
      return fail("no active token matches " + key);
    print(a, json::object{{"revoked", true}}, "Revoked.\n");
    return 0;
  }
  if (sub == "list" && a.words.size() > 2) {
    auto app = find_app(db, a.words[2], problem);
    if (!app)
      return fail(problem);
    auto tokens = tokens_json(db, app->id, problem);
    if (!tokens)
      return fail(problem);
    print(a, *tokens, json::serialize(*tokens) + "\n");
    return 0;
  }
  return fail(std::string("unknown token command\n") + usage, 2);
}

int record_command(const args& a, db::database& db) {
  if (a.words.size() < 3 || a.words[1] != "show")
    return fail(std::string("usage: record show ID\n"), 2);
  const auto& id = a.words[2];
  auto po = db.find_purchase_order(id);
  if (!po)
    return fail(po.err().message);
  if (*po) {
    auto o = model::purchase_order_json(**po);
    o["kind"] = "store_b_purchase_order";
    o["store_detail"] = (*po)->store_detail;
    std::cout << json::serialize(o) << "\n";
    return 0;
  }
  auto r = db.find_receipt(id);
  if (!r)
    return fail(r.err().message);
  if (*r) {
    auto o = model::receipt_json(**r);
    o["kind"] = "store_a_receipt";
    o["store_detail"] = (*r)->store_detail;
    std::cout << json::serialize(o) << "\n";
    return 0;
  }
  return fail("no record with id " + id);
}

int jobs_command(const args& a, db::database& db) {
  auto jobs = db.list_jobs();
  if (!jobs)
    return fail(jobs.err().message);
  json::array list;
  for (const auto& j : *jobs)
    list.push_back(json::object{{"id", j.id},
                                {"kind", model::to_string(j.kind)},
                                {"record_id", j.record_id},
                                {"app_id", j.app_id},
                                {"attempts", j.attempts},
                                {"next_attempt_at", model::timestamp_json(j.next_attempt_at)},
                                {"last_error", j.last_error}});
  std::cout << json::serialize(list) << "\n";
  return 0;
}

// Span lines → Trace Event Format ("X" complete events, µs), one lane per actor.
int trace_command(const args& a, const std::string& trace_file) {
  if (a.words.size() < 2)
    return fail("usage: trace TRACE-ID [--trace-file=PATH]", 2);
  const auto& wanted = a.words[1];
  std::ifstream in(trace_file);
  if (!in)
    return fail("cannot read the trace file " + trace_file);
  std::map<std::string, int> lanes;
  json::array events;
  std::string line;
  while (std::getline(in, line)) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec || !v.is_object())
      continue;
    auto& o = v.get_object();
    auto* id = o.if_contains("trace_id");
    if (!id || !id->is_string() || id->get_string() != wanted)
      continue;
    std::string actor(o["actor"].as_string());
    auto lane = lanes.emplace(actor, static_cast<int>(lanes.size()) + 1).first->second;
    events.push_back(json::object{
      {"name", actor + ": " + std::string(o["message"].as_string())},
      {"cat", "receiptd"},
      {"ph", "X"},
      {"ts", o["start_us"]},
      {"dur", o["duration_us"]},
      {"pid", 1},
      {"tid", lane},
      {"args", json::object{{"outcome", o["outcome"]},
                            {"span_id", o["span_id"]},
                            {"parent_id", o["parent_id"]}}}});
  }
  if (events.empty())
    return fail("no spans of trace " + wanted + " in " + trace_file);
  json::array names;
  for (const auto& [actor, lane] : lanes)
    names.push_back(json::object{{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", lane},
                                 {"args", json::object{{"name", actor}}}});
  for (auto& n : names)
    events.push_back(n);
  std::cout << json::serialize(json::object{{"traceEvents", events},
                                            {"displayTimeUnit", "ms"}})
            << "\n";
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  args a;
  std::vector<std::string> config_args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return 0;
    }
    if (arg == "--json") {
      a.json = true;
    } else if (arg.rfind("--db.", 0) == 0 || arg.rfind("--config-file=", 0) == 0
               || arg.rfind("--trace.", 0) == 0) {
      config_args.push_back(arg);
    } else if (arg.rfind("--", 0) == 0) {
      auto eq = arg.find('=');
      auto name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (!known_options().count(name))
        return fail("unknown option --" + name + " (see receiptctl --help)", 2);
      if (eq == std::string::npos && !is_flag(name))
        return fail("option " + arg + " needs a value (" + arg + "=VALUE)", 2);
      a.opts[name] = eq == std::string::npos ? "true" : arg.substr(eq + 1);
    } else {
      a.words.push_back(arg);
    }
  }
  if (a.words.empty()) {
    std::cerr << usage;
    return 2;
  }
  config::receiptd_config cfg;
  std::vector<char*> cargv;
  for (auto& s : config_args)
    cargv.push_back(s.data());
  if (auto problem = cfg.load(static_cast<int>(cargv.size()), cargv.data(), std::cerr);
      !problem.empty())
    return fail(problem, 2);
  const auto& s = cfg.values();
  if (a.words[0] == "trace") {
    auto it = a.opts.find("trace-file");
    return trace_command(a, it != a.opts.end() ? it->second : s.trace.file);
  }
  auto db = cmd::open_database(s.db.url, "receiptctl");
  if (!db)
    return 1;
  if (a.words[0] == "app")
    return app_command(a, *db);
  if (a.words[0] == "token")
    return token_command(a, *db);
  if (a.words[0] == "record")
    return record_command(a, *db);
  if (a.words[0] == "jobs")
    return jobs_command(a, *db);
  return fail("unknown command " + a.words[0] + "\n" + usage, 2);
}

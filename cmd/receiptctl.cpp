// receiptctl: the operator's tool. Creates and lists apps, sets their store
// credentials, issues and revokes access tokens (printed once, stored as a
// SHA-256 hash), shows records, jobs and an upload's trace, manages webhook
// endpoints (the secret is printed once), prints an app's Google Play
// RTDN push URL. Same database options as receiptd (--db.url, --config-file).

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "cmd/receiptctl_options.hpp"
#include "cmd/startup.hpp"
#include "config/options.hpp"
#include "model/access_token.hpp"
#include "model/encoding.hpp"
#include "model/resource_json.hpp"
#include "model/store_a/server_api.hpp"
#include "model/store_b/licence_key.hpp"
#include "model/store_b/service_account.hpp"
#include "model/webhooks.hpp"

using namespace receiptd;
namespace json = boost::json;

namespace {

// The command line: the command words and the options given (cmd/receiptctl_options.hpp).
using args = cmd::ctl_options;

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
          {"app_store_issuer_id", a.app_store_issuer_id},
          {"app_store_key_id", a.app_store_key_id},
          {"app_store_private_key_set", !a.app_store_private_key.empty()},
          {"accept_storekit_test_receipts", a.accept_storekit_test_receipts},
          {"transfer_policy", model::to_string(a.transfers)},
          {"rtdn_token_set", !a.rtdn_token.empty()},
          {"acknowledge_purchases", a.acknowledge_purchases}};
}

json::object token_json(const db::token_info& t) {
  json::object o{
    {"id", t.id}, {"app_id", t.app_id}, {"created_at", model::timestamp_json(t.created_at)}};
  o["revoked_at"] = model::timestamp_json(t.revoked_at);
  return o;
}

// An app's tokens (ids and dates, never the tokens themselves).
std::optional<json::array> tokens_json(db::database& db, const std::string& app_id,
                                       std::string& problem) {
  auto tokens = db.list_tokens(app_id);
  if (!tokens) {
    problem = tokens.err().message();
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

// The App Store Server API credentials: --clear-app-store-credentials removes
// them; otherwise the ones given, merged with what the app has, must parse as a
// whole (server_api_key::parse) before any is stored. An error names the option.
std::string apply_app_store_credentials(const args& a, model::app& app) {
  const std::string key_file_option = "--app-store-private-key-file";
  bool any = a.given("app-store-issuer-id") || a.given("app-store-key-id")
    || a.given("app-store-private-key-file");
  if (a.clear_app_store_credentials) {
    if (any)
      return "--clear-app-store-credentials cannot be combined with --app-store-* options";
    app.app_store_issuer_id.clear();
    app.app_store_key_id.clear();
    app.app_store_private_key.clear();
    return {};
  }
  if (!any)
    return {};
  auto issuer = a.given("app-store-issuer-id") ? a.app_store_issuer_id : app.app_store_issuer_id;
  auto key_id = a.given("app-store-key-id") ? a.app_store_key_id : app.app_store_key_id;
  auto pem = app.app_store_private_key;
  if (a.given("app-store-private-key-file")) {
    // A .p8 file is about 250 bytes; anything much larger is not one.
    constexpr std::uintmax_t max_key_file = 16 * 1024;
    std::error_code ec;
    auto size = std::filesystem::file_size(a.app_store_private_key_file, ec);
    if (ec)
      return key_file_option + ": cannot read " + a.app_store_private_key_file;
    if (size > max_key_file)
      return key_file_option + ": " + a.app_store_private_key_file
        + " is larger than 16 KiB, not a .p8 key file";
    bool ok = true;
    pem = read_file(a.app_store_private_key_file, ok);
    if (!ok)
      return key_file_option + ": cannot read " + a.app_store_private_key_file;
  }
  auto parsed = model::store_a::server_api_key::parse(issuer, key_id, pem);
  if (parsed) {
    app.app_store_issuer_id = issuer;
    app.app_store_key_id = key_id;
    app.app_store_private_key = pem;
    return {};
  }
  // The first field error, named by the option that sets that field.
  const auto& e = parsed.errors().front();
  struct field_option {
    const char* field;
    const char* option;
  };
  static constexpr field_option options[]
    = {{"app_store_issuer_id", "app-store-issuer-id"},
       {"app_store_key_id", "app-store-key-id"},
       {"app_store_private_key", "app-store-private-key-file"}};
  for (const auto& o : options) {
    if (e.field != o.field)
      continue;
    if (e.code == "missing" && !a.given(o.option))
      return std::string("--") + o.option + " is needed too: the App Store Server API takes the "
        + "issuer id, the key id and the private key together (the app has no " + e.field + ")";
    return std::string("--") + o.option
      + ": unusable App Store Server API credential: " + e.message;
  }
  return "unusable App Store Server API credentials: " + e.message;
}

// Applies the APP OPTIONS given to `app`, checking each credential before it is stored.
std::string apply_app_options(const args& a, model::app& app) {
  if (a.given("name"))
    app.name = a.name;
  if (a.given("bundle-id"))
    app.bundle_id = a.bundle_id;
  if (a.given("package-name"))
    app.package_name = a.package_name;
  if (a.given("shared-secret"))
    app.store_a_shared_secret = a.shared_secret;
  if (a.given("accept-storekit-test-receipts"))
    app.accept_storekit_test_receipts = a.accept_storekit_test_receipts;
  if (a.given("acknowledge-purchases"))
    app.acknowledge_purchases = a.acknowledge_purchases;
  if (a.given("transfer-policy")) {
    auto policy = model::parse_transfer_policy(a.transfer_policy);
    if (!policy)
      return "--transfer-policy takes transfer, keep or reject_after=N, not \"" + a.transfer_policy
        + "\"";
    app.transfers = *policy;
  }
  std::string key;
  bool ok = true;
  if (a.given("license-key"))
    key = a.license_key;
  if (a.given("license-key-file"))
    key = read_file(a.license_key_file, ok);
  if (!ok)
    return "cannot read " + a.license_key_file;
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' '))
    key.pop_back();
  if (!key.empty()) {
    if (auto parsed = model::store_b::licence_key::parse(key); !parsed)
      return "the licence key is unusable: " + parsed.errors().front().message;
    app.store_b_public_key = key;
  }
  if (a.given("service-account-file")) {
    auto text = read_file(a.service_account_file, ok);
    if (!ok)
      return "cannot read " + a.service_account_file;
    if (auto parsed = model::store_b::service_account::parse(text); !parsed)
      return "the service account is unusable: " + parsed.errors().front().message;
    app.store_b_service_account = text;
  }
  return apply_app_store_credentials(a, app);
}

std::optional<model::app> find_app(db::database& db, const std::string& key, std::string& problem) {
  auto found = db.find_app(key);
  if (!found) {
    problem = found.err().message();
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
    return fail(info.err().message());
  auto o = token_json(*info);
  o["token"] = token;
  print(a, o,
        "Access token for app " + app.name + " (token id " + info->id + "), shown only now:\n\n  "
          + token + "\n\n");
  return 0;
}

// ---- Google Play RTDN ---------------------------------------------------

// receiptd's address as the stores reach it: http.public-url, else its listening
// address and port (an IPv6 address in brackets).
std::string default_base_url(const config::http_settings& http) {
  if (!http.public_url.empty())
    return http.public_url;
  auto host = http.address.find(':') != std::string::npos ? "[" + http.address + "]" : http.address;
  return "http://" + host + ":" + std::to_string(http.port);
}

// `app rtdn-url APP`: the URL to paste into the app's Pub/Sub push subscription.
// The token is the app's secret (32 CSPRNG bytes, hex), made on first use or on
// --rotate; a rotation bumps the auth revision, so receiptd refuses the old one
// within auth.revocation-check.
int app_rtdn_url(const args& a, db::database& db, const config::http_settings& http) {
  if (a.words.size() != 3)
    return fail("usage: app rtdn-url APP [--base-url=URL] [--rotate]", 2);
  auto base = a.given("base-url") ? a.base_url : default_base_url(http);
  if (base.rfind("https://", 0) != 0 && base.rfind("http://", 0) != 0)
    return fail("--base-url: must be an http(s) URL, not \"" + base + "\"", 2);
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  std::string problem;
  auto app = find_app(db, a.words[2], problem);
  if (!app)
    return fail(problem);
  const bool made = app->rtdn_token.empty() || a.rotate;
  if (made) {
    app->rtdn_token = model::hex_encode(model::random_bytes(32));
    auto updated = db.update_app(*app);
    if (!updated)
      return fail(updated.err().message());
    if (!*updated)
      return fail("no app with id or name " + a.words[2]);
  }
  auto url = base + "/notifications/store_b/" + app->id + "?token=" + app->rtdn_token;
  print(a, json::object{{"url", url}}, url + "\n");
  return 0;
}

int app_command(const args& a, db::database& db, const config::http_settings& http) {
  auto sub = a.words.size() > 1 ? a.words[1] : "";
  std::string problem;
  if (sub == "create") {
    if (!a.given("name"))
      return fail("app create needs --name=NAME", 2);
    model::app app;
    if (auto err = apply_app_options(a, app); !err.empty())
      return fail(err, 2);
    auto created = db.create_app(app);
    if (!created)
      return fail(created.err().message());
    auto token = model::make_access_token();
    auto info = db.add_token(created->id, model::access_token_hash(token), cmd::now_ms());
    if (!info)
      return fail(info.err().message());
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
      return fail(updated.err().message());
    print(a, app_json(*app), "Updated app " + app->name + " (id " + app->id + ").\n");
    return 0;
  }
  if (sub == "rtdn-url")
    return app_rtdn_url(a, db, http);
  if (sub == "list") {
    auto apps = db.list_apps();
    if (!apps)
      return fail(apps.err().message());
    json::array list;
    std::string human;
    for (const auto& app : *apps) {
      list.push_back(app_json(app));
      human += app.id + "  " + app.name + "  bundle=" + app.bundle_id
        + "  package=" + app.package_name + "\n";
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
  return fail("unknown app command\n" + a.usage(), 2);
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
      return fail(by_hash.err().message());
    bool revoked = *by_hash;
    if (!revoked) {
      auto by_id = db.revoke_token(key, cmd::now_ms());
      if (!by_id)
        return fail(by_id.err().message());
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
  return fail("unknown token command\n" + a.usage(), 2);
}

int record_command(const args& a, db::database& db) {
  if (a.words.size() < 3 || a.words[1] != "show")
    return fail(std::string("usage: record show ID\n"), 2);
  const auto& id = a.words[2];
  auto po = db.find_purchase_order(id);
  if (!po)
    return fail(po.err().message());
  if (*po) {
    auto o = model::purchase_order_json(**po);
    o["kind"] = "store_b_purchase_order";
    o["store_detail"] = (*po)->store_detail;
    std::cout << json::serialize(o) << "\n";
    return 0;
  }
  auto r = db.find_receipt(id);
  if (!r)
    return fail(r.err().message());
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
    return fail(jobs.err().message());
  json::array list;
  for (const auto& j : *jobs)
    list.push_back(json::object{
      {"id", j.id},
      {"kind", model::to_string(j.kind)},
      {"record_id", j.record_id},
      {"app_id", j.app_id},
      {"attempts", j.attempts},
      {"next_attempt_at", model::timestamp_json(j.next_attempt_at)},
      {"last_error", j.last_error},
      {"lease_owner", j.lease_owner ? json::value(*j.lease_owner) : json::value(nullptr)},
      {"lease_until",
       j.lease_until ? json::value(model::timestamp_json(*j.lease_until)) : json::value(nullptr)}});
  std::cout << json::serialize(list) << "\n";
  return 0;
}

// ---- webhooks ---------------------------------------------------------

json::array events_json(const std::vector<model::event_type>& events) {
  json::array list;
  for (auto t : events)
    list.emplace_back(model::to_string(t));
  return list;
}

// An endpoint as list prints it: never its secret.
json::object endpoint_json(const model::webhook_endpoint& e) {
  return {{"id", e.id},
          {"app_id", e.app_id},
          {"url", e.url},
          {"events", events_json(e.events)},
          {"created_at", model::timestamp_json(e.created_at)}};
}

json::object delivery_json(const model::webhook_delivery& d) {
  return {{"event_id", d.event_id},
          {"endpoint_id", d.endpoint_id},
          {"type", model::to_string(d.type)},
          {"record_id", d.record_id},
          {"state", model::to_string(d.state)},
          {"attempts", d.attempts},
          {"last_error", d.last_error},
          {"delivered_at", model::timestamp_json(d.delivered_at)}};
}

// The app named by words[2] when given; "" (every app) otherwise.
std::optional<std::string> optional_app_id(const args& a, db::database& db, std::string& problem) {
  if (a.words.size() < 3)
    return std::string();
  auto app = find_app(db, a.words[2], problem);
  if (!app)
    return std::nullopt;
  return app->id;
}

int webhook_add(const args& a, db::database& db, bool allow_http) {
  if (!a.given("url"))
    return fail("webhook add needs --url=URL", 2);
  auto url = model::check_webhook_url(a.url, allow_http);
  if (!url)
    return fail("--url: " + url.err().message(), 2);
  auto events = model::parse_events(a.events);
  if (!events)
    return fail("--events: " + events.err().message(), 2);
  std::string problem;
  auto app = find_app(db, a.words[2], problem);
  if (!app)
    return fail(problem);
  model::webhook_endpoint e;
  e.app_id = app->id;
  e.url = *url;
  e.secret = model::make_webhook_secret();
  e.events = *events;
  e.created_at = cmd::now_ms();
  auto added = db.add_webhook_endpoint(e);
  if (!added)
    return fail(added.err().message());
  print(a,
        json::object{{"id", added->id},
                     {"secret", added->secret},
                     {"url", added->url},
                     {"events", events_json(added->events)}},
        "id: " + added->id + "\nsecret: " + added->secret + "\n");
  return 0;
}

int webhook_command(const args& a, db::database& db, bool allow_http) {
  auto sub = a.words.size() > 1 ? a.words[1] : "";
  std::string problem;
  // The words each subcommand takes, beyond "webhook SUB".
  struct shape {
    const char* sub;
    std::size_t min, max;
    const char* usage;
  };
  static constexpr shape shapes[] = {
    {"add", 1, 1, "webhook add APP --url=URL [--events=LIST]"},
    {"list", 0, 1, "webhook list [APP]"},
    {"remove", 1, 1, "webhook remove ID"},
    {"redeliver", 1, 1, "webhook redeliver EVENT-ID"},
    {"deliveries", 0, 1, "webhook deliveries [APP] [--limit=N]"},
  };
  for (const auto& x : shapes)
    if (sub == x.sub && (a.words.size() < 2 + x.min || a.words.size() > 2 + x.max))
      return fail(std::string("usage: ") + x.usage, 2);
  if (sub == "add")
    return webhook_add(a, db, allow_http);
  if (sub == "list") {
    auto app_id = optional_app_id(a, db, problem);
    if (!app_id)
      return fail(problem);
    auto endpoints = db.list_webhook_endpoints(*app_id);
    if (!endpoints)
      return fail(endpoints.err().message());
    json::array list;
    std::string human;
    for (const auto& e : *endpoints) {
      list.push_back(endpoint_json(e));
      human += e.id + "  app=" + e.app_id + "  " + e.url + "  events="
        + (e.events.empty() ? std::string("all") : model::events_text(e.events)) + "\n";
    }
    print(a, list, human.empty() ? "No webhook endpoints.\n" : human);
    return 0;
  }
  if (sub == "remove") {
    const auto& id = a.words[2];
    auto removed = db.remove_webhook_endpoint(id);
    if (!removed)
      return fail(removed.err().message());
    if (!*removed)
      return fail("no webhook endpoint with id " + id);
    print(a, json::object{{"removed", true}, {"id", id}}, "Removed webhook endpoint " + id + ".\n");
    return 0;
  }
  if (sub == "redeliver") {
    const auto& id = a.words[2];
    auto again = db.redeliver_event(id, cmd::now_ms());
    if (!again)
      return fail(again.err().message());
    if (!*again)
      return fail("no webhook event with id " + id);
    print(a, json::object{{"redelivering", true}, {"event_id", id}},
          "Event " + id + " will be delivered again.\n");
    return 0;
  }
  if (sub == "deliveries") {
    if (a.limit < 1 || a.limit > 10000)
      return fail("--limit takes 1 to 10000, not " + std::to_string(a.limit), 2);
    auto app_id = optional_app_id(a, db, problem);
    if (!app_id)
      return fail(problem);
    auto deliveries = db.list_deliveries(*app_id, a.limit);
    if (!deliveries)
      return fail(deliveries.err().message());
    json::array list;
    std::string human;
    for (const auto& d : *deliveries) {
      list.push_back(delivery_json(d));
      human += d.event_id + "  " + std::string(model::to_string(d.type))
        + "  endpoint=" + d.endpoint_id + "  " + std::string(model::to_string(d.state))
        + "  attempts=" + std::to_string(d.attempts)
        + (d.last_error.empty() ? std::string() : "  last_error=" + d.last_error) + "\n";
    }
    print(a, list, human.empty() ? "No deliveries.\n" : human);
    return 0;
  }
  return fail("unknown webhook command\n" + a.usage(), 2);
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
    events.push_back(json::object{{"name", actor + ": " + std::string(o["message"].as_string())},
                                  {"cat", "receiptd"},
                                  {"ph", "X"},
                                  {"ts", o["start_us"]},
                                  {"dur", o["duration_us"]},
                                  {"pid", 1},
                                  {"tid", lane},
                                  {"args",
                                   json::object{{"outcome", o["outcome"]},
                                                {"span_id", o["span_id"]},
                                                {"parent_id", o["parent_id"]}}}});
  }
  if (events.empty())
    return fail("no spans of trace " + wanted + " in " + trace_file);
  json::array names;
  for (const auto& [actor, lane] : lanes)
    names.push_back(json::object{{"name", "thread_name"},
                                 {"ph", "M"},
                                 {"pid", 1},
                                 {"tid", lane},
                                 {"args", json::object{{"name", actor}}}});
  for (auto& n : names)
    events.push_back(n);
  std::cout << json::serialize(json::object{{"traceEvents", events}, {"displayTimeUnit", "ms"}})
            << "\n";
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  args a;
  if (auto parsed = a.parse(argc, argv); !parsed)
    return fail(parsed.err().message(), 2);
  if (a.help) {
    std::cout << a.usage();
    return 0;
  }
  if (a.words.empty()) {
    std::cerr << a.usage();
    return 2;
  }
  config::receiptd_config cfg;
  std::vector<char*> cargv;
  for (auto& s : a.receiptd_args)
    cargv.push_back(s.data());
  if (auto loaded = cfg.load(static_cast<int>(cargv.size()), cargv.data(), std::cerr); !loaded)
    return fail(loaded.err().message(), 2);
  const auto& s = cfg.values();
  if (a.words[0] == "trace")
    return trace_command(a, a.given("trace-file") ? a.trace_file : s.trace.file);
  auto db = cmd::open_database(s.db.url, "receiptctl");
  if (!db)
    return 1;
  if (a.words[0] == "app")
    return app_command(a, *db, s.http);
  if (a.words[0] == "token")
    return token_command(a, *db);
  if (a.words[0] == "record")
    return record_command(a, *db);
  if (a.words[0] == "jobs")
    return jobs_command(a, *db);
  if (a.words[0] == "webhook")
    return webhook_command(a, *db, s.webhooks.allow_http);
  return fail("unknown command " + a.words[0] + "\n" + a.usage(), 2);
}

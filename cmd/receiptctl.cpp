// receiptctl: the operator's tool. Creates and lists apps, sets their store
// credentials, issues and revokes access tokens (printed once, stored as a
// SHA-256 hash), shows records, jobs and an upload's trace, manages webhook
// endpoints (the secret is printed once), prints an app's Google Play RTDN push
// URL. Same database options as receiptd (--db.url, --config-file). Text out,
// unless --json.

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cmd/receiptctl_common.hpp"
#include "cmd/receiptctl_entitlements.hpp"
#include "cmd/receiptctl_options.hpp"
#include "cmd/startup.hpp"
#include "config/options.hpp"
#include "model/access_token.hpp"
#include "model/encoding.hpp"
#include "model/resource_json.hpp"
#include "model/store_a/server_api.hpp"
#include "model/store_b/licence_key.hpp"
#include "model/store_b/service_account.hpp"
#include "model/version.hpp"
#include "model/webhooks.hpp"

using namespace receiptd;
namespace json = boost::json;

namespace {

// The command line: the command words and the options given (cmd/receiptctl_options.hpp).
using args = cmd::ctl_options;

using cmd::fail;
using cmd::find_app;
using cmd::print;

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
          {"acknowledge_purchases", a.acknowledge_purchases},
          {"customer_lookup", model::to_string(a.customer_lookup)},
          {"customer_id_from", model::to_string(a.customer_id_from)},
          {"entitlements", cmd::entitlements_json(a)}};
}

json::object token_json(const db::token_info& t) {
  json::object o{{"id", t.id},
                 {"app_id", t.app_id},
                 {"kind", model::to_string(t.kind)},
                 {"created_at", model::timestamp_json(t.created_at)}};
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

// A value as text: strings as they are, timestamps as their UTC text, null as
// "-", anything else as compact JSON.
std::string text_of(const json::value& v) {
  if (v.is_string())
    return std::string(v.get_string());
  if (v.is_null())
    return "-";
  if (v.is_object())
    if (auto* utc = v.get_object().if_contains("utc");
        utc && utc->is_string() && v.get_object().size() == 2 && v.get_object().contains("ms"))
      return std::string(utc->get_string());
  return json::serialize(v);
}

// An object as "key: value" lines, in its order.
std::string text_lines(const json::object& o, const std::string& indent = "") {
  std::string out;
  for (const auto& [key, value] : o)
    out += indent + std::string(key) + ": " + text_of(value) + "\n";
  return out;
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
  if (a.given("customer-lookup")) {
    auto policy = model::parse_customer_lookup_policy(a.customer_lookup);
    if (!policy)
      return "--customer-lookup takes client or server-only, not \"" + a.customer_lookup + "\"";
    app.customer_lookup = *policy;
  }
  if (a.given("customer-id-from")) {
    auto source = model::parse_customer_id_source(a.customer_id_from);
    if (!source)
      return "--customer-id-from takes none or app_account_token, not \"" + a.customer_id_from
        + "\"";
    app.customer_id_from = *source;
  }
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

// The refund request options (model/purchases/refund_request.hpp): stored
// apart from the app's row; `o` shows the settings as they are then.
std::string apply_refund_options(const args& a, db::database& db, const std::string& app_id,
                                 json::object& o) {
  auto settings = db.refund_settings_of(app_id);
  if (!settings)
    return settings.err().message();
  bool changed = false;
  if (a.given("refund-preference")) {
    auto p = model::purchases::parse_refund_preference(a.refund_preference);
    if (!p)
      return "--refund-preference takes decline, grant, grant-prorated or none, not \""
        + a.refund_preference + "\"";
    settings->preference = *p;
    changed = true;
  }
  if (a.given("refund-consent")) {
    settings->customer_consent = a.refund_consent;
    changed = true;
  }
  if (a.given("sample-content-provided")) {
    settings->sample_content_provided = a.sample_content_provided;
    changed = true;
  }
  if (changed)
    if (auto stored = db.set_refund_settings(app_id, *settings); !stored)
      return stored.err().message();
  o["refund_preference"] = model::purchases::to_string(settings->preference);
  o["refund_consent"] = settings->customer_consent;
  o["sample_content_provided"] = settings->sample_content_provided;
  return {};
}

int issue_token(const args& a, db::database& db, const model::app& app, model::token_kind kind) {
  auto token = model::make_access_token();
  auto info = db.add_token(app.id, model::access_token_hash(token), cmd::now_ms(), kind);
  if (!info)
    return fail(info.err().message());
  auto o = token_json(*info);
  o["token"] = token;
  print(a, o,
        "Access token (" + std::string(model::to_string(kind)) + ") for app " + app.name
          + " (token id " + info->id + "), shown only now:\n\n  " + token + "\n\n");
  return 0;
}

// ---- Google Play RTDN ----------------------------------------------------------

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
    if (a.given("refund-preference") || a.given("refund-consent")
        || a.given("sample-content-provided"))
      if (auto err = apply_refund_options(a, db, created->id, o); !err.empty())
        return fail(err, 2);
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
    auto o = app_json(*app);
    if (auto err = apply_refund_options(a, db, app->id, o); !err.empty())
      return fail(err, 2);
    print(a, o, "Updated app " + app->name + " (id " + app->id + ").\n");
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
        + "  package=" + app.package_name
        + "  customer-lookup=" + std::string(model::to_string(app.customer_lookup))
        + "  customer-id-from=" + std::string(model::to_string(app.customer_id_from)) + "\n";
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
    auto human = text_lines(o) + "tokens:\n";
    for (const auto& t : *tokens)
      human += "  " + text_of(t.at("id")) + "  " + text_of(t.at("kind")) + "  created " + text_of(t.at("created_at"))
        + (t.at("revoked_at").is_null() ? "" : "  revoked " + text_of(t.at("revoked_at"))) + "\n";
    o["tokens"] = std::move(*tokens);
    print(a, o, human);
    return 0;
  }
  return fail("missing arguments\n" + a.command_usage(), 2); // a known command (parse)
}

int token_command(const args& a, db::database& db) {
  auto sub = a.words.size() > 1 ? a.words[1] : "";
  std::string problem;
  if ((sub == "issue" || sub == "create") && a.words.size() > 2) {
    auto kind = model::parse_token_kind(a.token_kind);
    if (!kind)
      return fail("--kind takes client or server, not \"" + a.token_kind + "\"", 2);
    auto app = find_app(db, a.words[2], problem);
    if (!app)
      return fail(problem);
    return issue_token(a, db, *app, *kind);
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
    // Not repeated: it may be a token (a live one mistyped, or a leaked one).
    if (!revoked)
      return fail("no active token matches the token or token id given");
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
    std::string human;
    for (const auto& t : *tokens)
      human += text_of(t.at("id")) + "  " + text_of(t.at("kind")) + "  created " + text_of(t.at("created_at"))
        + (t.at("revoked_at").is_null() ? "  active" : "  revoked " + text_of(t.at("revoked_at")))
        + "\n";
    print(a, *tokens, human.empty() ? "No tokens.\n" : human);
    return 0;
  }
  return fail("missing arguments\n" + a.command_usage(), 2); // a known command (parse)
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
    if ((*po)->proof_size) // a forgery: only its first bytes are kept
      o["proof_size"] = *(*po)->proof_size;
    print(a, o, text_lines(o));
    return 0;
  }
  auto r = db.find_receipt(id);
  if (!r)
    return fail(r.err().message());
  if (*r) {
    auto o = model::receipt_json(**r);
    o["kind"] = "store_a_receipt";
    o["store_detail"] = (*r)->store_detail;
    if ((*r)->proof_size)
      o["proof_size"] = *(*r)->proof_size;
    print(a, o, text_lines(o));
    return 0;
  }
  auto t = db.find_transaction(id);
  if (!t)
    return fail(t.err().message());
  if (*t) {
    auto o = model::transaction_json(**t);
    o["kind"] = "store_a_transaction";
    o["store_detail"] = (*t)->store_detail;
    if ((*t)->proof_size)
      o["proof_size"] = *(*t)->proof_size;
    print(a, o, text_lines(o));
    return 0;
  }
  auto at = db.find_app_transaction(id);
  if (!at)
    return fail(at.err().message());
  if (*at) {
    auto o = model::app_transaction_json(**at);
    o["kind"] = "store_a_app_transaction";
    o["store_detail"] = (*at)->store_detail;
    if ((*at)->proof_size)
      o["proof_size"] = *(*at)->proof_size;
    print(a, o, text_lines(o));
    return 0;
  }
  return fail("no record with id " + id);
}

int jobs_command(const args& a, db::database& db) {
  auto jobs = db.list_jobs();
  if (!jobs)
    return fail(jobs.err().message());
  json::array list;
  std::string human;
  for (const auto& j : *jobs) {
    human += j.id + "  " + std::string(model::to_string(j.kind)) + " " + j.record_id + "  attempts="
      + std::to_string(j.attempts) + "  next=" + text_of(model::timestamp_json(j.next_attempt_at))
      + (j.lease_owner ? "  leased by " + *j.lease_owner : std::string())
      + (j.last_error.empty() ? std::string() : "  last_error=" + j.last_error) + "\n";
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
  }
  print(a, list, human.empty() ? "No jobs.\n" : human);
  return 0;
}

// ---- webhooks --------------------------------------------------------------------

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
  return fail(a.command_usage(), 2); // a known command (parse)
}

// ---- trace ---------------------------------------------------------------------------

// One span line of the trace file (actors/tracing.cpp): ids are hex text, a root's
// parent_id is empty.
struct span_line {
  std::string actor, message, outcome;
  std::int64_t start_us = 0, duration_us = 0;
  std::string span_id, parent_id;
};

std::int64_t signed_of(const json::value* v) {
  if (v && v->is_int64())
    return v->get_int64();
  if (v && v->is_uint64())
    return static_cast<std::int64_t>(v->get_uint64());
  return 0;
}

std::string string_of(const json::value* v) {
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The spans of `wanted` in the span file and the one it rotated to (FILE.1).
std::vector<span_line> read_spans(const std::string& trace_file, const std::string& wanted,
                                  bool& readable) {
  std::vector<span_line> spans;
  readable = false;
  for (const auto& path : {trace_file + ".1", trace_file}) {
    std::ifstream in(path);
    if (!in)
      continue;
    readable = true;
    std::string line;
    while (std::getline(in, line)) {
      if (line.find(wanted) == std::string::npos)
        continue;
      boost::system::error_code ec;
      auto v = json::parse(line, ec);
      if (ec || !v.is_object())
        continue;
      const auto& o = v.get_object();
      if (string_of(o.if_contains("trace_id")) != wanted)
        continue;
      spans.push_back({string_of(o.if_contains("actor")), string_of(o.if_contains("message")),
                       string_of(o.if_contains("outcome")), signed_of(o.if_contains("start_us")),
                       signed_of(o.if_contains("duration_us")), string_of(o.if_contains("span_id")),
                       string_of(o.if_contains("parent_id"))});
    }
  }
  return spans;
}

// Every span's parent is there (a child ends, and is written, before its parent).
bool whole(const std::vector<span_line>& spans) {
  std::set<std::string> ids;
  for (const auto& s : spans)
    ids.insert(s.span_id);
  return !spans.empty() && std::all_of(spans.begin(), spans.end(), [&](const span_line& s) {
    return s.parent_id.empty() || ids.count(s.parent_id);
  });
}

// The trace's spans once they are all written: receiptd's tracer writes what it
// holds about once a second, so a trace is read until it is whole (every parent
// there) and has not grown for longer than that, or until `wait` has passed.
std::vector<span_line> wait_for_spans(const std::string& trace_file, const std::string& wanted,
                                      std::chrono::nanoseconds wait, bool& readable) {
  using clock = std::chrono::steady_clock;
  constexpr auto settled = std::chrono::milliseconds(1200); // the tracer's interval, and some
  auto deadline = clock::now() + wait;
  auto whole_since = clock::time_point::max(); // max: not whole at the last read
  std::size_t whole_count = 0;
  for (;;) {
    auto spans = read_spans(trace_file, wanted, readable);
    auto now = clock::now();
    if (!whole(spans)) {
      whole_since = clock::time_point::max();
    } else if (whole_since == clock::time_point::max() || spans.size() != whole_count) {
      whole_since = now;
      whole_count = spans.size();
    } else if (now - whole_since >= settled) {
      return spans;
    }
    if (now >= deadline)
      return spans;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Spans → Trace Event Format ("X" complete events, µs), one lane per actor.
json::object trace_events(const std::vector<span_line>& spans) {
  std::map<std::string, int> lanes;
  json::array events;
  for (const auto& s : spans) {
    auto lane = lanes.emplace(s.actor, static_cast<int>(lanes.size()) + 1).first->second;
    events.push_back(json::object{
      {"name", s.actor + ": " + s.message},
      {"cat", "receiptd"},
      {"ph", "X"},
      {"ts", s.start_us},
      {"dur", s.duration_us},
      {"pid", 1},
      {"tid", lane},
      {"args",
       json::object{{"outcome", s.outcome}, {"span_id", s.span_id}, {"parent_id", s.parent_id}}}});
  }
  for (const auto& [actor, lane] : lanes)
    events.push_back(json::object{{"name", "thread_name"},
                                  {"ph", "M"},
                                  {"pid", 1},
                                  {"tid", lane},
                                  {"args", json::object{{"name", actor}}}});
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

// Spans as a timeline: start (ms after the first), duration, actor and message
// indented under their parent, outcome.
std::string timeline(const std::string& trace_id, std::vector<span_line> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const span_line& a, const span_line& b) { return a.start_us < b.start_us; });
  std::map<std::string, int> depth;
  auto t0 = spans.front().start_us;
  std::int64_t end = t0;
  for (const auto& s : spans)
    end = std::max(end, s.start_us + s.duration_us);
  char head[160];
  std::snprintf(head, sizeof head, "trace %s: %zu spans over %.3f ms\n", trace_id.c_str(),
                spans.size(), static_cast<double>(end - t0) / 1000.0);
  std::string out = head;
  out += "   start ms  duration ms  actor: message  outcome\n";
  for (const auto& s : spans) {
    auto parent = depth.find(s.parent_id);
    int d = s.parent_id.empty() || parent == depth.end() ? 0 : parent->second + 1;
    depth[s.span_id] = d;
    char row[64];
    std::snprintf(row, sizeof row, "%11.3f %12.3f  ", static_cast<double>(s.start_us - t0) / 1000.0,
                  static_cast<double>(s.duration_us) / 1000.0);
    out += row + std::string(static_cast<std::size_t>(2 * d), ' ') + s.actor + ": " + s.message
      + (s.outcome.empty() ? "" : "  " + s.outcome) + "\n";
  }
  return out;
}

int trace_command(const args& a, const std::string& trace_file) {
  if (a.words.size() != 2)
    return fail("usage: trace TRACE-ID [--trace-file=PATH] [--wait=DURATION]", 2);
  const auto& wanted = a.words[1];
  bool readable = false;
  auto spans = wait_for_spans(trace_file, wanted, a.wait, readable);
  if (!readable)
    return fail("cannot read the trace file " + trace_file);
  if (spans.empty())
    return fail(
      "no spans of trace " + wanted + " in " + trace_file + " (waited "
      + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(a.wait).count())
      + " ms; is trace.enabled on, and is this receiptd's trace.file?)");
  if (!whole(spans))
    std::cerr << "receiptctl: some spans of trace " << wanted
              << " are not written yet (see --wait); showing those that are\n";
  print(a, trace_events(spans), timeline(wanted, spans));
  return 0;
}

// Whether receiptd's configuration is known: a config file named, or found where
// receiptd looks for it, or the option the command needs on the command line.
// Without it the defaults would point at a database of their own, relative to
// wherever receiptctl runs.
bool configured(const args& a) {
  for (const auto& opt : a.receiptd_args) {
    if (opt.rfind("--config-file=", 0) == 0)
      return true;
    if (a.uses_database() && opt.rfind("--db.url=", 0) == 0)
      return true;
    if (!a.uses_database() && opt.rfind("--trace.file=", 0) == 0)
      return true;
  }
  if (!a.uses_database() && a.given("trace-file"))
    return true;
  std::error_code ec;
  return std::filesystem::exists(config::default_config_file, ec);
}

} // namespace

int main(int argc, char** argv) {
  args a;
  auto parsed = a.parse(argc, argv);
  if (a.version) {
    std::cout << "receiptctl " << model::version << "\n";
    return 0;
  }
  if (!parsed)
    return fail(parsed.err().message(), 2);
  if (a.help) {
    std::cout << (a.words.empty() ? a.usage() : a.command_usage());
    return 0;
  }
  if (a.words.empty()) {
    std::cerr << a.usage();
    return 2;
  }
  if (!configured(a))
    return fail(std::string("no configuration: ") + config::default_config_file
                  + " is not in this folder. Pass receiptd's --config-file=PATH (installed: "
                    "/etc/receiptd/receiptd.ini)"
                  + (a.uses_database() ? " or --db.url=URL" : " or --trace-file=PATH"),
                2);
  config::receiptd_config cfg;
  std::vector<char*> cargv;
  for (auto& s : a.receiptd_args)
    cargv.push_back(s.data());
  if (auto loaded = cfg.load(static_cast<int>(cargv.size()), cargv.data(), std::cerr); !loaded)
    return fail(loaded.err().message(), 2);
  const auto& s = cfg.values();
  if (a.command() == "trace")
    return trace_command(a, a.given("trace-file") ? a.trace_file : s.trace.file);
  auto db = cmd::open_database(s.db.url, "receiptctl", !a.reads_only());
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
  if (a.words[0] == "entitlement")
    return cmd::entitlement_command(a, *db);
  return webhook_command(a, *db, s.webhooks.allow_http);
}

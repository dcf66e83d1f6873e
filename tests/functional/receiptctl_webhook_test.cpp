// receiptctl's webhook commands through the real binary: an endpoint's
// secret is printed once and never listed; URLs are held to https (loopback and
// webhooks.allow-http aside); unknown ids fail with exit status 1; deliveries
// list what receiptd's uploads announced.
#include <catch2/catch.hpp>

#include <chrono>
#include <regex>
#include <thread>

#include "harness.hpp"
#include "process.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

// Exit status `code`, a message containing `text`, nothing on stdout.
void check_failed(const ctl_result& r, int code, const std::string& text) {
  INFO("stderr: " << r.err << "stdout: " << r.out);
  CHECK(r.code == code);
  CHECK(r.err.find(text) != std::string::npos);
  CHECK(r.out.empty());
}

test_app fresh_app(suite& s) {
  return create_store_a_app(s, "com.example." + unique("hooks"));
}

// `receiptctl webhook add` with --json; the endpoint's {"id","secret","url","events"}.
json::object add_endpoint(suite& s, const std::string& app, const std::string& url,
                          const std::string& events = "") {
  std::vector<std::string> args{"webhook", "add", app, "--url=" + url};
  if (!events.empty())
    args.push_back("--events=" + events);
  auto r = s.ctl(args);
  INFO(r.err << r.out);
  REQUIRE(r.code == 0);
  REQUIRE(r.json.is_object());
  return r.json.as_object();
}

json::array list_endpoints(suite& s, const std::vector<std::string>& app = {}) {
  std::vector<std::string> args{"webhook", "list"};
  args.insert(args.end(), app.begin(), app.end());
  auto r = s.ctl(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(r.json.is_array());
  return r.json.as_array();
}

const json::object* find_by_id(const json::array& list, const std::string& id) {
  for (const auto& e : list)
    if (str(e.at("id")) == id)
      return &e.as_object();
  return nullptr;
}

json::array deliveries(suite& s, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"webhook", "deliveries"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = s.ctl(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(r.json.is_array());
  return r.json.as_array();
}

// An accepted Store B upload of a fresh token; the record's id.
std::string upload_purchase(suite& s, const test_app& app) {
  auto token = unique("hooktoken");
  register_purchase(s, app.package_name, "gold", token);
  auto data = purchase_data_json(app.package_name, "gold", token);
  auto r = s.service.post("/client/store_b/purchase_orders",
                          store_b_body(data, sign_purchase(data)), app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return str(r.json().at("id"));
}

} // namespace

TEST_CASE("receiptctl webhook add prints the id and secret once; list never shows the secret",
          "[receiptctl][webhooks]") {
  auto& s = the_suite();
  auto app = fresh_app(s);
  auto url = "https://hooks.example.com/" + unique("in") + "?source=receiptd";

  auto added = add_endpoint(s, app.name, url, "receipt.created,transaction.updated");
  auto id = str(added.at("id"));
  auto secret = str(added.at("secret"));
  CHECK(std::regex_match(
    id, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")));
  CHECK(std::regex_match(secret, std::regex("whsec_[0-9a-f]{64}")));
  CHECK(added.at("url") == url.c_str());
  CHECK(added.at("events") == json::array{"receipt.created", "transaction.updated"});

  // By the app's id too; another endpoint, another secret; no events: every one.
  auto second = add_endpoint(s, app.id, "https://hooks.example.com/second");
  CHECK(str(second.at("secret")) != secret);
  CHECK(second.at("events") == json::array{});

  for (const auto& list : {list_endpoints(s, {app.name}), list_endpoints(s)}) {
    auto* e = find_by_id(list, id);
    REQUIRE(e);
    CHECK(e->at("app_id") == app.id.c_str());
    CHECK(e->at("url") == url.c_str());
    CHECK(e->at("events") == json::array{"receipt.created", "transaction.updated"});
    CHECK(e->at("created_at").at("ms").as_int64() > 0);
    CHECK_FALSE(e->contains("secret"));
    CHECK(json::serialize(list).find(secret) == std::string::npos);
  }
  CHECK(list_endpoints(s, {app.name}).size() == 2);
  // Another app's list holds neither.
  auto other = fresh_app(s);
  CHECK(list_endpoints(s, {other.name}).empty());

  // Text: exactly two lines, id and secret.
  auto text = run_program({RECEIPTCTL_BINARY, "--db.url=" + s.db_url, "webhook", "add", app.name,
                           "--url=https://hooks.example.com/text"});
  INFO(text.err);
  CHECK(text.exit_code == 0);
  CHECK(std::regex_match(text.out, std::regex("id: [0-9a-f-]{36}\nsecret: whsec_[0-9a-f]{64}\n")));
  auto listed = run_program({RECEIPTCTL_BINARY, "--db.url=" + s.db_url, "webhook", "list"});
  CHECK(listed.exit_code == 0);
  CHECK(listed.out.find(url) != std::string::npos);
  CHECK(listed.out.find("whsec_") == std::string::npos);
}

TEST_CASE("receiptctl webhook add holds URLs to https, loopback and webhooks.allow-http aside",
          "[receiptctl][webhooks]") {
  auto& s = the_suite();
  auto app = fresh_app(s);
  auto count = [&] { return list_endpoints(s, {app.name}).size(); };

  add_endpoint(s, app.name, "http://127.0.0.1:9/x");
  add_endpoint(s, app.name, "http://localhost:8080/hook");
  CHECK(count() == 2);

  check_failed(s.ctl({"webhook", "add", app.name, "--url=http://example.com/hook"}), 2, "https");
  check_failed(s.ctl({"webhook", "add", app.name, "--url=https://user:pass@example.com/hook"}), 2,
               "credentials");
  check_failed(s.ctl({"webhook", "add", app.name, "--url=not a url"}), 2, "--url");
  check_failed(s.ctl({"webhook", "add", app.name, "--url=ftp://example.com/"}), 2, "--url");
  check_failed(s.ctl({"webhook", "add", app.name}), 2, "--url");
  check_failed(s.ctl({"webhook", "add", app.name, "--url=https://example.com/",
                      "--events=receipt.created,receipt.deleted"}),
               2, "receipt.deleted");
  check_failed(s.ctl({"webhook", "add", "--url=https://example.com/"}), 2, "webhook add APP");
  check_failed(s.ctl({"webhook", "add", unique("no-such-app"), "--url=https://example.com/"}), 1,
               "no app");
  // Options of other commands, and misspelled ones, are refused by name.
  check_failed(s.ctl({"webhook", "add", app.name, "--url=https://example.com/", "--limit=3"}), 2,
               "--limit");
  check_failed(s.ctl({"webhook", "add", app.name, "--ur1=https://example.com/"}), 2, "--ur1");
  check_failed(s.ctl({"webhook", "list", "--url=https://example.com/"}), 2, "--url");
  CHECK(count() == 2);

  // receiptd's webhooks.allow-http, from its config file or its command line option.
  auto ini = s.dir + "/" + unique("allow-http") + ".ini";
  write_text(ini, "[webhooks]\nallow-http=true\n");
  auto r
    = s.ctl({"--config-file=" + ini, "webhook", "add", app.name, "--url=http://example.com/hook"});
  INFO(r.err);
  CHECK(r.code == 0);
  auto flag = s.ctl(
    {"--webhooks.allow-http=true", "webhook", "add", app.name, "--url=http://example.com/other"});
  INFO(flag.err);
  CHECK(flag.code == 0);
  CHECK(count() == 4);
}

TEST_CASE("receiptctl webhook remove; unknown ids fail with exit status 1",
          "[receiptctl][webhooks]") {
  auto& s = the_suite();
  auto app = fresh_app(s);
  auto kept = str(add_endpoint(s, app.name, "https://hooks.example.com/kept").at("id"));
  auto gone = str(add_endpoint(s, app.name, "https://hooks.example.com/gone").at("id"));

  auto removed = s.ctl({"webhook", "remove", gone});
  INFO(removed.err);
  REQUIRE(removed.code == 0);
  CHECK(removed.json.at("removed") == true);
  auto list = list_endpoints(s, {app.name});
  CHECK(find_by_id(list, kept));
  CHECK_FALSE(find_by_id(list, gone));

  check_failed(s.ctl({"webhook", "remove", gone}), 1, gone);
  check_failed(s.ctl({"webhook", "remove", "00000000-0000-4000-8000-000000000000"}), 1,
               "no webhook endpoint");
  check_failed(s.ctl({"webhook", "remove"}), 2, "webhook remove ID");
  check_failed(s.ctl({"webhook", "redeliver", "evt_00000000000000000000000000000000"}), 1,
               "no webhook event");
  check_failed(s.ctl({"webhook", "redeliver"}), 2, "webhook redeliver EVENT-ID");
  check_failed(s.ctl({"webhook", "sideways"}), 2, "unknown command \"webhook sideways\"");
  check_failed(s.ctl({"webhook", "deliveries", unique("no-such-app")}), 1, "no app");
  check_failed(s.ctl({"webhook", "deliveries", "--limit=0"}), 2, "--limit");
  check_failed(s.ctl({"webhook", "deliveries", "--limit=many"}), 2, "--limit");
}

TEST_CASE("receiptctl webhook deliveries lists what uploads announced; redeliver takes its event",
          "[receiptctl][webhooks]") {
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("hooks"), test_licence_key());
  auto quiet = create_store_b_app(s, unique_package("quiet"), test_licence_key());
  // The emulator's receiver (PROTOCOL.md) answers 200.
  auto endpoint
    = str(add_endpoint(s, app.name, s.emulator.control_url("/webhooks/" + unique("ctl"))).at("id"));

  auto first = upload_purchase(s, app);
  auto second = upload_purchase(s, app);
  upload_purchase(s, quiet); // no endpoint: no event, no delivery

  // The events commit with the uploads; poll briefly all the same.
  json::array list;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    list = deliveries(s, {app.name});
    if (list.size() >= 2)
      break;
  }
  INFO(json::serialize(list));
  REQUIRE(list.size() == 2);
  // Newest event first.
  CHECK(list.at(0).at("record_id") == second.c_str());
  CHECK(list.at(1).at("record_id") == first.c_str());
  for (const auto& d : list) {
    CHECK(d.at("endpoint_id") == endpoint.c_str());
    CHECK(d.at("type") == "purchase_order.created");
    CHECK(std::regex_match(str(d.at("event_id")), std::regex("evt_[0-9a-f]{32}")));
    auto state = str(d.at("state"));
    CHECK((state == "pending" || state == "delivered"));
    CHECK(d.at("attempts").as_int64() >= 0);
    CHECK(d.at("last_error").is_string());
    CHECK((d.at("delivered_at").is_null() || d.at("delivered_at").at("ms").as_int64() > 0));
  }
  CHECK(list.at(0).at("event_id") != list.at(1).at("event_id"));
  CHECK(deliveries(s, {quiet.name}).empty());

  auto limited = deliveries(s, {app.name, "--limit=1"});
  REQUIRE(limited.size() == 1);
  CHECK(limited.at(0).at("record_id") == second.c_str());
  // Every app's: this app's among them.
  bool found = false;
  for (const auto& d : deliveries(s, {"--limit=10000"}))
    found = found || d.at("event_id") == list.at(0).at("event_id");
  CHECK(found);

  auto event_id = str(list.at(1).at("event_id"));
  auto again = s.ctl({"webhook", "redeliver", event_id});
  INFO(again.err);
  REQUIRE(again.code == 0);
  CHECK(again.json.at("event_id") == event_id.c_str());
  bool still_listed = false;
  for (const auto& d : deliveries(s, {app.name}))
    still_listed = still_listed || str(d.at("event_id")) == event_id;
  CHECK(still_listed);
}

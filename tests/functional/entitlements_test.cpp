// Entitlement rules and customer options through the real binaries, on the database
// under test: receiptctl entitlement set|list|remove (each pattern compiled with RE2
// before it is stored: one that cannot compile is refused with exit status 2 and
// RE2's error), app update --customer-lookup / --customer-id-from, and a running
// receiptd (token cache on, the shipped defaults) applying changed rules within
// its revocation check.
#include <catch2/catch.hpp>

#include "harness.hpp"

using namespace receiptd::test;
namespace json = boost::json;
namespace db = receiptd::db;
namespace model = receiptd::model;

namespace {

// receiptctl without --json: what an operator reads.
run_result ctl_text(suite& s, std::vector<std::string> args) {
  args.insert(args.begin(), {RECEIPTCTL_BINARY, "--db.url=" + s.db_url});
  return run_program(args);
}

model::app stored_app(suite& s, const std::string& id) {
  auto opened = db::database::open(s.db_url);
  REQUIRE(opened.ok());
  auto found = (*opened)->find_app(id);
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  return **found;
}

// Exit status 2 with `message` in stderr, nothing on stdout.
void check_refused(const ctl_result& r, const std::string& message) {
  INFO("stderr: " << r.err << "stdout: " << r.out);
  CHECK(r.code == 2);
  CHECK(r.err.find(message) != std::string::npos);
  CHECK(r.out.empty());
}

} // namespace

TEST_CASE("receiptctl entitlement set, list and remove", "[entitlements][receiptctl]") {
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("ent"), test_licence_key());

  auto empty = ctl_text(s, {"entitlement", "list", app.name});
  REQUIRE(empty.exit_code == 0);
  CHECK(empty.out == "No entitlements.\n");
  CHECK(s.ctl({"entitlement", "list", app.name}).json == json::object{});

  auto set = s.ctl({"entitlement", "set", app.name, "premium", "--offering=monthly",
                    R"(--pattern=^premium\.\w+\.1month\.v\d+$)", "--pattern=^premium_monthly$"});
  INFO(set.err);
  REQUIRE(set.code == 0);
  auto want = json::parse(
    R"({"premium":{"monthly":{"product_id":["^premium\\.\\w+\\.1month\\.v\\d+$","^premium_monthly$"]}}})");
  CHECK(set.json == want);
  auto yearly = ctl_text(s, {"entitlement", "set", app.name, "premium", "--offering=yearly",
                             "--pattern=^premium_yearly$"});
  REQUIRE(yearly.exit_code == 0);
  CHECK(yearly.out == "Set premium/yearly of app " + app.name + ": 1 pattern.\n");
  REQUIRE(s.ctl({"entitlement", "set", app.name, "pro", "--offering=monthly", "--pattern=^pro_"})
            .code
          == 0);

  auto listed = ctl_text(s, {"entitlement", "list", app.name});
  REQUIRE(listed.exit_code == 0);
  CHECK(listed.out
        == "premium/monthly  product_id  ^premium\\.\\w+\\.1month\\.v\\d+$\n"
           "premium/monthly  product_id  ^premium_monthly$\n"
           "premium/yearly  product_id  ^premium_yearly$\n"
           "pro/monthly  product_id  ^pro_\n");
  auto as_json = s.ctl({"entitlement", "list", app.name});
  REQUIRE(as_json.code == 0);
  CHECK(as_json.json.at("premium").as_object().size() == 2);
  CHECK(s.ctl({"app", "show", app.name}).json.at("entitlements") == as_json.json);

  // set replaces that offering's patterns, and only those.
  REQUIRE(s.ctl({"entitlement", "set", app.name, "premium", "--offering=monthly",
                 "--pattern=^premium\\.1m$"})
            .code
          == 0);
  auto replaced = s.ctl({"entitlement", "list", app.name}).json;
  CHECK(replaced.at("premium").at("monthly")
        == json::parse(R"({"product_id":["^premium\\.1m$"]})"));
  CHECK(replaced.at("premium").at("yearly")
        == json::parse(R"({"product_id":["^premium_yearly$"]})"));

  // A pattern RE2 cannot compile: refused with RE2's error, nothing stored.
  auto before = stored_app(s, app.id).entitlement_rules;
  check_refused(s.ctl({"entitlement", "set", app.name, "premium", "--offering=monthly",
                       "--pattern=^ok$", "--pattern=(premium"}),
                "pattern \"(premium\": missing ): (premium");
  check_refused(s.ctl({"entitlement", "set", app.name, "premium", "--offering=monthly",
                       R"(--pattern=(a)\1)"}),
                "invalid escape sequence: \\1");
  check_refused(s.ctl({"entitlement", "set", app.name, "pre/mium", "--offering=monthly",
                       "--pattern=x"}),
                "entitlement name \"pre/mium\"");
  CHECK(stored_app(s, app.id).entitlement_rules == before);

  // The command line: what set needs, and options of other commands.
  check_refused(s.ctl({"entitlement", "set", app.name, "premium", "--pattern=x"}), "usage");
  check_refused(s.ctl({"entitlement", "set", app.name, "premium", "--offering=monthly"}), "usage");
  check_refused(s.ctl({"entitlement", "remove", app.name, "premium", "--pattern=x"}),
                "--pattern");
  check_refused(s.ctl({"app", "update", app.name, "--pattern=x"}), "--pattern");
  check_refused(s.ctl({"entitlement", "list", app.name, "--offering=monthly"}), "--offering");

  // remove: one offering, then a whole entitlement.
  auto removed = ctl_text(s, {"entitlement", "remove", app.name, "premium", "--offering=yearly"});
  REQUIRE(removed.exit_code == 0);
  CHECK(removed.out == "Removed premium/yearly from app " + app.name + ".\n");
  auto gone = s.ctl({"entitlement", "remove", app.name, "pro"});
  REQUIRE(gone.code == 0);
  CHECK(gone.json == json::parse(R"({"premium":{"monthly":{"product_id":["^premium\\.1m$"]}}})"));
  auto nothing = s.ctl({"entitlement", "remove", app.name, "pro"});
  CHECK(nothing.code == 1);
  CHECK(nothing.err.find("has no entitlement pro") != std::string::npos);
  REQUIRE(s.ctl({"entitlement", "remove", app.name, "premium", "--offering=monthly"}).code == 0);
  CHECK(s.ctl({"entitlement", "list", app.name}).json == json::object{});
  CHECK(s.ctl({"entitlement", "list", "no-such-app"}).code == 1);
}

TEST_CASE("receiptctl app update: customer lookup and customer id options",
          "[customers][receiptctl]") {
  auto& s = the_suite();
  auto app = create_store_b_app(s, unique_package("cust"), test_licence_key());
  auto shown = s.ctl({"app", "show", app.name});
  REQUIRE(shown.code == 0);
  CHECK(str(shown.json.at("customer_lookup")) == "client");
  CHECK(str(shown.json.at("customer_id_from")) == "none");

  auto updated = s.ctl({"app", "update", app.name, "--customer-lookup=server-only",
                        "--customer-id-from=app_account_token"});
  INFO(updated.err);
  REQUIRE(updated.code == 0);
  CHECK(str(updated.json.at("customer_lookup")) == "server-only");
  CHECK(str(updated.json.at("customer_id_from")) == "app_account_token");
  auto stored = stored_app(s, app.id);
  CHECK(stored.customer_lookup == model::customer_lookup_policy::server_only);
  CHECK(stored.customer_id_from == model::customer_id_source::app_account_token);
  bool listed = false;
  auto apps = s.ctl({"app", "list"});
  REQUIRE(apps.code == 0);
  for (const auto& a : apps.json.as_array())
    if (str(a.at("id")) == app.id) {
      listed = true;
      CHECK(str(a.at("customer_lookup")) == "server-only");
      CHECK(str(a.at("customer_id_from")) == "app_account_token");
    }
  CHECK(listed);
  auto human = ctl_text(s, {"app", "list"});
  CHECK(human.out.find(app.id + "  " + app.name) != std::string::npos);
  CHECK(human.out.find("customer-lookup=server-only  customer-id-from=app_account_token")
        != std::string::npos);

  check_refused(s.ctl({"app", "update", app.name, "--customer-lookup=anyone"}),
                "--customer-lookup takes client or server-only");
  check_refused(s.ctl({"app", "update", app.name, "--customer-id-from=email"}),
                "--customer-id-from takes none or app_account_token");
  REQUIRE(s.ctl({"app", "update", app.name, "--customer-lookup=client"}).code == 0);
  CHECK(stored_app(s, app.id).customer_lookup == model::customer_lookup_policy::client);
  CHECK(stored_app(s, app.id).customer_id_from == model::customer_id_source::app_account_token);
}

TEST_CASE("a running receiptd applies changed entitlement rules within a revocation check",
          "[entitlements][token_cache]") {
  auto& s = the_suite();
  auto args = standard_service_args(s);
  std::erase(args, no_token_cache); // the shipped cache: 5 min TTL, 1 s revocation check
  auto dir = make_temp_dir("receiptd-entitlements");
  service_process cached(dir, s.db_url, args);
  cached.start();
  auto package = unique_package("ent_live");
  auto app = create_store_b_app(s, package, test_licence_key());
  auto token = unique("tok");
  register_purchase(s, package, "gold", token, "product");
  auto data = purchase_data_json(package, "gold", token);
  auto body = store_b_body(data, sign_purchase(data));
  auto upload = [&] {
    return cached.post("/client/store_b/purchase_orders", body, app.token).status == 200;
  };
  REQUIRE(upload()); // the token and the app are cached now
  auto applied = "app " + app.id + ": entitlement rules applied: ";
  CHECK(cached.log().find(applied) == std::string::npos); // none yet: nothing to say

  REQUIRE(s.ctl({"entitlement", "set", app.name, "gold", "--offering=lifetime", "--pattern=^gold$"})
            .code
          == 0);
  auto seen = [&](const std::string& line) {
    return eventually([&] { return upload() && cached.log().find(line) != std::string::npos; },
                      std::chrono::seconds(2));
  };
  CHECK(seen(applied + "gold/lifetime (1 pattern)"));
  REQUIRE(s.ctl({"entitlement", "remove", app.name, "gold"}).code == 0);
  CHECK(seen(applied + "none"));
  CHECK(cached.stop() == 0);
}

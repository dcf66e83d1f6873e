// receiptctl's options through the real binary: a misspelled option or
// an option of another command is refused with its name and exit status 2 before
// the database is touched; boolean options take --flag, --flag=true, --flag=false.
// App Store Server API credentials are checked before they are stored
// and never printed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <sstream>

#include "harness.hpp"
#include "process.hpp"

using namespace receiptd::test;
namespace json = boost::json;
namespace db = receiptd::db;
namespace model = receiptd::model;
namespace test_support = receiptd::test_support;

namespace {

bool app_exists(suite& s, const std::string& name) {
  auto r = s.ctl({"app", "list"});
  REQUIRE(r.code == 0);
  for (const auto& app : r.json.as_array())
    if (app.at("name").as_string() == name)
      return true;
  return false;
}

// Exit status 2, a message naming `option`, nothing on stdout.
void check_refused(const ctl_result& r, const std::string& option) {
  INFO("stderr: " << r.err << "stdout: " << r.out);
  CHECK(r.code == 2);
  CHECK(r.err.find(option) != std::string::npos);
  CHECK(r.out.empty());
}

// A key file as App Store Connect hands it out (.p8: PKCS#8 PEM) or any other key.
std::string write_key_file(suite& s, const std::string& pem) {
  auto path = s.dir + "/" + unique("AuthKey") + ".p8";
  write_text(path, pem);
  return path;
}

std::string p256_key_pem() {
  test_support::cert_options o;
  o.key_algorithm = "EC";
  return test_support::make_cert(o).key_pem();
}

// What the database holds for the app (receiptctl never prints the key).
model::app stored_app(suite& s, const std::string& id) {
  auto db = db::database::open(s.db_url);
  REQUIRE(db.ok());
  auto found = (*db)->find_app(id);
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  return **found;
}

void check_no_key_in(const ctl_result& r, const std::string& pem) {
  INFO("stdout: " << r.out);
  CHECK(r.out.find("PRIVATE KEY") == std::string::npos);
  // Nor any line of the key's base64.
  std::istringstream lines(pem);
  for (std::string line; std::getline(lines, line);)
    if (line.find("-----") == std::string::npos && line.size() > 8)
      CHECK(r.out.find(line) == std::string::npos);
}

} // namespace

TEST_CASE("receiptctl refuses a misspelled option, naming it, before the database",
          "[receiptctl]") {
  auto& s = the_suite();
  auto name = unique("typo");
  check_refused(s.ctl({"app", "create", "--name=" + name, "--bundel-id=com.x"}), "--bundel-id");
  CHECK_FALSE(app_exists(s, name));

  // With a database that does not exist yet: still exit status 2, and no file made.
  auto db_file = make_temp_dir("receiptctl-typo") + "/never.db";
  auto r = run_program({RECEIPTCTL_BINARY, "--db.url=sqlite3://db=" + db_file, "app", "create",
                        "--name=" + name, "--bundel-id=com.x"});
  ctl_result refused{r.exit_code, nullptr, r.out, r.err};
  check_refused(refused, "--bundel-id");
  CHECK_FALSE(std::filesystem::exists(db_file));
}

TEST_CASE("receiptctl refuses an option of another command", "[receiptctl]") {
  auto& s = the_suite();
  auto name = unique("scope");
  check_refused(s.ctl({"app", "create", "--name=" + name, "--trace-file=/tmp/spans.jsonl"}),
                "--trace-file");
  CHECK_FALSE(app_exists(s, name));

  auto app = create_store_a_app(s, "com.example.scope");
  check_refused(s.ctl({"token", "issue", app.name, "--bundle-id=com.x"}), "--bundle-id");
  auto tokens = s.ctl({"token", "list", app.name});
  REQUIRE(tokens.code == 0);
  CHECK(tokens.json.as_array().size() == 1); // only the one app create issued
  check_refused(s.ctl({"trace", "some-trace", "--shared-secret=x"}), "--shared-secret");
}

TEST_CASE("receiptctl boolean options: --flag, --flag=true, --flag=false", "[receiptctl]") {
  auto& s = the_suite();
  auto name = unique("flag");
  auto created = s.ctl({"app", "create", "--name=" + name, "--accept-storekit-test-receipts"});
  INFO(created.err);
  REQUIRE(created.code == 0);
  CHECK(created.json.at("accept_storekit_test_receipts") == true);

  auto accepts = [&] {
    auto shown = s.ctl({"app", "show", name});
    REQUIRE(shown.code == 0);
    return shown.json.at("accept_storekit_test_receipts").as_bool();
  };
  auto update = [&](const std::string& option) {
    auto r = s.ctl({"app", "update", name, option});
    INFO(option << ": " << r.err);
    REQUIRE(r.code == 0);
  };
  update("--accept-storekit-test-receipts=false");
  CHECK_FALSE(accepts());
  update("--accept-storekit-test-receipts=true");
  CHECK(accepts());
  update("--accept-storekit-test-receipts=false");
  CHECK_FALSE(accepts());
  update("--accept-storekit-test-receipts");
  CHECK(accepts());

  check_refused(s.ctl({"app", "update", name, "--accept-storekit-test-receipts=maybe"}),
                "--accept-storekit-test-receipts");
  CHECK(accepts());
}

TEST_CASE("receiptctl stores App Store Server API credentials and never prints the key",
          "[receiptctl][server_api]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "com.example.serverapi");
  auto pem = p256_key_pem();
  auto key_file = write_key_file(s, pem);
  const std::string issuer = "57246542-96fe-1a63-e053-0824d011072a";

  auto shown = s.ctl({"app", "show", app.name});
  REQUIRE(shown.code == 0);
  CHECK(shown.json.at("app_store_private_key_set") == false);
  CHECK(shown.json.at("app_store_issuer_id") == "");

  auto set = s.ctl({"app", "update", app.name, "--app-store-issuer-id=" + issuer,
                    "--app-store-key-id=2X9R4HXF34", "--app-store-private-key-file=" + key_file});
  INFO("stderr: " << set.err);
  REQUIRE(set.code == 0);
  CHECK(set.json.at("app_store_private_key_set") == true);
  CHECK(set.json.at("app_store_issuer_id") == issuer.c_str());
  CHECK(set.json.at("app_store_key_id") == "2X9R4HXF34");
  check_no_key_in(set, pem);
  auto stored = stored_app(s, app.id);
  CHECK(stored.app_store_issuer_id == issuer);
  CHECK(stored.app_store_key_id == "2X9R4HXF34");
  CHECK(stored.app_store_private_key == pem); // the file's text, as read

  shown = s.ctl({"app", "show", app.name});
  REQUIRE(shown.code == 0);
  CHECK(shown.json.at("app_store_private_key_set") == true);
  CHECK(shown.json.at("app_store_key_id") == "2X9R4HXF34");
  CHECK_FALSE(shown.json.as_object().contains("app_store_private_key"));
  check_no_key_in(shown, pem);
  auto listed = s.ctl({"app", "list"});
  REQUIRE(listed.code == 0);
  check_no_key_in(listed, pem);
  auto human = run_program({RECEIPTCTL_BINARY, "--db.url=" + s.db_url, "app", "show", app.name});
  REQUIRE(human.exit_code == 0);
  CHECK(human.out.find("app_store_private_key_set: true\n") != std::string::npos);
  check_no_key_in(ctl_result{human.exit_code, nullptr, human.out, human.err}, pem);

  // One of them alone, merged with what the app has.
  auto rotated = s.ctl({"app", "update", app.name, "--app-store-key-id=ZZ9R4HXF99"});
  INFO("stderr: " << rotated.err);
  REQUIRE(rotated.code == 0);
  stored = stored_app(s, app.id);
  CHECK(stored.app_store_key_id == "ZZ9R4HXF99");
  CHECK(stored.app_store_issuer_id == issuer);
  CHECK(stored.app_store_private_key == pem);

  auto cleared = s.ctl({"app", "update", app.name, "--clear-app-store-credentials"});
  REQUIRE(cleared.code == 0);
  CHECK(cleared.json.at("app_store_private_key_set") == false);
  stored = stored_app(s, app.id);
  CHECK(stored.app_store_issuer_id.empty());
  CHECK(stored.app_store_key_id.empty());
  CHECK(stored.app_store_private_key.empty());

  // app create takes them too.
  auto name = unique("created-with-key");
  auto created = s.ctl({"app", "create", "--name=" + name, "--bundle-id=com.example.created",
                        "--app-store-issuer-id=" + issuer, "--app-store-key-id=2X9R4HXF34",
                        "--app-store-private-key-file=" + key_file});
  INFO("stderr: " << created.err);
  REQUIRE(created.code == 0);
  CHECK(created.json.at("app_store_private_key_set") == true);
  check_no_key_in(created, pem);
}

TEST_CASE("receiptctl refuses unusable App Store Server API credentials, naming the option",
          "[receiptctl][server_api]") {
  auto& s = the_suite();
  auto app = create_store_a_app(s, "com.example.serverapi.bad");
  const std::string issuer_option = "--app-store-issuer-id=57246542-96fe-1a63-e053-0824d011072a";
  const std::string key_id_option = "--app-store-key-id=2X9R4HXF34";
  auto update = [&](std::vector<std::string> options) {
    std::vector<std::string> args{"app", "update", app.name};
    args.insert(args.end(), options.begin(), options.end());
    return s.ctl(args);
  };
  auto has_credentials = [&] { return !stored_app(s, app.id).app_store_private_key.empty(); };

  auto not_pem = write_key_file(s, "this is not a key\n");
  check_refused(update({issuer_option, key_id_option, "--app-store-private-key-file=" + not_pem}),
                "--app-store-private-key-file");
  auto rsa = write_key_file(s, test_support::make_cert({}).key_pem());
  check_refused(update({issuer_option, key_id_option, "--app-store-private-key-file=" + rsa}),
                "--app-store-private-key-file");
  check_refused(update({issuer_option, key_id_option,
                        "--app-store-private-key-file=" + s.dir + "/no-such-file.p8"}),
                "--app-store-private-key-file");
  // One alone, on an app that has none: the option still missing is named.
  check_refused(update({issuer_option}), "--app-store-key-id");
  CHECK_FALSE(has_credentials());

  auto good = write_key_file(s, p256_key_pem());
  auto set = update({issuer_option, key_id_option, "--app-store-private-key-file=" + good});
  REQUIRE(set.code == 0);
  // A bad change leaves what is stored as it was.
  check_refused(update({"--app-store-issuer-id="}), "--app-store-issuer-id");
  check_refused(update({"--app-store-key-id=two words"}), "--app-store-key-id");
  check_refused(update({"--app-store-private-key-file=" + rsa}), "--app-store-private-key-file");
  check_refused(update({"--clear-app-store-credentials", key_id_option}),
                "--clear-app-store-credentials");
  CHECK(has_credentials());
  CHECK(stored_app(s, app.id).app_store_key_id == "2X9R4HXF34");

  // app create refuses too, and creates nothing.
  auto name = unique("bad-key");
  check_refused(s.ctl({"app", "create", "--name=" + name, issuer_option, key_id_option,
                       "--app-store-private-key-file=" + rsa}),
                "--app-store-private-key-file");
  CHECK_FALSE(app_exists(s, name));
}

TEST_CASE("receiptctl without receiptd's configuration stops, and makes no database",
          "[receiptctl]") {
  auto elsewhere = make_temp_dir("receiptctl-elsewhere");
  for (auto command : {std::vector<std::string>{"app", "list"},
                       {"jobs"},
                       {"app", "create", "--name=stray"},
                       {"trace", "some-trace"}}) {
    command.insert(command.begin(), RECEIPTCTL_BINARY);
    auto r = run_program(command, std::chrono::seconds(60), elsewhere);
    INFO(command[1] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--config-file=") != std::string::npos);
    CHECK(r.out.empty());
  }
  CHECK(std::filesystem::is_empty(elsewhere)); // no var/receiptd.db, nothing
}

TEST_CASE("receiptctl reads never make a database; writes may", "[receiptctl]") {
  auto dir = make_temp_dir("receiptctl-reads");
  auto url = "--db.url=sqlite3://db=" + dir + "/new.db timeout=10";
  for (auto command : {std::vector<std::string>{"app", "list"},
                       {"jobs"},
                       {"webhook", "list"},
                       {"record", "show", "00000000-0000-4000-8000-000000000000"}}) {
    command.insert(command.begin(), {RECEIPTCTL_BINARY, url});
    auto r = run_program(command);
    INFO(command[2] << ": " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("no database at " + dir + "/new.db") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/new.db"));
  auto created = run_program({RECEIPTCTL_BINARY, url, "app", "create", "--name=first"});
  INFO(created.err);
  CHECK(created.exit_code == 0);
  CHECK(std::filesystem::exists(dir + "/new.db"));
  auto listed = run_program({RECEIPTCTL_BINARY, url, "app", "list"});
  CHECK(listed.exit_code == 0);
  CHECK(listed.out.find("first") != std::string::npos);
}

TEST_CASE("receiptctl names a misspelled command as one, and suggests the nearest",
          "[receiptctl]") {
  auto& s = the_suite();
  auto r = s.ctl({"app", "creat", "--name=x"});
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown command \"app creat\" (did you mean \"app create\"?)")
        != std::string::npos);
  CHECK(r.err.find("does not apply") == std::string::npos);
  auto far = s.ctl({"frobnicate"});
  CHECK(far.code == 2);
  CHECK(far.err.find("unknown command \"frobnicate\"") != std::string::npos);
  CHECK(far.err.find("did you mean") == std::string::npos);
  auto bare = s.ctl({"webhook"});
  CHECK(bare.code == 2);
  CHECK(bare.err.find("webhook add") != std::string::npos);
}

TEST_CASE("receiptctl COMMAND --help: that command's synopsis and options only", "[receiptctl]") {
  auto help = [](std::vector<std::string> words) {
    words.insert(words.begin(), RECEIPTCTL_BINARY);
    words.push_back("--help");
    auto r = run_program(words); // no configuration needed to ask
    INFO(r.err);
    CHECK(r.exit_code == 0);
    return r.out;
  };
  auto create = help({"app", "create"});
  CHECK(create.find("app create --name=NAME") != std::string::npos);
  CHECK(create.find("--bundle-id") != std::string::npos);
  CHECK(create.find("--url") == std::string::npos);
  CHECK(create.find("webhook add") == std::string::npos);
  auto trace = help({"trace"});
  CHECK(trace.find("--wait") != std::string::npos);
  CHECK(trace.find("--bundle-id") == std::string::npos);
  auto webhook = help({"webhook"});
  CHECK(webhook.find("webhook redeliver EVENT-ID") != std::string::npos);
  CHECK(webhook.find("app create") == std::string::npos);
  auto all = help({});
  CHECK(all.find("webhook deliveries") != std::string::npos);
  CHECK(all.find("app create") != std::string::npos);
}

TEST_CASE("receiptctl prints text, and JSON with --json", "[receiptctl]") {
  auto& s = the_suite();
  auto text = run_program({RECEIPTCTL_BINARY, "--db.url=" + s.db_url, "jobs"});
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  boost::system::error_code ec;
  (void)json::parse(text.out, ec);
  CHECK(ec); // not JSON
  auto as_json = s.ctl({"jobs"});
  REQUIRE(as_json.code == 0);
  CHECK(as_json.json.is_array());
  auto app = create_store_a_app(s, "com.example.textual");
  auto tokens = run_program({RECEIPTCTL_BINARY, "--db.url=" + s.db_url, "token", "list", app.name});
  REQUIRE(tokens.exit_code == 0);
  CHECK(tokens.out.rfind(app.token_id + "  client  created ", 0) == 0);
  CHECK(tokens.out.find("active") != std::string::npos);
}

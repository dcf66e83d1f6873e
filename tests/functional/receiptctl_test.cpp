// receiptctl's options through the real binary (issue 11): a misspelled option or
// an option of another command is refused with its name and exit status 2 before
// the database is touched; boolean options take --flag, --flag=true, --flag=false.
#include <catch2/catch.hpp>

#include <filesystem>

#include "harness.hpp"
#include "process.hpp"

using namespace receiptd::test;
namespace json = boost::json;

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

// receiptctl app rtdn-url through the real binary: the Google Play RTDN
// push URL of an app, <base>/notifications/store_b/<app id>?token=<64 hex>; the
// token is made once and kept, --rotate replaces it, `app show` never prints it;
// the base comes from --base-url, receiptd's http.public-url, or its address and
// port; an unknown app fails with exit status 1.
#include <catch2/catch.hpp>

#include <regex>

#include "harness.hpp"
#include "process.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

// `receiptctl --json app rtdn-url APP EXTRA…`: the printed URL.
std::string rtdn_url(suite& s, const std::string& app, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"app", "rtdn-url", app};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = s.ctl(args);
  INFO(r.err << r.out);
  REQUIRE(r.code == 0);
  REQUIRE(r.json.is_object());
  REQUIRE(r.json.as_object().size() == 1);
  return str(r.json.at("url"));
}

// The token of a push URL (what follows ?token=).
std::string token_of(const std::string& url) {
  auto at = url.find("?token=");
  REQUIRE(at != std::string::npos);
  return url.substr(at + 7);
}

// A Play app (licence key and package name; no service account: nothing here calls Play).
test_app fresh_app(suite& s, const std::string& name) {
  return create_store_b_app(s, unique_package(name), test_licence_key(), false);
}

json::object show(suite& s, const std::string& app) {
  auto r = s.ctl({"app", "show", app});
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r.json.as_object();
}

} // namespace

TEST_CASE("receiptctl app rtdn-url prints the push URL and keeps its token", "[receiptctl][rtdn]") {
  auto& s = the_suite();
  auto app = fresh_app(s, "rtdn");
  CHECK(show(s, app.name).at("rtdn_token_set") == false);

  auto url = rtdn_url(s, app.name, {"--base-url=https://receipts.example.com/"});
  std::smatch m;
  REQUIRE(std::regex_match(url, m,
                           std::regex("https://receipts\\.example\\.com/notifications/store_b/"
                                      "([0-9a-f-]{36})\\?token=([0-9a-f]{64})")));
  CHECK(m[1] == app.id);
  const auto token = token_of(url);

  // Asked again, by id: the same token.
  auto again = rtdn_url(s, app.id, {"--base-url=https://receipts.example.com"});
  CHECK(again == url);
  // app show says a token is set, never the token.
  auto shown = show(s, app.name);
  CHECK(shown.at("rtdn_token_set") == true);
  CHECK(json::serialize(shown).find(token) == std::string::npos);
  auto listed = s.ctl({"app", "list"});
  REQUIRE(listed.code == 0);
  CHECK(json::serialize(listed.json).find(token) == std::string::npos);

  // --rotate: a new token, kept from then on.
  auto rotated = rtdn_url(s, app.name, {"--base-url=https://receipts.example.com", "--rotate"});
  const auto new_token = token_of(rotated);
  CHECK(new_token != token);
  CHECK(std::regex_match(new_token, std::regex("[0-9a-f]{64}")));
  CHECK(rotated.substr(0, rotated.find("?")) == url.substr(0, url.find("?")));
  CHECK(rtdn_url(s, app.name, {"--base-url=https://receipts.example.com"}) == rotated);

  // Each app has its own token.
  auto other = fresh_app(s, "rtdn_other");
  CHECK(token_of(rtdn_url(s, other.name, {"--base-url=https://receipts.example.com"}))
        != new_token);

  // Text: the URL alone on one line.
  auto text = run_program({RECEIPTCTL_BINARY, "--db.url=" + s.db_url, "app", "rtdn-url", app.name,
                           "--base-url=https://receipts.example.com"});
  INFO(text.err);
  CHECK(text.exit_code == 0);
  CHECK(text.out == rotated + "\n");
}

TEST_CASE("receiptctl app rtdn-url takes its base from receiptd's configuration",
          "[receiptctl][rtdn]") {
  auto& s = the_suite();
  auto app = fresh_app(s, "rtdn_base");
  const auto path = "/notifications/store_b/" + app.id + "?token=";

  // http.public-url, from the command line or a config file.
  auto flag = rtdn_url(s, app.name, {"--http.public-url=https://push.example.org/receiptd"});
  CHECK(flag.rfind("https://push.example.org/receiptd" + path, 0) == 0);
  auto ini = s.dir + "/" + unique("public-url") + ".ini";
  write_text(ini, "[http]\npublic-url=\"https://ini.example.org\"\n");
  auto from_file = rtdn_url(s, app.name, {"--config-file=" + ini});
  CHECK(from_file.rfind("https://ini.example.org" + path, 0) == 0);
  // None: receiptd's listening address and port.
  auto plain = rtdn_url(s, app.name, {"--http.address=10.1.2.3", "--http.port=8443"});
  CHECK(plain.rfind("http://10.1.2.3:8443" + path, 0) == 0);
  // --base-url wins; the token is the same throughout.
  auto given = rtdn_url(s, app.name,
                        {"--http.public-url=https://push.example.org", "--base-url=http://x.test"});
  CHECK(given.rfind("http://x.test" + path, 0) == 0);
  CHECK(token_of(flag) == token_of(given));
  CHECK(token_of(from_file) == token_of(plain));
  CHECK(token_of(flag) == token_of(plain));
}

TEST_CASE("receiptctl app rtdn-url refuses unknown apps and bad arguments", "[receiptctl][rtdn]") {
  auto& s = the_suite();
  auto check_failed = [](const ctl_result& r, int code, const std::string& text) {
    INFO("stderr: " << r.err << "stdout: " << r.out);
    CHECK(r.code == code);
    CHECK(r.err.find(text) != std::string::npos);
    CHECK(r.out.empty());
  };
  check_failed(s.ctl({"app", "rtdn-url", unique("no-such-app")}), 1, "no app");
  check_failed(s.ctl({"app", "rtdn-url"}), 2, "app rtdn-url APP");
  auto app = fresh_app(s, "rtdn_bad");
  check_failed(s.ctl({"app", "rtdn-url", app.name, "--base-url=ftp://example.com"}), 2,
               "--base-url");
  check_failed(s.ctl({"app", "rtdn-url", app.name, "--url=https://example.com"}), 2, "--url");
  check_failed(s.ctl({"app", "show", app.name, "--rotate"}), 2, "--rotate");
  check_failed(s.ctl({"app", "rtdn-url", app.name, "--http.public-url=ftp://x"}), 2,
               "http.public-url");
  // None of these made a token.
  CHECK(show(s, app.name).at("rtdn_token_set") == false);
}

// Relative paths in the configuration: from the config file and the
// defaults, relative to the config file's folder; from the command line,
// relative to the working directory.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "config_load.hpp"

namespace fs = std::filesystem;

namespace {

// A config folder of its own: DIR/conf/receiptd.ini with `text`.
fs::path config_file(const std::string& name, const std::string& text) {
  auto dir = fs::temp_directory_path()
    / ("receiptd-config-paths-" + name + "-" + std::to_string(getpid())) / "conf";
  fs::create_directories(dir);
  auto file = dir / "receiptd.ini";
  std::ofstream(file) << text;
  return file;
}

} // namespace

TEST_CASE("paths in the config file resolve against its folder", "[config][paths]") {
  auto file = config_file("file", R"([db]
url="sqlite3://db=../state/receiptd.db timeout=10"
[store-a]
trust-roots=["trust/root.pem", "/abs/other-root.pem"]
storekit-test-root="trust/storekit.pem"
[store-b]
rtdn-oidc-jwks="google.jwks"
rtdn-oidc-audience="receiptd"
[outbound]
ca-file="../ca.pem"
[trace]
file="spans.jsonl"
)");
  auto conf = file.parent_path();
  auto l = receiptd::test::load_config({"--config-file=" + file.string()});
  REQUIRE(l.problem == "");
  const auto& s = l.values;
  CHECK(s.db.url
        == "sqlite3://db=" + (conf.parent_path() / "state/receiptd.db").string() + " timeout=10");
  CHECK(s.store_a.trust_roots
        == std::vector<std::string>{(conf / "trust/root.pem").string(), "/abs/other-root.pem"});
  CHECK(s.store_a.storekit_test_root == (conf / "trust/storekit.pem").string());
  CHECK(s.store_b.rtdn_oidc_jwks == (conf / "google.jwks").string());
  CHECK(s.outbound.ca_file == (conf.parent_path() / "ca.pem").string());
  CHECK(s.trace.file == (conf / "spans.jsonl").string());
  // Not in the file: the defaults, where config/receiptd.ini puts them (config/
  // under the working directory), so a small config file of one's own keeps the
  // shipped trust files.
  auto defaults = fs::current_path() / "config";
  CHECK(s.store_a.intermediates
        == std::vector<std::string>{(defaults / "trust/apple-itunes-store-ca.pem").string(),
                                    (defaults / "trust/apple-wwdr-ca.pem").string()});
  fs::remove_all(conf.parent_path());
}

TEST_CASE("paths on the command line stay relative to the working directory", "[config][paths]") {
  auto file = config_file("cli", R"([trace]
file="spans.jsonl"
[db]
url="sqlite3://db=in-file.db"
)");
  auto l = receiptd::test::load_config(
    {"--config-file=" + file.string(), "--trace.file=here/spans.jsonl",
     "--store-a.trust-roots=[\"root.pem\"]", "--db.url=sqlite3://db=var/r.db timeout=5"});
  REQUIRE(l.problem == "");
  CHECK(l.values.trace.file == "here/spans.jsonl");
  CHECK(l.values.store_a.trust_roots == std::vector<std::string>{"root.pem"});
  CHECK(l.values.db.url == "sqlite3://db=var/r.db timeout=5");
  // An absolute path or an empty one (no file) is what it says, from anywhere.
  auto abs = receiptd::test::load_config(
    {"--config-file=" + file.string(), "--trace.file=/var/log/receiptd/trace.jsonl"});
  CHECK(abs.values.trace.file == "/var/log/receiptd/trace.jsonl");
  CHECK(abs.values.outbound.ca_file == "");
  fs::remove_all(file.parent_path().parent_path());
}

TEST_CASE("without a config file the defaults are where config/receiptd.ini would put them",
          "[config][paths]") {
  // From a folder with no config/receiptd.ini: only the defaults apply.
  const auto before = fs::current_path();
  const auto here = fs::temp_directory_path() / ("receiptd-nocfg-" + std::to_string(getpid()));
  fs::create_directories(here);
  fs::current_path(here);
  auto l = receiptd::test::load_config({});
  fs::current_path(before);
  fs::remove_all(here);
  REQUIRE(l.problem == "");
  CHECK(l.values.store_a.trust_roots.front() == (here / "config/trust/apple-root-ca.pem").string());
  CHECK(l.values.db.url == "sqlite3://db=" + (here / "var/receiptd.db").string() + " timeout=10");
  CHECK(l.values.trace.file == (here / "var/trace.jsonl").string());
}

// config/receiptd.ini lists every option with its default; bad values name the option.
#include <catch2/catch.hpp>

#include <caf/config_option_set.hpp>
#include <caf/config_value.hpp>

#include <fstream>
#include <sstream>

#include "config/options.hpp"
#include "config_load.hpp"

using receiptd::config::receiptd_config;

namespace {

std::string load(std::vector<std::string> args) {
  return receiptd::test::load_config(std::move(args)).problem;
}

std::string shipped_ini() {
  std::string path = RECEIPTD_SOURCE_DIR;
  path += "/config/receiptd.ini";
  return path;
}

} // namespace

TEST_CASE("the shipped receiptd.ini lists every option at its default", "[config]") {
  std::ifstream in(shipped_ini());
  REQUIRE(in);
  auto parsed = caf::actor_system_config::parse_config(in);
  REQUIRE(parsed);
  receiptd_config defaults;
  int listed = 0;
  for (const auto& opt : defaults.options()) {
    std::string category(opt.category().begin(), opt.category().end());
    std::string name(opt.long_name().begin(), opt.long_name().end());
    const char* ours[] = {"http",    "db",      "auth",  "validator", "limits",  "outbound",
                          "store-a", "store-b", "retry", "trace",     "metrics", "bootstrap"};
    if (std::find(std::begin(ours), std::end(ours), category) == std::end(ours))
      continue;
    INFO(category << "." << name);
    auto* value = caf::get_if(&*parsed, category + "." + name);
    REQUIRE(value != nullptr);
    auto def = opt.get();
    REQUIRE(def);
    CHECK(caf::to_string(*value) == caf::to_string(*def));
    ++listed;
  }
  CHECK(listed > 40);
  CHECK(load({"--config-file=" + shipped_ini()}) == "");
}

TEST_CASE("the App Store Server API is called at Apple's recommended hosts", "[config]") {
  // App Store Server API changelog, server update of 2026-05-05: api.storekit.apple.com
  // and api.storekit-sandbox.apple.com (the itunes.apple.com hosts keep working).
  auto shipped = receiptd::test::load_config({"--config-file=" + shipped_ini()});
  REQUIRE(shipped.problem.empty());
  CHECK(shipped.values.store_a.server_api_url == "https://api.storekit.apple.com");
  CHECK(shipped.values.store_a.server_api_sandbox_url == "https://api.storekit-sandbox.apple.com");
  auto bare = receiptd::test::load_config({});
  CHECK(bare.values.store_a.server_api_url == "https://api.storekit.apple.com");
  CHECK(bare.values.store_a.server_api_sandbox_url == "https://api.storekit-sandbox.apple.com");
}

TEST_CASE("bad values stop the start and name the option", "[config]") {
  CHECK(load({"--http.port=99999"}).find("http.port") != std::string::npos);
  CHECK(load({"--http.threads=0"}).find("http.threads") != std::string::npos);
  CHECK(load({"--db.url=mysql://x"}).find("db.url") != std::string::npos);
  CHECK(load({"--retry.max=1s", "--retry.initial=5s"}).find("retry.max") != std::string::npos);
  CHECK(load({"--retry.lease=1s"}).find("retry.lease") != std::string::npos);
  CHECK(load({"--store-a.production-url=ftp://x"}).find("store-a.production-url")
        != std::string::npos);
  CHECK(load({"--trace.enabled=perhaps"}).find("trace.enabled") != std::string::npos);
  CHECK(load({"--nonsense=1"}).find("nonsense") != std::string::npos);
  CHECK(load({"positional"}).find("positional") != std::string::npos);
  CHECK(load({"--trace.enabled=false", "--validator.store-deadline=250ms"}) == "");
}

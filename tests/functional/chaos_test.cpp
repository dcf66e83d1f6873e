// The short cases of bench/chaos ("Prove"): a store failing part of its calls
// then serving HTML pages is never a fraud verdict, and a full SQLite file system is a
// 503 with Retry-After and a log line, then 200 again without a restart.
#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "harness.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";

void store_b_mode(suite& s, json::object mode) {
  s.emulator.control("PUT", "/control/stores/store_b/mode", std::move(mode));
}

// A tmpfs of its own (root only), unmounted when done.
struct small_file_system {
  std::string path;
  bool mounted = false;
  explicit small_file_system(const std::string& dir) : path(dir + "/small") {
    std::filesystem::create_directories(path);
    mounted = ::mount("tmpfs", path.c_str(), "tmpfs", 0, "size=8m") == 0;
  }
  ~small_file_system() {
    if (mounted)
      ::umount2(path.c_str(), MNT_DETACH);
  }
};

// Writes zeros to PATH until the file system says it is full.
void fill(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  std::vector<char> chunk(64 * 1024, '\0');
  while (out.write(chunk.data(), static_cast<std::streamsize>(chunk.size())))
    out.flush();
}

} // namespace

TEST_CASE("a store failing half its calls, then serving HTML: 200 or 206, never fraud; all "
          "validated after",
          "[resilience][outage]") {
  auto& s = the_suite();
  auto package = unique_package("outage");
  auto app = create_store_b_app(s, package, test_licence_key());
  auto upload = [&] {
    auto token = unique("tok");
    register_purchase(s, package, "gold", token, "product");
    auto data = purchase_data_json(package, "gold", token);
    return s.service.post(orders, store_b_body(data, sign_purchase(data)), app.token);
  };
  std::vector<std::string> ids;
  auto check_answer = [&](const http_response& r, bool html) {
    INFO(r.body);
    if (html)
      CHECK(r.status == 206);
    else
      CHECK((r.status == 200 || r.status == 206));
    if (r.status == 200 || r.status == 206) {
      CHECK(r.json().at("is_fraud") == false);
      ids.push_back(str(r.json().at("id")));
    }
  };

  store_b_mode(s, {{"mode", "error"}, {"status", 503}, {"fraction", 0.5}});
  for (int i = 0; i < 16; ++i)
    check_answer(upload(), false);
  store_b_mode(s, {{"mode", "html"}});
  for (int i = 0; i < 4; ++i)
    check_answer(upload(), true);
  // A forged upload during the outage is still judged on its own signature.
  auto data = purchase_data_json(package, "gold", unique("tok"));
  auto forged = s.service.post(orders, store_b_body(data, sign_purchase(data + " ")), app.token);
  CHECK(forged.status == 402);

  s.emulator.set_mode("store_b", "up");
  for (const auto& id : ids) {
    INFO("record " << id);
    CHECK(eventually(
      [&] {
        auto r = s.service.get(std::string(orders) + "/" + id, app.token);
        return r.status == 200 && str(r.json().at("validation_state")) == "validated";
      },
      std::chrono::seconds(30)));
  }
}

TEST_CASE("SQLite on a full file system: 503 with Retry-After and a log line, then 200 "
          "without a restart",
          "[resilience][diskfull]") {
  auto& s = the_suite();
  if (s.dialect != receiptd::db::dialect::sqlite)
    return; // a file system of its own is SQLite's case; dbdown is PostgreSQL's (bench/chaos)
  if (::geteuid() != 0) {
    WARN("not root: no tmpfs to fill, skipped");
    return;
  }
  auto dir = make_temp_dir("receiptd-diskfull");
  small_file_system fs(dir);
  REQUIRE(fs.mounted);
  const auto db_url = "sqlite3://db=" + fs.path + "/receiptd.db timeout=10";
  auto package = unique_package("diskfull");
  auto created = run_program({RECEIPTCTL_BINARY, "--db.url=" + db_url, "--json", "app", "create",
                              "--name=diskfull", "--package-name=" + package,
                              "--license-key=" + test_licence_key(),
                              "--service-account-file=" + make_service_account(s).path});
  INFO(created.err);
  REQUIRE(created.exit_code == 0);
  const auto token = str(json::parse(created.out).at("token"));
  service_process service(dir, db_url, standard_service_args(s));
  service.start();
  auto upload = [&](const std::string& purchase_token) {
    auto data = purchase_data_json(package, "gold", purchase_token);
    return service.post(orders, store_b_body(data, sign_purchase(data)), token);
  };
  auto before = unique("before");
  register_purchase(s, package, "gold", before, "product");
  REQUIRE(upload(before).status == 200);

  fill(fs.path + "/filler");
  auto during = unique("during");
  register_purchase(s, package, "gold", during, "product");
  auto refused = upload(during);
  INFO(refused.body);
  CHECK(refused.status == 503);
  CHECK(refused.body.find("storage_unavailable") != std::string::npos);
  CHECK_FALSE(refused.header("retry-after").empty());
  CHECK(eventually(
    [&] { return service.log().find("database or disk is full") != std::string::npos; }));

  std::filesystem::remove(fs.path + "/filler");
  CHECK(eventually([&] { return upload(during).status == 200; }));
  CHECK(service.running());
  CHECK(service.stop() == 0);
}

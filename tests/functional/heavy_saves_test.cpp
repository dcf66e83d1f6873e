// Heavy uploads beside small ones, through the real binary on PostgreSQL: a
// receipt of 2,000 purchases takes seconds to save on a busy database, and the
// small uploads of another app are not held behind it. (On SQLite one session
// writes for all, so a small save waits for the heavy one by construction.)
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <sstream>

#include "harness.hpp"
#include "model/encoding.hpp"
#include "tests/support/db/raw_sql.hpp"
#include "tests/support/db/test_db.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;
namespace ts = receiptd::test_support;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";
constexpr const char* receipts = "/client/store_a/receipts";

// A gauge or counter of GET /metrics (0 when absent).
double metric(const service_process& service, const std::string& name) {
  auto r = http_call("GET", service.url("/metrics"));
  std::istringstream in(r.body);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + " ", 0) == 0)
      return std::stod(line.substr(name.size() + 1));
  return 0;
}

json::object created_app(const std::vector<std::string>& args) {
  auto r = run_program(args);
  INFO(r.err << r.out);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out).as_object();
}

} // namespace

TEST_CASE("small uploads are not held behind receipts of 2,000 purchases being saved",
          "[admission][heavy]") {
  auto& s = the_suite();
  if (s.dialect != db::dialect::postgresql)
    return; // SQLite writes on one session: a save waits for the one before it
  auto db_url = fresh_database_url(s.dialect);
  auto bundle = unique("com.example.heavy");
  auto heavy_app = created_app({RECEIPTCTL_BINARY, "--db.url=" + db_url, "--json", "app",
                                "create", "--name=heavy", "--bundle-id=" + bundle});
  auto package = unique_package("small");
  auto small_app = created_app({RECEIPTCTL_BINARY, "--db.url=" + db_url, "--json", "app", "create",
                                "--name=small", "--package-name=" + package,
                                "--license-key=" + test_licence_key(),
                                "--service-account-file=" + make_service_account(s).path});
  // Two workers: the receipts' saves would take both.
  auto args = standard_service_args(s);
  args.insert(args.end(), {"--db.pool-size=2", "--http.header-timeout=120s",
                           "--http.body-timeout=120s"});
  service_process service(make_temp_dir("receiptd-heavy"), db_url, args);
  service.start();

  auto heavy_receipt = [&](int n) {
    ts::unified_receipt_params p;
    p.bundle_id = bundle;
    for (int i = 0; i < 2000; ++i)
      p.in_app.push_back(ts::purchase(bundle + ".product." + std::to_string(i % 20),
                                      std::to_string(n) + std::to_string(1000000 + i),
                                      ts::utc(2024, 5, 1) + i * 60000LL));
    auto der = ts::make_unified_receipt(p, ts::apple_like_signer(s.pki));
    return json::serialize(json::object{{"receipt", model::base64_encode(der)}});
  };
  auto heavy_token = str(heavy_app.at("token"));
  auto upload_heavy = [&](std::string body) {
    return http_call("POST", service.url(receipts), body,
                     {"Authorization: Bearer " + heavy_token, "Content-Type: application/json"});
  };

  // Declared before the lock, so that however the case ends the lock goes first
  // and these are answered.
  std::future<http_response> first, second;
  std::vector<std::future<http_response>> small;
  // The receipts' saves wait on a lock of their table (as on a database busy with
  // their purchases); small uploads write other tables.
  held_transaction lock(db_url, "LOCK TABLE store_a_receipts IN SHARE ROW EXCLUSIVE MODE");
  first = std::async(std::launch::async, upload_heavy, heavy_receipt(1));
  second = std::async(std::launch::async, upload_heavy, heavy_receipt(2));
  // Both have reached the persistence pool: one being saved (held by the lock),
  // the other waiting to be. (A receipt of 2,000 purchases takes a while to
  // check on a busy machine: what reaches the pool first may be its other
  // requests, not its save.)
  REQUIRE(eventually([&] {
    auto saving = metric(service, "receiptd_persistence_save_batches_in_flight");
    return saving == 1 && saving + metric(service, "receiptd_persistence_queued_requests") >= 2;
  }));

  // Before: both workers held a receipt's save, and a small upload waited for them
  // (its token lookup for a worker, its save for the batches in flight).
  auto small_token = str(small_app.at("token"));
  for (int i = 0; i < 3; ++i) {
    auto purchase_token = unique("small");
    register_purchase(s, package, "gold", purchase_token, "product");
    auto data = purchase_data_json(package, "gold", purchase_token);
    small.push_back(
      std::async(std::launch::async, [&, body = store_b_body(data, sign_purchase(data))] {
        return service.post(orders, body, small_token);
      }));
    REQUIRE(small.back().wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    auto r = small.back().get();
    INFO(r.body);
    CHECK(r.status == 200);
  }
  CHECK(metric(service, "receiptd_persistence_save_batches_in_flight") == 1);

  lock.release();
  CHECK(first.get().status == 200);
  CHECK(second.get().status == 200);
}

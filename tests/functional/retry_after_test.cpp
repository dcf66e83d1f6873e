// A store that answers 429 with a Retry-After, through the real binary: the
// emulator sends it (delta-seconds, or an HTTP date), receiptd stores the upload
// pending, and neither the upload's first revalidation nor a revalidation job's
// next attempt is due before the time the store asked for. The jobs' times are
// read back with receiptctl from the database under test.
#include <catch2/catch.hpp>

#include <chrono>
#include <ctime>

#include "harness.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* transactions = "/client/store_a/transactions";
constexpr const char* orders = "/client/store_b/purchase_orders";
constexpr std::int64_t hour_ms = 3600LL * 1000;

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// An IMF-fixdate (RFC 9110 §5.6.7) of `ms`, whole seconds.
std::string http_date(std::int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return text;
}

// The record's job as receiptctl lists it; null when it has none.
json::value job_of(suite& s, const std::string& record_id) {
  auto jobs = s.ctl({"jobs"});
  REQUIRE(jobs.code == 0);
  for (auto& j : jobs.json.as_array())
    if (str(j.at("record_id")) == record_id)
      return j;
  return nullptr;
}

std::int64_t next_attempt_ms(const json::value& job) {
  return job.at("next_attempt_at").at("ms").to_number<std::int64_t>();
}

// A job that ran once more after its store answered `status`: its last_error says so.
json::value job_after(suite& s, const std::string& record_id, const std::string& status) {
  json::value job = nullptr;
  CHECK(eventually([&] {
    job = job_of(s, record_id);
    return !job.is_null() && job.at("attempts").to_number<int>() >= 1
      && str(job.at("last_error")).find(status) != std::string::npos;
  }));
  return job;
}

json::object transaction_fields(const storekit_app& app, const std::string& id) {
  return json::object{{"transaction_id", id},
                      {"bundle_id", app.bundle_id},
                      {"product_id", app.bundle_id + ".monthly"},
                      {"environment", "Sandbox"},
                      {"purchase_date_ms", 1717243200000}};
}

struct play_app {
  test_app app;
  std::string package;
};

play_app fresh_play_app(suite& s) {
  auto package = unique_package("limited");
  return {create_store_b_app(s, package, test_licence_key()), package};
}

void register_play(suite& s, const play_app& a, const std::string& token, int status,
                   const std::string& retry_after = "") {
  json::object body{{"package_name", a.package},
                    {"product_id", "gold"},
                    {"token", token},
                    {"kind", "product"},
                    {"http_status", status}};
  if (!retry_after.empty())
    body["retry_after"] = retry_after;
  s.emulator.control("POST", "/control/store_b/purchases", body);
}

http_response upload_play(suite& s, const play_app& a, const std::string& token) {
  auto data = purchase_data_json(a.package, "gold", token);
  return s.service.post(orders, store_b_body(data, sign_purchase(data)), a.app.token);
}

// The 206 of an upload the store answered 429 with Retry-After: 120: its own
// Retry-After and its job's first attempt are two minutes out, not the backoff's
// fraction of a second.
void check_first_attempt(suite& s, const http_response& r, std::int64_t before) {
  INFO(r.body);
  REQUIRE(r.status == 206);
  auto seconds = std::stoll(r.header("retry-after"));
  CHECK(seconds >= 119);
  CHECK(seconds <= 120);
  auto job = job_of(s, str(r.json().at("id")));
  REQUIRE(!job.is_null());
  CHECK(next_attempt_ms(job) >= before + 120'000);
  CHECK(next_attempt_ms(job) <= now_ms() + 120'000);
  CHECK(job.at("attempts") == 0);
}

} // namespace

TEST_CASE("App Store Server API 429 with Retry-After: no attempt before it", "[retry_after]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("limited"));

  SECTION("the upload's first revalidation (Retry-After in seconds)") {
    auto f = transaction_fields(app, fresh_transaction_id());
    f["http_status"] = 429;
    f["retry_after"] = "120";
    auto before = now_ms();
    auto r = s.service.post(transactions, transaction_body(register_transaction(s, f)), app.token);
    check_first_attempt(s, r, before);
  }
  SECTION("a revalidation job's next attempt (Retry-After as an HTTP date)") {
    auto f = transaction_fields(app, fresh_transaction_id());
    f["http_status"] = 503; // no Retry-After: revalidated within the backoff
    auto r = s.service.post(transactions, transaction_body(register_transaction(s, f)), app.token);
    INFO(r.body);
    REQUIRE(r.status == 206);
    const auto until = (now_ms() / 1000 + 2 * 3600) * 1000; // two hours out, whole seconds
    f["http_status"] = 429;
    f["retry_after"] = http_date(until);
    register_transaction(s, f);
    auto job = job_after(s, str(r.json().at("id")), "429");
    REQUIRE(!job.is_null());
    CHECK(next_attempt_ms(job) == until);
  }
}

TEST_CASE("Play Developer API 429 with Retry-After: no attempt before it", "[retry_after]") {
  auto& s = the_suite();
  auto a = fresh_play_app(s);

  SECTION("the upload's first revalidation (Retry-After in seconds)") {
    auto token = unique("limited");
    register_play(s, a, token, 429, "120");
    auto before = now_ms();
    check_first_attempt(s, upload_play(s, a, token), before);
  }
  SECTION("a revalidation job's next attempt (Retry-After as an HTTP date)") {
    auto token = unique("limited");
    register_play(s, a, token, 503);
    auto r = upload_play(s, a, token);
    INFO(r.body);
    REQUIRE(r.status == 206);
    const auto until = (now_ms() / 1000 + 2 * 3600) * 1000;
    register_play(s, a, token, 429, http_date(until));
    auto job = job_after(s, str(r.json().at("id")), "429");
    REQUIRE(!job.is_null());
    CHECK(next_attempt_ms(job) == until);
    CHECK(next_attempt_ms(job) - now_ms() > hour_ms);
  }
}

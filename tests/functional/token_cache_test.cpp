// The token cache through the real binary with the shipped defaults
// (auth.token-cache-ttl=5min, auth.revocation-check=1s), on the database under test:
// a repeated token is not looked up again, and a token revoked with receiptctl is
// refused within the check interval while other apps' tokens keep working; uploads
// that arrive while their token is being looked up share that one lookup.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "harness.hpp"
#include "tests/support/db/raw_sql.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";

// An app with a registered purchase, and the upload of that purchase.
struct uploader {
  test_app app;
  std::string body;
};

uploader make_uploader(suite& s) {
  auto package = unique_package("cache");
  uploader u{create_store_b_app(s, package, test_licence_key()), ""};
  auto token = unique("tok");
  register_purchase(s, package, "gold", token, "product");
  auto data = purchase_data_json(package, "gold", token);
  u.body = store_b_body(data, sign_purchase(data));
  return u;
}

// "actor/message" of every span of a trace, in the order they were written.
std::vector<std::string> spans_of(const std::string& trace_file, const std::string& trace_id) {
  std::vector<std::string> out;
  std::istringstream lines(read_text(trace_file));
  for (std::string line; std::getline(lines, line);) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec || !v.is_object() || v.at("trace_id").as_string() != trace_id)
      continue;
    out.push_back(std::string(v.at("actor").as_string()) + "/"
                  + std::string(v.at("message").as_string()));
  }
  return out;
}

bool has(const std::vector<std::string>& spans, const std::string& span) {
  return std::find(spans.begin(), spans.end(), span) != spans.end();
}

} // namespace

TEST_CASE("shipped token cache: a revoked token is refused within 2 s, others keep working",
          "[token_cache][401]") {
  auto& s = the_suite();
  auto args = standard_service_args(s);
  std::erase(args, no_token_cache); // the shipped defaults
  auto dir = make_temp_dir("receiptd-token-cache");
  service_process cached(dir, s.db_url, args);
  cached.start();
  auto mine = make_uploader(s);
  auto theirs = make_uploader(s);

  // The first upload looks the token up; the second is answered from the cache.
  auto first = unique("first"), second = unique("second");
  REQUIRE(cached.post(orders, mine.body, mine.app.token, {"X-Request-Id: " + first}).status == 200);
  REQUIRE(cached.post(orders, mine.body, mine.app.token, {"X-Request-Id: " + second}).status
          == 200);
  REQUIRE(cached.post(orders, theirs.body, theirs.app.token).status == 200);
  // Spans are written behind the answers: wait until each upload's save is there
  // (its lookup, if any, ended before the save began).
  for (const auto& id : {first, second})
    REQUIRE(eventually([&] { return has(spans_of(cached.trace_file(), id), "persistence/save"); }));
  CHECK(has(spans_of(cached.trace_file(), first), "persistence/authenticate"));
  CHECK_FALSE(has(spans_of(cached.trace_file(), second), "persistence/authenticate"));

  auto revoked = s.ctl({"token", "revoke", mine.app.token});
  INFO(revoked.err);
  REQUIRE(revoked.code == 0);
  auto refused_within_2s
    = eventually([&] { return cached.post(orders, mine.body, mine.app.token).status == 401; },
                 std::chrono::seconds(2));
  CHECK(refused_within_2s);
  auto after = cached.post(orders, mine.body, mine.app.token);
  INFO(after.body);
  CHECK(after.status == 401);
  CHECK(cached.post(orders, theirs.body, theirs.app.token).status == 200);
  CHECK(cached.stop() == 0);
}

// PostgreSQL notifies every change to apps and tokens; the running service hears
// it while tokens are cached: a revocation applies at once, though the check that
// would otherwise find it runs only every minute here.
TEST_CASE("a revoked token is refused as soon as the database's notice is heard",
          "[token_cache][401]") {
  auto& s = the_suite();
  if (s.dialect != receiptd::db::dialect::postgresql)
    return; // SQLite has no notices: the check every auth.revocation-check finds it
  auto args = standard_service_args(s);
  std::erase(args, no_token_cache);
  args.push_back("--auth.revocation-check=60s");
  auto dir = make_temp_dir("receiptd-token-notice");
  service_process cached(dir, s.db_url, args);
  cached.start();
  auto mine = make_uploader(s);
  auto theirs = make_uploader(s);
  REQUIRE(cached.post(orders, mine.body, mine.app.token).status == 200);
  REQUIRE(cached.post(orders, theirs.body, theirs.app.token).status == 200);
  // The service listens from its first cached token on (a change made before it
  // listens is found by the check its first notice starts): wait until it does.
  REQUIRE(eventually([&] {
    return query_number(s.db_url, "SELECT count(*) FROM pg_stat_activity"
                                  " WHERE query = 'LISTEN receiptd_auth'")
      > 0;
  }));
  REQUIRE(cached.post(orders, mine.body, mine.app.token).status == 200);

  auto started = std::chrono::steady_clock::now();
  REQUIRE(s.ctl({"token", "revoke", mine.app.token}).code == 0);
  auto refused
    = eventually([&] { return cached.post(orders, mine.body, mine.app.token).status == 401; },
                 std::chrono::seconds(20));
  CHECK(refused);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  CHECK(cached.post(orders, theirs.body, theirs.app.token).status == 200);
  CHECK(cached.stop() == 0);
}

TEST_CASE("shipped token cache: uploads arriving during their token's lookup share it",
          "[token_cache][200]") {
  auto& s = the_suite();
  if (s.dialect != receiptd::db::dialect::postgresql)
    return; // the lookup is held with a PostgreSQL table lock (the actor tests cover the rest)
  auto args = standard_service_args(s);
  std::erase(args, no_token_cache);
  auto dir = make_temp_dir("receiptd-token-lookup");
  service_process cached(dir, s.db_url, args);
  cached.start();
  auto package = unique_package("herd");
  auto app = create_store_b_app(s, package, test_licence_key());
  constexpr int uploads = 8;
  std::vector<std::string> bodies, ids;
  for (int i = 0; i < uploads; ++i) {
    auto token = unique("tok");
    register_purchase(s, package, "gold", token, "product");
    auto data = purchase_data_json(package, "gold", token);
    bodies.push_back(store_b_body(data, sign_purchase(data)));
    ids.push_back(unique("herd"));
  }

  // The token's lookup waits on the lock: every upload arrives while it is out.
  held_transaction lock(s.db_url, "LOCK TABLE access_tokens IN ACCESS EXCLUSIVE MODE");
  std::vector<int> statuses(uploads);
  std::vector<std::thread> clients;
  for (int i = 0; i < uploads; ++i)
    clients.emplace_back([&, i] {
      statuses[i] = cached.post(orders, bodies[i], app.token, {"X-Request-Id: " + ids[i]}).status;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  lock.release();
  for (auto& c : clients)
    c.join();
  for (int status : statuses)
    CHECK(status == 200);

  int lookups = 0;
  for (const auto& id : ids) {
    REQUIRE(eventually([&] { return has(spans_of(cached.trace_file(), id), "persistence/save"); }));
    auto spans = spans_of(cached.trace_file(), id);
    lookups += static_cast<int>(std::count(spans.begin(), spans.end(), "persistence/authenticate"));
  }
  CHECK(lookups == 1);
  CHECK(cached.stop() == 0);
}

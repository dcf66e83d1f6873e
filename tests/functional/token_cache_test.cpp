// The token cache through the real binary with the shipped defaults
// (auth.token-cache-ttl=5min, auth.revocation-check=1s), on the database under test:
// a repeated token is not looked up again, and a token revoked with receiptctl is
// refused within the check interval while other apps' tokens keep working.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "harness.hpp"

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

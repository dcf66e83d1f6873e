// An app's context (actors/app_context.hpp) compiles the app's stored entitlement
// rules on first use; stored rules that cannot be used (a row written by hand)
// match nothing and say why.
#include <catch2/catch.hpp>

#include <thread>

#include "actors/app_context.hpp"

using namespace receiptd;
using namespace receiptd::actors;

namespace {

app_context_ptr context_with(const std::string& rules) {
  model::app a;
  a.id = "app-1";
  a.entitlement_rules = rules;
  return make_app_context(a);
}

} // namespace

TEST_CASE("app context: the stored entitlement rules, compiled once",
          "[actors][app_context][entitlements]") {
  auto ctx = context_with(
    R"({"premium":{"monthly":{"product_id":["^premium_monthly$","1month"]}},)"
    R"("pro":{"monthly":{"product_id":["month"]}}})");
  // Several threads asking at once get the one compiled matcher.
  std::vector<const app_context::compiled_entitlements*> seen(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&, i] { seen[i] = &ctx->entitlements(); });
  for (auto& t : threads)
    t.join();
  for (auto* s : seen)
    CHECK(s->matcher == seen[0]->matcher);
  const auto& compiled = ctx->entitlements();
  CHECK(compiled.problem.empty());
  CHECK(compiled.matcher->tags_for_product("premium_monthly")
        == std::vector<std::string>{"premium/monthly", "pro/monthly"});
  CHECK(compiled.matcher->tags_for_product("pro.1year").empty());
}

TEST_CASE("app context: no rules, or unusable ones, match nothing",
          "[actors][app_context][entitlements]") {
  for (std::string none : {"{}", ""}) {
    auto ctx = context_with(none);
    CHECK(ctx->entitlements().problem.empty());
    CHECK(ctx->entitlements().matcher->source().empty());
  }
  auto broken = context_with(R"({"premium":{"monthly":{"product_id":["(premium"]}}})");
  CHECK(broken->entitlements().matcher->tags_for_product("premium").empty());
  CHECK(broken->entitlements().problem
        == "app app-1: unusable entitlement rules, none apply: pattern \"(premium\": missing ): "
           "(premium");
  auto not_json = context_with("premium");
  CHECK(not_json->entitlements().problem.find("not a JSON object") != std::string::npos);
}

// Entitlement rules (model/entitlements/): product id → "entitlement/offering" tags as
// Mbaasy's entitlements.md defines them (RE2 patterns matched anywhere unless
// anchored), validation of what receiptctl stores, and the stored JSON. Every
// matching case runs twice: through the RE2::Set and matched one pattern at a time.
#include <catch2/catch.hpp>

#include "model/entitlements/matcher.hpp"

using namespace receiptd::model;
using namespace receiptd::model::entitlements;

namespace {

using strings = std::vector<std::string>;

// `r` with the offering's product-id patterns set; the rules must be accepted.
rules set(rules r, const std::string& entitlement, const std::string& offering,
          const strings& patterns) {
  auto out = with_offering(std::move(r), entitlement, offering, pattern_subject::product_id,
                           patterns);
  INFO((out ? "" : out.err().message()));
  REQUIRE(out.ok());
  return std::move(out).value();
}

// Through the set (the default) or one pattern at a time (a set budget too small
// to build it).
std::shared_ptr<const matcher> compiled(const rules& r, bool through_set) {
  matcher::tuning t;
  if (!through_set)
    t.set_memory_bytes = 1;
  auto m = matcher::compile(r, t);
  INFO((m ? "" : m.err().message()));
  REQUIRE(m.ok());
  REQUIRE((*m)->uses_set(pattern_subject::product_id) == (through_set && !r.empty()));
  return *m;
}

// The refusal's field error (the first).
field_error refusal_of(const result<rules>& r) {
  REQUIRE_FALSE(r.ok());
  return r.errors().front();
}

// Mbaasy's example app, its `pro` patterns written as the prose means them.
rules example_app() {
  rules r;
  r = set(r, "premium", "monthly", {R"(^premium.\w+.1month.v\d+$)", "^premium_monthly$"});
  r = set(r, "premium", "3monthly", {R"(^premium.\w+.3month.v\d+$)"});
  r = set(r, "premium", "yearly", {R"(^premium.\w+.12month.v\d+$)", "^premium_yearly$"});
  r = set(r, "pro", "monthly", {R"(^pro.\w+.1month.v\d+$)", "^pro_monthly$"});
  r = set(r, "pro", "3monthly", {R"(^pro.\w+.3month.v\d+$)"});
  r = set(r, "pro", "yearly", {R"(^pro.\w+.12month.v\d+$)", "^pro_yearly$"});
  return r;
}

} // namespace

TEST_CASE("entitlements: Mbaasy's example tags its product ids", "[entitlements]") {
  auto m = compiled(example_app(), GENERATE(true, false));
  CHECK(m->tags_for_product("premium.ios.1month.v2") == strings{"premium/monthly"});
  CHECK(m->tags_for_product("premium.android.1month.v5") == strings{"premium/monthly"});
  CHECK(m->tags_for_product("pro.ios.3month.v6") == strings{"pro/3monthly"});
  CHECK(m->tags_for_product("premium_yearly") == strings{"premium/yearly"});
  CHECK(m->tags_for_product("pro_monthly") == strings{"pro/monthly"});
  CHECK(m->tags_for_product("coins.100").empty());
  CHECK(m->tags_for_product("").empty());
  auto matched = m->matches_product("premium.ios.12month.v1");
  REQUIRE(matched.size() == 1);
  CHECK(matched[0] == match{"premium", "yearly"});
}

TEST_CASE("entitlements: a pattern matches anywhere unless anchored", "[entitlements]") {
  auto through_set = GENERATE(true, false);
  SECTION("unanchored: anywhere in the product id") {
    auto m = compiled(set({}, "premium", "any", {"premium"}), through_set);
    CHECK(m->tags_for_product("premium") == strings{"premium/any"});
    CHECK(m->tags_for_product("com.example.premium.monthly") == strings{"premium/any"});
    CHECK(m->tags_for_product("extra_premium") == strings{"premium/any"});
    CHECK(m->tags_for_product("prem").empty());
    CHECK(m->tags_for_product("Premium").empty()); // case counts, as in RE2 by default
  }
  SECTION("^…$: the whole product id") {
    auto m = compiled(set({}, "premium", "monthly", {"^premium.1month$"}), through_set);
    CHECK(m->tags_for_product("premium.1month") == strings{"premium/monthly"});
    CHECK(m->tags_for_product("premium_1month") == strings{"premium/monthly"}); // '.' is any
    CHECK(m->tags_for_product("premium.1month.extra").empty());
    CHECK(m->tags_for_product("x.premium.1month").empty());
    CHECK(m->tags_for_product("premium.1month\n").empty()); // $ is the end, not a newline
  }
  SECTION("^ alone: a prefix; $ alone: a suffix") {
    auto m = compiled(set(set({}, "premium", "monthly", {"^premium.1month"}), "extra", "any",
                          {"extra$"}),
                      through_set);
    CHECK(m->tags_for_product("premium.1month.extra") == strings{"extra/any", "premium/monthly"});
    CHECK(m->tags_for_product("premium.1month.extras") == strings{"premium/monthly"});
    CHECK(m->tags_for_product("old.extra") == strings{"extra/any"});
    CHECK(m->tags_for_product("x.premium.1month").empty());
  }
  SECTION("RE2 flags inside the pattern") {
    auto m = compiled(set({}, "premium", "any", {"(?i)^premium"}), through_set);
    CHECK(m->tags_for_product("PREMIUM.monthly") == strings{"premium/any"});
  }
}

TEST_CASE("entitlements: several offerings match, each once, in the rules' order",
          "[entitlements]") {
  auto through_set = GENERATE(true, false);
  // Set in another order than the names sort: the tags still come sorted.
  rules r;
  r = set(r, "pro", "monthly", {"monthly$", "^pro"});
  r = set(r, "premium", "yearly", {"yearly"});
  r = set(r, "premium", "monthly", {"1month", "monthly"});
  r = set(r, "all", "everything", {".*"});
  auto m = compiled(r, through_set);
  CHECK(m->tags_for_product("pro.1month.monthly")
        == strings{"all/everything", "premium/monthly", "pro/monthly"});
  CHECK(m->tags_for_product("premium.yearly") == strings{"all/everything", "premium/yearly"});
  CHECK(m->tags_for_product("") == strings{"all/everything"}); // ".*" matches the empty id

  // The same rules set in another order are the same rules.
  rules again;
  again = set(again, "all", "everything", {".*"});
  again = set(again, "premium", "monthly", {"1month", "monthly"});
  again = set(again, "premium", "yearly", {"yearly"});
  again = set(again, "pro", "monthly", {"monthly$", "^pro"});
  CHECK(again == r);
  CHECK(to_json(again) == to_json(r));
}

TEST_CASE("entitlements: no rules match nothing", "[entitlements]") {
  CHECK(matcher::none()->tags_for_product("premium").empty());
  CHECK(matcher::none()->source().empty());
  auto m = compiled({}, true);
  CHECK(m->matches_product("anything").empty());
}

TEST_CASE("entitlements: patterns that cannot compile are refused with RE2's error",
          "[entitlements]") {
  auto refused = [](const std::string& pattern) {
    return refusal_of(with_offering({}, "premium", "monthly", pattern_subject::product_id,
                                    {"^fine$", pattern}));
  };
  auto e = refused("(premium");
  CHECK(e.field == "pattern");
  CHECK(e.code == "invalid_pattern");
  CHECK(e.message == "pattern \"(premium\": missing ): (premium");
  // Backtracking-only constructs are not RE2: refused, not run slowly.
  CHECK(refused(R"((a)\1)").message.find("invalid escape sequence") != std::string::npos);
  CHECK(refused("(?=premium)").message.find("invalid perl operator") != std::string::npos);
  CHECK(refused("a{1001}").message.find("invalid repetition size") != std::string::npos);
  CHECK(refused("((a{100}){100}){100}").message.find("invalid repetition size")
        != std::string::npos);
  // Within RE2's syntax but too large a program for a pattern's memory budget.
  CHECK(refused(R"(\pL{200})").message.find("pattern too large") != std::string::npos);
  CHECK(refused("").code == "missing");
  CHECK(refused(std::string(max_pattern_bytes + 1, 'a')).code == "too_long");
  CHECK(check_pattern(std::string(max_pattern_bytes, 'a')).ok());
  CHECK(check_pattern("\xff").errors().front().code == "invalid_pattern"); // not UTF-8
}

TEST_CASE("entitlements: names and counts are bounded", "[entitlements]") {
  for (const auto& name : strings{"premium", "3monthly", "pro.v2", "Gold_Tier-1", std::string(64, 'a')})
    CHECK(valid_name(name));
  for (const auto& name : strings{"", "premium/monthly", "pro monthly", "-pro", ".pro", "prémium",
                                 std::string(65, 'a'), std::string("a\0b", 3)})
    CHECK_FALSE(valid_name(name));
  auto bad_entitlement
    = refusal_of(with_offering({}, "pre/mium", "monthly", pattern_subject::product_id, {"x"}));
  CHECK(bad_entitlement.field == "entitlement");
  CHECK(bad_entitlement.code == "invalid_name");
  CHECK(refusal_of(with_offering({}, "premium", "", pattern_subject::product_id, {"x"})).field
        == "offering");
  CHECK(refusal_of(with_offering({}, "premium", "monthly", pattern_subject::product_id, {}))
          .code
        == "missing");

  strings many;
  for (std::size_t i = 0; i <= max_patterns_per_offering; ++i)
    many.push_back("^p" + std::to_string(i) + "$");
  CHECK(refusal_of(with_offering({}, "premium", "monthly", pattern_subject::product_id, many))
          .code
        == "too_many");
  many.pop_back();
  rules r;
  std::size_t offerings = 0;
  while (r.pattern_count() + many.size() <= max_patterns)
    r = set(r, "premium", "o" + std::to_string(offerings++), many);
  auto over = refusal_of(with_offering(r, "pro", "monthly", pattern_subject::product_id, many));
  CHECK(over.code == "too_many");
  // Duplicates among the patterns given count once.
  auto deduped = set({}, "premium", "monthly", {"a", "b", "a"});
  CHECK(deduped.entitlements[0].offerings[0].patterns.size() == 2);
}

TEST_CASE("entitlements: a pathological pattern is matched, not backtracked",
          "[entitlements]") {
  // Catastrophic for a backtracking engine (exponential in the input's length);
  // RE2 answers in one linear pass. Outcomes only: never a timing.
  rules r;
  r = set(r, "nested", "plus", {"^(a+)+$"});
  r = set(r, "alternation", "star", {"^(a|aa)*c"});
  r = set(r, "nested", "x", {"(x+x+)+y"});
  auto m = compiled(r, GENERATE(true, false));
  std::string as(100'000, 'a');
  CHECK(m->tags_for_product(as) == strings{"nested/plus"});
  CHECK(m->tags_for_product(as + "!").empty());
  CHECK(m->tags_for_product(as + "c") == strings{"alternation/star"});
  CHECK(m->tags_for_product(std::string(50'000, 'x')).empty());
  CHECK(m->tags_for_product(std::string(50'000, 'x') + "y") == strings{"nested/x"});
}

TEST_CASE("entitlements: removing an offering or an entitlement", "[entitlements]") {
  auto r = example_app();
  auto fewer = without(r, "premium", std::string_view("3monthly"));
  REQUIRE(fewer);
  CHECK(compiled(*fewer, true)->tags_for_product("premium.ios.3month.v1").empty());
  CHECK(compiled(*fewer, true)->tags_for_product("premium_monthly") == strings{"premium/monthly"});
  CHECK_FALSE(without(*fewer, "premium", std::string_view("3monthly")));
  CHECK_FALSE(without(r, "gold"));

  auto no_pro = without(r, "pro");
  REQUIRE(no_pro);
  CHECK(no_pro->entitlements.size() == 1);
  // An entitlement whose last offering goes is gone too.
  auto single = set({}, "gold", "lifetime", {"^gold$"});
  auto none = without(single, "gold", std::string_view("lifetime"));
  REQUIRE(none);
  CHECK(none->empty());
}

TEST_CASE("entitlements: the stored JSON round-trips and is checked when read",
          "[entitlements]") {
  auto r = example_app();
  auto text = to_json(r);
  CHECK(text.rfind(R"({"premium":{"3monthly":{"product_id":["^premium.\\w+.3month.v\\d+$"]},)", 0)
        == 0);
  auto back = parse_rules(text);
  REQUIRE(back.ok());
  CHECK(*back == r);
  CHECK(to_json({}) == "{}");
  CHECK(parse_rules("")->empty());
  CHECK(parse_rules("{}")->empty());
  // Keys in any order read as the same rules.
  auto reordered = parse_rules(R"({"b":{"y":{"product_id":["y"]},"x":{"product_id":["x"]}},)"
                               R"("a":{"z":{"product_id":["z"]}}})");
  REQUIRE(reordered.ok());
  CHECK(to_json(*reordered)
        == R"({"a":{"z":{"product_id":["z"]}},"b":{"x":{"product_id":["x"]},"y":{"product_id":["y"]}}})");

  // What a row written by hand may hold.
  for (const char* bad :
       {"[]", "not json", R"({"premium":[]})", R"({"premium":{}})", R"({"premium":{"m":[]}})",
        R"({"premium":{"m":{}}})", R"({"premium":{"m":{"product_id":[]}}})",
        R"({"premium":{"m":{"product_id":"x"}}})", R"({"premium":{"m":{"product_id":[1]}}})",
        R"({"premium":{"m":{"purchase_country":["^FR$"]}}})",
        R"({"premium":{"m":{"original_application_version_before":["^2"]}}})",
        R"({"pre/mium":{"m":{"product_id":["x"]}}})"}) {
    INFO(bad);
    CHECK_FALSE(parse_rules(bad).ok());
  }
  // A pattern that does not compile is read (a listing shows it), and refused by
  // the matcher with RE2's error.
  auto broken = parse_rules(R"({"premium":{"m":{"product_id":["^ok$","("]}}})");
  REQUIRE(broken.ok());
  CHECK(validate(*broken).errors().front().code == "invalid_pattern");
  auto m = matcher::compile(*broken);
  REQUIRE_FALSE(m.ok());
  CHECK(m.err().message() == "pattern \"(\": missing ): (");
  CHECK(parse_pattern_subject("product_id") == pattern_subject::product_id);
  CHECK(parse_pattern_subject("original_application_version")
        == pattern_subject::original_application_version);
  CHECK(parse_pattern_subject("original_application_version_before")
        == pattern_subject::original_application_version_before);
  CHECK_FALSE(parse_pattern_subject("purchase_country"));
}

// Entitlement rules (model/entitlements/): what compiling an app's rules costs
// (once per version of the app's row) and what tagging one product id costs,
// through the RE2::Set and matched one pattern at a time (the set's fallback), for
// 4 to 256 patterns shaped like Mbaasy's example (`^premium.\w+.1month.v\d+$`).
// Prints microseconds (wall and CPU) per call.
//
//   entitlements_bench [iterations]   (default 20000 matches; compiles: a tenth)

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/micro.hpp"
#include "model/entitlements/matcher.hpp"

namespace ent = receiptd::model::entitlements;

namespace {

// `n` patterns over n/4 entitlements of four offerings each.
ent::rules rules_of(int n) {
  static const char* durations[] = {"1month", "3month", "6month", "12month"};
  ent::rules r;
  for (int i = 0; i < n; ++i) {
    auto plan = "plan" + std::to_string(i / 4);
    auto duration = std::string(durations[i % 4]);
    auto next = ent::with_offering(std::move(r), plan, duration, ent::pattern_subject::product_id,
                                   {"^" + plan + R"(.\w+.)" + duration + R"(.v\d+$)"});
    if (!next) {
      std::fprintf(stderr, "%s\n", next.err().message().c_str());
      std::exit(1);
    }
    r = std::move(*next);
  }
  return r;
}

} // namespace

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  const std::vector<std::string> ids = {"plan0.ios.1month.v4", "plan1.android.12month.v2",
                                        "com.example.coins_100", "premium_monthly"};
  for (int n : {4, 16, 64, 256}) {
    auto r = rules_of(n);
    std::printf("%d patterns\n", n);
    receiptd::bench::measure("compile (parse_rules + matcher::compile)",
                             std::max(1, iterations / 10), [&] {
                               auto parsed = ent::parse_rules(ent::to_json(r));
                               (void)ent::matcher::compile(*parsed);
                             });
    auto set = *ent::matcher::compile(r);
    ent::matcher::tuning one_by_one_tuning;
    one_by_one_tuning.set_memory_bytes = 1;
    auto one_by_one = *ent::matcher::compile(r, one_by_one_tuning);
    std::size_t i = 0;
    receiptd::bench::measure("tags_for_product, RE2::Set", iterations,
                             [&] { (void)set->tags_for_product(ids[i++ % ids.size()]); });
    receiptd::bench::measure("tags_for_product, one pattern at a time", iterations,
                             [&] { (void)one_by_one->tags_for_product(ids[i++ % ids.size()]); });
  }
  return 0;
}

#pragma once
// An app's entitlement rules compiled once (per version of the app's row,
// actors/app_context.hpp) and shared read-only: product id → the offerings whose
// patterns match it, as Mbaasy's in-app purchase resource lists them
// ("entitlements": ["premium/monthly"]).
//
// RE2 (never std::regex, which backtracks): time linear in the product id's
// length whatever the patterns. All of a subject's patterns are matched in one
// pass of an RE2::Set (about 0.1 µs per product id for 4 to 256 patterns, where
// matching the patterns one by one costs 0.05 µs per pattern:
// bench/entitlements_bench.cpp); when the set cannot be built or its DFA runs
// out of memory, the patterns are matched one by one, with the same answer.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/entitlements/rules.hpp"

namespace receiptd::model::entitlements {

// An offering that matched.
struct match {
  std::string entitlement;
  std::string offering;
  std::string tag() const { return entitlement + "/" + offering; } // "premium/monthly"
  bool operator==(const match&) const = default;
};

class matcher {
public:
  // Options for tests: the RE2::Set's memory budget (below what the patterns
  // need, the set is not built and the patterns are matched one by one).
  struct tuning {
    std::int64_t set_memory_bytes = 8 << 20;
  };

  // The rules compiled; an error as validate() gives it (a stored row written by
  // hand may hold anything).
  static result<std::shared_ptr<const matcher>> compile(const rules& r);
  static result<std::shared_ptr<const matcher>> compile(const rules& r, tuning t);
  // No rules: nothing matches.
  static std::shared_ptr<const matcher> none();

  ~matcher();

  // Every offering with a pattern of `subject` that matches `value`, each once, in
  // the rules' order (entitlement name, then offering name).
  std::vector<match> matches(pattern_subject subject, std::string_view value) const;
  std::vector<match> matches_product(std::string_view product_id) const {
    return matches(pattern_subject::product_id, product_id);
  }
  // The same as tags: {"premium/monthly", "pro/monthly"}.
  std::vector<std::string> tags_for_product(std::string_view product_id) const;

  const rules& source() const { return rules_; }
  // Whether the subject's patterns are matched through one RE2::Set (else one by one).
  bool uses_set(pattern_subject subject) const;

  struct impl;
  matcher(rules r, std::unique_ptr<impl> p);

private:
  rules rules_;
  std::unique_ptr<impl> impl_;
};

} // namespace receiptd::model::entitlements

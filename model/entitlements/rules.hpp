#pragma once
// An app's entitlement rules, as Mbaasy defines them ("Entitlements", Mbaasy
// docs getting_started/entitlements.md): named entitlements (what a purchase
// unlocks: `premium`, `pro`), each with named offerings (how it is sold:
// `monthly`, `yearly`), each with regular expressions on product ids. A pattern
// matches anywhere in the product id unless anchored (`^premium_monthly$`).
// Patterns are RE2 syntax, matched in time linear in the product id whatever
// the pattern (model/entitlements/matcher.hpp).
//
// Pure values: the app row stores them as JSON (to_json / parse_rules), receiptctl
// edits them (with_offering, without), the actors compile them once per version of
// the app (matcher::compile).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"

namespace receiptd::model::entitlements {

// What a pattern is matched against: a purchase's product id, or the
// original application version of the customer's app transaction (StoreKit 2
// AppTransaction.originalAppVersion, what an app that turned from paid to free
// reads to keep its early buyers' features). On the version, either an RE2
// pattern like product ids, or a bound ("before 2.0"): a regular expression over
// dotted versions is awkward ("1.9" and "1.10" both before "2"), so a bound
// compares numerically, component by component (version_before).
enum class pattern_subject {
  product_id,                          // stored as "product_id"
  original_application_version,        // stored as "original_application_version"
  original_application_version_before, // stored as "original_application_version_before"
};
inline constexpr pattern_subject all_subjects[]
  = {pattern_subject::product_id, pattern_subject::original_application_version,
     pattern_subject::original_application_version_before};
// Whether a subject's "patterns" are version bounds rather than RE2 patterns.
constexpr bool is_version_bound(pattern_subject s) {
  return s == pattern_subject::original_application_version_before;
}
std::string_view to_string(pattern_subject s);
std::optional<pattern_subject> parse_pattern_subject(std::string_view text);

struct pattern {
  pattern_subject subject = pattern_subject::product_id;
  std::string expression; // RE2 syntax
  bool operator==(const pattern&) const = default;
};

struct offering {
  std::string name;
  // At least one, each once; grouped by subject (in all_subjects' order), each
  // subject's in the order given.
  std::vector<pattern> patterns;
  bool operator==(const offering&) const = default;
};

struct entitlement {
  std::string name;
  std::vector<offering> offerings; // at least one, sorted by name
  bool operator==(const entitlement&) const = default;
};

// Entitlements sorted by name: listings, the stored JSON and the matcher's tags
// all come in this order.
struct rules {
  std::vector<entitlement> entitlements;
  bool empty() const { return entitlements.empty(); }
  std::size_t pattern_count() const;
  bool operator==(const rules&) const = default;
};

// Bounds, so that one app's rules cost little to store, compile and match.
inline constexpr std::size_t max_name_bytes = 64;        // an entitlement's or offering's name
inline constexpr std::size_t max_pattern_bytes = 512;    // one pattern
inline constexpr std::size_t max_patterns_per_offering = 64;
inline constexpr std::size_t max_patterns = 256;         // all of an app's patterns
// RE2's memory budget for one pattern (its program and its DFA cache; RE2's own
// default is 8 MiB). A pattern whose program does not fit is refused when it is
// set ("pattern too large - compile failed").
inline constexpr std::int64_t pattern_memory_bytes = 1 << 20;

// A name: 1–64 ASCII letters, digits, '_', '-', '.', starting with a letter or a
// digit. Never '/': a tag is "entitlement/offering".
bool valid_name(std::string_view name);

// Whether the pattern compiles (RE2, the options the matcher uses) within the
// bounds: an error naming the pattern, with RE2's own message
// ("pattern \"(premium\": missing ): (premium").
status check_pattern(std::string_view expression);
// The bounds only (not empty, at most max_pattern_bytes).
status check_pattern_size(std::string_view expression);
// check_pattern's refusal of a pattern RE2 did not compile.
field_error pattern_refusal(std::string_view expression, const std::string& re2_error);

// A version bound: 1 to 4 '.'-separated numbers of 1 to 9 digits ("2", "2.0",
// "1.10.3"); an error naming it otherwise.
status check_version_bound(std::string_view bound);

// Whether dotted version `version` comes before `bound`, compared numerically
// component by component, a missing component as 0 ("1.9" < "1.10" < "2" ==
// "2.0"). A component is the leading digits of its '.'-separated part ("2.0b3"
// compares as 2.0); a part without leading digits counts as 0. nullopt when
// `version` has no digit at all (an empty or foreign version is before nothing).
std::optional<bool> version_before(std::string_view version, std::string_view bound);

// Every name, pattern and bound above, and the order and uniqueness of the names.
// Errors name their field: "entitlement", "offering", "pattern".
status validate(const rules& r);
// The same without compiling the patterns (matcher::compile compiles them once,
// and refuses one that does not compile the way check_pattern does).
status validate_shape(const rules& r);

// The stored form: {"premium":{"monthly":{"product_id":["^premium_monthly$",…]},…},…}
// (names sorted; "{}" for none).
std::string to_json(const rules& r);
// The stored form back, its shape validated (a row written by hand may hold
// anything), its patterns not compiled: matcher::compile does that, and a listing
// still shows a pattern that does not compile. "" counts as no rules.
result<rules> parse_rules(std::string_view json);

// A one-line summary: "premium/monthly, premium/yearly (3 patterns)", or "none".
std::string describe(const rules& r);

// `r` with the offering's `subject` patterns replaced by `expressions` (its other
// subjects' patterns kept); the entitlement and offering are made when missing.
// Validated as a whole; duplicates among `expressions` count once.
result<rules> with_offering(rules r, std::string_view entitlement, std::string_view offering,
                            pattern_subject subject, const std::vector<std::string>& expressions);

// `r` without the entitlement, or without one of its offerings (an entitlement
// left without offerings goes too). nullopt when there was nothing to remove.
std::optional<rules> without(rules r, std::string_view entitlement,
                             std::optional<std::string_view> offering = std::nullopt);

} // namespace receiptd::model::entitlements

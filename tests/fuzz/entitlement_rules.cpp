// An app's entitlement rules (model/entitlements/): the stored JSON read back
// (parse_rules: a row written by hand may hold anything), receiptctl's edits
// (with_offering, without) with hostile names and RE2 patterns, the matcher
// compiled from them, and product ids matched against it.
//
// Input: byte 0: bit 0 matches the product id against the rules as read (else
// as edited), bit 1 also through the matcher's one-by-one fallback; the rest:
// the rules' JSON "|@|" a product id "|@|" an entitlement name "|@|" an offering
// name "|@|" patterns, one a line (what `receiptctl entitlement set` is given).
// (Compiling hostile patterns is most of the cost, a Unicode class such as \pL
// being a large program: each input compiles its patterns for one matcher, and
// each only as often as the product and one reference compile need.)
//
// Properties: a refusal is a field error naming entitlement, offering or
// pattern; accepted rules come back from their stored JSON exactly; they compile
// when every pattern does, with RE2's error otherwise; a product id gets the same
// offerings through the RE2::Set as one pattern at a time, each once, in the
// rules' order, and an offering is matched exactly when one of its patterns
// matches on its own (RE2::PartialMatch).

#include <algorithm>
#include <map>
#include <memory>

#include <re2/re2.h>

#include "model/entitlements/matcher.hpp"
#include "model/entitlements/re2_options.hpp"
#include "model/purchases/rules.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace receiptd;
namespace ent = model::entitlements;

void check_refusal(const model::field_errors& errors) {
  FUZZ_CHECK(!errors.empty());
  for (const auto& e : errors) {
    FUZZ_CHECK(e.field == "entitlement" || e.field == "offering" || e.field == "pattern");
    FUZZ_CHECK(!e.code.empty() && !e.message.empty());
  }
}

// The stored form reads back as the same rules.
void check_stored(const ent::rules& r) {
  FUZZ_CHECK(ent::validate_shape(r).ok());
  auto back = ent::parse_rules(ent::to_json(r));
  FUZZ_CHECK(back.ok() && *back == r);
  FUZZ_CHECK(!ent::describe(r).empty());
}

// Every offering with a product id pattern that matches on its own, in the rules' order
// (compiled with the matcher's options, re2_options.hpp, as receiptctl checks
// them; each distinct pattern once).
std::vector<ent::match> one_by_one(const ent::rules& r, std::string_view product) {
  std::map<std::string, std::unique_ptr<RE2>, std::less<>> compiled;
  std::vector<ent::match> out;
  for (const auto& e : r.entitlements)
    for (const auto& o : e.offerings)
      for (const auto& p : o.patterns) {
        if (p.subject != ent::pattern_subject::product_id)
          continue; // matched against the original application version, not a product id
        auto& re = compiled[p.expression];
        if (!re)
          re = std::make_unique<RE2>(p.expression, ent::pattern_options());
        FUZZ_CHECK(re->ok());
        if (RE2::PartialMatch(re2::StringPiece(product.data(), product.size()), *re)) {
          out.push_back({e.name, o.name});
          break;
        }
      }
  return out;
}

// Compiles when validate() accepts (`valid`: already known to); matches as the
// patterns do one by one.
void check_matching(const ent::rules& r, std::string_view product, bool fallback, bool valid) {
  auto m = ent::matcher::compile(r);
  FUZZ_CHECK(m.ok() == (valid || ent::validate(r).ok()));
  if (!m) {
    check_refusal(m.errors());
    return;
  }
  const auto& matcher = **m;
  FUZZ_CHECK(matcher.source() == r);
  auto found = matcher.matches_product(product);
  FUZZ_CHECK(found == one_by_one(r, product));
  if (fallback && matcher.uses_set(ent::pattern_subject::product_id)) {
    ent::matcher::tuning no_set;
    no_set.set_memory_bytes = 1;
    auto alone = ent::matcher::compile(r, no_set);
    FUZZ_CHECK(alone.ok() && !(*alone)->uses_set(ent::pattern_subject::product_id));
    FUZZ_CHECK((*alone)->matches_product(product) == found);
  }
  auto tags = matcher.tags_for_product(product);
  FUZZ_CHECK(tags.size() == found.size());
  // What the purchase layer reads of them.
  auto rules = model::purchases::rules_of(*m);
  FUZZ_CHECK(rules->tags(product) == tags);
  for (const auto& t : tags) {
    auto name = model::purchases::entitlement_of(t);
    FUZZ_CHECK(ent::valid_name(name) && ent::valid_name(model::purchases::offering_of(t)));
    auto names = rules->names();
    FUZZ_CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
}

std::vector<std::string> lines(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty() && out.size() < 80) {
    auto nl = text.find('\n');
    out.emplace_back(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  return out;
}

// A pattern as "subject:expression".
std::string to_json_key(const ent::pattern& p) {
  return std::string(ent::to_string(p.subject)) + ":" + p.expression;
}

// receiptctl entitlement set / remove on the rules.
void check_edits(const ent::rules& r, std::string_view entitlement, std::string_view offering,
                 const std::vector<std::string>& patterns, std::string_view product,
                 std::optional<bool> match_fallback) {
  auto edited
    = ent::with_offering(r, entitlement, offering, ent::pattern_subject::product_id, patterns);
  if (!edited) {
    check_refusal(edited.errors());
    return;
  }
  check_stored(*edited); // with_offering validated it (each pattern compiled)
  // The offering's product id patterns are exactly those given (each once), in
  // their order; its patterns on the original application version stay.
  const ent::offering* o = nullptr;
  for (const auto& e : edited->entitlements)
    if (e.name == entitlement)
      for (const auto& x : e.offerings)
        if (x.name == offering)
          o = &x;
  FUZZ_CHECK(o != nullptr);
  std::vector<std::string> unique;
  for (const auto& p : patterns)
    if (std::find(unique.begin(), unique.end(), p) == unique.end())
      unique.push_back(p);
  std::vector<std::string> products, others_before, others_after;
  for (const auto& p : o->patterns)
    (p.subject == ent::pattern_subject::product_id ? products : others_after)
      .push_back(to_json_key(p));
  for (const auto& e : r.entitlements)
    if (e.name == entitlement)
      for (const auto& x : e.offerings)
        if (x.name == offering)
          for (const auto& p : x.patterns)
            if (p.subject != ent::pattern_subject::product_id)
              others_before.push_back(to_json_key(p));
  FUZZ_CHECK(products.size() == unique.size());
  for (std::size_t i = 0; i < unique.size() && i < products.size(); ++i)
    FUZZ_CHECK(products[i] == "product_id:" + unique[i]);
  FUZZ_CHECK(others_after == others_before);
  if (match_fallback)
    check_matching(*edited, product, *match_fallback, true);
  // Removed again: the offering goes, and the entitlement with its last one.
  auto removed = ent::without(*edited, entitlement, offering);
  FUZZ_CHECK(removed);
  FUZZ_CHECK(removed->pattern_count() == edited->pattern_count() - o->patterns.size());
  FUZZ_CHECK(ent::validate_shape(*removed).ok());
  auto gone = ent::without(*edited, entitlement);
  FUZZ_CHECK(gone && gone->entitlements.size() + 1 == edited->entitlements.size());
  FUZZ_CHECK(!ent::without(*gone, entitlement));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const bool match_as_read = data[0] & 1;
  const bool fallback = data[0] & 2;
  auto fields = fuzz::split_fields(fuzz::as_text(data + 1, size - 1), 5);
  auto product = fields[1];
  auto patterns = lines(fields[4]); // with_offering checks each (check_pattern)
  auto r = ent::parse_rules(fields[0]);
  if (!r) {
    check_refusal(r.errors());
    check_edits({}, fields[2], fields[3], patterns, product, fallback);
    return 0;
  }
  check_stored(*r);
  if (match_as_read)
    check_matching(*r, product, fallback, false);
  check_edits(*r, fields[2], fields[3], patterns, product,
              match_as_read ? std::nullopt : std::optional<bool>(fallback));
  return 0;
}

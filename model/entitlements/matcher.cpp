#include "model/entitlements/matcher.hpp"

#include <algorithm>
#include <array>

#include <re2/set.h>

#include "model/entitlements/re2_options.hpp"

namespace receiptd::model::entitlements {

namespace {

constexpr std::size_t subject_count = std::size(all_subjects);

std::size_t index_of(pattern_subject s) {
  return static_cast<std::size_t>(s);
}

} // namespace

// Per subject: its patterns compiled one by one, the offering (index into
// `offerings`) each belongs to, and the same patterns as one set when it could be
// built.
struct matcher::impl {
  struct compiled_subject {
    std::vector<std::unique_ptr<RE2>> patterns;
    std::vector<std::size_t> offering_of; // per pattern
    std::unique_ptr<RE2::Set> set;        // null: match one by one
    // A version-bound subject (is_version_bound): its bounds, not compiled.
    std::vector<std::string> bounds;
  };
  std::vector<match> offerings; // in the rules' order
  std::array<compiled_subject, subject_count> subjects;
};

matcher::matcher(rules r, std::unique_ptr<impl> p) : rules_(std::move(r)), impl_(std::move(p)) {}
matcher::~matcher() = default;

result<std::shared_ptr<const matcher>> matcher::compile(const rules& r) {
  return compile(r, tuning{});
}

result<std::shared_ptr<const matcher>> matcher::compile(const rules& r, tuning t) {
  if (auto ok = validate_shape(r); !ok)
    return ok.err();
  auto p = std::make_unique<impl>();
  for (const auto& e : r.entitlements)
    for (const auto& o : e.offerings) {
      auto offering = p->offerings.size();
      p->offerings.push_back({e.name, o.name});
      for (const auto& pat : o.patterns) {
        auto& s = p->subjects[index_of(pat.subject)];
        if (is_version_bound(pat.subject)) {
          s.bounds.push_back(pat.expression);
          s.offering_of.push_back(offering);
          continue;
        }
        auto re = std::make_unique<RE2>(pat.expression, pattern_options());
        if (!re->ok())
          return pattern_refusal(pat.expression, re->error());
        s.patterns.push_back(std::move(re));
        s.offering_of.push_back(offering);
      }
    }
  auto set_options = pattern_options();
  set_options.set_max_mem(t.set_memory_bytes);
  for (auto& s : p->subjects) {
    if (s.patterns.empty())
      continue;
    auto set = std::make_unique<RE2::Set>(set_options, RE2::UNANCHORED);
    bool added = true;
    for (const auto& re : s.patterns)
      added = added && set->Add(re->pattern(), nullptr) >= 0;
    if (added && set->Compile())
      s.set = std::move(set);
  }
  return std::make_shared<const matcher>(r, std::move(p));
}

std::shared_ptr<const matcher> matcher::none() {
  static const auto empty = std::make_shared<const matcher>(rules{}, std::make_unique<impl>());
  return empty;
}

bool matcher::uses_set(pattern_subject subject) const {
  return impl_->subjects[index_of(subject)].set != nullptr;
}

std::vector<match> matcher::matches(pattern_subject subject, std::string_view value) const {
  const auto& s = impl_->subjects[index_of(subject)];
  re2::StringPiece text(value.data(), value.size());
  std::vector<bool> matched(impl_->offerings.size(), false);
  for (std::size_t i = 0; i < s.bounds.size(); ++i)
    if (version_before(value, s.bounds[i]).value_or(false))
      matched[s.offering_of[i]] = true;
  std::vector<int> hits;
  RE2::Set::ErrorInfo error{RE2::Set::kNoError};
  // No match and an error: the set's DFA ran out of memory (or the set is
  // inconsistent): the one-by-one match decides.
  if (s.set && (s.set->Match(text, &hits, &error) || error.kind == RE2::Set::kNoError)) {
    for (int i : hits)
      matched[s.offering_of[static_cast<std::size_t>(i)]] = true;
  } else {
    for (std::size_t i = 0; i < s.patterns.size(); ++i)
      if (!matched[s.offering_of[i]] && RE2::PartialMatch(text, *s.patterns[i]))
        matched[s.offering_of[i]] = true;
  }
  std::vector<match> out;
  for (std::size_t i = 0; i < matched.size(); ++i)
    if (matched[i])
      out.push_back(impl_->offerings[i]);
  return out;
}

std::vector<std::string> matcher::tags_for_product(std::string_view product_id) const {
  std::vector<std::string> out;
  for (const auto& m : matches_product(product_id))
    out.push_back(m.tag());
  return out;
}

} // namespace receiptd::model::entitlements

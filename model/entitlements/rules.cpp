#include "model/entitlements/rules.hpp"

#include <algorithm>
#include <cstdint>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "model/entitlements/re2_options.hpp"

namespace receiptd::model::entitlements {

namespace json = boost::json;

namespace {

// A stored document beyond this is not one receiptctl wrote (max_patterns
// patterns of max_pattern_bytes with their names take about 140 KiB).
constexpr std::size_t max_json_bytes = 1 << 20;

field_error refusal(const char* field, const char* code, std::string message) {
  return {field, code, std::move(message)};
}

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

template <class T>
bool by_name(const T& a, const T& b) {
  return a.name < b.name;
}

// An offering's patterns grouped by subject (in all_subjects' order), each
// subject's in the order given: the order to_json writes them in, so that the
// rules read back from their JSON are the same rules.
void group_by_subject(std::vector<pattern>& patterns) {
  std::stable_sort(patterns.begin(), patterns.end(), [](const pattern& a, const pattern& b) {
    return static_cast<int>(a.subject) < static_cast<int>(b.subject);
  });
}

status check_name(const char* field, std::string_view name) {
  if (valid_name(name))
    return done{};
  return refusal(field, "invalid_name",
                 std::string(field) + " name " + quoted(name)
                   + " is not 1-64 letters, digits, '_', '-' or '.' starting with a letter or "
                     "digit");
}

// Sorted by name with no name twice.
template <class T>
status check_order(const char* field, const std::vector<T>& items) {
  for (std::size_t i = 1; i < items.size(); ++i)
    if (!(items[i - 1].name < items[i].name))
      return refusal(field, items[i - 1].name == items[i].name ? "duplicate" : "unsorted",
                     std::string(field) + " " + quoted(items[i].name)
                       + (items[i - 1].name == items[i].name ? " is listed twice"
                                                             : " is out of order"));
  return done{};
}

// `compile_patterns`: whether each pattern must compile too (validate), or only be
// within its bounds (validate_shape).
status check_offering(const entitlement& e, const offering& o, bool compile_patterns) {
  if (auto ok = check_name("offering", o.name); !ok)
    return ok;
  auto where = e.name + "/" + o.name;
  if (o.patterns.empty())
    return refusal("pattern", "missing", where + " has no pattern");
  if (o.patterns.size() > max_patterns_per_offering)
    return refusal("pattern", "too_many", where + " has more than "
                                            + std::to_string(max_patterns_per_offering)
                                            + " patterns");
  for (auto p = o.patterns.begin(); p != o.patterns.end(); ++p) {
    if (std::find(o.patterns.begin(), p, *p) != p)
      return refusal("pattern", "duplicate",
                     where + " lists the pattern " + quoted(p->expression) + " twice");
    if (auto ok = check_pattern_size(p->expression); !ok)
      return ok;
    if (is_version_bound(p->subject)) {
      if (auto ok = check_version_bound(p->expression); !ok)
        return ok;
    } else if (compile_patterns) {
      if (auto ok = check_pattern(p->expression); !ok)
        return ok;
    }
  }
  return done{};
}

status check_rules(const rules& r, bool compile_patterns) {
  if (auto ok = check_order("entitlement", r.entitlements); !ok)
    return ok;
  if (r.pattern_count() > max_patterns)
    return refusal("pattern", "too_many",
                   "an app has at most " + std::to_string(max_patterns) + " patterns");
  for (const auto& e : r.entitlements) {
    if (auto ok = check_name("entitlement", e.name); !ok)
      return ok;
    if (e.offerings.empty())
      return refusal("offering", "missing", "entitlement " + quoted(e.name) + " has no offering");
    if (auto ok = check_order("offering", e.offerings); !ok)
      return ok;
    for (const auto& o : e.offerings)
      if (auto ok = check_offering(e, o, compile_patterns); !ok)
        return ok;
  }
  return done{};
}

result<std::vector<pattern>> parse_patterns(const json::object& o, const std::string& where) {
  std::vector<pattern> out;
  for (const auto& [key, value] : o) {
    auto subject = parse_pattern_subject(key);
    if (!subject)
      return refusal("pattern", "unknown_subject",
                     where + ": patterns on " + quoted(key) + " are not known");
    if (!value.is_array())
      return refusal("pattern", "invalid", where + ": " + std::string(key) + " is not an array");
    for (const auto& p : value.get_array()) {
      if (!p.is_string())
        return refusal("pattern", "invalid", where + ": a pattern is not a string");
      out.push_back({*subject, std::string(p.get_string())});
    }
  }
  return out;
}

} // namespace

std::string_view to_string(pattern_subject s) {
  switch (s) {
    case pattern_subject::product_id:
      break;
    case pattern_subject::original_application_version:
      return "original_application_version";
    case pattern_subject::original_application_version_before:
      return "original_application_version_before";
  }
  return "product_id";
}

std::optional<pattern_subject> parse_pattern_subject(std::string_view text) {
  for (auto s : all_subjects)
    if (to_string(s) == text)
      return s;
  return std::nullopt;
}

std::size_t rules::pattern_count() const {
  std::size_t n = 0;
  for (const auto& e : entitlements)
    for (const auto& o : e.offerings)
      n += o.patterns.size();
  return n;
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > max_name_bytes || !is_alnum(name.front()))
    return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return is_alnum(c) || c == '_' || c == '-' || c == '.'; });
}

status check_pattern_size(std::string_view expression) {
  if (expression.empty())
    return refusal("pattern", "missing",
                   "an empty pattern would match every product id (\".*\" says so)");
  if (expression.size() > max_pattern_bytes)
    return refusal("pattern", "too_long",
                   "a pattern is longer than " + std::to_string(max_pattern_bytes) + " bytes");
  return done{};
}

field_error pattern_refusal(std::string_view expression, const std::string& re2_error) {
  return refusal("pattern", "invalid_pattern", "pattern " + quoted(expression) + ": " + re2_error);
}

status check_pattern(std::string_view expression) {
  if (auto ok = check_pattern_size(expression); !ok)
    return ok;
  RE2 compiled(re2::StringPiece(expression.data(), expression.size()), pattern_options());
  if (!compiled.ok())
    return pattern_refusal(expression, compiled.error());
  return done{};
}

status check_version_bound(std::string_view bound) {
  std::size_t parts = 0, digits = 0;
  bool ok = !bound.empty();
  for (char c : bound) {
    if (c == '.') {
      ok = ok && digits > 0;
      ++parts;
      digits = 0;
    } else if (c >= '0' && c <= '9') {
      ok = ok && ++digits <= 9;
    } else {
      ok = false;
    }
  }
  ok = ok && digits > 0 && parts < 4;
  if (ok)
    return done{};
  return refusal("pattern", "invalid_version",
                 "version " + quoted(bound.substr(0, max_pattern_bytes))
                   + " is not 1 to 4 '.'-separated numbers (\"2.0\", \"1.10.3\")");
}

std::optional<bool> version_before(std::string_view version, std::string_view bound) {
  // The leading digits of each '.'-separated part, as numbers (at most 9 digits
  // count: a longer run is capped, which keeps the comparison total).
  auto components = [](std::string_view text, bool& any_digit) {
    std::vector<std::uint64_t> out;
    std::size_t start = 0;
    while (start <= text.size()) {
      auto end = text.find('.', start);
      if (end == std::string_view::npos)
        end = text.size();
      std::uint64_t n = 0;
      std::size_t used = 0;
      for (auto i = start; i < end && text[i] >= '0' && text[i] <= '9'; ++i, ++used)
        if (used < 9)
          n = n * 10 + static_cast<std::uint64_t>(text[i] - '0');
        else
          n = 999'999'999;
      any_digit = any_digit || used > 0;
      out.push_back(n);
      start = end + 1;
    }
    return out;
  };
  bool version_digits = false, bound_digits = false;
  auto v = components(version, version_digits);
  auto b = components(bound, bound_digits);
  if (!version_digits || !bound_digits)
    return std::nullopt;
  const auto n = std::max(v.size(), b.size());
  v.resize(n, 0);
  b.resize(n, 0);
  return v < b;
}

status validate(const rules& r) {
  return check_rules(r, true);
}

status validate_shape(const rules& r) {
  return check_rules(r, false);
}

std::string to_json(const rules& r) {
  json::object out;
  for (const auto& e : r.entitlements) {
    json::object offerings;
    for (const auto& o : e.offerings) {
      json::object subjects;
      for (auto s : all_subjects) {
        json::array list;
        for (const auto& p : o.patterns)
          if (p.subject == s)
            list.emplace_back(p.expression);
        if (!list.empty())
          subjects[to_string(s)] = std::move(list);
      }
      offerings[o.name] = std::move(subjects);
    }
    out[e.name] = std::move(offerings);
  }
  return json::serialize(out);
}

result<rules> parse_rules(std::string_view text) {
  if (text.empty())
    return rules{};
  if (text.size() > max_json_bytes)
    return refusal("entitlement", "too_long", "the rules are larger than 1 MiB");
  boost::system::error_code ec;
  auto doc = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec || !doc.is_object())
    return refusal("entitlement", "invalid", "the rules are not a JSON object");
  rules r;
  for (const auto& [ename, evalue] : doc.get_object()) {
    entitlement e{std::string(ename), {}};
    if (!evalue.is_object())
      return refusal("entitlement", "invalid", "entitlement " + quoted(e.name) + " is not an object");
    for (const auto& [oname, ovalue] : evalue.get_object()) {
      offering o{std::string(oname), {}};
      auto where = e.name + "/" + o.name;
      if (!ovalue.is_object())
        return refusal("offering", "invalid", where + " is not an object");
      auto patterns = parse_patterns(ovalue.get_object(), where);
      if (!patterns)
        return patterns.err();
      o.patterns = std::move(*patterns);
      group_by_subject(o.patterns);
      e.offerings.push_back(std::move(o));
    }
    std::sort(e.offerings.begin(), e.offerings.end(), by_name<offering>);
    r.entitlements.push_back(std::move(e));
  }
  std::sort(r.entitlements.begin(), r.entitlements.end(), by_name<entitlement>);
  if (auto ok = validate_shape(r); !ok)
    return ok.err();
  return r;
}

std::string describe(const rules& r) {
  if (r.empty())
    return "none";
  std::string out;
  for (const auto& e : r.entitlements)
    for (const auto& o : e.offerings)
      out += (out.empty() ? "" : ", ") + e.name + "/" + o.name;
  auto n = r.pattern_count();
  return out + " (" + std::to_string(n) + (n == 1 ? " pattern)" : " patterns)");
}

result<rules> with_offering(rules r, std::string_view entitlement_name,
                            std::string_view offering_name, pattern_subject subject,
                            const std::vector<std::string>& expressions) {
  if (auto ok = check_name("entitlement", entitlement_name); !ok)
    return ok.err();
  if (auto ok = check_name("offering", offering_name); !ok)
    return ok.err();
  if (expressions.empty())
    return refusal("pattern", "missing", "an offering needs at least one pattern");
  auto& es = r.entitlements;
  auto e = std::find_if(es.begin(), es.end(), [&](const auto& x) { return x.name == entitlement_name; });
  if (e == es.end())
    e = es.insert(std::upper_bound(es.begin(), es.end(), entitlement{std::string(entitlement_name), {}},
                                   by_name<entitlement>),
                  entitlement{std::string(entitlement_name), {}});
  auto& os = e->offerings;
  auto o = std::find_if(os.begin(), os.end(), [&](const auto& x) { return x.name == offering_name; });
  if (o == os.end())
    o = os.insert(std::upper_bound(os.begin(), os.end(), offering{std::string(offering_name), {}},
                                   by_name<offering>),
                  offering{std::string(offering_name), {}});
  std::erase_if(o->patterns, [&](const pattern& p) { return p.subject == subject; });
  for (const auto& x : expressions) {
    pattern p{subject, x};
    if (std::find(o->patterns.begin(), o->patterns.end(), p) == o->patterns.end())
      o->patterns.push_back(std::move(p));
  }
  group_by_subject(o->patterns);
  if (auto ok = validate(r); !ok)
    return ok.err();
  return r;
}

std::optional<rules> without(rules r, std::string_view entitlement_name,
                             std::optional<std::string_view> offering_name) {
  auto& es = r.entitlements;
  auto e = std::find_if(es.begin(), es.end(), [&](const auto& x) { return x.name == entitlement_name; });
  if (e == es.end())
    return std::nullopt;
  if (offering_name) {
    auto& os = e->offerings;
    auto o = std::find_if(os.begin(), os.end(), [&](const auto& x) { return x.name == *offering_name; });
    if (o == os.end())
      return std::nullopt;
    os.erase(o);
    if (!os.empty())
      return r;
  }
  es.erase(e);
  return r;
}

} // namespace receiptd::model::entitlements

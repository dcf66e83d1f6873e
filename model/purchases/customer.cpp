#include "model/purchases/customer.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <boost/json/serialize.hpp>

#include "model/encoding.hpp"
#include "model/purchases/activity.hpp"
#include "model/purchases/resource_json.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::purchases {

namespace json = boost::json;

namespace {

class none final : public entitlement_rules {
public:
  std::vector<std::string> names() const override { return {}; }
  std::vector<std::string> tags(std::string_view) const override { return {}; }
};

// The offering of `p` that grants `name`, if its product matches one.
std::optional<std::string> offering_granting(const std::vector<std::string>& tags,
                                             std::string_view name) {
  for (const auto& t : tags)
    if (entitlement_of(t) == name)
      return std::string(offering_of(t));
  return std::nullopt;
}

// How long a grant of an entitlement runs: none means until revoked (longest).
struct reach {
  bool active = false;
  std::optional<unix_ms> until; // none while active: no end by time
  unix_ms recency = 0;          // for inactive ones: the newest wins
};

bool longer(const reach& a, const reach& b) {
  if (a.active != b.active)
    return a.active;
  if (a.active) {
    if (!a.until || !b.until)
      return !a.until && b.until;
    return *a.until > *b.until;
  }
  return a.recency > b.recency;
}

json::value flag(const said<std::optional<bool>>& f) {
  return f.value.value_or(false);
}

} // namespace

unix_ms recency_of(const purchase& p) {
  return std::max({p.current_period_end_at.value.value_or(0), p.purchased_at.value_or(0),
                   p.unit_time, p.created_at});
}

std::string product_key(std::string_view product_id) {
  if (product_id.size() <= max_plain_product_key)
    return std::string(product_id);
  return "sha256:" + sha256_hex(product_id);
}

std::vector<purchase> answer_purchases(std::vector<purchase> purchases, unix_ms now) {
  // The most recent of each product: the first read among those as recent.
  std::map<std::string_view, std::pair<unix_ms, std::size_t>> latest;
  for (std::size_t i = 0; i < purchases.size(); ++i) {
    auto r = recency_of(purchases[i]);
    auto [it, first] = latest.try_emplace(purchases[i].product_id.value, r, i);
    if (!first && r > it->second.first)
      it->second = {r, i};
  }
  std::vector<bool> kept(purchases.size());
  for (const auto& [product, best] : latest)
    kept[best.second] = true;
  std::vector<purchase> out;
  for (std::size_t i = 0; i < purchases.size(); ++i)
    if (kept[i] || activity_at(purchases[i], now).active)
      out.push_back(std::move(purchases[i]));
  return out;
}

const std::shared_ptr<const entitlement_rules>& no_entitlements() {
  static const std::shared_ptr<const entitlement_rules> empty = std::make_shared<none>();
  return empty;
}

namespace {

class matched_rules final : public entitlement_rules {
public:
  explicit matched_rules(std::shared_ptr<const entitlements::matcher> m) : m_(std::move(m)) {}
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& e : m_->source().entitlements)
      out.push_back(e.name);
    return out;
  }
  std::vector<std::string> tags(std::string_view product_id) const override {
    return m_->tags_for_product(product_id);
  }
  bool matches_versions() const override {
    for (const auto& e : m_->source().entitlements)
      for (const auto& o : e.offerings)
        for (const auto& p : o.patterns)
          if (p.subject != entitlements::pattern_subject::product_id)
            return true;
    return false;
  }
  std::vector<std::string> version_tags(std::string_view original_version) const override {
    std::vector<std::string> out;
    for (auto subject : {entitlements::pattern_subject::original_application_version,
                         entitlements::pattern_subject::original_application_version_before})
      for (const auto& m : m_->matches(subject, original_version))
        if (std::find(out.begin(), out.end(), m.tag()) == out.end())
          out.push_back(m.tag());
    return out;
  }

private:
  std::shared_ptr<const entitlements::matcher> m_;
};

} // namespace

std::shared_ptr<const entitlement_rules>
rules_of(std::shared_ptr<const entitlements::matcher> compiled) {
  if (!compiled || compiled->source().empty())
    return no_entitlements();
  return std::make_shared<matched_rules>(std::move(compiled));
}

std::string_view entitlement_of(std::string_view tag) {
  return tag.substr(0, tag.find('/'));
}

std::string_view offering_of(std::string_view tag) {
  auto slash = tag.find('/');
  return slash == std::string_view::npos ? std::string_view() : tag.substr(slash + 1);
}

std::vector<std::string> active_entitlements(const std::vector<purchase>& purchases,
                                             const std::vector<grant>& grants,
                                             const entitlement_rules& rules, unix_ms now) {
  std::set<std::string> active;
  for (const auto& p : purchases) {
    if (!activity_at(p, now).active)
      continue;
    for (const auto& t : rules.tags(p.product_id.value))
      active.emplace(entitlement_of(t));
  }
  for (const auto& g : grants)
    if (g.active_at(now))
      active.insert(g.entitlement);
  return {active.begin(), active.end()};
}

json::object grant_json(const grant& g) {
  return json::object{{"id", g.id},
                      {"entitlement", g.entitlement},
                      {"user_identifier", g.user_identifier},
                      {"environment", to_string(g.env)},
                      {"starts_at", timestamp_json(g.starts_at)},
                      {"expires_at", timestamp_json(g.expires_at)},
                      {"created_at", timestamp_json(g.created_at)}};
}

json::object customer_json(const std::string& user_identifier, environment env,
                           const std::vector<purchase>& purchases, const std::vector<grant>& grants,
                           const entitlement_rules& rules, unix_ms now,
                           const std::vector<std::string>& original_versions) {
  // The offerings the customer's app transactions match, with the version.
  std::vector<std::pair<std::string, std::string>> by_version; // tag, version
  for (const auto& v : original_versions)
    for (auto& t : rules.version_tags(v))
      by_version.emplace_back(std::move(t), v);
  std::vector<std::vector<std::string>> tags;
  std::vector<activity> activities;
  tags.reserve(purchases.size());
  activities.reserve(purchases.size());
  for (const auto& p : purchases) {
    tags.push_back(rules.tags(p.product_id.value));
    activities.push_back(activity_at(p, now));
  }

  // Every entitlement the app defines, and any a grant names.
  std::vector<std::string> names = rules.names();
  for (const auto& g : grants)
    if (std::find(names.begin(), names.end(), g.entitlement) == names.end())
      names.push_back(g.entitlement);

  std::set<std::size_t> shown; // purchases the answer lists
  json::object entitlements;
  for (const auto& name : names) {
    std::optional<std::size_t> best_purchase;
    reach best;
    for (std::size_t i = 0; i < purchases.size(); ++i) {
      if (!offering_granting(tags[i], name))
        continue;
      reach r{activities[i].active, activities[i].until, recency_of(purchases[i])};
      if (!best_purchase || longer(r, best)) {
        best_purchase = i;
        best = r;
      }
    }
    const grant* best_grant = nullptr;
    for (const auto& g : grants) {
      if (g.entitlement != name || !g.active_at(now))
        continue;
      reach r{true, g.expires_at, g.expires_at};
      if ((!best_purchase && !best_grant) || longer(r, best)) {
        best_grant = &g;
        best_purchase.reset();
        best = r;
      }
    }
    // An active purchase or grant shows what it has (an end, a product); else
    // a matching app transaction makes it active.
    auto v = std::find_if(by_version.begin(), by_version.end(),
                          [&](const auto& tv) { return entitlement_of(tv.first) == name; });
    const bool by_app_version = v != by_version.end() && !best_grant
      && !(best_purchase && best.active);
    json::object e;
    if (best_grant) {
      e = json::object{{"is_active", true},
                       {"expires_at", timestamp_json(best_grant->expires_at)},
                       {"grace_period_end_at", nullptr},
                       {"product_id", nullptr},
                       {"offering", nullptr},
                       {"in_app_purchase_id", nullptr},
                       {"grant_id", best_grant->id},
                       {"will_renew", false},
                       {"in_billing_retry", false},
                       {"ownership", "granted"}};
    } else if (best_purchase && !by_app_version) {
      const auto& p = purchases[*best_purchase];
      const auto& a = activities[*best_purchase];
      shown.insert(*best_purchase);
      e = json::object{
        {"is_active", a.active},
        {"expires_at", timestamp_json(a.expires_at)},
        {"grace_period_end_at", timestamp_json(p.grace_period_end_at.value)},
        {"product_id", p.product_id.value},
        {"offering", *offering_granting(tags[*best_purchase], name)},
        {"in_app_purchase_id", p.id},
        {"grant_id", nullptr},
        {"will_renew", a.will_renew},
        {"in_billing_retry", flag(p.in_billing_retry)},
        {"ownership", to_string(p.owned_as.value)}};
    } else if (by_app_version) {
      // The customer bought (or downloaded) the app at a version the rules
      // name: theirs for good, like a non-consumable nobody revoked.
      e = json::object{{"is_active", true},
                       {"expires_at", nullptr},
                       {"grace_period_end_at", nullptr},
                       {"product_id", nullptr},
                       {"offering", offering_of(v->first)},
                       {"in_app_purchase_id", nullptr},
                       {"grant_id", nullptr},
                       {"will_renew", false},
                       {"in_billing_retry", false},
                       {"ownership", "purchased"},
                       {"original_application_version", v->second}};
    } else {
      e = json::object{{"is_active", false},      {"expires_at", nullptr},
                       {"grace_period_end_at", nullptr}, {"product_id", nullptr},
                       {"offering", nullptr},      {"in_app_purchase_id", nullptr},
                       {"grant_id", nullptr},      {"will_renew", false},
                       {"in_billing_retry", false}, {"ownership", nullptr}};
    }
    entitlements[name] = std::move(e);
  }

  for (std::size_t i = 0; i < purchases.size(); ++i)
    if (activities[i].active)
      shown.insert(i);
  // Newest first: the order the purchases were read in (created_at, id descending).
  json::array listed;
  for (auto i : shown) {
    std::vector<std::string> granted;
    for (const auto& t : tags[i])
      granted.push_back(t);
    listed.emplace_back(purchase_json(purchases[i], granted, now));
  }
  json::object customer{{"user_identifier", user_identifier},
                        {"environment", to_string(env)},
                        {"entitlements", std::move(entitlements)},
                        {"in_app_purchases", std::move(listed)},
                        {"requested_at", timestamp_json(now)}};
  return json::object{{"customer", std::move(customer)}};
}

std::optional<unix_ms> answer_same_until(const std::vector<purchase>& purchases,
                                         const std::vector<grant>& grants, unix_ms now) {
  std::optional<unix_ms> until;
  auto consider = [&](unix_ms t) {
    if (t > now && (!until || t < *until))
      until = t;
  };
  for (const auto& p : purchases)
    if (auto t = next_change(p, now))
      consider(*t);
  for (const auto& g : grants) {
    consider(g.starts_at);
    consider(g.expires_at);
  }
  return until;
}

namespace {
// customer_json ends with requested_at, the customer's last key, then closes
// the customer and the answer.
constexpr std::string_view requested_key = ",\"requested_at\":";
constexpr std::string_view answer_end = "}}";
} // namespace

std::optional<std::string> answer_head(std::string_view body, unix_ms now) {
  auto at = body.rfind(requested_key);
  if (at == std::string_view::npos)
    return std::nullopt;
  auto head = body.substr(0, at + requested_key.size());
  if (body.substr(head.size()) != json::serialize(timestamp_json(now)) + std::string(answer_end))
    return std::nullopt;
  return std::string(head);
}

std::string answer_at(std::string_view head, unix_ms now) {
  auto stamp = json::serialize(timestamp_json(now));
  std::string out;
  out.reserve(head.size() + stamp.size() + answer_end.size());
  out.append(head).append(stamp).append(answer_end);
  return out;
}

} // namespace receiptd::model::purchases

#include "cmd/receiptctl_entitlements.hpp"

#include <boost/json/parse.hpp>

#include <set>

#include "cmd/receiptctl_common.hpp"
#include "model/entitlements/rules.hpp"

namespace receiptd::cmd {

namespace json = boost::json;
namespace ent = model::entitlements;

namespace {

// One line per pattern: "premium/monthly  product_id  ^premium_monthly$".
std::string rules_text(const ent::rules& r) {
  if (r.empty())
    return "No entitlements.\n";
  std::string out;
  for (const auto& e : r.entitlements)
    for (const auto& o : e.offerings)
      for (const auto& p : o.patterns)
        out += e.name + "/" + o.name + "  " + std::string(ent::to_string(p.subject)) + "  "
          + p.expression + "\n";
  return out;
}

// The app's rules as stored; none, with `problem`, when they cannot be read.
std::optional<ent::rules> stored_rules(const model::app& app, std::string& problem) {
  auto r = ent::parse_rules(app.entitlement_rules);
  if (r)
    return *r;
  problem = "app " + app.name + ": the stored entitlement rules are unusable: " + r.err().message();
  return std::nullopt;
}

int store(const ctl_options& a, db::database& db, model::app& app, const ent::rules& r,
          const std::string& done) {
  app.entitlement_rules = ent::to_json(r);
  auto updated = db.update_app(app);
  if (!updated)
    return fail(updated.err().message());
  if (!*updated)
    return fail("no app with id or name " + a.words[2]);
  print(a, entitlements_json(app), done);
  return 0;
}

int set(const ctl_options& a, db::database& db) {
  const bool by_version = a.given("original-application-version")
    || a.given("original-application-version-before");
  if (a.words.size() != 4 || !a.given("offering") || (a.patterns.empty() && !by_version))
    return fail("usage: entitlement set APP ENTITLEMENT --offering=NAME --pattern=RE "
                "[--pattern=RE ...] [--original-application-version=RE] "
                "[--original-application-version-before=VERSION]",
                2);
  std::string problem;
  auto app = find_app(db, a.words[2], problem);
  if (!app)
    return fail(problem);
  auto current = stored_rules(*app, problem);
  if (!current)
    return fail(problem);
  // Each subject given replaces that subject's patterns of the offering.
  model::result<ent::rules> changed = std::move(*current);
  auto n = std::set<std::string>(a.patterns.begin(), a.patterns.end()).size(); // each once
  auto apply = [&](ent::pattern_subject subject, const std::vector<std::string>& expressions) {
    if (changed)
      changed = ent::with_offering(std::move(*changed), a.words[3], a.offering, subject,
                                   expressions);
  };
  if (!a.patterns.empty())
    apply(ent::pattern_subject::product_id, a.patterns);
  if (a.given("original-application-version")) {
    apply(ent::pattern_subject::original_application_version, {a.original_version});
    ++n;
  }
  if (a.given("original-application-version-before")) {
    apply(ent::pattern_subject::original_application_version_before, {a.original_version_before});
    ++n;
  }
  if (!changed)
    return fail(changed.err().message(), 2);
  return store(a, db, *app, *changed,
               "Set " + a.words[3] + "/" + a.offering + " of app " + app->name + ": "
                 + std::to_string(n) + (n == 1 ? " pattern.\n" : " patterns.\n"));
}

int list(const ctl_options& a, db::database& db) {
  if (a.words.size() != 3)
    return fail("usage: entitlement list APP", 2);
  std::string problem;
  auto app = find_app(db, a.words[2], problem);
  if (!app)
    return fail(problem);
  auto rules = stored_rules(*app, problem);
  if (!rules)
    return fail(problem);
  print(a, entitlements_json(*app), rules_text(*rules));
  return 0;
}

int remove(const ctl_options& a, db::database& db) {
  if (a.words.size() != 4)
    return fail("usage: entitlement remove APP ENTITLEMENT [--offering=NAME]", 2);
  if (a.given("pattern"))
    return fail("option --pattern does not apply to entitlement remove (see receiptctl --help)",
                2);
  std::string problem;
  auto app = find_app(db, a.words[2], problem);
  if (!app)
    return fail(problem);
  auto current = stored_rules(*app, problem);
  if (!current)
    return fail(problem);
  std::optional<std::string_view> offering;
  if (a.given("offering"))
    offering = a.offering;
  auto what = a.words[3] + (offering ? "/" + a.offering : std::string());
  auto fewer = ent::without(std::move(*current), a.words[3], offering);
  if (!fewer)
    return fail("app " + app->name + " has no entitlement " + what);
  return store(a, db, *app, *fewer, "Removed " + what + " from app " + app->name + ".\n");
}

} // namespace

json::value entitlements_json(const model::app& app) {
  if (app.entitlement_rules.empty())
    return json::object{};
  boost::system::error_code ec;
  auto v = json::parse(app.entitlement_rules, ec);
  if (ec)
    return json::string(app.entitlement_rules);
  return v;
}

int entitlement_command(const ctl_options& a, db::database& db) {
  auto sub = a.words.size() > 1 ? a.words[1] : "";
  if (sub == "set")
    return set(a, db);
  if (sub == "list")
    return list(a, db);
  if (sub == "remove")
    return remove(a, db);
  return fail("unknown entitlement command\n" + a.usage(), 2);
}

} // namespace receiptd::cmd

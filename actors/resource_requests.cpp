#include "actors/resource_requests.hpp"

#include <algorithm>

#include <boost/json/serialize.hpp>

#include "model/identifiers.hpp"
#include "model/purchases/customer.hpp"
#include "model/purchases/refund_request.hpp"
#include "model/purchases/requests.hpp"
#include "model/purchases/resource_json.hpp"

namespace receiptd::actors {

namespace mp = model::purchases;
namespace json = boost::json;

namespace {

std::optional<std::string_view> query_value(const resource_request& r, std::string_view key) {
  for (const auto& [k, v] : r.query)
    if (k == key)
      return std::string_view(v);
  return std::nullopt;
}

http::reply ok(const json::value& body, int status = 200) {
  return http::reply{status, json::serialize(body)};
}

http::reply failed(const model::error& e) {
  return http::error_reply(e);
}

http::reply unavailable(const model::error& e) {
  return http::error_reply({model::errc::storage_unavailable, e.message()});
}

http::reply not_found(const char* what) {
  return http::error_reply({model::errc::not_found, what});
}

http::reply purchase(db::database& db, const resource_request& r, model::unix_ms now) {
  auto found = db.find_purchase(r.id, now);
  if (!found)
    return unavailable(found.err());
  if (!*found || (*found)->items.front().app_id != r.app_id)
    return not_found("no such in-app purchase for this app");
  const auto& set = **found;
  return ok(json::object{
    {"in_app_purchase", mp::purchase_json(set.items.front(), set.entitlements.front(), now)}});
}

// GET …/customers/{user}: the customer's whole answer, from the purchases it
// shows (the active ones and the most recent of each product), with what giving
// it again needs (actors/customer_answers.hpp).
// An answer not to be given again (an error), or to be completed.
customer_answer answer_only(http::reply r) {
  customer_answer a;
  a.reply = std::move(r);
  return a;
}

customer_answer customer_lookup(db::database& db, const resource_request& r,
                                const std::string& raw_user, model::unix_ms now) {
  auto user = mp::user_identifier_param(raw_user);
  auto env = mp::environment_param(query_value(r, "environment"));
  if (!user)
    return answer_only(failed(user.err()));
  if (!env)
    return answer_only(failed(env.err()));
  auto view = db.find_customer_answer(r.app_id, *user, *env, now);
  if (!view)
    return answer_only(unavailable(view.err()));
  auto rules = mp::rules_of(r.rules);
  // The customer's app transactions, only for an app whose rules read the
  // original application version (one more indexed query).
  std::vector<std::string> versions;
  if (rules->matches_versions()) {
    auto found = db.original_application_versions(r.app_id, *user, *env);
    if (!found)
      return answer_only(unavailable(found.err()));
    versions = std::move(*found);
  }
  auto out = answer_only(
    ok(mp::customer_json(*user, *env, view->purchases, view->grants, *rules, now, versions)));
  out.asked_at = now;
  out.same_until = mp::answer_same_until(view->purchases, view->grants, now);
  out.head = mp::answer_head(out.reply.body, now).value_or(std::string());
  return out;
}

http::reply customer(db::database& db, const resource_request& r, const std::string& raw_user,
                     model::unix_ms now) {
  return customer_lookup(db, r, raw_user, now).reply;
}

// GET /server/customers/{user}/in_app_purchases?cursor=&limit=: newest first.
http::reply customer_purchases(db::database& db, const resource_request& r, model::unix_ms now) {
  auto user = mp::user_identifier_param(r.params.at(0));
  auto env = mp::environment_param(query_value(r, "environment"));
  auto limit = mp::limit_param(query_value(r, "limit"));
  auto cursor = mp::cursor_param(query_value(r, "cursor"));
  model::field_errors errors;
  for (const auto* e : {user.ok() ? nullptr : &user.err(), env.ok() ? nullptr : &env.err(),
                        limit.ok() ? nullptr : &limit.err(), cursor.ok() ? nullptr : &cursor.err()})
    if (e)
      errors.insert(errors.end(), e->fields().begin(), e->fields().end());
  if (!errors.empty())
    return failed(model::error(std::move(errors)));
  db::purchase_cursor after;
  if (*cursor) {
    after.created_at = (*cursor)->created_at;
    after.id = (*cursor)->id;
  }
  // One more than a page: whether there is a next one.
  auto view = db.find_customer(r.app_id, *user, *env, after, *limit + 1);
  if (!view)
    return unavailable(view.err());
  auto& purchases = view->purchases;
  json::value next = nullptr;
  if (static_cast<int>(purchases.size()) > *limit) {
    purchases.resize(*limit);
    next = mp::cursor_text({purchases.back().created_at, purchases.back().id});
  }
  json::array listed;
  for (const auto& p : purchases)
    listed.emplace_back(mp::purchase_json(p, view->rules->tags(p.product_id.value), now));
  return ok(json::object{{"in_app_purchases", std::move(listed)}, {"next_cursor", next}});
}

http::reply add_grant(db::database& db, const resource_request& r, model::unix_ms now) {
  auto user = mp::user_identifier_param(r.params.at(0));
  auto name = mp::entitlement_param(r.params.at(1));
  auto body = mp::parse_grant_request(r.body, now);
  model::field_errors errors;
  for (const auto* e : {user.ok() ? nullptr : &user.err(), name.ok() ? nullptr : &name.err(),
                        body.ok() ? nullptr : &body.err()})
    if (e)
      errors.insert(errors.end(), e->fields().begin(), e->fields().end());
  if (name && std::find(r.entitlement_names.begin(), r.entitlement_names.end(), *name)
                == r.entitlement_names.end())
    errors.push_back({"entitlement", "unknown_entitlement",
                      "the app defines no entitlement " + *name
                        + " (receiptctl entitlement set)"});
  if (!errors.empty())
    return failed(model::error(std::move(errors)));
  mp::grant g;
  g.id = model::make_uuid();
  g.app_id = r.app_id;
  g.user_identifier = *user;
  g.env = body->env;
  g.entitlement = *name;
  g.starts_at = body->starts_at;
  g.expires_at = body->expires_at;
  g.created_at = now;
  auto stored = db.add_grant(g, now);
  if (!stored)
    return unavailable(stored.err());
  return ok(json::object{{"grant", mp::grant_json(*stored)}}, 201);
}

http::reply remove_grant(db::database& db, const resource_request& r, model::unix_ms now) {
  auto user = mp::user_identifier_param(r.params.at(0));
  auto name = mp::entitlement_param(r.params.at(1));
  auto env = mp::environment_param(query_value(r, "environment"));
  if (!user)
    return failed(user.err());
  if (!name)
    return failed(name.err());
  if (!env)
    return failed(env.err());
  auto removed = db.remove_grant(r.app_id, *env, *user, *name, r.params.at(2), now);
  if (!removed)
    return unavailable(removed.err());
  if (!*removed)
    return not_found("no such grant of this entitlement for this customer");
  return ok(json::object{{"removed", true}, {"grant_id", r.params.at(2)}});
}

// POST /server/customers/{user}/restore, once the App Store's history is read
// and verified (actors/restore.cpp): the records saved all or none, then the
// customer's answer as GET /server/customers/{user} gives it.
http::reply restore(db::database& db, const resource_request& r, model::unix_ms now) {
  auto refused = db.restore_transactions(r.restored, now);
  if (!refused)
    return unavailable(refused.err());
  if (*refused)
    return failed(model::error(model::errc::conflict, {**refused}));
  return customer(db, r, r.id, now);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// PUT /server/in_app_purchases/{id}/consumption: what the app's backend knows
// of the purchase, for the stores' refund requests; the purchase as it is.
http::reply set_consumption(db::database& db, const resource_request& r, model::unix_ms now) {
  auto report = mp::parse_consumption_report(r.body);
  if (!report)
    return failed(report.err());
  const auto& id = r.params.at(0);
  auto stored = db.set_consumption(r.app_id, id, *report, now);
  if (!stored)
    return unavailable(stored.err());
  if (!*stored)
    return not_found("no such in-app purchase for this app");
  json::object consumption;
  consumption["consumption_percentage"]
    = report->consumption_milliunits ? json::value(*report->consumption_milliunits / 1000.0)
                                     : json::value(nullptr);
  consumption["delivery_status"] = report->delivery_status
    ? json::value(lower(*report->delivery_status))
    : json::value(nullptr);
  consumption["sample_content_provided"] = report->sample_content_provided
    ? json::value(*report->sample_content_provided)
    : json::value(nullptr);
  return ok(json::object{{"in_app_purchase_id", id}, {"consumption", std::move(consumption)}});
}

} // namespace

bool writes(const resource_request& r) {
  return r.target == http::route::server_grant_add || r.target == http::route::server_grant_remove
    || r.target == http::route::server_customer_restore
    || r.target == http::route::server_purchase_consumption;
}

customer_answer answer_customer(db::database& db, const resource_request& r, model::unix_ms now) {
  return customer_lookup(db, r, r.id, now);
}

http::reply answer_resource(db::database& db, const resource_request& r, model::unix_ms now) {
  switch (r.target) {
    case http::route::purchase_get:
      return purchase(db, r, now);
    case http::route::customer_get:
    case http::route::server_customer_get:
      return customer(db, r, r.id, now);
    case http::route::server_customer_purchases:
      return customer_purchases(db, r, now);
    case http::route::server_grant_add:
      return add_grant(db, r, now);
    case http::route::server_grant_remove:
      return remove_grant(db, r, now);
    case http::route::server_customer_restore:
      return restore(db, r, now);
    case http::route::server_purchase_consumption:
      return set_consumption(db, r, now);
    default:
      break;
  }
  return not_found("no such resource");
}

} // namespace receiptd::actors

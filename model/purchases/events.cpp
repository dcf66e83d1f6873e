#include "model/purchases/events.hpp"

#include <boost/json/serialize.hpp>

#include "model/timestamp.hpp"

namespace receiptd::model::purchases {

namespace json = boost::json;

namespace {

bool bookkeeping(std::string_view key) {
  return key == "updated_at" || key == "versions" || key == "version" || key == "last_synced_at";
}

// The attributes that differ (an absent key counts as null), old and new values.
void differences(const json::object& before, const json::object& after, json::object& old_values,
                 json::object& new_values, bool with_bookkeeping) {
  auto differs = [&](std::string_view key, const json::value* was, const json::value* is) {
    if (!with_bookkeeping && bookkeeping(key))
      return;
    json::value null_value = nullptr;
    const auto& a = was ? *was : null_value;
    const auto& b = is ? *is : null_value;
    if (a == b)
      return;
    old_values[key] = a;
    new_values[key] = b;
  };
  for (const auto& kv : after)
    differs(kv.key(), before.if_contains(kv.key()), &kv.value());
  for (const auto& kv : before)
    if (!after.contains(kv.key()))
      differs(kv.key(), &kv.value(), nullptr);
}

json::array names_json(const std::vector<std::string>& names) {
  json::array out;
  for (const auto& n : names)
    out.emplace_back(n);
  return out;
}

} // namespace

bool resource_changed(const json::object& before, const json::object& after) {
  json::object a, b;
  differences(before, after, a, b, false);
  return !b.empty();
}

std::optional<webhook_event> purchase_event(const json::object* before,
                                            const json::object& after, const purchase& p,
                                            unix_ms now) {
  json::object previous, current;
  if (before) {
    if (!resource_changed(*before, after))
      return std::nullopt;
    // Mbaasy's example lists updated_at among the changes: so do these.
    differences(*before, after, previous, current, true);
  }
  webhook_event e;
  e.id = make_event_id(now);
  e.app_id = p.app_id;
  e.type = before ? event_type::in_app_purchase_updated : event_type::in_app_purchase_created;
  e.subject = "in_app_purchase";
  e.record_id = p.id;
  e.created_at = now;
  json::object body;
  body.reserve(8);
  body["id"] = e.id;
  body["type"] = "in_app_purchase";
  body["name"] = to_string(e.type);
  body["versions"] = p.versions;
  body["created_at"] = timestamp_json(now);
  body["data"] = after;
  body["previous_attributes"] = std::move(previous);
  body["new_attributes"] = std::move(current);
  e.body = json::serialize(body);
  return e;
}

std::string customer_subject(const std::string& app_id, environment env,
                             const std::string& user_identifier) {
  return app_id + "/" + std::string(to_string(env)) + "/" + user_identifier;
}

webhook_event entitlements_event(const std::string& app_id, environment env,
                                 const std::string& user_identifier,
                                 const std::vector<std::string>& before,
                                 const std::vector<std::string>& after, unix_ms now) {
  webhook_event e;
  e.id = make_event_id(now);
  e.app_id = app_id;
  e.type = event_type::customer_entitlements_changed;
  e.subject = "customer";
  e.record_id = customer_subject(app_id, env, user_identifier);
  e.created_at = now;
  json::object body;
  body["id"] = e.id;
  body["type"] = "customer";
  body["name"] = to_string(e.type);
  body["created_at"] = timestamp_json(now);
  body["data"] = json::object{{"user_identifier", user_identifier},
                              {"environment", to_string(env)},
                              {"active_entitlements", names_json(after)}};
  body["previous_attributes"] = json::object{{"active_entitlements", names_json(before)}};
  body["new_attributes"] = json::object{{"active_entitlements", names_json(after)}};
  e.body = json::serialize(body);
  return e;
}

} // namespace receiptd::model::purchases

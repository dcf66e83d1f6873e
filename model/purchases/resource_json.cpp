#include "model/purchases/resource_json.hpp"

#include <limits>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/purchases/activity.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::purchases {

namespace json = boost::json;

namespace {

template <class T>
json::value opt(const std::optional<T>& x) {
  if (!x)
    return nullptr;
  return json::value(*x);
}

json::value opt_type(const std::optional<purchase_type>& t) {
  if (!t)
    return nullptr;
  return json::value(to_string(*t));
}

bool flag(const said<std::optional<bool>>& f) {
  return f.value.value_or(false);
}

json::value metadata_json(const std::optional<std::string>& text) {
  if (!text)
    return nullptr;
  boost::system::error_code ec;
  json::parse_options opts;
  opts.max_depth = 64;
  auto v = json::parse(*text, ec, {}, opts);
  return ec ? json::value(nullptr) : v;
}

// Every fact of a purchase, by its stored name: visit(name, fact).
template <class P, class Visit>
void visit_facts(P& p, Visit&& visit) {
  visit("product_id", p.product_id);
  visit("quantity", p.quantity);
  visit("type", p.type);
  visit("country_code", p.country_code);
  visit("currency_code", p.currency_code);
  visit("price", p.price);
  visit("is_auto_renewing", p.is_auto_renewing);
  visit("in_trial_period", p.in_trial_period);
  visit("in_intro_period", p.in_intro_period);
  visit("in_grace_period", p.in_grace_period);
  visit("in_billing_retry", p.in_billing_retry);
  visit("is_on_hold", p.is_on_hold);
  visit("is_paused", p.is_paused);
  visit("is_upgraded", p.is_upgraded);
  visit("is_pending", p.is_pending);
  visit("ownership", p.owned_as);
  visit("current_period_start_at", p.current_period_start_at);
  visit("current_period_end_at", p.current_period_end_at);
  visit("grace_period_end_at", p.grace_period_end_at);
  visit("canceled_at", p.canceled_at);
  visit("revoked_at", p.revoked_at);
}

// Facts added after purchases were first stored (migration 015's release): a
// stored purchase without one has never been told it.
template <class P, class Visit>
void visit_later_facts(P& p, Visit&& visit) {
  visit("offer_type", p.offer_type);
  visit("offer_discount_type", p.offer_discount_type);
  visit("offer_period", p.offer_period);
  visit("billing_plan_type", p.billing_plan_type);
  visit("commitment", p.commitment);
  visit("app_transaction_id", p.app_transaction_id);
}

// A commitment's terms, as the resource answers them and the facts store them.
json::value commitment_value(const std::optional<commitment_info>& c) {
  if (!c)
    return nullptr;
  return json::object{{"billing_period_number", opt(c->billing_period_number)},
                      {"total_billing_periods", opt(c->total_billing_periods)},
                      {"expires_at", timestamp_json(c->expires_date)},
                      {"price", opt(c->price)}};
}

// ---- stored values, by type ---------------------------------------------------

json::value stored(const std::string& v) {
  return json::value(v);
}
json::value stored(const ownership& v) {
  return json::value(to_string(v));
}
json::value stored(const std::optional<purchase_type>& v) {
  return opt_type(v);
}
json::value stored(const std::optional<commitment_info>& v) {
  if (!v)
    return nullptr;
  return json::object{{"billing_period_number", opt(v->billing_period_number)},
                      {"total_billing_periods", opt(v->total_billing_periods)},
                      {"expires_date", opt(v->expires_date)},
                      {"price", opt(v->price)}};
}
template <class T>
json::value stored(const std::optional<T>& v) {
  return opt(v);
}

// Restores a stored value; false when it is not of the fact's type.
bool restore(const json::value& v, std::string& out) {
  if (!v.is_string())
    return false;
  out = v.get_string();
  return true;
}
bool restore(const json::value& v, ownership& out) {
  auto o = v.is_string() ? parse_ownership(v.get_string()) : std::nullopt;
  if (!o)
    return false;
  out = *o;
  return true;
}
bool restore(const json::value& v, std::optional<purchase_type>& out) {
  if (v.is_null()) {
    out.reset();
    return true;
  }
  out = v.is_string() ? parse_purchase_type(v.get_string()) : std::nullopt;
  return out.has_value();
}
bool restore(const json::value& v, std::optional<std::string>& out) {
  if (v.is_null()) {
    out.reset();
    return true;
  }
  if (!v.is_string())
    return false;
  out = std::string(v.get_string());
  return true;
}
bool restore(const json::value& v, std::optional<bool>& out) {
  if (v.is_null()) {
    out.reset();
    return true;
  }
  if (!v.is_bool())
    return false;
  out = v.get_bool();
  return true;
}

// A whole number `Int` holds exactly; nullopt for any other value (to_number
// would throw on a uint64 beyond INT64_MAX, and a cast would wrap).
template <class Int>
std::optional<Int> whole_number(const json::value& v) {
  if (v.is_int64()) {
    auto x = v.get_int64();
    if (x < std::numeric_limits<Int>::min() || x > std::numeric_limits<Int>::max())
      return std::nullopt;
    return static_cast<Int>(x);
  }
  if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<Int>::max()))
    return static_cast<Int>(v.get_uint64());
  return std::nullopt;
}

template <class Int>
bool restore(const json::value& v, std::optional<Int>& out) {
  if (v.is_null()) {
    out.reset();
    return true;
  }
  auto n = whole_number<Int>(v);
  if (!n)
    return false;
  out = *n;
  return true;
}

std::optional<unix_ms> number(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v ? whole_number<unix_ms>(*v) : std::nullopt;
}

bool restore(const json::value& v, std::optional<commitment_info>& out) {
  if (v.is_null()) {
    out.reset();
    return true;
  }
  if (!v.is_object())
    return false;
  const auto& o = v.get_object();
  auto small = [&](const char* key) -> std::optional<int> {
    const auto* n = o.if_contains(key);
    return n ? whole_number<int>(*n) : std::nullopt;
  };
  commitment_info c;
  c.billing_period_number = small("billing_period_number");
  c.total_billing_periods = small("total_billing_periods");
  c.expires_date = number(o, "expires_date");
  c.price = number(o, "price");
  out = c;
  return true;
}

std::vector<std::string> strings(const json::object& o, const char* key) {
  std::vector<std::string> out;
  if (const auto* v = o.if_contains(key); v && v->is_array())
    for (const auto& s : v->get_array())
      if (s.is_string())
        out.emplace_back(s.get_string());
  return out;
}

} // namespace

json::object purchase_json(const purchase& p, const std::vector<std::string>& entitlements,
                           unix_ms now) {
  const auto a = activity_at(p, now);
  json::object o;
  o.reserve(64);
  o["id"] = p.id;
  o["app_family_id"] = p.app_id;
  o["marketplace"] = to_string(p.market);
  o["app_identifier"] = p.app_identifier;
  o["product_id"] = p.product_id.value;
  o["quantity"] = opt(p.quantity.value);
  o["type"] = opt_type(p.type.value);
  o["environment"] = to_string(p.env);
  o["country_code"] = opt(p.country_code.value);
  o["currency_code"] = opt(p.currency_code.value);
  o["price"] = opt(p.price.value);
  o["user_identifier"] = opt(p.user_identifier);
  json::array previous;
  for (const auto& u : p.previous_users)
    previous.emplace_back(u);
  o["previous_user_identifiers"] = std::move(previous);
  o["metadata"] = metadata_json(p.metadata);
  o["is_active"] = a.active;
  o["is_auto_renewing"] = flag(p.is_auto_renewing);
  o["in_trial_period"] = flag(p.in_trial_period);
  o["in_intro_period"] = flag(p.in_intro_period);
  o["in_grace_period"] = flag(p.in_grace_period);
  o["in_billing_retry"] = flag(p.in_billing_retry);
  o["is_on_hold"] = flag(p.is_on_hold);
  o["is_paused"] = flag(p.is_paused);
  o["is_pending"] = flag(p.is_pending);
  o["is_upgraded"] = flag(p.is_upgraded);
  o["ownership"] = to_string(p.owned_as.value);
  o["offer_type"] = opt(p.offer_type.value);
  o["offer_discount_type"] = opt(p.offer_discount_type.value);
  o["offer_period"] = opt(p.offer_period.value);
  o["billing_plan_type"] = opt(p.billing_plan_type.value);
  o["commitment"] = commitment_value(p.commitment.value);
  o["app_transaction_id"] = opt(p.app_transaction_id.value);
  o["revoked_at"] = timestamp_json(p.revoked_at.value);
  o["revocation_reason"] = opt(p.revocation_reason);
  o["revocation_type"] = opt(p.revocation_type);
  o["revocation_percentage"] = opt(p.revocation_percentage);
  o["canceled_at"] = timestamp_json(p.canceled_at.value);
  o["purchased_at"] = timestamp_json(p.purchased_at);
  o["current_period_start_at"] = timestamp_json(p.current_period_start_at.value);
  o["current_period_end_at"] = timestamp_json(p.current_period_end_at.value);
  o["grace_period_end_at"] = timestamp_json(p.grace_period_end_at.value);
  o["last_synced_at"] = timestamp_json(p.last_synced_at);
  // The latest refund request the store made of it and what was answered
  // (model/purchases/refund_request.hpp): null when none.
  o["refund_request"] = metadata_json(p.refund_request);
  o["created_at"] = timestamp_json(p.created_at);
  o["updated_at"] = timestamp_json(p.updated_at);
  json::array names;
  for (const auto& e : entitlements)
    names.emplace_back(e);
  o["entitlements"] = std::move(names);
  // "versions" as receiptd names it, "version" as Mbaasy's resource did.
  o["versions"] = p.versions;
  o["version"] = p.versions;
  json::array sources;
  for (const auto& s : p.sources)
    sources.emplace_back(json::object{{"kind", source_kind_name(s.kind)}, {"id", s.id}});
  o["sources"] = std::move(sources);
  return o;
}

void add_purchase_fields(json::object& embedded, const json::object& resource) {
  for (const auto& [key, value] : resource)
    if (!embedded.contains(key))
      embedded[key] = value;
}

std::string facts_json(const purchase& p) {
  json::object o;
  o.reserve(48);
  auto put = [&](const char* name, const auto& fact) {
    json::object f{{"v", stored(fact.value)}};
    if (fact.at)
      f["at"] = *fact.at;
    o[name] = std::move(f);
  };
  visit_facts(p, put);
  visit_later_facts(p, put);
  o["revocation_reason"] = opt(p.revocation_reason);
  o["revocation_type"] = opt(p.revocation_type);
  o["revocation_percentage"] = opt(p.revocation_percentage);
  json::array keys;
  for (const auto& k : p.keys)
    keys.emplace_back(k);
  o["keys"] = std::move(keys);
  o["app_identifier"] = p.app_identifier;
  o["unit"] = p.unit;
  o["unit_time"] = p.unit_time;
  json::array previous;
  for (const auto& u : p.previous_users)
    previous.emplace_back(u);
  o["previous_users"] = std::move(previous);
  o["metadata"] = opt(p.metadata);
  o["purchased_at"] = opt(p.purchased_at);
  o["last_synced_at"] = opt(p.last_synced_at);
  o["notified"] = p.notified;
  o["refund_request"] = opt(p.refund_request);
  json::array sources;
  for (const auto& s : p.sources)
    sources.emplace_back(json::object{
      {"kind", to_string(s.kind)}, {"id", s.id}, {"validated", s.validated}});
  o["sources"] = std::move(sources);
  return json::serialize(o);
}

result<bool> read_facts(purchase& p, std::string_view text) {
  auto bad = [](std::string what) {
    return field_error{"facts", "malformed", "stored purchase facts: " + std::move(what)};
  };
  boost::system::error_code ec;
  auto doc = json::parse(text, ec);
  if (ec || !doc.is_object())
    return bad("not a JSON object");
  const auto& o = doc.get_object();
  std::string wrong;
  visit_facts(p, [&](const char* name, auto& fact) {
    const auto* f = o.if_contains(name);
    if (!f || !f->is_object() || !f->get_object().contains("v")) {
      if (wrong.empty())
        wrong = name;
      return;
    }
    if (!restore(f->get_object().at("v"), fact.value) && wrong.empty())
      wrong = name;
    fact.at = number(f->get_object(), "at");
  });
  visit_later_facts(p, [&](const char* name, auto& fact) {
    const auto* f = o.if_contains(name);
    if (!f)
      return; // stored before this fact was kept: never said
    if (!f->is_object() || !f->get_object().contains("v")
        || !restore(f->get_object().at("v"), fact.value)) {
      if (wrong.empty())
        wrong = name;
      return;
    }
    fact.at = number(f->get_object(), "at");
  });
  if (!wrong.empty())
    return bad(wrong + " is missing or of the wrong type");
  if (const auto* r = o.if_contains("revocation_reason"))
    p.revocation_reason = whole_number<int>(*r);
  if (const auto* t = o.if_contains("revocation_type"); t && t->is_string())
    p.revocation_type = std::string(t->get_string());
  if (const auto* r = o.if_contains("revocation_percentage"))
    p.revocation_percentage = whole_number<int>(*r);
  p.keys = strings(o, "keys");
  if (const auto* a = o.if_contains("app_identifier"); a && a->is_string())
    p.app_identifier = a->get_string();
  if (const auto* u = o.if_contains("unit"); u && u->is_string())
    p.unit = u->get_string();
  p.unit_time = number(o, "unit_time").value_or(0);
  p.previous_users = strings(o, "previous_users");
  if (const auto* m = o.if_contains("metadata"); m && m->is_string())
    p.metadata = std::string(m->get_string());
  p.purchased_at = number(o, "purchased_at");
  p.last_synced_at = number(o, "last_synced_at");
  if (const auto* n = o.if_contains("notified"); n && n->is_bool())
    p.notified = n->get_bool();
  if (const auto* r = o.if_contains("refund_request"); r && r->is_string())
    p.refund_request = std::string(r->get_string());
  p.sources.clear();
  if (const auto* s = o.if_contains("sources"); s && s->is_array())
    for (const auto& item : s->get_array()) {
      if (!item.is_object())
        continue;
      const auto& so = item.get_object();
      const auto* kind = so.if_contains("kind");
      const auto* id = so.if_contains("id");
      if (!kind || !kind->is_string() || !id || !id->is_string())
        continue;
      auto k = parse_record_kind(kind->get_string());
      if (!k)
        continue;
      const auto* v = so.if_contains("validated");
      p.sources.push_back({*k, std::string(id->get_string()), v && v->is_bool() && v->get_bool()});
    }
  return true;
}

} // namespace receiptd::model::purchases

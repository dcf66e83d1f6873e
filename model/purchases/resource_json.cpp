#include "model/purchases/resource_json.hpp"

#include <limits>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>

#include "model/purchases/activity.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::purchases {

namespace json = boost::json;

namespace {

template <class Object>
void put_opt_type(Object& o, std::string_view key, const std::optional<purchase_type>& t) {
  if (t)
    o.put(key, to_string(*t));
  else
    o.put(key, nullptr);
}

bool flag(const said<std::optional<bool>>& f) {
  return f.value.value_or(false);
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

// ---- stored values, by type ---------------------------------------------------

template <class Object>
void put_stored(Object& o, std::string_view key, const std::string& v) {
  o.put(key, v);
}
template <class Object>
void put_stored(Object& o, std::string_view key, const ownership& v) {
  o.put(key, to_string(v));
}
template <class Object>
void put_stored(Object& o, std::string_view key, const std::optional<purchase_type>& v) {
  put_opt_type(o, key, v);
}
template <class Object>
void put_stored(Object& o, std::string_view key, const std::optional<commitment_info>& v) {
  if (!v)
    return o.put(key, nullptr);
  o.put_object(key, [&](auto& c) {
    c.put("billing_period_number", v->billing_period_number);
    c.put("total_billing_periods", v->total_billing_periods);
    c.put("expires_date", v->expires_date);
    c.put("price", v->price);
  });
}
template <class Object, class T>
void put_stored(Object& o, std::string_view key, const std::optional<T>& v) {
  o.put(key, v);
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

// A commitment's terms, as the resource answers them.
template <class Object>
void put_commitment(Object& o, std::string_view key, const std::optional<commitment_info>& c) {
  if (!c)
    return o.put(key, nullptr);
  o.put_object(key, [&](auto& t) {
    t.put("billing_period_number", c->billing_period_number);
    t.put("total_billing_periods", c->total_billing_periods);
    json_out::put_timestamp(t, "expires_at", c->expires_date);
    t.put("price", c->price);
  });
}

template <class Object>
void put_resource(Object& o, const purchase& p, const std::vector<std::string>& entitlements,
                  unix_ms now) {
  using json_out::put_timestamp;
  const auto a = activity_at(p, now);
  o.put("id", p.id);
  o.put("app_family_id", p.app_id);
  o.put("marketplace", to_string(p.market));
  o.put("app_identifier", p.app_identifier);
  o.put("product_id", p.product_id.value);
  o.put("quantity", p.quantity.value);
  put_opt_type(o, "type", p.type.value);
  o.put("environment", to_string(p.env));
  o.put("country_code", p.country_code.value);
  o.put("currency_code", p.currency_code.value);
  o.put("price", p.price.value);
  o.put("user_identifier", p.user_identifier);
  json_out::put_strings(o, "previous_user_identifiers", p.previous_users);
  o.put_json("metadata", json_out::stored_json(p.metadata));
  o.put("is_active", a.active);
  o.put("is_auto_renewing", flag(p.is_auto_renewing));
  o.put("in_trial_period", flag(p.in_trial_period));
  o.put("in_intro_period", flag(p.in_intro_period));
  o.put("in_grace_period", flag(p.in_grace_period));
  o.put("in_billing_retry", flag(p.in_billing_retry));
  o.put("is_on_hold", flag(p.is_on_hold));
  o.put("is_paused", flag(p.is_paused));
  o.put("is_pending", flag(p.is_pending));
  o.put("is_upgraded", flag(p.is_upgraded));
  o.put("ownership", to_string(p.owned_as.value));
  o.put("offer_type", p.offer_type.value);
  o.put("offer_discount_type", p.offer_discount_type.value);
  o.put("offer_period", p.offer_period.value);
  o.put("billing_plan_type", p.billing_plan_type.value);
  put_commitment(o, "commitment", p.commitment.value);
  o.put("app_transaction_id", p.app_transaction_id.value);
  put_timestamp(o, "revoked_at", p.revoked_at.value);
  o.put("revocation_reason", p.revocation_reason);
  o.put("revocation_type", p.revocation_type);
  o.put("revocation_percentage", p.revocation_percentage);
  put_timestamp(o, "canceled_at", p.canceled_at.value);
  put_timestamp(o, "purchased_at", p.purchased_at);
  put_timestamp(o, "current_period_start_at", p.current_period_start_at.value);
  put_timestamp(o, "current_period_end_at", p.current_period_end_at.value);
  put_timestamp(o, "grace_period_end_at", p.grace_period_end_at.value);
  put_timestamp(o, "last_synced_at", p.last_synced_at);
  // The latest refund request the store made of it and what was answered
  // (model/purchases/refund_request.hpp): null when none.
  o.put_json("refund_request", json_out::stored_json(p.refund_request));
  put_timestamp(o, "created_at", p.created_at);
  put_timestamp(o, "updated_at", p.updated_at);
  json_out::put_strings(o, "entitlements", entitlements);
  // "versions" as receiptd names it, "version" as Mbaasy's resource did.
  o.put("versions", p.versions);
  o.put("version", p.versions);
  o.put_array("sources", [&](auto& list) {
    for (const auto& s : p.sources)
      list.push_object([&](auto& source) {
        source.put("kind", source_kind_name(s.kind));
        source.put("id", s.id);
      });
  });
}

} // namespace

void put_purchase(json_out::text_object& o, const purchase& p,
                  const std::vector<std::string>& entitlements, unix_ms now) {
  put_resource(o, p, entitlements, now);
}

void put_purchase(json_out::dom_object& o, const purchase& p,
                  const std::vector<std::string>& entitlements, unix_ms now) {
  put_resource(o, p, entitlements, now);
}

json::object purchase_json(const purchase& p, const std::vector<std::string>& entitlements,
                           unix_ms now) {
  return json_out::document_of([&](auto& o) { put_resource(o, p, entitlements, now); }, 64);
}

void restamp(json::object& resource, const purchase& p) {
  resource["updated_at"] = timestamp_json(p.updated_at);
  resource["versions"] = p.versions;
  resource["version"] = p.versions;
}

std::string facts_json(const purchase& p) {
  // Written on every change of a purchase: as text, straight from the values.
  return json_out::text_of([&](auto& o) {
    auto put = [&](const char* name, const auto& fact) {
      o.put_object(name, [&](auto& f) {
        put_stored(f, "v", fact.value);
        if (fact.at)
          f.put("at", *fact.at);
      });
    };
    visit_facts(p, put);
    visit_later_facts(p, put);
    o.put("revocation_reason", p.revocation_reason);
    o.put("revocation_type", p.revocation_type);
    o.put("revocation_percentage", p.revocation_percentage);
    json_out::put_strings(o, "keys", p.keys);
    o.put("app_identifier", p.app_identifier);
    o.put("unit", p.unit);
    o.put("unit_time", p.unit_time);
    json_out::put_strings(o, "previous_users", p.previous_users);
    o.put("metadata", p.metadata);
    o.put("purchased_at", p.purchased_at);
    o.put("last_synced_at", p.last_synced_at);
    o.put("notified", p.notified);
    o.put("refund_request", p.refund_request);
    o.put_array("sources", [&](auto& list) {
      for (const auto& s : p.sources)
        list.push_object([&](auto& source) {
          source.put("kind", to_string(s.kind));
          source.put("id", s.id);
          source.put("validated", s.validated);
        });
    });
  });
}

result<bool> read_facts(purchase& p, std::string_view text) {
  auto bad = [](std::string what) {
    return field_error{"facts", "malformed", "stored purchase facts: " + std::move(what)};
  };
  // Every purchase a lookup or a write reads: parsed into one block of the stack
  // (nothing below keeps a reference into the document).
  unsigned char block[16384];
  json::monotonic_resource arena(block, sizeof block);
  boost::system::error_code ec;
  auto doc = json::parse(text, ec, &arena);
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

#pragma once
// Properties of every In-App Purchase, however it was made (read back from its
// stored facts, or folded from what the stores said): its stored form reads
// back exactly, its resource is JSON a client can parse, and its activity over
// time is what active_until (the customer lookup's indexed column) says.

#include <boost/json/serialize.hpp>

#include "model/entitlements/matcher.hpp"
#include "model/purchases/activity.hpp"
#include "model/purchases/customer.hpp"
#include "model/purchases/resource_json.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace receiptd::fuzz {

// Rules with an offering for a product id prefix and one for any "life" in it,
// so that the seeds' products grant something (and some grant two things).
inline const model::purchases::entitlement_rules& purchase_rules() {
  static const auto rules = [] {
    auto r = model::entitlements::parse_rules(
      R"({"premium":{"monthly":{"product_id":["^premium"]},"lifetime":{"product_id":["life"]}},)"
      R"("pro":{"all":{"product_id":["^pro\\.","life"]}}})");
    if (!r)
      std::abort();
    auto m = model::entitlements::matcher::compile(*r);
    if (!m)
      std::abort();
    return model::purchases::rules_of(*m);
  }();
  return *rules;
}

// The columns the purchases table keeps beside the facts, as the repository
// sets them before read_facts.
inline model::purchases::purchase identity_of(const model::purchases::purchase& p) {
  model::purchases::purchase q;
  q.id = p.id;
  q.app_id = p.app_id;
  q.market = p.market;
  q.env = p.env;
  q.user_identifier = p.user_identifier;
  q.versions = p.versions;
  q.created_at = p.created_at;
  q.updated_at = p.updated_at;
  return q;
}

// Stored and read back: the same purchase.
inline void check_stored_purchase(const model::purchases::purchase& p) {
  auto stored = model::purchases::facts_json(p);
  parses_as_json(stored);
  auto back = identity_of(p);
  FUZZ_CHECK(model::purchases::read_facts(back, stored).ok());
  FUZZ_CHECK(back == p);
}

// Active at t exactly when t < active_until, at `now` and at the edges of its
// activity (INT64_MAX, a time that never comes, only computed: a purchase no
// time ends is active then though active_until says active_forever, INT64_MAX).
inline void check_activity(const model::purchases::purchase& p, model::unix_ms now) {
  namespace mp = model::purchases;
  auto until = mp::active_until(p);
  auto active_at = [&](model::unix_ms t) {
    auto a = mp::activity_at(p, t);
    if (verbose())
      std::fprintf(stderr, "%s at %lld: active %d (until %lld), active_until %s\n", p.id.c_str(),
                   static_cast<long long>(t), a.active,
                   static_cast<long long>(a.until.value_or(-1)),
                   until ? std::to_string(*until).c_str() : "none");
    if (t != INT64_MAX)
      FUZZ_CHECK(a.active == (until && t < *until));
    FUZZ_CHECK(!a.until || a.active);
    return a;
  };
  auto a = active_at(now);
  for (auto t : {INT64_MIN, INT64_MAX, model::unix_ms{0}, fixed_now})
    active_at(t);
  if (until && *until != mp::active_forever) {
    FUZZ_CHECK(active_at(*until - 1).active);
    FUZZ_CHECK(!active_at(*until).active);
  }
  auto next = mp::next_change(p, now);
  FUZZ_CHECK(!next || (*next > now && a.until == next));
}

// The resource as a client gets it.
inline void check_purchase_resource(const model::purchases::purchase& p, model::unix_ms now) {
  namespace mp = model::purchases;
  auto tags = purchase_rules().tags(p.product_id.value);
  auto text = boost::json::serialize(mp::purchase_json(p, tags, now));
  auto resource = parses_as_json(text).as_object();
  FUZZ_CHECK(resource.at("is_active").as_bool() == mp::activity_at(p, now).active);
  FUZZ_CHECK(resource.at("entitlements").as_array().size() == tags.size());
}

inline void check_purchase(const model::purchases::purchase& p, model::unix_ms now) {
  check_stored_purchase(p);
  check_activity(p, now);
  check_purchase_resource(p, now);
}

} // namespace receiptd::fuzz

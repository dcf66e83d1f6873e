// The stored form of an In-App Purchase read back (model/purchases/
// resource_json.hpp: facts_json / read_facts, the purchases table's facts
// column), and what is computed from it: its resource, its activity over time,
// and the customer answer from several of them.
//
// Input: byte 0: bits 0-1 the environment, bit 2 the store; the rest: up to
// three facts documents "|@|" between them, newest first (the order a customer
// lookup reads them in), then "|@|" the time of the request in unix ms (empty:
// a fixed time).
//
// Properties: a malformed document is an error naming the facts, never an
// exception; what is read is written back and read again the same; the
// resource is JSON a client can parse, active exactly when activity_at says;
// a purchase is active at `now` exactly when now < active_until (the customer
// lookup's indexed column); the customer answer from answer_purchases' subset is
// the answer from all of them.

#include <charconv>

#include "model/entitlements/matcher.hpp"
#include "model/purchases/activity.hpp"
#include "model/purchases/customer.hpp"
#include "model/purchases/resource_json.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace receiptd;
namespace mp = model::purchases;

// Rules with an offering for a product id prefix and one for any "life" in it,
// so that the seeds' products grant something (and some grant two things).
const mp::entitlement_rules& app_rules() {
  static const auto rules = [] {
    auto r = model::entitlements::parse_rules(
      R"({"premium":{"monthly":{"product_id":["^premium"]},"lifetime":{"product_id":["life"]}},)"
      R"("pro":{"all":{"product_id":["^pro\\.","life"]}}})");
    if (!r)
      std::abort();
    auto m = model::entitlements::matcher::compile(*r);
    if (!m)
      std::abort();
    return mp::rules_of(*m);
  }();
  return *rules;
}

// A purchase's identity columns, as the repository sets them before the facts.
mp::purchase identity(std::uint8_t flags, std::size_t i) {
  mp::purchase p;
  p.id = "00000000-0000-4000-8000-00000000010" + std::to_string(i);
  p.app_id = "00000000-0000-4000-8000-000000000001";
  p.market = flags & 4 ? mp::marketplace::store_b : mp::marketplace::store_a;
  p.env = static_cast<model::environment>((flags & 3) % 3);
  p.user_identifier = "alice";
  p.versions = static_cast<std::int64_t>(i) + 1;
  p.created_at = fuzz::fixed_now - static_cast<model::unix_ms>(i) * 1000;
  p.updated_at = p.created_at;
  return p;
}

void check_activity(const mp::purchase& p, model::unix_ms now) {
  auto until = mp::active_until(p);
  auto active_at = [&](model::unix_ms t) {
    auto a = mp::activity_at(p, t);
    if (fuzz::verbose())
      std::fprintf(stderr, "%s at %lld: active %d (until %lld), active_until %s\n", p.id.c_str(),
                   static_cast<long long>(t), a.active,
                   static_cast<long long>(a.until.value_or(-1)),
                   until ? std::to_string(*until).c_str() : "none");
    // active_forever: active at every time (INT64_MAX included: time never gets there).
    FUZZ_CHECK(a.active == (until && (t < *until || *until == mp::active_forever)));
    FUZZ_CHECK(!a.until || a.active);
    return a;
  };
  auto a = active_at(now);
  for (auto t : {INT64_MIN, INT64_MAX, model::unix_ms{0}, fuzz::fixed_now})
    active_at(t);
  if (until && *until != mp::active_forever) {
    FUZZ_CHECK(active_at(*until - 1).active);
    FUZZ_CHECK(!active_at(*until).active);
  }
  auto next = mp::next_change(p, now);
  FUZZ_CHECK(!next || (*next > now && a.until == next));
}

// The resource as a client gets it.
void check_resource(const mp::purchase& p, model::unix_ms now) {
  auto tags = app_rules().tags(p.product_id.value);
  auto text = boost::json::serialize(mp::purchase_json(p, tags, now));
  auto resource = fuzz::parses_as_json(text).as_object();
  FUZZ_CHECK(resource.at("is_active").as_bool() == mp::activity_at(p, now).active);
  FUZZ_CHECK(resource.at("entitlements").as_array().size() == tags.size());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const auto flags = data[0];
  auto fields = fuzz::split_fields(fuzz::as_text(data + 1, size - 1), 4);
  model::unix_ms now = fuzz::fixed_now;
  if (!fields[3].empty()) {
    auto [end, ec] = std::from_chars(fields[3].data(), fields[3].data() + fields[3].size(), now);
    if (ec != std::errc())
      now = fuzz::fixed_now;
  }
  std::vector<mp::purchase> purchases;
  for (std::size_t i = 0; i < 3; ++i) {
    if (i > 0 && fields[i].empty())
      break;
    auto p = identity(flags, i);
    auto read = mp::read_facts(p, fields[i]);
    if (!read) {
      for (const auto& e : read.errors())
        FUZZ_CHECK(e.field == "facts" && e.code == "malformed" && !e.message.empty());
      continue;
    }
    // Written back and read again: the same purchase.
    auto again = identity(flags, i);
    auto stored = mp::facts_json(p);
    fuzz::parses_as_json(stored);
    FUZZ_CHECK(mp::read_facts(again, stored).ok());
    FUZZ_CHECK(again == p);
    check_activity(p, now);
    check_resource(p, now);
    purchases.push_back(std::move(p));
  }
  if (purchases.empty())
    return 0;
  // What the lookup reads is enough for the whole answer.
  auto all = mp::customer_json("alice", purchases.front().env, purchases, {}, app_rules(), now);
  auto read = mp::answer_purchases(purchases, now);
  FUZZ_CHECK(read.size() <= purchases.size());
  auto from_read = mp::customer_json("alice", purchases.front().env, read, {}, app_rules(), now);
  auto text = boost::json::serialize(all);
  fuzz::parses_as_json(text);
  FUZZ_CHECK(text == boost::json::serialize(from_read));
  return 0;
}

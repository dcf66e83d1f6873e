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

#include "tests/fuzz/purchase_checks.hpp"

namespace {

using namespace receiptd;
namespace mp = model::purchases;

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
    fuzz::check_purchase(p, now);
    purchases.push_back(std::move(p));
  }
  if (purchases.empty())
    return 0;
  // What the lookup reads is enough for the whole answer.
  const auto env = purchases.front().env;
  const auto& rules = fuzz::purchase_rules();
  auto all = mp::customer_json("alice", env, purchases, {}, rules, now);
  auto read = mp::answer_purchases(purchases, now);
  FUZZ_CHECK(read.size() <= purchases.size());
  auto from_read = mp::customer_json("alice", env, read, {}, rules, now);
  auto text = boost::json::serialize(all);
  fuzz::parses_as_json(text);
  FUZZ_CHECK(text == boost::json::serialize(from_read));
  return 0;
}

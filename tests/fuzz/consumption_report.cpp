// The app's backend's consumption report (PUT /server/in_app_purchases/{id}/
// consumption, model/purchases/refund_request.hpp parse_consumption_report) and
// the refund answers built from it.
//
// Input: the request body.
//
// Properties: a refusal is field errors, each with a code; an accepted report
// holds a percentage within 0–100000 milliunits and one of Apple's delivery
// statuses; it reads back from its stored text as itself; the answers built
// from it are what the stores take: Apple's consumptionPercentage 0 unless
// DELIVERED, Play's consumptionPercentageMilliunits within bounds.

#include "model/purchases/refund_request.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace receiptd;
namespace mp = model::purchases;

bool apple_status(const std::string& s) {
  for (auto known : mp::delivery_statuses)
    if (s == known)
      return true;
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parsed = mp::parse_consumption_report(fuzz::as_text(data, size));
  if (!parsed) {
    for (const auto& e : parsed.errors())
      FUZZ_CHECK(!e.code.empty() && !e.message.empty());
    return 0;
  }
  const auto& r = *parsed;
  if (r.consumption_milliunits)
    FUZZ_CHECK(*r.consumption_milliunits >= 0 && *r.consumption_milliunits <= 100000);
  if (r.delivery_status)
    FUZZ_CHECK(apple_status(*r.delivery_status));
  auto back = mp::read_consumption_report(mp::to_json_text(r));
  FUZZ_CHECK(back.consumption_milliunits == r.consumption_milliunits);
  FUZZ_CHECK(back.delivery_status == r.delivery_status);
  FUZZ_CHECK(back.sample_content_provided == r.sample_content_provided);

  for (auto pref : {mp::refund_preference::decline, mp::refund_preference::grant,
                    mp::refund_preference::grant_prorated}) {
    mp::refund_settings s{pref, true, false};
    for (bool delivered : {false, true})
      for (bool renewable : {false, true}) {
        auto a = mp::store_a_consumption_body(s, {delivered, renewable}, r);
        FUZZ_CHECK(a.body.has_value());
        const auto& o = *a.body;
        FUZZ_CHECK(o.at("customerConsented").as_bool());
        FUZZ_CHECK(apple_status(std::string(o.at("deliveryStatus").as_string())));
        if (auto* pct = o.if_contains("consumptionPercentage")) {
          FUZZ_CHECK(pct->as_int64() >= 0 && pct->as_int64() <= 100000);
          if (o.at("deliveryStatus").as_string() != "DELIVERED")
            FUZZ_CHECK(pct->as_int64() == 0);
        }
        auto b = mp::store_b_review_body(s, {delivered, renewable}, r, "token");
        FUZZ_CHECK(b.body.has_value());
        if (auto* pct = b.body->if_contains("consumptionPercentageMilliunits"))
          FUZZ_CHECK(pct->as_int64() >= 0 && pct->as_int64() <= 100000);
      }
  }
  return 0;
}

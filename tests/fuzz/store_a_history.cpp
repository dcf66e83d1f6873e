// The App Store Server API's Get Transaction History (v2) answers (a hostile or
// broken network path can put any bytes there): classify_transaction_history,
// every entry verified under the shipped roots (verified_history), and the
// history landing on a unified receipt (apply_history), then its resource.
//
// The first byte picks the HTTP status (bits 0-2) and the bundle the history is
// checked against (bit 3: the bundle of two real Sandbox vectors, else a test one); the
// rest is the body, "|@|", the Retry-After header.

#include <algorithm>

#include "model/resource_json.hpp"
#include "model/store_a/history.hpp"
#include "tests/fuzz/jws_checks.hpp"

namespace {

using namespace receiptd;
namespace sa = model::store_a;

bool printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// A unified receipt of two purchases, named after what the history's first two
// entries claim (unverified), so that a genuine history confirms them.
model::receipt_record receipt_for(const std::vector<std::string>& history, std::string bundle) {
  model::receipt_record r;
  r.id = "00000000-0000-4000-8000-000000000003";
  r.app_id = "00000000-0000-4000-8000-000000000001";
  r.bundle_id = std::move(bundle);
  r.env = model::environment::sandbox;
  for (std::size_t i = 0; i < 2; ++i) {
    model::apple_in_app_purchase p;
    p.transaction_id = "200000000000000" + std::to_string(i);
    p.product_id = "com.example.receiptd.monthly";
    if (i < history.size())
      if (auto payload = fuzz::claimed_payload(history[i]))
        if (auto t = sa::parse_signed_transaction(*payload)) {
          p.transaction_id = t->transaction_id;
          p.original_transaction_id = t->original_transaction_id;
          p.product_id = t->product_id;
        }
    r.in_app_purchases.push_back(std::move(p));
  }
  return r;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  static constexpr int statuses[] = {200, 0, 404, 429, 500, 401, 403, 503};
  const int status = statuses[data[0] & 7];
  auto fields = fuzz::split_fields(fuzz::as_text(data + 1, size - 1), 2);
  const auto body = fields[0], retry_after = fields[1];

  auto page = sa::classify_transaction_history(status, body, status == 0 ? "timeout\n" : "",
                                               retry_after, fuzz::fixed_now);
  const auto& v = page.verdict;
  FUZZ_CHECK(!v.detail.empty() && printable(v.detail));
  if (status != 200)
    FUZZ_CHECK(v.outcome != model::store_outcome::confirmed);
  FUZZ_CHECK(page.transaction_not_found == (v.outcome == model::store_outcome::rejected));
  if (page.retry_after_ms)
    FUZZ_CHECK(status == 429 && *page.retry_after_ms >= 0);
  FUZZ_CHECK(v.operator_problem == (status == 401 || status == 403));
  if (v.outcome != model::store_outcome::confirmed) {
    FUZZ_CHECK(page.signed_transactions.empty() && !page.has_more);
  } else {
    // Paging never stalls on a page that says there is more but not where.
    if (page.has_more)
      FUZZ_CHECK(!page.revision.empty());
    for (const auto& jws : page.signed_transactions)
      FUZZ_CHECK(!jws.empty());
  }
  // The next page's URL keeps the revision inside its query parameter.
  auto url = sa::transaction_history_url("https://api.storekit.apple.com/", "2000000000000001",
                                         page.revision);
  FUZZ_CHECK(url.starts_with("https://api.storekit.apple.com/inApps/v2/history/2000000000000001"));
  FUZZ_CHECK(url.find_first_of(" \r\n#&", 40) == std::string::npos);

  const std::string bundle = data[0] & 8 ? "com.loki-project.loki-messenger" : "com.example.receiptd";
  std::vector<sa::signed_transaction> landed;
  auto verified = sa::verified_history(page.signed_transactions, bundle, page.env,
                                       fuzz::apple_anchors());
  if (verified) {
    // Only what Apple signed, of this bundle, in one environment, is a history.
    for (const auto& jws : page.signed_transactions)
      FUZZ_CHECK(fuzz::checked_verify_jws(jws).reason == model::fraud_reason::none);
    for (const auto& t : *verified)
      FUZZ_CHECK(t.bundle_id == bundle && t.env == verified->front().env);
    landed = *verified;
  } else {
    FUZZ_CHECK(!page.signed_transactions.empty());
    FUZZ_CHECK(!verified.err().message().empty());
  }

  auto r = receipt_for(page.signed_transactions, bundle);
  auto verdict = v;
  if (!verified)
    verdict = model::unreachable_verdict("unusable");
  sa::apply_history(r, verdict, landed);
  if (r.state == model::validation_state::validated) {
    FUZZ_CHECK(verdict.outcome == model::store_outcome::confirmed);
    // Validated: at least one purchase is in Apple's verified history.
    FUZZ_CHECK(std::any_of(r.in_app_purchases.begin(), r.in_app_purchases.end(),
                           [](const auto& p) { return !p.store_contradiction; }));
  }
  for (const auto& p : r.in_app_purchases)
    if (!p.store_contradiction && verdict.outcome == model::store_outcome::confirmed)
      FUZZ_CHECK(std::any_of(landed.begin(), landed.end(), [&](const auto& t) {
        return t.transaction_id == p.transaction_id && t.product_id == p.product_id;
      }));
  fuzz::parses_as_json(boost::json::serialize(model::receipt_json(r)));
  return 0;
}

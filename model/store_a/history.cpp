#include "model/store_a/history.hpp"

#include <boost/json/parse.hpp>

#include "model/store_a/server_api.hpp"
#include "model/store_a/transaction_record.hpp"
#include "model/store_b/service_account.hpp" // url_encode

namespace receiptd::model::store_a {

namespace json = boost::json;

std::string transaction_history_url(std::string_view base_url, std::string_view transaction_id,
                                    std::string_view revision) {
  std::string url(base_url);
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  url += "/inApps/v2/history/";
  url += store_b::url_encode(transaction_id);
  if (!revision.empty()) {
    url += "?revision=";
    url += store_b::url_encode(revision);
  }
  return url;
}

namespace {

// HistoryResponse (App Store Server API): signedTransactions, hasMore and
// revision are what paging needs; environment and bundleId are checked
// against each entry.
bool read_page(const json::object& o, transaction_history_page& page) {
  auto* list = o.if_contains("signedTransactions");
  auto* more = o.if_contains("hasMore");
  auto* revision = o.if_contains("revision");
  if (!list || !list->is_array() || !more || !more->is_bool()
      || (revision && !revision->is_string() && !revision->is_null()))
    return false;
  page.has_more = more->get_bool();
  if (revision && revision->is_string())
    page.revision = std::string(revision->get_string());
  if (page.has_more && page.revision.empty())
    return false; // no way to the next page
  for (const auto& item : list->get_array()) {
    if (!item.is_string() || item.get_string().empty())
      return false;
    page.signed_transactions.emplace_back(item.get_string());
  }
  if (auto* env = o.if_contains("environment"); env && env->is_string()) {
    if (env->get_string() == "Production")
      page.env = environment::production;
    else if (env->get_string() == "Sandbox")
      page.env = environment::sandbox;
  }
  if (auto* bundle = o.if_contains("bundleId"); bundle && bundle->is_string())
    page.bundle_id = std::string(bundle->get_string());
  return true;
}

} // namespace

transaction_history_page classify_transaction_history(int http_status, std::string_view body,
                                                      std::string_view transport_error,
                                                      std::string_view retry_after_header,
                                                      unix_ms now) {
  transaction_history_page page;
  if (http_status != 200) {
    auto a = classify_transaction_info(http_status, body, transport_error, retry_after_header, now);
    page.verdict = std::move(a.verdict);
    page.transaction_not_found = a.transaction_not_found;
    page.retry_after_ms = a.retry_after_ms;
    return page;
  }
  boost::system::error_code ec;
  auto doc = json::parse(body, ec);
  if (ec || !doc.is_object() || !read_page(doc.get_object(), page)) {
    transaction_history_page bad;
    bad.verdict = unreachable_verdict("HTTP 200 without a transaction history");
    return bad;
  }
  page.verdict.outcome = store_outcome::confirmed;
  page.verdict.detail = "HTTP 200";
  page.verdict.env = page.env;
  return page;
}

result<std::vector<signed_transaction>>
verified_history(const std::vector<std::string>& signed_transactions,
                 std::string_view bundle_id, std::optional<environment> env,
                 const trust_anchors& anchors) {
  auto fail = [](std::string why) {
    return field_error{"signedTransactions", "unusable", std::move(why)};
  };
  std::vector<signed_transaction> out;
  out.reserve(signed_transactions.size());
  for (std::size_t i = 0; i < signed_transactions.size(); ++i) {
    auto t = verified_server_transaction(signed_transactions[i], anchors);
    auto entry = "transaction history entry " + std::to_string(i);
    if (!t)
      return fail(entry + ": " + t.err().message());
    if (t->bundle_id != bundle_id)
      return fail(entry + " belongs to another bundle than the app's");
    if (!env)
      env = t->env;
    if (t->env != *env)
      return fail(entry + " names another environment than the history");
    out.push_back(std::move(t).value());
  }
  return out;
}

namespace {

const signed_transaction* find_transaction(const std::vector<signed_transaction>& history,
                                           const std::string& id) {
  for (const auto& t : history)
    if (t.transaction_id == id)
      return &t;
  return nullptr;
}

// What of Apple's history contradicts one purchase of the receipt; "" when
// nothing does.
std::string contradiction(const apple_in_app_purchase& p, const signed_transaction* t) {
  if (!t)
    return "absent from the App Store's transaction history";
  if (t->product_id != p.product_id)
    return "the App Store's transaction history names another product";
  if (!p.original_transaction_id.empty() && t->original_transaction_id != p.original_transaction_id)
    return "the App Store's transaction history names another original transaction";
  return {};
}

} // namespace

void apply_history(receipt_record& r, const store_verdict& v,
                   const std::vector<signed_transaction>& history) {
  if (v.outcome != store_outcome::confirmed) {
    model::apply_store_verdict(r, v);
    return;
  }
  std::size_t contradicted = 0;
  for (auto& p : r.in_app_purchases) {
    const auto* t = find_transaction(history, p.transaction_id);
    if (auto why = contradiction(p, t); !why.empty()) {
      p.store_contradiction = std::move(why);
      ++contradicted;
      continue;
    }
    p.store_contradiction.reset();
    if (t->expires_date)
      p.expires_date = t->expires_date;
    if (t->revocation_date) {
      p.cancellation_date = t->revocation_date;
      p.cancellation_reason = t->revocation_reason;
    }
  }
  store_verdict landed = v;
  if (!history.empty())
    landed.env = history.front().env;
  if (!r.in_app_purchases.empty() && contradicted == r.in_app_purchases.size()) {
    landed.outcome = store_outcome::rejected;
    landed.detail = "the App Store's transaction history holds none of the receipt's purchases";
  } else if (contradicted > 0) {
    landed.detail += "; " + std::to_string(contradicted) + " of "
      + std::to_string(r.in_app_purchases.size())
      + " purchases contradicted by the App Store's transaction history";
  }
  model::apply_store_verdict(r, landed);
}

} // namespace receiptd::model::store_a

#include "model/store_b/play_api.hpp"

#include <algorithm>
#include <climits>
#include <utility>

#include <boost/json/parse.hpp>

#include "model/json_fields.hpp"
#include "model/store_b/service_account.hpp"

namespace receiptd::model::store_b {

namespace {

// A non-empty string of at most `max` bytes at `key`; nullopt otherwise (an
// answer that is not Play's shape says nothing).
std::optional<std::string> bounded_text(const boost::json::object& o, const char* key,
                                        std::size_t max = 256) {
  auto* v = o.if_contains(key);
  if (!v || !v->is_string() || v->get_string().empty() || v->get_string().size() > max)
    return std::nullopt;
  return std::string(v->get_string());
}

// androidpublisher#productPurchase: purchaseState 0 purchased, 1 cancelled,
// 2 pending; purchaseType 0 = test (licence tester) purchase.
void enrich_product(const boost::json::object& o, play_purchase& p, store_verdict& v) {
  p.kind = product_kind::product;
  // The product is in the request path; an answer that names another one is no
  // proof of the claimed product.
  if (auto product = json_text(o, "productId"); !product.empty() && product != p.product_id) {
    v.outcome = store_outcome::rejected;
    v.detail = "the purchase token is for product \"" + product.substr(0, 150) + "\", not \""
      + p.product_id.substr(0, 150) + "\"";
    return;
  }
  if (auto t = json_int(o.if_contains("purchaseTimeMillis")))
    p.purchase_time = *t;
  if (auto s = json_int(o.if_contains("purchaseState")))
    p.purchase_state = *s == 0 ? purchase_state::purchased
      : *s == 1                ? purchase_state::cancelled
      : *s == 2                ? purchase_state::pending
                               : purchase_state::unknown;
  if (auto a = json_int(o.if_contains("acknowledgementState")))
    p.acknowledged = *a == 1;
  if (auto q = json_int(o.if_contains("quantity")); q && *q >= 0 && *q <= INT_MAX)
    p.quantity = static_cast<int>(*q);
  // refundableQuantity (2024): what a quantity-based partial refund left.
  if (auto q = json_int(o.if_contains("refundableQuantity")); q && *q >= 0 && *q <= INT_MAX)
    p.refundable_quantity = static_cast<int>(*q);
  // consumptionState 1: the app consumed it (a consumable); 0 says nothing of
  // its kind (a non-consumable, or a consumable not consumed yet).
  if (auto c = json_int(o.if_contains("consumptionState")); c && *c == 1)
    p.consumed = true;
  if (auto id = bounded_text(o, "obfuscatedExternalAccountId"))
    p.account_id = std::move(id);
  if (auto region = bounded_text(o, "regionCode"))
    p.region_code = std::move(region);
  if (auto order = bounded_text(o, "orderId"))
    p.latest_order_id = std::move(order);
  auto type = json_int(o.if_contains("purchaseType"));
  p.is_test = type && *type == 0;
  v.env = p.is_test ? environment::sandbox : environment::production;
}

// A count in 0..INT_MAX at `key` (proto3 JSON may write an int32 as a string).
std::optional<int> count_at(const boost::json::object& o, const char* key) {
  auto n = json_int(o.if_contains(key));
  if (!n || *n < 0 || *n > INT_MAX)
    return std::nullopt;
  return static_cast<int>(*n);
}

// One productLineItem: productId and productOfferDetails (quantity,
// refundableQuantity, consumptionState, offerId, purchaseOptionId); nullopt
// for an item without a product id.
std::optional<play_line_item> line_item_of(const boost::json::value& v) {
  if (!v.is_object())
    return std::nullopt;
  const auto& item = v.get_object();
  auto product = bounded_text(item, "productId");
  if (!product)
    return std::nullopt;
  play_line_item out;
  out.product_id = std::move(*product);
  if (auto* d = item.if_contains("productOfferDetails"); d && d->is_object()) {
    const auto& details = d->get_object();
    out.quantity = count_at(details, "quantity");
    out.refundable_quantity = count_at(details, "refundableQuantity");
    if (auto c = json_text(details, "consumptionState"); !c.empty())
      out.consumed = c == "CONSUMPTION_STATE_CONSUMED";
    out.offer_id = bounded_text(details, "offerId");
    out.purchase_option_id = bounded_text(details, "purchaseOptionId");
  }
  return out;
}

// androidpublisher#productPurchaseV2 (purchases.productsv2): one purchase
// token, one or more line items (Billing Library 8: several products, each
// with its purchase option and offer); purchaseStateContext.purchaseState
// PURCHASED, PENDING or CANCELLED; acknowledgementState by name;
// testPurchaseContext only on a licence tester's purchase.
void enrich_product_v2(const boost::json::object& o, play_purchase& p, store_verdict& v) {
  p.kind = product_kind::product;
  std::vector<play_line_item> items;
  if (auto* list = o.if_contains("productLineItem"); list && list->is_array()) {
    for (const auto& entry : list->get_array()) {
      if (items.size() == max_line_items) {
        v.outcome = store_outcome::unreachable;
        v.detail = "productsv2 answered more than " + std::to_string(max_line_items)
          + " line items";
        return;
      }
      auto item = line_item_of(entry);
      // One purchase per product: a product listed twice is read once.
      if (item && std::none_of(items.begin(), items.end(), [&](const play_line_item& i) {
            return i.product_id == item->product_id;
          }))
        items.push_back(std::move(*item));
    }
  }
  // The token must be for the product the upload claims (one of its line items).
  auto claimed = std::find_if(items.begin(), items.end(),
                              [&](const play_line_item& i) { return i.product_id == p.product_id; });
  if (claimed == items.end()) {
    v.outcome = store_outcome::rejected;
    v.detail = items.empty() ? std::string("the purchase names no product")
                             : "the purchase token is for product \""
        + items.front().product_id.substr(0, 150) + "\", not \"" + p.product_id.substr(0, 150)
        + "\"";
    return;
  }
  p.quantity = claimed->quantity;
  p.refundable_quantity = claimed->refundable_quantity;
  if (claimed->consumed && *claimed->consumed)
    p.consumed = true;
  p.offer_id = claimed->offer_id;
  p.purchase_option_id = claimed->purchase_option_id;
  if (items.size() > 1) {
    for (auto& item : items) // what an earlier orders call said of each stays
      for (const auto& known : p.line_items)
        if (known.product_id == item.product_id)
          item.cost = known.cost;
    p.line_items = std::move(items);
  } else {
    p.line_items.clear();
  }
  if (auto* ctx = o.if_contains("purchaseStateContext"); ctx && ctx->is_object()) {
    auto s = json_text(ctx->get_object(), "purchaseState");
    p.purchase_state = s == "PURCHASED" ? purchase_state::purchased
      : s == "CANCELLED"                ? purchase_state::cancelled
      : s == "PENDING"                  ? purchase_state::pending
                                        : purchase_state::unknown;
  }
  if (auto a = json_text(o, "acknowledgementState"); !a.empty())
    p.acknowledged = a == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED";
  // purchaseCompletionTime: when it became PURCHASED (none while pending).
  if (auto t = parse_rfc3339(json_text(o, "purchaseCompletionTime")))
    p.purchase_time = *t;
  if (auto order = bounded_text(o, "orderId"))
    p.latest_order_id = std::move(order);
  if (auto id = bounded_text(o, "obfuscatedExternalAccountId"))
    p.account_id = std::move(id);
  if (auto region = bounded_text(o, "regionCode"))
    p.region_code = std::move(region);
  auto* test = o.if_contains("testPurchaseContext");
  p.is_test = test && test->is_object();
  v.env = p.is_test ? environment::sandbox : environment::production;
}

constexpr std::pair<const char*, std::string_view> offer_phases[] = {
  {"basePrice", "base_price"},
  {"freeTrial", "free_trial"},
  {"introductoryPrice", "introductory_price"},
  {"prorationPeriod", "proration_period"},
};

// A count of payments: an int32 in 0..INT_MAX (proto3 JSON may write it as a
// string); nullopt otherwise.
std::optional<int> payment_count(const boost::json::object& o, const char* key) {
  auto n = json_int(o.if_contains(key));
  if (!n || *n < 0 || *n > INT_MAX)
    return std::nullopt;
  return static_cast<int>(*n);
}

// autoRenewingPlan.installmentDetails (an InstallmentPlan), when present.
std::optional<play_installments> installments_of(const boost::json::object& plan) {
  auto* details = plan.if_contains("installmentDetails");
  if (!details || !details->is_object())
    return std::nullopt;
  const auto& d = details->get_object();
  play_installments i;
  i.initial_payments = payment_count(d, "initialCommittedPaymentsCount");
  i.subsequent_payments = payment_count(d, "subsequentCommittedPaymentsCount");
  i.remaining_payments = payment_count(d, "remainingCommittedPaymentsCount");
  auto* pending = d.if_contains("pendingCancellation");
  i.pending_cancellation = pending && pending->is_object();
  return i;
}

// androidpublisher#subscriptionPurchaseV2: a testPurchase object marks licence
// testers; lineItems carry expiry and auto-renewal per product.
void enrich_subscription(const boost::json::object& o, play_purchase& p, store_verdict& v) {
  p.kind = product_kind::subscription;
  if (auto s = json_text(o, "subscriptionState"); !s.empty()) {
    p.subscription_state = s;
    if (s == "SUBSCRIPTION_STATE_PENDING")
      p.purchase_state = purchase_state::pending;
    else if (s == "SUBSCRIPTION_STATE_CANCELED" || s == "SUBSCRIPTION_STATE_EXPIRED")
      p.purchase_state = purchase_state::cancelled;
    else
      p.purchase_state = purchase_state::purchased;
  }
  if (auto a = json_text(o, "acknowledgementState"); !a.empty())
    p.acknowledged = a == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED";
  if (!p.purchase_time)
    if (auto t = parse_rfc3339(json_text(o, "startTime")))
      p.purchase_time = *t;
  // The token must be for the product the upload claims: a cheap subscription's
  // token is no proof of an expensive one.
  const boost::json::object* line = nullptr;
  std::string first_product;
  if (auto* items = o.if_contains("lineItems"); items && items->is_array()) {
    for (const auto& item : items->get_array()) {
      if (!item.is_object())
        continue;
      auto product = json_text(item.get_object(), "productId");
      if (first_product.empty())
        first_product = product;
      if (p.product_id.empty() ? !product.empty() : product == p.product_id) {
        line = &item.get_object();
        break;
      }
    }
  }
  if (line == nullptr) {
    v.outcome = store_outcome::rejected;
    v.detail = first_product.empty() ? "the subscription names no product"
                                     : "the purchase token is for product \""
        + first_product.substr(0, 150) + "\", not \"" + p.product_id.substr(0, 150) + "\"";
    return;
  }
  if (p.product_id.empty())
    p.product_id = json_text(*line, "productId");
  if (auto e = parse_rfc3339(json_text(*line, "expiryTime")))
    p.expiry_time = *e;
  p.prepaid.reset();
  p.allow_extend_after.reset();
  p.installments.reset();
  if (auto* plan = line->if_contains("autoRenewingPlan"); plan && plan->is_object()) {
    auto* on = plan->get_object().if_contains("autoRenewEnabled");
    p.auto_renewing = on && on->is_bool() && on->get_bool();
    p.prepaid = false;
    p.installments = installments_of(plan->get_object());
  } else if (auto* prepaid = line->if_contains("prepaidPlan"); prepaid && prepaid->is_object()) {
    p.auto_renewing = false; // a prepaid plan never renews by itself
    p.prepaid = true;
    p.allow_extend_after = parse_rfc3339(json_text(prepaid->get_object(), "allowExtendAfterTime"));
  }
  // offerPhase (2025): which phase of its offer the line item is in, one of
  // basePrice, freeTrial, introductoryPrice, prorationPeriod.
  p.offer_phase.reset();
  if (auto* phase = line->if_contains("offerPhase"); phase && phase->is_object()) {
    const auto& phases = phase->get_object();
    p.in_free_trial = phases.contains("freeTrial");
    p.in_intro_price = phases.contains("introductoryPrice");
    for (auto [key, name] : offer_phases)
      if (phases.contains(key))
        p.offer_phase = std::string(name);
  }
  // latestSuccessfulOrderId (per line item) replaces the top-level
  // latestOrderId, which Google shuts down on 2027-08-31 (Play Developer API
  // deprecations, May 2025): the old field only when the new one is absent.
  p.latest_order_id = bounded_text(*line, "latestSuccessfulOrderId");
  if (!p.latest_order_id)
    p.latest_order_id = bounded_text(o, "latestOrderId");
  p.deferred_product_id.reset();
  if (auto* deferred = line->if_contains("deferredItemReplacement");
      deferred && deferred->is_object())
    p.deferred_product_id = bounded_text(deferred->get_object(), "productId");
  if (auto linked = bounded_text(o, "linkedPurchaseToken", 2048))
    p.linked_purchase_token = std::move(linked);
  if (auto region = bounded_text(o, "regionCode"))
    p.region_code = std::move(region);
  if (auto* ids = o.if_contains("externalAccountIdentifiers"); ids && ids->is_object())
    if (auto id = bounded_text(ids->get_object(), "obfuscatedExternalAccountId"))
      p.account_id = std::move(id);
  p.is_test = o.contains("testPurchase");
  v.env = p.is_test ? environment::sandbox : environment::production;
}

} // namespace

std::string purchase_url(std::string_view api_base, purchase_api api, std::string_view package_name,
                         std::string_view product_id, std::string_view purchase_token) {
  std::string url(api_base);
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  url += "/androidpublisher/v3/applications/";
  url += url_encode(package_name);
  if (api == purchase_api::products) {
    url += "/purchases/products/";
    url += url_encode(product_id);
  } else if (api == purchase_api::products_v2) {
    url += "/purchases/productsv2";
  } else {
    url += "/purchases/subscriptionsv2";
  }
  url += "/tokens/";
  url += url_encode(purchase_token);
  return url;
}

store_verdict classify_purchase_response(purchase_api api, int status, std::string_view body,
                                         std::string_view transport_error,
                                         play_purchase& purchase) {
  store_verdict v;
  v.body = std::string(body);
  if (status == 0) {
    v.outcome = store_outcome::unreachable;
    v.detail = "store unreachable: " + std::string(transport_error);
    return v;
  }
  auto code = "HTTP " + std::to_string(status);
  if (status == 200) {
    stack_block<4096> block; // what is read from the document is copied out
    boost::system::error_code ec;
    auto doc = boost::json::parse(body, ec, block.storage());
    if (ec || !doc.is_object()) {
      v.outcome = store_outcome::unreachable;
      v.detail = "HTTP 200 without a JSON object";
      return v;
    }
    v.outcome = store_outcome::confirmed;
    v.detail = code;
    if (api == purchase_api::products)
      enrich_product(doc.get_object(), purchase, v);
    else if (api == purchase_api::products_v2)
      enrich_product_v2(doc.get_object(), purchase, v);
    else
      enrich_subscription(doc.get_object(), purchase, v);
    if (purchase.voided_time) // Play's voided list said so: the API's state does not undo it
      purchase.purchase_state = purchase_state::refunded;
    return v;
  }
  if (status == 410) { // purchase gone: an expired subscription, still genuine
    v.outcome = store_outcome::confirmed;
    v.detail = "HTTP 410 (gone: expired)";
    purchase.kind
      = api == purchase_api::subscriptions_v2 ? product_kind::subscription : product_kind::product;
    // Google forgets a subscription some time after it expired: that is what it is.
    if (api == purchase_api::subscriptions_v2) {
      purchase.subscription_state = "SUBSCRIPTION_STATE_EXPIRED";
      purchase.purchase_state = purchase_state::cancelled;
    }
    return v;
  }
  if (status == 400 || status == 404) {
    v.outcome = store_outcome::rejected;
    v.detail = code;
    return v;
  }
  v.outcome = store_outcome::unreachable;
  v.detail = code;
  v.operator_problem = status == 401 || status == 403;
  return v;
}

} // namespace receiptd::model::store_b

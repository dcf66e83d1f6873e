// What each source says about its purchase (observation.hpp), in the stores'
// own terms:
//  - StoreKit 2 / App Store Server API: JWSTransactionDecodedPayload ("type",
//    inAppOwnershipType, offerType/offerDiscountType, isUpgraded,
//    revocationDate), App Store Server Notifications V2 (data.status 1 active,
//    2 expired, 3 billing retry, 4 grace period, 5 revoked; signedRenewalInfo
//    autoRenewStatus, isInBillingRetryPeriod, gracePeriodExpiresDate).
//  - Unified and iOS 6 receipts: the in-app purchase attributes (DESIGN.md §3);
//    renewals of one subscription share their original transaction id, and the
//    newest of them is the unit.
//  - Play: purchase data and the Developer API's productPurchase /
//    subscriptionPurchaseV2 (subscriptionState, lineItems, linkedPurchaseToken),
//    and its voided purchases list (kept on the purchase order).

#include "model/purchases/observation.hpp"

#include <algorithm>
#include <map>

namespace receiptd::model::purchases {

namespace {

template <class Record>
bool record_proves(const Record& r) {
  if (r.is_fraud() || r.state == validation_state::rejected)
    return false;
  return true;
}
bool proves(const purchase_order_record& r) {
  if (r.is_legacy && r.state != validation_state::validated)
    return false;
  return record_proves(r);
}

template <class Record>
void from_record(observation& o, const Record& r, record_kind kind, const observe_options&) {
  o.app_id = r.app_id;
  o.env = r.env;
  o.from = source{kind, r.id, r.state == validation_state::validated};
  o.proves = proves_record(r);
  o.at = r.said_at.value_or(r.updated_at);
  if (r.echo.user_identifier && !r.echo.user_identifier->empty()) {
    o.user_identifier = r.echo.user_identifier;
    o.binds_user = true;
  }
  o.metadata = r.echo.metadata;
  o.sets_metadata = r.echo.metadata.has_value();
}

// Apple's offerDiscountType / offerType as trial and introductory-offer flags.
void apple_offer(observation& o, const std::optional<int>& offer_type,
                 const std::optional<std::string>& discount) {
  if (!offer_type && !discount)
    return;
  bool intro = offer_type && *offer_type == 1;
  o.in_trial_period = std::optional<bool>(discount && *discount == "FREE_TRIAL");
  o.in_intro_period = std::optional<bool>(intro);
}

// Apple's enumerated texts (offerDiscountType, billingPlanType, revocationType)
// in the purchase's lower case; a later value Apple adds is kept, lower-cased.
std::optional<std::string> lower(const std::optional<std::string>& text) {
  if (!text)
    return std::nullopt;
  std::string out = *text;
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// offerType by name (App Store Server API "offerType"); none for a value Apple
// has not documented.
std::optional<std::string> apple_offer_name(const std::optional<int>& type) {
  if (!type)
    return std::nullopt;
  switch (*type) {
    case 1:
      return "introductory";
    case 2:
      return "promotional";
    case 3:
      return "offer_code";
    case 4:
      return "win_back";
    default:
      return std::nullopt;
  }
}

// What a StoreKit 2 transaction (the record's fields or a notification's
// signed one: the same names) says of its offer, plan, commitment and app
// download. The payload is the whole transaction: a field it lacks is stated
// as none (a renewal without an offer has none).
template <class Transaction>
void apple_terms(observation& o, const Transaction& t) {
  o.offer_type = apple_offer_name(t.offer_type);
  o.offer_discount_type = lower(t.offer_discount_type);
  o.offer_period = t.offer_period;
  o.billing_plan_type = lower(t.billing_plan_type);
  o.commitment = t.commitment;
  o.app_transaction_id = t.app_transaction_id;
}

// A Play subscription's plan, once subscriptionsv2 said it (prepaid known):
// billing_plan_type "prepaid" or "installments" (none: a plain auto-renewing
// plan), and an installment plan's commitment as the App Store's is told —
// total_billing_periods its initialCommittedPaymentsCount, billing_period_number
// the payments made of it (initial less remaining). An installment plan pending
// cancellation is cancelled by the customer: it ends once the committed
// payments are made.
void play_terms(observation& o, const play_purchase& p) {
  if (!p.prepaid)
    return;
  const auto& i = p.installments;
  o.billing_plan_type = *p.prepaid ? std::optional<std::string>("prepaid")
    : i                            ? std::optional<std::string>("installments")
                                   : std::nullopt;
  std::optional<commitment_info> commitment;
  if (i && i->initial_payments) {
    commitment_info c;
    c.total_billing_periods = i->initial_payments;
    if (i->remaining_payments && *i->remaining_payments < *i->initial_payments)
      c.billing_period_number = *i->initial_payments - *i->remaining_payments;
    commitment = c;
  }
  o.commitment = commitment;
  if (i && i->pending_cancellation)
    o.canceled = true;
}

// A StoreKit 2 transaction's revocation, with its type and share.
template <class Transaction>
void apple_revocation(observation& o, const Transaction& t) {
  o.revocation = revocation_said::revoked;
  o.revoked_at = t.revocation_date;
  o.revocation_reason = t.revocation_reason;
  o.revocation_type = lower(t.revocation_type);
  o.revocation_percentage = t.revocation_percentage;
}

std::optional<ownership> apple_ownership(const std::optional<std::string>& type) {
  if (!type)
    return std::nullopt;
  if (*type == "FAMILY_SHARED")
    return ownership::family_shared;
  if (*type == "PURCHASED")
    return ownership::purchased;
  return std::nullopt;
}

} // namespace

std::optional<purchase_type> apple_purchase_type(std::string_view type) {
  if (type == "Auto-Renewable Subscription")
    return purchase_type::subscription;
  if (type == "Non-Consumable")
    return purchase_type::non_consumable;
  if (type == "Consumable")
    return purchase_type::consumable;
  if (type == "Non-Renewing Subscription")
    return purchase_type::non_renewing_subscription;
  return std::nullopt;
}

bool proves_record(const transaction_record& r) {
  return record_proves(r);
}
bool proves_record(const receipt_record& r) {
  return record_proves(r);
}
bool proves_record(const purchase_order_record& r) {
  return proves(r);
}

std::vector<observation> observe(const transaction_record& r, const observe_options& opts) {
  const auto& t = r.transaction;
  if (t.transaction_id.empty() || t.bundle_id.empty())
    return {}; // the JWS did not verify: it names nothing
  observation o;
  from_record(o, r, record_kind::store_a_transaction, opts);
  o.market = marketplace::store_a;
  o.key = t.original_transaction_id.empty() ? t.transaction_id : t.original_transaction_id;
  // Xcode numbers its test transactions from 0 on every machine: two testers'
  // transaction 0 are not one purchase (the record is keyed by its JWS too).
  if (r.env == environment::xcode)
    o.key = r.transaction_key;
  o.app_identifier = t.bundle_id;
  o.unit = t.transaction_id;
  o.unit_time = t.purchase_date.value_or(0);
  o.product_id = t.product_id;
  o.quantity = t.quantity;
  auto type = apple_purchase_type(t.type);
  if (type)
    o.type = type;
  if (t.storefront)
    o.country_code = alpha2_of(*t.storefront);
  if (t.currency || t.price) {
    o.currency_code = t.currency;
    o.price = t.price;
  }
  if (auto own = apple_ownership(t.ownership_type))
    o.owned_as = *own;
  apple_offer(o, t.offer_type, t.offer_discount_type);
  if (t.is_upgraded)
    o.is_upgraded = t.is_upgraded;
  if (type == purchase_type::subscription) {
    o.current_period_start_at = t.purchase_date;
    o.current_period_end_at = t.expires_date;
  } else if (type == purchase_type::non_renewing_subscription && t.expires_date) {
    o.current_period_end_at = t.expires_date;
  }
  apple_terms(o, t);
  if (t.revocation_date)
    apple_revocation(o, t);
  o.original_purchase_date = t.original_purchase_date ? t.original_purchase_date : t.purchase_date;
  if (opts.customer_from_account_token && t.app_account_token) {
    o.user_identifier = t.app_account_token;
    o.binds_user = true;
  }
  std::vector<observation> out;
  out.push_back(std::move(o)); // a braced list would copy it
  // What notifications and refreshes said about the subscription, at their own time.
  if (type == purchase_type::subscription && t.notified_at
      && (t.subscription_status || t.auto_renew || t.subscription_expires_date)) {
    const observation& first = out.front();
    observation s;
    s.app_id = first.app_id;
    s.market = first.market;
    s.env = first.env;
    s.key = first.key;
    s.app_identifier = first.app_identifier;
    s.at = *t.notified_at; // about the subscription, not this transaction: no unit
    s.from = first.from;
    s.proves = first.proves;
    if (t.auto_renew)
      s.is_auto_renewing = t.auto_renew;
    if (t.subscription_status) {
      const auto& st = *t.subscription_status;
      s.in_billing_retry = std::optional<bool>(st == "billing_retry" || st == "grace_period");
      s.in_grace_period = std::optional<bool>(st == "grace_period");
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<observation> observe(const receipt_record& r, const observe_options& opts) {
  if (r.bundle_id.empty() || r.in_app_purchases.empty())
    return {};
  // One purchase per original transaction id; its newest entry is the unit.
  std::map<std::string, const apple_in_app_purchase*> newest;
  std::map<std::string, unix_ms> first_bought;
  for (const auto& p : r.in_app_purchases) {
    const auto& key = p.original_transaction_id.empty() ? p.transaction_id : p.original_transaction_id;
    if (key.empty())
      continue;
    // An entry Apple's transaction history contradicts is the unit only when
    // nothing else of its purchase is left.
    auto& slot = newest[key];
    bool contradicted = p.store_contradiction.has_value();
    bool slot_contradicted = slot && slot->store_contradiction.has_value();
    if (!slot || (slot_contradicted && !contradicted)
        || (contradicted == slot_contradicted
            && p.purchase_date.value_or(0) >= slot->purchase_date.value_or(0)))
      slot = &p;
    auto bought = p.original_purchase_date ? p.original_purchase_date : p.purchase_date;
    if (bought) {
      auto [it, fresh] = first_bought.emplace(key, *bought);
      if (!fresh)
        it->second = std::min(it->second, *bought);
    }
  }
  std::vector<observation> out;
  for (const auto& [key, p] : newest) {
    observation o;
    from_record(o, r, record_kind::store_a_receipt, opts);
    if (p->store_contradiction)
      o.proves = false; // Apple's history says otherwise: the receipt is no source of it
    o.market = marketplace::store_a;
    // Xcode's test receipts number transactions from 0 on every machine.
    o.key = r.env == environment::xcode ? r.receipt_hash + ":" + key : key;
    o.app_identifier = r.bundle_id;
    o.unit = p->transaction_id;
    o.unit_time = p->purchase_date.value_or(0);
    o.product_id = p->product_id;
    o.quantity = p->quantity;
    // A receipt names no type; an expiry date is a subscription's (auto-renewable:
    // Apple, "expires_date ... only for auto-renewable subscriptions").
    if (p->expires_date) {
      o.type = purchase_type::subscription;
      o.current_period_start_at = p->purchase_date;
      o.current_period_end_at = p->expires_date;
    }
    if (p->is_trial_period)
      o.in_trial_period = p->is_trial_period;
    if (p->is_in_intro_offer_period)
      o.in_intro_period = p->is_in_intro_offer_period;
    if (r.country_code)
      o.country_code = r.country_code;
    if (p->cancellation_date) {
      o.revocation = revocation_said::revoked;
      o.revoked_at = p->cancellation_date;
      o.revocation_reason = p->cancellation_reason;
    }
    if (auto it = first_bought.find(key); it != first_bought.end())
      o.original_purchase_date = it->second;
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<observation> observe(const purchase_order_record& r, const observe_options& opts) {
  if (r.purchase_token.empty() || r.purchase.product_id.empty())
    return {};
  const auto& p = r.purchase;
  observation o;
  from_record(o, r, record_kind::store_b_purchase_order, opts);
  o.market = marketplace::store_b;
  o.key = r.purchase_token;
  o.linked_key = p.linked_purchase_token;
  o.app_identifier = r.package_name;
  o.unit = r.purchase_token;
  o.unit_time = p.purchase_time.value_or(0);
  o.product_id = p.product_id;
  if (p.quantity)
    o.quantity = p.quantity;
  if (p.region_code)
    o.country_code = p.region_code;
  if (p.purchase_state != purchase_state::unknown)
    o.is_pending = std::optional<bool>(p.purchase_state == purchase_state::pending);
  if (p.kind == product_kind::subscription) {
    o.type = purchase_type::subscription;
    if (p.auto_renewing)
      o.is_auto_renewing = p.auto_renewing;
    if (p.expiry_time)
      o.current_period_end_at = p.expiry_time;
    if (p.in_free_trial)
      o.in_trial_period = p.in_free_trial;
    if (p.in_intro_price)
      o.in_intro_period = p.in_intro_price;
    if (p.subscription_state) {
      // subscriptionsv2 SubscriptionState: ACTIVE, CANCELED (active until its
      // expiry, no renewal), IN_GRACE_PERIOD, ON_HOLD (account hold), PAUSED,
      // EXPIRED, PENDING, PENDING_PURCHASE_CANCELED.
      const auto& st = *p.subscription_state;
      o.in_grace_period = std::optional<bool>(st == "SUBSCRIPTION_STATE_IN_GRACE_PERIOD");
      o.in_billing_retry = std::optional<bool>(st == "SUBSCRIPTION_STATE_IN_GRACE_PERIOD"
                                               || st == "SUBSCRIPTION_STATE_ON_HOLD");
      o.is_on_hold = std::optional<bool>(st == "SUBSCRIPTION_STATE_ON_HOLD");
      // Play names no grace period end of its own: in IN_GRACE_PERIOD it extends
      // the line item's expiryTime to the grace period's end (subscription
      // lifecycle, "Grace period"). Without it the grace period would never end
      // by time alone.
      o.grace_period_end_at
        = st == "SUBSCRIPTION_STATE_IN_GRACE_PERIOD" ? p.expiry_time : std::optional<unix_ms>();
      o.is_paused = std::optional<bool>(st == "SUBSCRIPTION_STATE_PAUSED");
      o.canceled = st == "SUBSCRIPTION_STATE_CANCELED" || st == "SUBSCRIPTION_STATE_EXPIRED";
      if (st == "SUBSCRIPTION_STATE_PENDING" || st == "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED")
        o.is_pending = std::optional<bool>(true);
    }
    play_terms(o, p);
  } else if (p.kind == product_kind::product && p.consumed) {
    o.type = purchase_type::consumable;
  }
  // Voided (Play's voided purchases list, or a voided purchase notification
  // the API confirmed): a refund or chargeback of the whole purchase, or — a
  // quantity-based partial refund — of voided_quantity of its quantity only:
  // that share is revoked, the rest stays the customer's (revoked_whole).
  if (p.voided_time) {
    o.revocation = revocation_said::revoked;
    o.revoked_at = p.voided_time;
    o.revocation_reason = p.voided_reason;
    const int bought = p.quantity.value_or(1);
    if (p.voided_quantity && *p.voided_quantity > 0 && *p.voided_quantity < bought) {
      o.revocation_type = std::string(play_partial_refund);
      o.revocation_percentage
        = static_cast<int>(static_cast<std::int64_t>(*p.voided_quantity) * 100000 / bought);
    }
  } else if (p.kind == product_kind::product && p.purchase_state == purchase_state::cancelled) {
    // productPurchase purchaseState 1: cancelled (refunded or never completed).
    o.revocation = revocation_said::revoked;
    o.revoked_at = o.at;
  }
  o.original_purchase_date = p.purchase_time;
  if (opts.customer_from_account_token && p.account_id) {
    o.user_identifier = p.account_id;
    o.binds_user = true;
  }
  // What its order cost (Play's orders resource), once read.
  if (p.cost.price || p.cost.currency_code) {
    o.price = p.cost.price;
    o.currency_code = p.cost.currency_code;
  }
  std::vector<observation> out;
  if (p.line_items.size() < 2) {
    out.push_back(std::move(o)); // a braced list would copy it
    return out;
  }
  // A productsv2 purchase of several products (Billing Library 8): one token,
  // one purchase per line item, as a unified receipt holds one per product. The
  // first line item in Play's order keeps the token as its key (what a
  // one-product purchase has), the others are "token:productId" — the same
  // keys whichever of the products an upload names. A line item's quantity is
  // its purchase's quantity (one purchase of n units, as the App Store's
  // quantity), its state and refunds the token's.
  for (std::size_t i = 0; i < p.line_items.size(); ++i) {
    const auto& item = p.line_items[i];
    observation each = o;
    if (i > 0) {
      each.key = r.purchase_token + ":" + item.product_id;
      each.unit = each.key;
    }
    each.product_id = item.product_id;
    each.quantity = item.quantity;
    each.type.reset(); // said only by a consumption
    if (item.consumed && *item.consumed)
      each.type = purchase_type::consumable;
    each.price.reset();
    each.currency_code.reset();
    if (item.cost.price || item.cost.currency_code) {
      each.price = item.cost.price;
      each.currency_code = item.cost.currency_code;
    }
    out.push_back(std::move(each));
  }
  return out;
}

std::optional<observation> observe(const std::string& app_id,
                                   const store_a::verified_notification& v,
                                   const observe_options& opts) {
  if (!v.transaction || !v.n.signed_date)
    return std::nullopt;
  const auto& n = v.n;
  const auto& t = *v.transaction;
  if (t.bundle_id != n.bundle_id || t.env != n.env)
    return std::nullopt;
  observation o;
  o.app_id = app_id;
  o.market = marketplace::store_a;
  o.env = n.env;
  o.key = t.original_transaction_id.empty() ? t.transaction_id : t.original_transaction_id;
  o.app_identifier = t.bundle_id;
  o.unit = t.transaction_id;
  o.unit_time = t.purchase_date.value_or(0);
  o.at = *n.signed_date;
  o.store_signed = true;
  o.product_id = t.product_id;
  o.quantity = t.quantity;
  auto type = apple_purchase_type(t.type);
  if (type)
    o.type = type;
  if (t.storefront)
    o.country_code = alpha2_of(*t.storefront);
  if (t.currency || t.price) {
    o.currency_code = t.currency;
    o.price = t.price;
  }
  if (auto own = apple_ownership(t.in_app_ownership_type))
    o.owned_as = *own;
  apple_offer(o, t.offer_type, t.offer_discount_type);
  if (t.is_upgraded)
    o.is_upgraded = t.is_upgraded;
  if (type == purchase_type::subscription) {
    o.current_period_start_at = t.purchase_date;
    o.current_period_end_at = t.expires_date;
  }
  o.original_purchase_date = t.original_purchase_date ? t.original_purchase_date : t.purchase_date;
  apple_terms(o, t);
  if (n.type == "REFUND_REVERSED")
    o.revocation = revocation_said::reversed;
  else if (t.revocation_date)
    apple_revocation(o, t);
  if (type == purchase_type::subscription) {
    if (n.status) {
      o.in_billing_retry = std::optional<bool>(*n.status == 3 || *n.status == 4);
      o.in_grace_period = std::optional<bool>(*n.status == 4);
    }
    if (v.renewal && v.renewal->original_transaction_id == t.original_transaction_id) {
      const auto& i = *v.renewal;
      if (i.auto_renew_status == 0 || i.auto_renew_status == 1) {
        o.is_auto_renewing = std::optional<bool>(*i.auto_renew_status == 1);
        o.canceled = *i.auto_renew_status == 0;
      }
      if (i.is_in_billing_retry_period) {
        o.in_billing_retry = i.is_in_billing_retry_period;
        if (!*i.is_in_billing_retry_period)
          o.in_grace_period = std::optional<bool>(false);
      }
      if (i.grace_period_expires_date)
        o.grace_period_end_at = i.grace_period_expires_date;
      else if (i.is_in_billing_retry_period)
        o.grace_period_end_at = std::optional<unix_ms>();
    }
  }
  if (opts.customer_from_account_token && t.app_account_token) {
    o.user_identifier = t.app_account_token;
    o.binds_user = true;
  }
  return o;
}

} // namespace receiptd::model::purchases

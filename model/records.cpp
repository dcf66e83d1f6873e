#include "model/records.hpp"

#include <iterator>

namespace receiptd::model {

std::string_view to_string(receipt_style x) {
  return x == receipt_style::transaction ? "transaction" : "unified";
}

std::optional<receipt_style> parse_receipt_style(std::string_view text) {
  if (text == "unified")
    return receipt_style::unified;
  if (text == "transaction")
    return receipt_style::transaction;
  return std::nullopt;
}

std::string_view to_string(record_kind x) {
  switch (x) {
    case record_kind::store_a_receipt:
      return "store_a_receipt";
    case record_kind::store_a_transaction:
      return "store_a_transaction";
    case record_kind::store_a_app_transaction:
      return "store_a_app_transaction";
    case record_kind::store_b_purchase_order:
      break;
  }
  return "store_b_purchase_order";
}

namespace {

constexpr std::string_view product_kind_names[] = {"unknown", "product", "subscription"};
constexpr std::string_view purchase_state_names[]
  = {"unknown", "purchased", "cancelled", "refunded", "pending"};

template <class Enum, std::size_t N>
Enum parse_name(const std::string_view (&names)[N], std::string_view text) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == text)
      return static_cast<Enum>(i);
  return Enum{};
}

} // namespace

std::string_view to_string(product_kind x) {
  return product_kind_names[static_cast<std::size_t>(x)];
}

product_kind parse_product_kind(std::string_view text) {
  return parse_name<product_kind>(product_kind_names, text);
}

std::string_view to_string(purchase_state x) {
  return purchase_state_names[static_cast<std::size_t>(x)];
}

purchase_state parse_purchase_state(std::string_view text) {
  return parse_name<purchase_state>(purchase_state_names, text);
}

namespace {

constexpr std::string_view acknowledgement_state_names[] = {"pending", "acknowledged", "failed"};

} // namespace

std::string_view to_string(acknowledgement_state x) {
  return acknowledgement_state_names[static_cast<std::size_t>(x)];
}

std::optional<acknowledgement_state> parse_acknowledgement_state(std::string_view text) {
  for (std::size_t i = 0; i < std::size(acknowledgement_state_names); ++i)
    if (acknowledgement_state_names[i] == text)
      return static_cast<acknowledgement_state>(i);
  return std::nullopt;
}

std::optional<record_kind> parse_record_kind(std::string_view text) {
  if (text == "store_a_receipt")
    return record_kind::store_a_receipt;
  if (text == "store_a_transaction")
    return record_kind::store_a_transaction;
  if (text == "store_a_app_transaction")
    return record_kind::store_a_app_transaction;
  if (text == "store_b_purchase_order")
    return record_kind::store_b_purchase_order;
  return std::nullopt;
}

namespace {

echo_fields merge_echo(const echo_fields& old, const echo_fields& now) {
  echo_fields out = old;
  if (now.user_identifier)
    out.user_identifier = now.user_identifier;
  if (now.metadata)
    out.metadata = now.metadata;
  out.ip_address = now.ip_address;
  return out;
}

bool keeps_old_verdict(validation_state old, validation_state now) {
  return old == validation_state::validated && now == validation_state::pending;
}

template <class Record>
bool passed_local_check(const Record& r) {
  return !rejected_locally(r.state, r.fraud);
}

// The stored record stays exactly as it is; the upload is answered by its own verdict.
template <class Record>
bool leaves_untouched(const Record& existing, const Record& incoming) {
  if (rejected_locally(incoming.state, incoming.fraud))
    return passed_local_check(existing);
  return existing.state == validation_state::validated
    && incoming.fraud == fraud_reason::store_rejected;
}

template <class Record>
Record refuse(const Record& existing, field_error why) {
  Record out = existing;
  out.terms.refused = std::move(why);
  return out;
}

// Whether the stored record proves its purchase, so that it binds a product and a
// user: the store confirmed it, or a signature that checked out stands behind it
// and nobody has called it fraud. A store-rejected or an unsigned (legacy) pending
// upload proves nothing, so it cannot squat a purchase token for its uploader.
bool proven(const purchase_order_record& r) {
  return r.state == validation_state::validated || (!r.is_legacy && !r.is_fraud());
}
bool proven(const receipt_record& r) {
  return r.state == validation_state::validated || !r.is_fraud();
}
bool proven(const transaction_record& r) {
  return r.state == validation_state::validated || !r.is_fraud();
}

// The user the proof is bound to, when a genuine upload named one.
template <class Record>
const std::string* bound_user(const Record& existing) {
  if (!proven(existing) || !existing.echo.user_identifier || existing.echo.user_identifier->empty())
    return nullptr;
  return &*existing.echo.user_identifier;
}

// Whether `incoming` names another user than the bound one; nullopt when the
// policy refuses that move.
template <class Record>
std::optional<bool> transfer_check(const Record& existing, const Record& incoming) {
  const auto* bound = bound_user(existing);
  const auto& named = incoming.echo.user_identifier;
  if (bound == nullptr || !named || named->empty() || *named == *bound)
    return false;
  const auto transfers_so_far = static_cast<int>(existing.previous_users.size());
  if (!incoming.terms.transfers.allows(transfers_so_far))
    return std::nullopt;
  return true;
}

} // namespace

field_error bound_to_other_user() {
  return {"user_identifier", "bound_to_other_user",
          "this purchase belongs to another user of the app; the app's transfer policy "
          "does not allow moving it"};
}

namespace {

// What both stores' re-uploads share: identity and creation from the first
// upload, the verdict by the rules above, echo fields from the latest.
template <class Record>
Record merge_common(const Record& existing, const Record& incoming, bool transfer) {
  Record out = keeps_old_verdict(existing.state, incoming.state) ? existing : incoming;
  out.id = existing.id;
  out.app_id = existing.app_id;
  out.created_at = existing.created_at;
  out.updated_at = incoming.updated_at;
  out.echo = merge_echo(existing.echo, incoming.echo);
  out.previous_users = existing.previous_users;
  if (transfer)
    out.previous_users.push_back(*existing.echo.user_identifier);
  out.terms = incoming.terms;
  return out;
}

} // namespace

void keep_notified(apple_transaction& now, const apple_transaction& before, bool revocation) {
  auto keep = [](auto& field, const auto& old) {
    if (!field && old)
      field = old;
  };
  keep(now.subscription_status, before.subscription_status);
  keep(now.subscription_expires_date, before.subscription_expires_date);
  keep(now.auto_renew, before.auto_renew);
  keep(now.auto_renew_product_id, before.auto_renew_product_id);
  keep(now.renewal_app_account_token, before.renewal_app_account_token);
  keep(now.notified_at, before.notified_at);
  if (revocation && !now.revocation_date && before.revocation_date) {
    now.revocation_date = before.revocation_date;
    now.revocation_reason = before.revocation_reason;
    now.revocation_type = before.revocation_type;
    now.revocation_percentage = before.revocation_percentage;
    now.revocation_said_at = before.revocation_said_at;
  }
}

void keep_notified(std::vector<apple_in_app_purchase>& now,
                   const std::vector<apple_in_app_purchase>& before) {
  for (auto& p : now) {
    if (p.cancellation_date)
      continue;
    for (const auto& old : before)
      if (old.transaction_id == p.transaction_id && old.cancellation_date) {
        p.cancellation_date = old.cancellation_date;
        p.cancellation_reason = old.cancellation_reason;
        break;
      }
  }
}

void keep_notified(play_purchase& now, const play_purchase& before) {
  // The voided fields travel together: they are one entry of Play's list.
  if (!now.voided_time && before.voided_time) {
    now.voided_time = before.voided_time;
    now.voided_reason = before.voided_reason;
    now.voided_source = before.voided_source;
    now.voided_quantity = before.voided_quantity;
  }
  if (now.voided_time)
    now.purchase_state = purchase_state::refunded;
}

namespace {

bool acknowledgement_due(const purchase_order_record& r) {
  return r.state == validation_state::validated
    && r.acknowledgement == acknowledgement_state::pending;
}

} // namespace

job_purpose purpose_of(const purchase_order_record& r) {
  if (r.state == validation_state::pending)
    return job_purpose::revalidate;
  return acknowledgement_due(r) ? job_purpose::acknowledge : job_purpose::refresh;
}

job_purpose purpose_of(const receipt_record& r) {
  return r.state == validation_state::pending ? job_purpose::revalidate : job_purpose::refresh;
}

job_purpose purpose_of(const transaction_record& r) {
  return r.state == validation_state::pending ? job_purpose::revalidate : job_purpose::refresh;
}

bool needs_job(const purchase_order_record& r) {
  return r.state == validation_state::pending || acknowledgement_due(r);
}

bool needs_job(const receipt_record& r) {
  return r.state == validation_state::pending;
}

bool needs_job(const transaction_record& r) {
  return r.state == validation_state::pending;
}

namespace {

// Keeps the first max_rejected_proof_bytes of `proof` (base64 and JWS text cut
// there stay what they were: a prefix of the same text); `size` learns what it was.
void trim_proof(std::string& proof, std::optional<std::int64_t>& size) {
  if (proof.size() <= max_rejected_proof_bytes)
    return;
  if (!size)
    size = static_cast<std::int64_t>(proof.size());
  proof.resize(max_rejected_proof_bytes);
  proof.shrink_to_fit();
}

} // namespace

void trim_rejected_proof(purchase_order_record& r) {
  if (!rejected_locally(r.state, r.fraud))
    return;
  trim_proof(r.purchase_data, r.proof_size);
  std::optional<std::int64_t> signature_size; // at most 2 KiB (upload limits): kept whole
  trim_proof(r.purchase_signature, signature_size);
}

void trim_rejected_proof(receipt_record& r) {
  if (rejected_locally(r.state, r.fraud))
    trim_proof(r.receipt_data, r.proof_size);
}

void trim_rejected_proof(transaction_record& r) {
  if (rejected_locally(r.state, r.fraud))
    trim_proof(r.signed_transaction, r.proof_size);
}

bool rejected_locally(validation_state state, fraud_reason reason) {
  return state == validation_state::rejected && reason != fraud_reason::none
    && reason != fraud_reason::store_rejected;
}

namespace {

// The steps of every re-upload: the stored record kept as it is, refused (by the
// kind's own `refusal`, then for a transfer the app's policy forbids), or merged,
// the kind's own fields by `merge_own`.
template <class Record, class Refusal, class MergeOwn>
Record merge_steps(const Record& existing, const Record& incoming, Refusal&& refusal,
                   MergeOwn&& merge_own) {
  if (leaves_untouched(existing, incoming))
    return existing;
  if (std::optional<field_error> why = refusal())
    return refuse(existing, std::move(*why));
  auto transfer = transfer_check(existing, incoming);
  if (!transfer)
    return refuse(existing, bound_to_other_user());
  auto out = merge_common(existing, incoming, *transfer);
  merge_own(out);
  return out;
}

std::optional<field_error> no_refusal() {
  return std::nullopt;
}

} // namespace

purchase_order_record merge_reupload(const purchase_order_record& existing,
                                     const purchase_order_record& incoming) {
  auto other_product = [&]() -> std::optional<field_error> {
    if (proven(existing) && !existing.purchase.product_id.empty()
        && incoming.purchase.product_id != existing.purchase.product_id)
      return field_error{"product_id", "product_id_mismatch",
                         "this purchase token is recorded for product \""
                           + existing.purchase.product_id.substr(0, 150) + "\""};
    return std::nullopt;
  };
  return merge_steps(existing, incoming, other_product, [&](purchase_order_record& out) {
    // A signed upload is the stronger proof: a later legacy upload of the same
    // token does not erase the purchase data and signature already held.
    if (incoming.is_legacy && !existing.is_legacy) {
      out.is_legacy = false;
      out.purchase_data = existing.purchase_data;
      out.purchase_signature = existing.purchase_signature;
      out.proof_size = existing.proof_size;
    }
    if (!out.order_id)
      out.order_id = existing.order_id;
    keep_notified(out.purchase, existing.purchase);
    // What receiptd did about acknowledging survives an upload that says nothing
    // of it; an acknowledged purchase is never put back to pending (Play refuses
    // a second acknowledgement: 400 invalidPurchaseState).
    if (!out.acknowledgement || existing.acknowledgement == acknowledgement_state::acknowledged)
      out.acknowledgement = existing.acknowledgement;
  });
}

receipt_record merge_reupload(const receipt_record& existing, const receipt_record& incoming) {
  return merge_steps(existing, incoming, no_refusal, [&](receipt_record& out) {
    out.country_code = incoming.country_code ? incoming.country_code : existing.country_code;
    out.identifier_for_vendor = incoming.identifier_for_vendor ? incoming.identifier_for_vendor
                                                               : existing.identifier_for_vendor;
    keep_notified(out.in_app_purchases, existing.in_app_purchases);
  });
}

transaction_record merge_reupload(const transaction_record& existing,
                                  const transaction_record& incoming) {
  return merge_steps(existing, incoming, no_refusal, [&](transaction_record& out) {
    keep_notified(out.transaction, existing.transaction, true);
  });
}

} // namespace receiptd::model

#include "model/records.hpp"

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
  return x == record_kind::store_a_receipt ? "store_a_receipt"
                                           : "store_b_purchase_order";
}

std::optional<record_kind> parse_record_kind(std::string_view text) {
  if (text == "store_a_receipt")
    return record_kind::store_a_receipt;
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
bool leaves_untouched(const Record& existing, const Record& incoming) {
  return existing.state == validation_state::validated
         && rejected_locally(incoming.state, incoming.fraud);
}

} // namespace

bool rejected_locally(validation_state state, fraud_reason reason) {
  return state == validation_state::rejected && reason != fraud_reason::none
         && reason != fraud_reason::store_rejected;
}

namespace {

// What both stores' re-uploads share: identity and creation from the first
// upload, the verdict by the rules above, echo fields from the latest.
template <class Record>
Record merge_common(const Record& existing, const Record& incoming) {
  Record out = keeps_old_verdict(existing.state, incoming.state) ? existing : incoming;
  out.id = existing.id;
  out.app_id = existing.app_id;
  out.created_at = existing.created_at;
  out.updated_at = incoming.updated_at;
  out.echo = merge_echo(existing.echo, incoming.echo);
  return out;
}

} // namespace

purchase_order_record merge_reupload(const purchase_order_record& existing,
                                     const purchase_order_record& incoming) {
  if (leaves_untouched(existing, incoming))
    return existing;
  auto out = merge_common(existing, incoming);
  // A signed upload is the stronger proof: a later legacy upload of the same
  // token does not erase the purchase data and signature already held.
  if (incoming.is_legacy && !existing.is_legacy) {
    out.is_legacy = false;
    out.purchase_data = existing.purchase_data;
    out.purchase_signature = existing.purchase_signature;
  }
  if (!out.order_id)
    out.order_id = existing.order_id;
  return out;
}

receipt_record merge_reupload(const receipt_record& existing,
                              const receipt_record& incoming) {
  if (leaves_untouched(existing, incoming))
    return existing;
  auto out = merge_common(existing, incoming);
  if (incoming.country_code)
    out.country_code = incoming.country_code;
  else
    out.country_code = existing.country_code;
  if (incoming.identifier_for_vendor)
    out.identifier_for_vendor = incoming.identifier_for_vendor;
  else
    out.identifier_for_vendor = existing.identifier_for_vendor;
  return out;
}

} // namespace receiptd::model

#pragma once
// Every atom of receiptd in one place, and the message types CAF may carry.
// All messaging is local: the types are allowed without serializers.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/type_id.hpp>

#include "actors/messages.hpp"

// clang-format off
CAF_BEGIN_TYPE_ID_BLOCK(receiptd, caf::first_custom_type_id)
  CAF_ADD_ATOM(receiptd, receiptd::actors, upload_atom, "upload")
  CAF_ADD_ATOM(receiptd, receiptd::actors, authenticate_atom, "auth")
  CAF_ADD_ATOM(receiptd, receiptd::actors, save_atom, "save")
  CAF_ADD_ATOM(receiptd, receiptd::actors, get_atom, "get")
  CAF_ADD_ATOM(receiptd, receiptd::actors, claim_atom, "claim")
  CAF_ADD_ATOM(receiptd, receiptd::actors, complete_atom, "complete")
  CAF_ADD_ATOM(receiptd, receiptd::actors, reschedule_atom, "reschedule")
  CAF_ADD_ATOM(receiptd, receiptd::actors, check_atom, "check")
  CAF_ADD_ATOM(receiptd, receiptd::actors, http_done_atom, "httpdone")
  CAF_ADD_ATOM(receiptd, receiptd::actors, tick_atom, "tick")
  CAF_ADD_ATOM(receiptd, receiptd::actors, done_atom, "done")
  CAF_ADD_ATOM(receiptd, receiptd::actors, auth_revision_atom, "authrev")
  CAF_ADD_ATOM(receiptd, receiptd::actors, find_app_atom, "findapp")
  CAF_ADD_ATOM(receiptd, receiptd::actors, apply_atom, "apply")
  CAF_ADD_ATOM(receiptd, receiptd::actors, find_order_atom, "findorder")
  CAF_ADD_ATOM(receiptd, receiptd::actors, claim_deliveries_atom, "claimdlv")
  CAF_ADD_ATOM(receiptd, receiptd::actors, finish_atom, "finish")
CAF_END_TYPE_ID_BLOCK(receiptd)
// clang-format on

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::trace_context)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::inbound)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::app_context_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::store_b_check)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::store_b_answer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::store_a_check)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::store_a_answer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::store_a_transaction_check)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::store_a_transaction_answer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::claimed_jobs)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::http_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::found_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::model::app)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::optional<receiptd::model::app>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::authenticated)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::model::purchase_order_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::model::receipt_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::model::transaction_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::model::validation_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::model::record_kind)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::model::store_a::verified_notification)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::model::store_b::rtdn)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::optional<receiptd::model::purchase_order_record>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::notification_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::model::webhook_delivery)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(receiptd::actors::webhook_deliveries)

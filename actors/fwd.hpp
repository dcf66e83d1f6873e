#pragma once
// The typed interface of every long-lived actor, in one place. Handles are passed
// as spawn arguments, never looked up globally.

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/type_ids.hpp"

namespace receiptd::actors {

// What the persistence pool and each of its workers answer one call at a time.
// Failures come back as caf::error values carrying the database's message.
using persistence_calls = caf::typed_actor<
  // a record's resource JSON by id, with its owner
  caf::replies_to<get_atom, trace_context, model::record_kind, std::string>::with<found_record>,
  // due jobs, leased to owner for lease_ms
  caf::replies_to<claim_atom, std::string, std::int64_t, std::int32_t>::with<claimed_jobs>,
  // fenced by the job's version: false when another claim overtook it
  caf::replies_to<complete_atom, trace_context, model::validation_job,
                  model::purchase_order_record>::with<bool>,
  caf::replies_to<complete_atom, trace_context, model::validation_job,
                  model::receipt_record>::with<bool>,
  caf::replies_to<complete_atom, trace_context, model::validation_job,
                  model::transaction_record>::with<bool>,
  caf::replies_to<complete_atom, trace_context, model::validation_job,
                  model::store_a::app_transaction_record>::with<bool>,
  // store an app transaction upload (insert or re-upload merge, job kept in
  // step; not group-committed: it folds into no purchase); the stored record
  caf::replies_to<save_atom, trace_context, model::store_a::app_transaction_record,
                  model::unix_ms>::with<model::store_a::app_transaction_record>,
  caf::replies_to<reschedule_atom, trace_context, model::validation_job>::with<bool>,
  // the auth revision now (db::database::auth_revision): the token cache's check
  caf::replies_to<auth_revision_atom>::with<std::int64_t>,
  // a purchase-layer request of an authenticated app, answered
  // (actors/resource_requests.hpp)
  caf::replies_to<resource_atom, trace_context, resource_request>::with<http::reply>,
  // a customer lookup answered, with what giving it again needs
  // (actors/customer_answers.hpp)
  caf::replies_to<customer_atom, trace_context, resource_request>::with<customer_answer>,
  // the period-end timers and ended grants due now, at most `limit`: how many
  // were handled (db::database::expire_due)
  caf::replies_to<expire_atom, std::int32_t>::with<std::int32_t>,
  // an app by id (store notifications name their app in the URL)
  caf::replies_to<find_app_atom, std::string>::with<std::optional<model::app>>,
  // a verified App Store Server Notification applied to the app's records, once
  caf::replies_to<apply_atom, trace_context, std::string,
                  model::store_a::verified_notification>::with<notification_result>,
  // the app's purchase order of a Play purchase token (Store B notifications)
  caf::replies_to<find_order_atom, trace_context, std::string,
                  std::string>::with<std::optional<model::purchase_order_record>>,
  // a Google Play RTDN recorded once (by messageId), with the purchase order as
  // the Play Developer API now has it (none: only recorded)
  caf::replies_to<apply_atom, trace_context, std::string, model::store_b::rtdn,
                  std::optional<model::purchase_order_record>>::with<notification_result>,
  // due webhook deliveries, leased to owner for lease_ms: at most limit, and per
  // endpoint at most per_endpoint less those the owner holds already
  caf::replies_to<claim_deliveries_atom, std::string, std::int64_t, std::int32_t,
                  std::int32_t>::with<webhook_deliveries>,
  // a delivery's outcome, fenced by its version: false when another claim overtook it
  caf::replies_to<finish_atom, model::webhook_delivery>::with<bool>,
  // due refund requests, leased to owner for lease_ms, at most limit
  caf::replies_to<claim_refunds_atom, std::string, std::int64_t, std::int32_t>::with<refund_works>,
  // a refund request's outcome, fenced by its version; its purchase shows it
  caf::replies_to<finish_atom, model::purchases::refund_request>::with<bool>,
  // a store's subscription refresh sweep (db::database::enqueue_refreshes): jobs
  // for subscriptions of that record kind not updated for stale_ms, at most
  // limit; how many got one
  caf::replies_to<refresh_atom, model::record_kind, std::int64_t, std::int32_t>::with<std::int32_t>,
  // due voided purchases polls, leased to owner for lease_ms
  caf::replies_to<claim_voided_atom, std::string, std::int64_t, std::int32_t>::with<voided_polls>,
  // a page of a poll applied, fenced by its claim (none: overtaken); the lease
  // goes on for keep_lease_ms more, or ends (none: the last page)
  caf::replies_to<apply_voided_atom, std::string, model::store_b::voided_poll, voided_purchases,
                  std::optional<std::int64_t>>::with<std::optional<std::int32_t>>,
  // the orders sweep: purchase orders whose order is to be read, at most limit,
  // by app (db::database::orders_due)
  caf::replies_to<orders_atom, std::int32_t>::with<orders_due_list>,
  // what reading them said, applied (db::database::apply_orders): how many changed
  caf::replies_to<apply_orders_atom, std::string, order_reads>::with<std::int32_t>>;

// What GET /metrics and GET /readyz read from the database, on a
// session of their own (actors/operational.hpp), never through the pool.
using operational_db_actor = caf::typed_actor<
  // the revalidation queue now (db::database::queue_figures)
  caf::replies_to<queue_figures_atom>::with<db::job_queue_figures>,
  // how many of this build's migrations the database lacks, or the error that says
  // it does not answer (db::database::missing_migrations)
  caf::replies_to<ready_atom>::with<std::int32_t>>;

// The operational endpoints' figures (actors/operational.hpp): everything GET
// /metrics shows, and the database's readiness as last checked.
using operational_actor = caf::typed_actor<caf::replies_to<scrape_atom>::with<std::string>,
                                           caf::replies_to<ready_atom>::with<std::int32_t>>;

// The persistence pool: the calls above, plus token lookups and saves, which it
// gathers into batches for its workers (actors/persistence.cpp).
using persistence_actor = persistence_calls::extend<
  // token hash → the owning app, when the token is known and not revoked, with the
  // auth revision the lookup was read at
  caf::replies_to<authenticate_atom, trace_context, std::string>::with<authenticated>,
  // store an upload (insert or re-upload merge, job kept in step); the stored record
  caf::replies_to<save_atom, trace_context, model::purchase_order_record,
                  model::unix_ms>::with<model::purchase_order_record>,
  caf::replies_to<save_atom, trace_context, model::receipt_record,
                  model::unix_ms>::with<model::receipt_record>,
  caf::replies_to<save_atom, trace_context, model::transaction_record,
                  model::unix_ms>::with<model::transaction_record>>;

// Store B (Google Play) client: OAuth token per app, Play Developer API calls.
using store_b_client_actor = caf::typed_actor<
  caf::replies_to<check_atom, store_b_check>::with<store_b_answer>,
  // acknowledge a Play purchase
  caf::replies_to<acknowledge_atom, store_b_acknowledge>::with<model::store_b::acknowledge_answer>,
  // orders.reviewrefund: a pending refund review answered
  caf::replies_to<refund_atom, store_refund_answer>::with<store_refund_reply>,
  // a page of an app's voided purchases list, or an error saying why not
  caf::replies_to<voided_atom, store_b_voided_query>::with<model::store_b::voided_page>,
  // an app's orders (orders.get / orders.batchGet), or an error saying why not
  caf::replies_to<orders_atom, store_b_orders_query>::with<play_orders>,
  caf::reacts_to<http_done_atom, http_done>, // internal: a transfer finished
  caf::reacts_to<tick_atom>>;                // internal: calls past their deadline are answered

// Store A (App Store) client: verifyReceipt, production or sandbox, one flip; the
// App Store Server API's Get Transaction Info, one flip between its hosts.
using store_a_client_actor = caf::typed_actor<
  caf::replies_to<check_atom, store_a_check>::with<store_a_answer>,
  caf::replies_to<check_atom, store_a_transaction_check>::with<store_a_transaction_answer>,
  // the transaction's subscription, Get All Subscription Statuses
  caf::replies_to<refresh_atom, store_a_transaction_check>::with<store_a_statuses_answer>,
  // the customer's whole transaction history (every page), Get Transaction History v2
  caf::replies_to<history_atom, store_a_transaction_check>::with<store_a_history_answer>,
  // Get App Transaction Info, by the app transaction's appTransactionId
  caf::replies_to<app_transaction_atom, store_a_transaction_check>::with<store_a_transaction_answer>,
  // Send Consumption Information: a CONSUMPTION_REQUEST answered
  caf::replies_to<refund_atom, store_refund_answer>::with<store_refund_reply>,
  caf::reacts_to<http_done_atom, http_done>, // internal: a transfer finished
  caf::reacts_to<tick_atom>>;                // internal: calls past their deadline are answered

// The supervisor: the HTTP layer's only contact. It takes whole requests
// (upload_atom) and credentials to judge while a body arrives (vet_atom), and
// ticks itself to check the auth revision while it caches tokens.
using supervisor_actor
  = caf::typed_actor<caf::reacts_to<upload_atom, inbound>,
                     caf::reacts_to<vet_atom, http::credential_check>,
                     caf::reacts_to<tick_atom, std::uint64_t>>; // internal: revocation checks

// The webhook dispatcher: ticks to claim due deliveries; transfers report back.
using webhook_dispatcher_actor
  = caf::typed_actor<caf::reacts_to<tick_atom>, caf::reacts_to<http_done_atom, http_done>>;

// The upkeep: ticks to sweep each store's subscriptions due for a refresh and
// to poll the apps' Play voided purchases lists.
using upkeep_actor
  = caf::typed_actor<caf::reacts_to<refresh_atom, model::record_kind>, caf::reacts_to<voided_atom>,
                     caf::reacts_to<expire_atom>, caf::reacts_to<orders_atom>>;

// The refund answerer: ticks to claim due refund requests; store clients answer.
using refund_answerer_actor = caf::typed_actor<caf::reacts_to<tick_atom>>;

// The retry scheduler: ticks to claim due jobs; validators report back.
using retry_scheduler_actor
  = caf::typed_actor<caf::reacts_to<tick_atom>, caf::reacts_to<done_atom, std::string>>;

} // namespace receiptd::actors

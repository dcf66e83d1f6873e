#pragma once
// Webhooks out: the events receiptd tells an app's backend about, their
// JSON (Mbaasy's event shape), their signatures, and the endpoints that receive
// them. Pure: no I/O; the database stores events and deliveries
// (db/migrations/006), the webhook dispatcher sends them
// (actors/webhook_dispatcher.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/retry_policy.hpp"

namespace receiptd::model {

enum class event_type {
  receipt_created,        // "receipt.created"
  receipt_updated,        // "receipt.updated"
  purchase_order_created, // "purchase_order.created"
  purchase_order_updated, // "purchase_order.updated"
  transaction_created,    // "transaction.created" (StoreKit 2)
  transaction_updated,    // "transaction.updated"
  // The In-App Purchase resource (Mbaasy's event payload shape:
  // model/purchases/events.hpp) and a customer's active entitlements.
  in_app_purchase_created,        // "in_app_purchase.created"
  in_app_purchase_updated,        // "in_app_purchase.updated"
  customer_entitlements_changed,  // "customer.entitlements_changed"
};
std::string_view to_string(event_type t);
std::optional<event_type> parse_event_type(std::string_view text);
// The created / updated event of a record kind.
event_type event_for(record_kind kind, bool created);

// One event: its body is fixed when it is made (each delivery sends these exact
// bytes, and the signatures are over them).
struct webhook_event {
  std::string id; // "evt_" + 32 lower-case hex digits; sorts by creation (time first)
  std::string app_id;
  event_type type = event_type::receipt_created;
  // What it is about: a record's kind (model::to_string(record_kind)),
  // "in_app_purchase" or "customer"; and its id. An endpoint gets one subject's
  // events in the order they were made.
  std::string subject;
  std::string record_id;
  unix_ms created_at = 0;
  std::string body; // the JSON delivered
};

// A new event id: 12 hex digits of `now` (ms), then 20 random hex digits, so ids
// sort by creation time (ordering per record within the same millisecond is by
// the database's sequence, not the id).
std::string make_event_id(unix_ms now);

// The event for a record that was just stored: `before` is its resource before
// the change (nullopt: the record was created), `after` its resource now. The
// body is
//   {"id", "type", "created_at": Timestamp, "data": after,
//    "previous_attributes": {changed top-level keys: old values} | null,
//    "new_attributes": {the same keys: new values} | null,
//    "changes": ["validated", "fraud", "refunded", "renewed", "expired", …]}
// where previous/new are null on *.created, and a key counts as changed when
// its JSON differs (updated_at never counts; an absent key counts as null).
// "changes" names what happened in words a backend branches on, in this order:
// "validated", "pending", "failed" (validation_state became that), "fraud"
// (is_fraud became true), "refunded" (a transaction's revocation_date or an
// in-app purchase's cancellation_date appeared, or a Play purchase_state
// became "refunded"), "refund_reversed" (such a date went), "renewed" (the
// latest expires_date / subscription_expires_date / expires_at moved later),
// "expired" (subscription_status, or Play's subscription_state, became
// expired), "subscription_status" (it changed otherwise), "acknowledged" (Play's
// acknowledged became true). On *.created the words compare against nothing:
// they say what the new record already is (e.g. ["validated"]).
// nullopt for an update that changed nothing but updated_at.
std::optional<webhook_event> record_event(const std::optional<boost::json::object>& before,
                                          const boost::json::object& after, record_kind kind,
                                          const std::string& app_id, const std::string& record_id,
                                          unix_ms now);

// ---- endpoints ----------------------------------------------------------------

struct webhook_endpoint {
  std::string id; // UUID
  std::string app_id;
  std::string url;
  std::string secret;             // "whsec_" + 64 lower-case hex digits; HMAC key as bytes
  std::vector<event_type> events; // empty: every event
  unix_ms created_at = 0;
};

// Whether the endpoint takes events of type t: those it names, or the record
// events when it names none.
bool wants(const webhook_endpoint& e, event_type t);
// "a,b" ↔ events; parse refuses an unknown name (field "events", code
// "unknown_event") and an empty list item. "" (no list) is the record events
// (record_events(): what an endpoint received before purchases had events). A
// group name stands for its events: "receipt", "purchase_order",
// "transaction", "in_app_purchase" (created and updated), "customer"
// (customer.entitlements_changed), "all".
std::string events_text(const std::vector<event_type>& events);
result<std::vector<event_type>> parse_events(std::string_view text);

// The record events (receipt.*, purchase_order.*, transaction.*): what an
// endpoint that names no events received before purchases had events.
std::vector<event_type> record_events();

// A new secret from the CSPRNG (model/encoding.hpp).
std::string make_webhook_secret();

// A webhook URL: absolute http(s) with a host, at most 2048 bytes, no
// credentials or fragment; https, or http only to a loopback host (localhost,
// 127.0.0.0/8, [::1]) unless allow_http. Errors: field "url", codes
// "invalid_url" / "https_required".
result<std::string> check_webhook_url(std::string_view url, bool allow_http);

// ---- signatures -----------------------------------------------------------------

// The headers of one delivery ("Name: value"):
//   Content-Type: application/json
//   X-SHA256-Digest: <hex HMAC-SHA256(secret, body)>          (Mbaasy's)
//   Receiptd-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
//   Receiptd-Event-Id: <event id>
// Digests are lower-case hex; the key is the secret string's bytes.
std::vector<std::string> delivery_headers(const std::string& secret, const std::string& body,
                                          const std::string& event_id, std::int64_t unix_seconds);
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

// How a receiver checks a delivery: the rule the README's verifier follows, and
// the one place it is tested. Receiptd-Signature is "t=<unix seconds>,v1=<hex>"
// (its items in any order; several v1 allowed, one must match): v1 must be
// HMAC-SHA256(secret, "<t>.<body>"), compared in constant time, and t within
// `tolerance_s` of the receiver's clock (`now_s`) either way, so that a captured
// delivery sent again later is refused. Each attempt is signed when it is sent,
// so retries pass. X-SHA256-Digest (Mbaasy's) signs the body alone: valid
// forever, it cannot tell a replay; a receiver that checks only it must
// deduplicate by the event id.
inline constexpr std::int64_t signature_tolerance_s = 300;
enum class signature_check {
  valid,
  malformed, // no t, a t that is not a number, no v1
  mismatch,  // no v1 is the HMAC: another secret, or the body or t changed
  stale,     // t further than the tolerance from now: a replay
};
signature_check check_delivery_signature(std::string_view secret, std::string_view body,
                                         std::string_view header, std::int64_t now_s,
                                         std::int64_t tolerance_s = signature_tolerance_s);

// ---- deliveries ---------------------------------------------------------------

enum class delivery_state { pending, delivered, dead };
std::string_view to_string(delivery_state s);
std::optional<delivery_state> parse_delivery_state(std::string_view text);

// One event to one endpoint, as the dispatcher claims it (with what it needs to
// send it) and reports it back.
struct webhook_delivery {
  std::string event_id;
  std::string endpoint_id;
  std::string app_id;
  std::string record_id;
  event_type type = event_type::receipt_created;
  std::string url;
  std::string secret;
  std::string body;
  delivery_state state = delivery_state::pending;
  int attempts = 0; // sends made so far
  unix_ms next_attempt_at = 0;
  std::int64_t version = 0; // fencing token: bumped by every claim
  std::string last_error;
  std::optional<unix_ms> delivered_at;
};

// What one send's outcome does to a delivery (attempts counts it): a 2xx
// delivers (delivered_at = now, last_error cleared); anything else is retried
// at now + backoff_delay_ms(policy, attempts - 1, unit_random) (the first retry
// waits up to the initial backoff), or is dead once the policy's attempts are
// spent. last_error: "HTTP <status>[: error]", or `error` when `status` is 0
// (no HTTP answer).
void settle_delivery(webhook_delivery& d, int status, const std::string& error, unix_ms now,
                     const retry_policy& policy, double unit_random);

// How many deliveries a claim of at most `limit` takes from each endpoint, given
// the room each has (its max-concurrent-per-endpoint less those the claimer holds),
// in the order the endpoints are listed: one from each in turn, so that an
// endpoint with much waiting never takes a share that another one with room
// needs, and none more than its room.
std::vector<int> claim_shares(const std::vector<int>& rooms, int limit);

} // namespace receiptd::model

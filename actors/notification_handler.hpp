#pragma once
// Store notifications in: one actor per App Store Server Notification,
// spawned by the supervisor like a validator. It finds the app the URL names,
// verifies the signed payload against that app (model/store_a/notification_verify.hpp),
// has the persistence pool apply it to the app's records in one transaction
// (idempotent by notificationUUID), and answers after the commit: 200 then, so
// that Apple retries anything not applied. Google Play real-time developer
// notifications likewise, but unsigned: the push is authenticated by the app's
// secret in its URL, and what it says about a purchase is never applied — the
// Play Developer API is asked again and its answer is.

#include <caf/fwd.hpp>

#include "actors/validator.hpp"

namespace receiptd::actors {

// Answers: 200 {"status":"applied"|"duplicate","records_changed":n}; 400 a
// body that is not {"signedPayload": JWS} or a payload that is not a
// notification; 401 a payload that does not verify or is for another app; 404
// no such app; 503 the database failed (Apple retries).
void handle_store_a_notification(caf::event_based_actor* self, inbound in, validator_deps_ptr deps);

// A Pub/Sub push of a Google Play RTDN (POST /notifications/store_b/{app id}?token=…).
// Answers: 200 {"status":"applied"|"duplicate","records_changed":n} once recorded
// (idempotent by messageId); 400 a body that is not a push of a developer
// notification; 404 no such app; 401 the URL's token is not the app's (an app
// without one refuses every push) or the push is for another package; 503 with
// Retry-After when the Play Developer API or the database did not answer, with
// nothing recorded: Pub/Sub redelivers it.
void handle_store_b_notification(caf::event_based_actor* self, inbound in, validator_deps_ptr deps);

// A notification URL's refusals, the same whether the handler gives them or the
// supervisor's check while the body arrives (http/admission.hpp).
model::error no_such_app();
model::error wrong_push_token();

} // namespace receiptd::actors

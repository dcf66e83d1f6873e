#pragma once
// Store notifications in (issue 9): one actor per App Store Server Notification,
// spawned by the supervisor like a validator. It finds the app the URL names,
// verifies the signed payload against that app (model/store_a/notification_verify.hpp),
// has the persistence pool apply it to the app's records in one transaction
// (idempotent by notificationUUID), and answers after the commit: 200 then, so
// that Apple retries anything not applied.

#include <caf/fwd.hpp>

#include "actors/validator.hpp"

namespace receiptd::actors {

// Answers: 200 {"status":"applied"|"duplicate","records_changed":n}; 400 a
// body that is not {"signedPayload": JWS} or a payload that is not a
// notification; 401 a payload that does not verify or is for another app; 404
// no such app; 503 the database failed (Apple retries).
void handle_store_a_notification(caf::event_based_actor* self, inbound in, validator_deps_ptr deps);

} // namespace receiptd::actors

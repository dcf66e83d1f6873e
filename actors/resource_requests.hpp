#pragma once
// The purchase layer's HTTP resources, answered by a persistence worker (its
// database session, blocking, off the scheduler): an In-App Purchase by id, a
// customer's entitlements, its purchases page by page, and promotional grants.
// The parameters are checked here (model/purchases/requests.hpp): 422 with
// field errors; another app's purchase is 404.

#include "actors/messages.hpp"
#include "db/database.hpp"
#include "http/reply.hpp"

namespace receiptd::actors {

http::reply answer_resource(db::database& db, const resource_request& r, model::unix_ms now);

// GET /client|/server/customers/{id} (r.id), with what giving it again needs.
customer_answer answer_customer(db::database& db, const resource_request& r, model::unix_ms now);

// Whether answering `r` writes (grants).
bool writes(const resource_request& r);

} // namespace receiptd::actors

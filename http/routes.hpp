#pragma once
// The one routing table: every path receiptd answers, its method, and what the
// actors do with it. The HTTP layer matches requests against it
// (http/request_rules.cpp); the supervisor and validator act on the matched
// route's entry, never on paths.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "model/access_token.hpp"
#include "model/records.hpp"

namespace receiptd::http {

enum class route {
  store_a_upload,             // POST /client/store_a/receipts
  store_b_upload,             // POST /client/store_b/purchase_orders
  store_b_legacy_upload,      // POST /client/store_b/purchase_orders/legacy
  store_a_transaction_upload, // POST /client/store_a/transactions
  store_a_get,                // GET  /client/store_a/receipts/{id}
  store_b_get,                // GET  /client/store_b/purchase_orders/{id}
  store_a_transaction_get,    // GET  /client/store_a/transactions/{id}
  store_a_notification,       // POST /notifications/store_a/{app id}
  store_b_notification,       // POST /notifications/store_b/{app id}?token=…
  health,                     // GET  /healthz: liveness (answered by the HTTP layer)
  ready,                      // GET  /readyz: readiness (database, migrations, trust)
  metrics,                    // GET  /metrics: Prometheus text format
  openapi,                    // GET  /openapi.yaml: the API's OpenAPI document
  // The purchase layer: In-App Purchase resources, customers, grants.
  purchase_get,              // GET  /client/in_app_purchases/{id}
  customer_get,              // GET  /client/customers/{user_identifier}
  server_customer_get,       // GET  /server/customers/{user_identifier}
  server_customer_purchases, // GET  /server/customers/{user_identifier}/in_app_purchases
  server_grant_add,          // POST /server/customers/{user}/entitlements/{name}/grants
  server_grant_remove,       // DELETE /server/customers/{user}/entitlements/{name}/grants/{id}
  server_customer_restore,   // POST /server/customers/{user_identifier}/restore
  server_purchase_consumption, // PUT /server/in_app_purchases/{id}/consumption
  store_a_app_transaction_upload, // POST /client/store_a/app_transactions
  store_a_app_transaction_get,    // GET  /client/store_a/app_transactions/{id}
};

struct route_info {
  route id = route::health;
  const char* name = ""; // in spans and logs
  bool post = false;     // POST, else GET (and HEAD)
  std::string_view path; // the path, or the prefix before "/{id}"
  bool takes_id = false;
  // GET of a record: its kind. Uploads and the health check: none.
  std::optional<model::record_kind> lookup = std::nullopt;
  // The caller shows an app's bearer token (else the request authenticates itself:
  // an App Store notification is signed by Apple; a Google Play push carries the
  // app's secret in the URL, see token_in_query).
  bool bearer = true;
  // With bearer: the kind of token the route takes (model/access_token.hpp). Every
  // /client/... route takes a client token, every /server/... route a server token
  // (a unit test holds the table to it); a token of the other kind is 401, valid or
  // not otherwise.
  model::token_kind token = model::token_kind::client;
  // The secret comes as the URL's ?token= (a Pub/Sub push subscription sends no
  // header of ours: the secret is part of the push endpoint's URL). Checked by
  // the actors, against the app the path names.
  bool token_in_query = false;
  // The same resource under Mbaasy's original path (an app or proxy written for
  // Mbaasy changes only its base URL), or empty.
  std::string_view alias = {};
  // Not part of the API an app calls: liveness, readiness, metrics, the document.
  bool operational = false;
  // DELETE (else `post` decides between POST and GET).
  bool deletes = false;
  // PUT (else as above).
  bool puts = false;
  // A path with parameters ("/server/customers/{}/in_app_purchases"): each {}
  // is one path segment, handed on in order (inbound_request::params).
  bool templated = false;
  // A purchase-layer route: the supervisor hands it to the persistence pool as a
  // resource request (actors/resource_requests.hpp).
  bool resource = false;
};

std::span<const route_info> routes();
const route_info& info(route r);

// The methods a route's path has, as a 405's Allow lists them: "POST", or
// "GET, HEAD" (HEAD on every GET route, RFC 9110 §9.3.2).
std::string_view allowed_methods(const route_info& r);

// The path a record of this kind reads at (its GET route's), e.g.
// "/client/store_b/purchase_orders/<id>": a 206's Location.
std::string record_path(model::record_kind kind, std::string_view id);

// The 401 message for a bearer token of the wrong kind on route `r`: "this path
// takes a client token, not a server token" (the path as sent: an alias is the
// same route).
std::string wrong_token_kind_message(const route_info& r, model::token_kind shown);

// An upload of a proof (POST with an app's bearer token): what the upload rates
// (limits.*) count.
inline bool is_upload(route r) {
  return info(r).post && info(r).bearer && !info(r).resource;
}

} // namespace receiptd::http

#pragma once
// webhook_endpoints, webhook_events and webhook_deliveries through
// statements prepared once per session; and the outbox that a write transaction
// writes its events through.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "db/connection.hpp"
#include "db/sql_webhooks.hpp"
#include "db/statements.hpp"
#include "model/webhooks.hpp"

namespace receiptd::db {

struct webhook_endpoint_row {
  std::string id;
  std::string app_id;
  std::string url;
  std::string secret;
  std::string events; // model::events_text
  long long created_at = 0;

  template <class F>
  void all_columns(F&& f) {
    f("id", id);
    f("app_id", app_id);
    f("url", url);
    f("secret", secret);
    f("events", events);
    f("created_at", created_at);
  }

  void assign(const model::webhook_endpoint& e);
  model::webhook_endpoint endpoint() const; // throws corrupt_row
};

struct webhook_event_row {
  std::string id;
  std::string app_id;
  std::string type;
  std::string record_kind;
  std::string record_id;
  std::string body;
  long long created_at = 0;

  template <class F>
  void all_columns(F&& f) {
    f("id", id);
    f("app_id", app_id);
    f("type", type);
    f("record_kind", record_kind);
    f("record_id", record_id);
    f("body", body);
    f("created_at", created_at);
  }

  void assign(const model::webhook_event& e);
  model::webhook_event event() const; // throws corrupt_row
};

struct webhook_delivery_row {
  std::string event_id;
  std::string endpoint_id;
  std::string app_id;
  std::string record_id;
  std::string state;
  int attempts = 0;
  long long next_attempt_at = 0;
  long long version = 0;
  std::string last_error;
  nullable<long long> delivered_at;
  // Read with it, from the event and the endpoint (db/sql_webhooks.hpp).
  std::string type;
  std::string body;
  std::string url;
  std::string secret;

  template <class F>
  void read_columns(F&& f) {
    f("event_id", event_id);
    f("endpoint_id", endpoint_id);
    f("app_id", app_id);
    f("record_id", record_id);
    f("state", state);
    f("attempts", attempts);
    f("next_attempt_at", next_attempt_at);
    f("version", version);
    f("last_error", last_error);
    f("delivered_at", delivered_at);
    f(sql::webhook_deliveries::event_type_column, type);
    f(sql::webhook_deliveries::event_body_column, body);
    f(sql::webhook_deliveries::endpoint_url_column, url);
    f(sql::webhook_deliveries::endpoint_secret_column, secret);
  }

  model::webhook_delivery delivery() const; // throws corrupt_row
};

class webhook_repository {
public:
  explicit webhook_repository(connection& c);
  webhook_repository(const webhook_repository&) = delete;
  webhook_repository& operator=(const webhook_repository&) = delete;

  void insert_endpoint(const model::webhook_endpoint& e);
  // The app's endpoints, oldest first; every app's when app_id is empty.
  std::vector<model::webhook_endpoint> endpoints(const std::string& app_id);
  // The endpoint and its undelivered deliveries; false when there is none.
  bool remove_endpoint(const std::string& id);

  // Writes the event (the caller holds its record's row lock: it numbers the
  // record's events) and a delivery, due at its creation, to each endpoint.
  // Returns the number of deliveries.
  int insert_event(const model::webhook_event& e,
                   const std::vector<const model::webhook_endpoint*>& to);
  // A delivery of a stored event to the endpoint, due at `due`, unless it has one.
  bool add_delivery(const std::string& event_id, const std::string& endpoint_id,
                    model::unix_ms due);
  std::optional<model::webhook_event> find_event(const std::string& id);

  // Every delivery of the event to an existing endpoint back to new, due at `now`.
  void redeliver(const std::string& event_id, model::unix_ms now);
  // Newest event first; every app's when app_id is empty.
  std::vector<model::webhook_delivery> deliveries(const std::string& app_id, int limit);
  // Leases up to `limit` claimable deliveries, at most `per_endpoint` less those
  // the owner holds already of each endpoint, shared out between the endpoints
  // (model::claim_shares), the one whose oldest delivery waits longest first;
  // call inside a write transaction.
  std::vector<model::webhook_delivery> claim(const std::string& owner, model::unix_ms now,
                                             model::unix_ms lease_until, int limit,
                                             int per_endpoint);
  // Fenced by d.version.
  bool finish(const model::webhook_delivery& d);

private:
  // Bound by reference into the statements below: declared first, never moved.
  webhook_endpoint_row endpoint_;
  webhook_event_row event_;
  webhook_delivery_row delivery_;
  std::string key_id_;
  std::string key_app_id_;
  std::string key_event_id_;
  std::string key_endpoint_id_;
  long long key_version_ = 0;
  long long next_attempt_at_ = 0;
  int limit_ = 0;
  std::string lease_owner_;
  long long lease_until_ = 0;
  long long now_ = 0;
  nullable<long long> delivered_at_;
  // A row of claim_rooms_.
  std::string room_endpoint_;
  nullable<long long> room_oldest_;
  long long room_held_ = 0;

  soci::statement insert_endpoint_;
  soci::statement list_endpoints_;
  soci::statement list_all_endpoints_;
  soci::statement remove_endpoint_;
  soci::statement remove_undelivered_;
  soci::statement insert_event_;
  soci::statement insert_delivery_;
  soci::statement find_event_;
  soci::statement redeliver_;
  soci::statement list_deliveries_;
  soci::statement list_all_deliveries_;
  soci::statement claim_rooms_;
  soci::statement claim_;
  soci::statement finish_;
};

// The outbox of one write transaction: each change it makes that an endpoint of
// its app wants becomes an event with one delivery per such endpoint, committed
// (or rolled back) with the change. Each app's endpoints are read once per
// transaction, with `endpoints` (the session decides whether from what it kept).
// `repo` gives the session's repository at each use (a failed save inside a batch
// drops the prepared statements and their repositories).
class outbox {
public:
  using endpoint_reader
    = std::function<std::vector<model::webhook_endpoint>(const std::string& app_id)>;
  outbox(std::function<webhook_repository&()> repo, endpoint_reader endpoints)
    : repo_(std::move(repo)), read_endpoints_(std::move(endpoints)) {}

  // Whether any endpoint of the app wants events of this type.
  bool wanted(const std::string& app_id, model::event_type type);
  // Writes the event of a record's change (before nullopt: it was created) to the
  // endpoints that want it; nothing when the resource did not change
  // (model::record_event). Returns the number of deliveries written.
  int announce(const std::optional<boost::json::object>& before, const boost::json::object& after,
               model::record_kind kind, const std::string& app_id, const std::string& record_id,
               model::unix_ms now);

  // Writes an event made elsewhere (a purchase's, a customer's) to the app's
  // endpoints that want its type. Returns the number of deliveries written.
  int announce_event(const model::webhook_event& e);

  // The endpoints read so far are read again at their next use.
  void forget_reads() { endpoints_.clear(); }

private:
  const std::vector<model::webhook_endpoint>& endpoints_of(const std::string& app_id);

  std::function<webhook_repository&()> repo_;
  endpoint_reader read_endpoints_;
  std::map<std::string, std::vector<model::webhook_endpoint>> endpoints_;
};

} // namespace receiptd::db

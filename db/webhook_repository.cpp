#include "db/webhook_repository.hpp"

#include <algorithm>

#include "db/work_written.hpp"

namespace receiptd::db {

namespace q = sql::webhook_deliveries;

namespace {

template <class Bind>
soci::statement make(soci::session& s, std::string_view sql, Bind&& bind) {
  return prepare(s, std::string(sql), std::forward<Bind>(bind));
}

// SELECT/RETURNING the delivery's read_columns, then the given keys.
template <class Bind>
soci::statement make_delivery_select(soci::session& s, std::string_view tmpl,
                                     webhook_delivery_row& row, Bind&& bind_keys) {
  auto names = column_names([&](auto f) { row.read_columns(f); });
  return prepare(s, render(tmpl, names), [&](soci::statement& st) {
    row.read_columns(bind_into{st});
    bind_keys(st);
  });
}

} // namespace

void webhook_endpoint_row::assign(const model::webhook_endpoint& e) {
  id = e.id;
  app_id = e.app_id;
  url = e.url;
  secret = e.secret;
  events = model::events_text(e.events);
  created_at = e.created_at;
}

model::webhook_endpoint webhook_endpoint_row::endpoint() const {
  auto parsed = model::parse_events(events);
  if (!parsed)
    throw corrupt_row("unknown webhook events '" + events + "'");
  return {id, app_id, url, secret, std::move(parsed).value(), created_at};
}

void webhook_event_row::assign(const model::webhook_event& e) {
  id = e.id;
  app_id = e.app_id;
  type = std::string(to_string(e.type));
  record_kind = e.subject;
  record_id = e.record_id;
  body = e.body;
  created_at = e.created_at;
}

model::webhook_event webhook_event_row::event() const {
  model::webhook_event e;
  e.id = id;
  e.app_id = app_id;
  e.type = parse_column(model::parse_event_type(type), "event type", type);
  e.subject = record_kind;
  e.record_id = record_id;
  e.body = body;
  e.created_at = created_at;
  return e;
}

model::webhook_delivery webhook_delivery_row::delivery() const {
  model::webhook_delivery d;
  d.event_id = event_id;
  d.endpoint_id = endpoint_id;
  d.app_id = app_id;
  d.record_id = record_id;
  d.type = parse_column(model::parse_event_type(type), "event type", type);
  d.url = url;
  d.secret = secret;
  d.body = body;
  d.state = parse_column(model::parse_delivery_state(state), "delivery state", state);
  d.attempts = attempts;
  d.next_attempt_at = next_attempt_at;
  d.version = version;
  d.last_error = last_error;
  d.delivered_at = delivered_at.get<model::unix_ms>();
  return d;
}

webhook_repository::webhook_repository(connection& c)
  : insert_endpoint_(prepare_insert(c.session(), sql::webhook_endpoints::insert, endpoint_)),
    list_endpoints_(prepare_select(c.session(), sql::webhook_endpoints::list_by_app, endpoint_,
                                   &key_app_id_, "key_app_id")),
    list_all_endpoints_(prepare_select(c.session(), sql::webhook_endpoints::list_all, endpoint_)),
    remove_endpoint_(
      make(c.session(), sql::webhook_endpoints::remove,
           [this](soci::statement& st) { st.exchange(soci::use(key_id_, "key_id")); })),
    remove_undelivered_(
      make(c.session(), sql::webhook_endpoints::remove_undelivered,
           [this](soci::statement& st) { st.exchange(soci::use(key_id_, "key_id")); })),
    insert_event_(make(c.session(), sql::webhook_events::insert,
                       [this](soci::statement& st) {
                         event_.all_columns(bind_use{st});
                         st.exchange(soci::use(event_.record_id, "key_record_id"));
                       })),
    insert_delivery_(make(c.session(), q::insert,
                          [this](soci::statement& st) {
                            st.exchange(soci::use(key_endpoint_id_, "endpoint_id"));
                            st.exchange(soci::use(next_attempt_at_, "next_attempt_at"));
                            st.exchange(soci::use(key_event_id_, "key_event_id"));
                          })),
    find_event_(prepare_select(c.session(), sql::webhook_events::find, event_, &key_id_, "key_id")),
    redeliver_(make(c.session(), q::redeliver,
                    [this](soci::statement& st) {
                      st.exchange(soci::use(next_attempt_at_, "next_attempt_at"));
                      st.exchange(soci::use(key_event_id_, "key_event_id"));
                    })),
    list_deliveries_(make_delivery_select(c.session(), q::list_by_app, delivery_,
                                          [this](soci::statement& st) {
                                            st.exchange(soci::use(key_app_id_, "key_app_id"));
                                            st.exchange(soci::use(limit_, "limit"));
                                          })),
    list_all_deliveries_(make_delivery_select(
      c.session(), q::list_all, delivery_,
      [this](soci::statement& st) { st.exchange(soci::use(limit_, "limit")); })),
    claim_rooms_(make(c.session(), q::claim_rooms,
                      [this](soci::statement& st) {
                        st.exchange(soci::into(room_endpoint_));
                        st.exchange(soci::into(room_oldest_.value, room_oldest_.ind));
                        st.exchange(soci::into(room_held_));
                        st.exchange(soci::use(lease_owner_, "held_by"));
                        st.exchange(soci::use(now_, "held_at"));
                      })),
    claim_(make_delivery_select(
      c.session(), c.kind() == dialect::postgresql ? q::claim_postgresql : q::claim_sqlite,
      delivery_,
      [this](soci::statement& st) {
        st.exchange(soci::use(key_endpoint_id_, "key_endpoint_id"));
        st.exchange(soci::use(lease_owner_, "lease_owner"));
        st.exchange(soci::use(lease_until_, "lease_until"));
        st.exchange(soci::use(now_, "due_at"));
        st.exchange(soci::use(now_, "lease_free_at"));
        st.exchange(soci::use(limit_, "batch_size"));
      })),
    finish_(make(c.session(), q::finish, [this](soci::statement& st) {
      st.exchange(soci::use(delivery_.state, "state"));
      st.exchange(soci::use(delivery_.attempts, "attempts"));
      st.exchange(soci::use(delivery_.next_attempt_at, "next_attempt_at"));
      st.exchange(soci::use(delivery_.last_error, "last_error"));
      st.exchange(soci::use(delivered_at_.value, delivered_at_.ind, "delivered_at"));
      st.exchange(soci::use(key_event_id_, "key_event_id"));
      st.exchange(soci::use(key_endpoint_id_, "key_endpoint_id"));
      st.exchange(soci::use(key_version_, "key_version"));
    })) {}

void webhook_repository::insert_endpoint(const model::webhook_endpoint& e) {
  endpoint_.assign(e);
  execute_change(insert_endpoint_);
}

std::vector<model::webhook_endpoint> webhook_repository::endpoints(const std::string& app_id) {
  std::vector<model::webhook_endpoint> out;
  key_app_id_ = app_id;
  for_each_row(app_id.empty() ? list_all_endpoints_ : list_endpoints_,
               [&] { out.push_back(endpoint_.endpoint()); });
  return out;
}

bool webhook_repository::remove_endpoint(const std::string& id) {
  key_id_ = id;
  execute_change(remove_undelivered_);
  return execute_change(remove_endpoint_) == 1;
}

int webhook_repository::insert_event(const model::webhook_event& e,
                                     const std::vector<const model::webhook_endpoint*>& to) {
  event_.assign(e);
  execute_change(insert_event_);
  int written = 0;
  for (const auto* endpoint : to)
    written += add_delivery(e.id, endpoint->id, e.created_at) ? 1 : 0;
  return written;
}

bool webhook_repository::add_delivery(const std::string& event_id, const std::string& endpoint_id,
                                      model::unix_ms due) {
  key_event_id_ = event_id;
  key_endpoint_id_ = endpoint_id;
  next_attempt_at_ = due;
  if (execute_change(insert_delivery_) != 1)
    return false;
  note_work(work_kind::deliveries, due);
  return true;
}

std::optional<model::webhook_event> webhook_repository::find_event(const std::string& id) {
  key_id_ = id;
  if (!fetch_single(find_event_))
    return std::nullopt;
  return event_.event();
}

void webhook_repository::redeliver(const std::string& event_id, model::unix_ms now) {
  key_event_id_ = event_id;
  next_attempt_at_ = now;
  if (execute_change(redeliver_) > 0)
    note_work(work_kind::deliveries, now);
}

std::vector<model::webhook_delivery> webhook_repository::deliveries(const std::string& app_id,
                                                                    int limit) {
  std::vector<model::webhook_delivery> out;
  key_app_id_ = app_id;
  limit_ = std::max(limit, 0);
  for_each_row(app_id.empty() ? list_all_deliveries_ : list_deliveries_,
               [&] { out.push_back(delivery_.delivery()); });
  return out;
}

std::vector<model::webhook_delivery> webhook_repository::claim(const std::string& owner,
                                                               model::unix_ms now,
                                                               model::unix_ms lease_until,
                                                               int limit, int per_endpoint) {
  lease_owner_ = owner;
  lease_until_ = lease_until;
  now_ = now;
  // The endpoints with a delivery due and room for more, longest waiting first.
  struct room {
    std::string endpoint;
    long long oldest;
    int free;
  };
  std::vector<room> rooms;
  for_each_row(claim_rooms_, [&] {
    auto oldest = room_oldest_.get();
    if (oldest && *oldest <= now && room_held_ < per_endpoint)
      rooms.push_back({room_endpoint_, *oldest, per_endpoint - static_cast<int>(room_held_)});
  });
  std::sort(rooms.begin(), rooms.end(), [](const room& a, const room& b) {
    return a.oldest != b.oldest ? a.oldest < b.oldest : a.endpoint < b.endpoint;
  });
  std::vector<int> free;
  for (const auto& r : rooms)
    free.push_back(r.free);
  auto shares = model::claim_shares(free, limit);
  std::vector<model::webhook_delivery> out;
  for (std::size_t i = 0; i < rooms.size(); ++i) {
    if (shares[i] == 0)
      continue;
    key_endpoint_id_ = rooms[i].endpoint;
    limit_ = shares[i];
    for_each_row(claim_, [&] { out.push_back(delivery_.delivery()); });
  }
  // RETURNING gives no order; the dispatcher sends oldest due first.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.next_attempt_at != b.next_attempt_at ? a.next_attempt_at < b.next_attempt_at
                                                  : a.event_id < b.event_id;
  });
  return out;
}

bool webhook_repository::finish(const model::webhook_delivery& d) {
  delivery_.state = std::string(to_string(d.state));
  delivery_.attempts = d.attempts;
  delivery_.next_attempt_at = d.next_attempt_at;
  delivery_.last_error = d.last_error;
  delivered_at_.set(d.delivered_at);
  key_event_id_ = d.event_id;
  key_endpoint_id_ = d.endpoint_id;
  key_version_ = d.version;
  if (execute_change(finish_) != 1)
    return false;
  if (d.state == model::delivery_state::pending) // to be tried again
    note_work(work_kind::deliveries, d.next_attempt_at);
  return true;
}

// ---- outbox ---------------------------------------------------------------------

const std::vector<model::webhook_endpoint>& outbox::endpoints_of(const std::string& app_id) {
  auto found = endpoints_.find(app_id);
  if (found == endpoints_.end())
    found = endpoints_.emplace(app_id, read_endpoints_(app_id)).first;
  return found->second;
}

bool outbox::wanted(const std::string& app_id, model::event_type type) {
  if (app_id.empty())
    return false; // endpoints("") would be every app's
  const auto& all = endpoints_of(app_id);
  return std::any_of(all.begin(), all.end(), [&](const auto& e) { return model::wants(e, type); });
}

int outbox::announce(const std::optional<boost::json::object>& before,
                     const boost::json::object& after, model::record_kind kind,
                     const std::string& app_id, const std::string& record_id, model::unix_ms now) {
  auto event = model::record_event(before, after, kind, app_id, record_id, now);
  if (!event)
    return 0;
  return announce_event(*event);
}

int outbox::announce_event(const model::webhook_event& event) {
  if (event.app_id.empty())
    return 0;
  std::vector<const model::webhook_endpoint*> to;
  for (const auto& e : endpoints_of(event.app_id))
    if (model::wants(e, event.type))
      to.push_back(&e);
  if (to.empty())
    return 0;
  return repo_().insert_event(event, to);
}

} // namespace receiptd::db

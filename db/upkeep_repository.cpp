#include "db/upkeep_repository.hpp"

#include "db/sql_upkeep.hpp"

namespace receiptd::db {

namespace q = sql::upkeep;

model::store_b::voided_poll voided_poll_row::poll() const {
  model::store_b::voided_poll p;
  p.app_id = app_id;
  p.cursor.window_start = window_start;
  p.cursor.page_token = page_token;
  p.cursor.high_water = high_water;
  p.version = version;
  p.next_poll_at = next_poll_at;
  p.last_error = last_error;
  return p;
}

upkeep_repository::upkeep_repository(connection& c)
  : candidates_(prepare(c.session(), std::string(q::refresh_candidates), bind_candidates())),
    transaction_candidates_(
      prepare(c.session(), std::string(q::transaction_refresh_candidates), bind_candidates())),
    add_missing_(prepare(c.session(), std::string(q::add_missing_polls),
                         [this](soci::statement& st) {
                           st.exchange(soci::use(window_start_, "window_start"));
                           st.exchange(soci::use(window_start_, "high_water"));
                           st.exchange(soci::use(now_, "now"));
                         })),
    claim_(prepare(c.session(),
                   render(c.kind() == dialect::postgresql ? q::claim_postgresql : q::claim_sqlite,
                          column_names([this](auto f) { row_.all_columns(f); })),
                   [this](soci::statement& st) {
                     row_.all_columns(bind_into{st});
                     st.exchange(soci::use(now_, "due_at"));
                     st.exchange(soci::use(now_, "lease_free_at"));
                     st.exchange(soci::use(batch_size_, "batch_size"));
                     st.exchange(soci::use(lease_owner_, "lease_owner"));
                     st.exchange(soci::use(lease_until_, "lease_until"));
                   })),
    store_(prepare(c.session(), std::string(q::store_fenced), [this](soci::statement& st) {
      st.exchange(soci::use(next_.window_start, "window_start"));
      st.exchange(soci::use(next_.page_token, "page_token"));
      st.exchange(soci::use(next_.high_water, "high_water"));
      st.exchange(soci::use(next_.next_poll_at, "next_poll_at"));
      st.exchange(soci::use(next_.last_error, "last_error"));
      st.exchange(soci::use(next_.polled_at.value, next_.polled_at.ind, "polled_at"));
      st.exchange(soci::use(new_lease_owner_.value, new_lease_owner_.ind, "new_lease_owner"));
      st.exchange(soci::use(new_lease_until_.value, new_lease_until_.ind, "new_lease_until"));
      st.exchange(soci::use(key_app_id_, "key_app_id"));
      st.exchange(soci::use(key_version_, "key_version"));
      st.exchange(soci::use(key_owner_, "key_owner"));
    })),
    orders_due_(prepare(c.session(), std::string(q::orders_due), [this](soci::statement& st) {
      st.exchange(soci::into(found_app_id_));
      st.exchange(soci::into(found_token_));
      st.exchange(soci::into(found_order_id_));
      st.exchange(soci::use(batch_size_, "batch_size"));
    })) {}

std::vector<upkeep_repository::order_due> upkeep_repository::orders_due(int limit) {
  std::vector<order_due> out;
  batch_size_ = limit;
  for_each_row(orders_due_, [&] { out.push_back({found_app_id_, found_token_, found_order_id_}); });
  return out;
}

std::function<void(soci::statement&)> upkeep_repository::bind_candidates() {
  return [this](soci::statement& st) {
    st.exchange(soci::into(found_id_));
    st.exchange(soci::into(found_app_id_));
    st.exchange(soci::use(now_, "now"));
    st.exchange(soci::use(stale_before_, "stale_before"));
    st.exchange(soci::use(batch_size_, "batch_size"));
  };
}

std::vector<std::pair<std::string, std::string>>
upkeep_repository::refresh_candidates(model::record_kind kind, model::unix_ms now,
                                      model::unix_ms stale_before, int limit) {
  std::vector<std::pair<std::string, std::string>> out;
  now_ = now;
  stale_before_ = stale_before;
  batch_size_ = limit;
  auto& st
    = kind == model::record_kind::store_a_transaction ? transaction_candidates_ : candidates_;
  for_each_row(st, [&] { out.emplace_back(found_id_, found_app_id_); });
  return out;
}

void upkeep_repository::add_missing_polls(model::unix_ms now, model::unix_ms window_start) {
  now_ = now;
  window_start_ = window_start;
  execute_change(add_missing_);
}

std::vector<model::store_b::voided_poll> upkeep_repository::claim(const std::string& owner,
                                                                  model::unix_ms now,
                                                                  model::unix_ms lease_until,
                                                                  int limit) {
  std::vector<model::store_b::voided_poll> out;
  lease_owner_ = owner;
  now_ = now;
  lease_until_ = lease_until;
  batch_size_ = limit;
  for_each_row(claim_, [&] { out.push_back(row_.poll()); });
  return out;
}

bool upkeep_repository::store(const std::string& owner, const model::store_b::voided_poll& p,
                              model::unix_ms now, std::optional<model::unix_ms> keep_lease_until) {
  next_.window_start = p.cursor.window_start;
  next_.page_token = p.cursor.page_token;
  next_.high_water = p.cursor.high_water;
  next_.next_poll_at = p.next_poll_at;
  next_.last_error = p.last_error;
  next_.polled_at.set(std::optional<long long>(now));
  if (keep_lease_until) {
    new_lease_owner_.set(std::optional<std::string>(owner));
    new_lease_until_.set(std::optional<long long>(*keep_lease_until));
  } else {
    new_lease_owner_.set(std::optional<std::string>());
    new_lease_until_.set(std::optional<long long>());
  }
  key_app_id_ = p.app_id;
  key_version_ = p.version;
  key_owner_ = owner;
  return execute_change(store_) == 1;
}

} // namespace receiptd::db

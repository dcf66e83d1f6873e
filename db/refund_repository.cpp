#include "db/refund_repository.hpp"

#include "db/sql_refunds.hpp"
#include "db/work_written.hpp"

namespace receiptd::db {

namespace mp = model::purchases;
namespace q = sql::refunds;

namespace {

struct refund_row {
  std::string id;
  std::string app_id;
  std::string purchase_id;
  std::string marketplace;
  std::string environment;
  std::string store_key;
  nullable<std::string> package_name;
  nullable<std::string> refund_token;
  nullable<std::string> reason;
  std::string state;
  long long received_at = 0;
  long long deadline_at = 0;
  nullable<long long> answered_at;
  nullable<std::string> sent;
  nullable<int> store_status;
  int attempts = 0;
  nullable<long long> next_attempt_at;
  std::string last_error;
  nullable<std::string> lease_owner;
  nullable<long long> lease_until;
  long long version = 0;

  template <class F>
  void all_columns(F&& f) {
    f("id", id);
    f("app_id", app_id);
    f("purchase_id", purchase_id);
    f("marketplace", marketplace);
    f("environment", environment);
    f("store_key", store_key);
    f("package_name", package_name);
    f("refund_token", refund_token);
    f("reason", reason);
    f("state", state);
    f("received_at", received_at);
    f("deadline_at", deadline_at);
    f("answered_at", answered_at);
    f("sent", sent);
    f("store_status", store_status);
    f("attempts", attempts);
    f("next_attempt_at", next_attempt_at);
    f("last_error", last_error);
    f("lease_owner", lease_owner);
    f("lease_until", lease_until);
    f("version", version);
  }

  void assign(const mp::refund_request& r) {
    id = r.id;
    app_id = r.app_id;
    purchase_id = r.purchase_id;
    marketplace = r.marketplace;
    environment = r.environment;
    store_key = r.store_key;
    package_name.set(r.package_name);
    refund_token.set(r.refund_token);
    reason.set(r.reason);
    state = r.state;
    received_at = r.received_at;
    deadline_at = r.deadline_at;
    answered_at.set(r.answered_at);
    sent.set(r.sent);
    store_status.set(r.store_status);
    attempts = r.attempts;
    next_attempt_at.set(r.next_attempt_at);
    last_error = r.last_error;
    version = r.version;
  }

  mp::refund_request request() const {
    mp::refund_request r;
    r.id = id;
    r.app_id = app_id;
    r.purchase_id = purchase_id;
    r.marketplace = marketplace;
    r.environment = environment;
    r.store_key = store_key;
    r.package_name = package_name.get();
    r.refund_token = refund_token.get();
    r.reason = reason.get();
    r.state = state;
    r.received_at = received_at;
    r.deadline_at = deadline_at;
    r.answered_at = answered_at.get<model::unix_ms>();
    r.sent = sent.get();
    r.store_status = store_status.get();
    r.attempts = attempts;
    r.next_attempt_at = next_attempt_at.get<model::unix_ms>();
    r.last_error = last_error;
    r.version = version;
    return r;
  }
};

} // namespace

void refund_repository::insert(const mp::refund_request& r) {
  refund_row row;
  row.assign(r);
  auto names = column_names([&](auto f) { row.all_columns(f); });
  auto st = prepare(c_.session(), render(q::insert, names),
                    [&](soci::statement& s) { row.all_columns(bind_use{s}); });
  st.execute(true);
  if (r.next_attempt_at)
    note_work(work_kind::refund_requests, *r.next_attempt_at);
}

std::optional<mp::refund_request> refund_repository::find(const std::string& id) {
  refund_row row;
  std::string key = id;
  auto names = column_names([&](auto f) { row.all_columns(f); });
  auto st = prepare(c_.session(), render(q::find, names), [&](soci::statement& s) {
    row.all_columns(bind_into{s});
    s.exchange(soci::use(key, "key"));
  });
  if (!st.execute(true))
    return std::nullopt;
  return row.request();
}

std::vector<mp::refund_request> refund_repository::claim(const std::string& owner,
                                                         model::unix_ms now,
                                                         model::unix_ms lease_until, int limit) {
  std::string select(q::due);
  if (c_.kind() == dialect::postgresql)
    select += q::skip_locked;
  std::vector<std::string> ids;
  {
    std::string id;
    long long due = now;
    long long free_at = now;
    int n = limit;
    auto st = prepare(c_.session(), select, [&](soci::statement& s) {
      s.exchange(soci::into(id));
      s.exchange(soci::use(due, "due_at"));
      s.exchange(soci::use(free_at, "free_at"));
      s.exchange(soci::use(n, "n"));
    });
    st.execute();
    while (st.fetch())
      ids.push_back(id);
  }
  std::vector<mp::refund_request> out;
  for (const auto& id : ids) {
    std::string key = id;
    std::string lease_owner = owner;
    long long until = lease_until;
    auto st = prepare(c_.session(), std::string(q::lease), [&](soci::statement& s) {
      s.exchange(soci::use(lease_owner, "owner"));
      s.exchange(soci::use(until, "until"));
      s.exchange(soci::use(key, "key"));
    });
    st.execute(true);
    if (auto r = find(id))
      out.push_back(std::move(*r));
  }
  return out;
}

bool refund_repository::finish(const mp::refund_request& r) {
  refund_row row;
  row.assign(r);
  std::string key = r.id;
  long long version = r.version;
  auto st = prepare(c_.session(), std::string(q::finish), [&](soci::statement& s) {
    s.exchange(soci::use(row.state, "state"));
    s.exchange(soci::use(row.answered_at.value, row.answered_at.ind, "answered_at"));
    s.exchange(soci::use(row.sent.value, row.sent.ind, "sent"));
    s.exchange(soci::use(row.store_status.value, row.store_status.ind, "store_status"));
    s.exchange(soci::use(row.attempts, "attempts"));
    s.exchange(soci::use(row.next_attempt_at.value, row.next_attempt_at.ind, "next_attempt_at"));
    s.exchange(soci::use(row.last_error, "last_error"));
    s.exchange(soci::use(key, "key"));
    s.exchange(soci::use(version, "key_version"));
  });
  st.execute(true);
  if (st.get_affected_rows() == 0)
    return false;
  if (r.next_attempt_at) // to be tried again
    note_work(work_kind::refund_requests, *r.next_attempt_at);
  return true;
}

std::optional<std::pair<std::string, std::string>>
refund_repository::purchase_of_order(const std::string& app_id, const std::string& order_id) {
  std::string app = app_id;
  std::string order = order_id;
  std::string purchase_id;
  std::string environment;
  auto st = prepare(c_.session(), std::string(q::purchase_of_order), [&](soci::statement& s) {
    s.exchange(soci::into(purchase_id));
    s.exchange(soci::into(environment));
    s.exchange(soci::use(app, "app"));
    s.exchange(soci::use(order, "order"));
    s.exchange(soci::use(order, "latest"));
  });
  if (!st.execute(true))
    return std::nullopt;
  return std::make_pair(purchase_id, environment);
}

void refund_repository::lock_purchase(const std::string& purchase_id) {
  if (c_.kind() != dialect::postgresql)
    return;
  std::string key = purchase_id;
  std::string id;
  auto st = prepare(c_.session(), std::string(q::lock_purchase), [&](soci::statement& s) {
    s.exchange(soci::into(id));
    s.exchange(soci::use(key, "key"));
  });
  st.execute(true);
}

mp::refund_settings refund_repository::settings(const std::string& app_id) {
  mp::refund_settings out;
  std::string preference;
  int consent = 0;
  int sample = 0;
  std::string key = app_id;
  auto st = prepare(c_.session(), std::string(q::settings), [&](soci::statement& s) {
    s.exchange(soci::into(preference));
    s.exchange(soci::into(consent));
    s.exchange(soci::into(sample));
    s.exchange(soci::use(key, "key"));
  });
  if (!st.execute(true))
    return out;
  out.preference = mp::parse_refund_preference(preference).value_or(mp::refund_preference::none);
  out.customer_consent = consent != 0;
  out.sample_content_provided = sample != 0;
  return out;
}

void refund_repository::set_settings(const std::string& app_id, const mp::refund_settings& s) {
  std::string key = app_id;
  std::string preference(mp::to_string(s.preference));
  int consent = to_flag(s.customer_consent);
  int sample = to_flag(s.sample_content_provided);
  auto st = prepare(c_.session(), std::string(q::set_settings), [&](soci::statement& st) {
    st.exchange(soci::use(key, "key"));
    st.exchange(soci::use(preference, "preference"));
    st.exchange(soci::use(consent, "consent"));
    st.exchange(soci::use(sample, "sample"));
  });
  st.execute(true);
}

mp::consumption_report refund_repository::consumption(const std::string& purchase_id) {
  std::string key = purchase_id;
  std::string report;
  auto st = prepare(c_.session(), std::string(q::consumption), [&](soci::statement& s) {
    s.exchange(soci::into(report));
    s.exchange(soci::use(key, "key"));
  });
  if (!st.execute(true))
    return {};
  return mp::read_consumption_report(report);
}

void refund_repository::set_consumption(const std::string& purchase_id,
                                        const mp::consumption_report& r, model::unix_ms now) {
  std::string key = purchase_id;
  std::string report = mp::to_json_text(r);
  long long at = now;
  auto st = prepare(c_.session(), std::string(q::set_consumption), [&](soci::statement& s) {
    s.exchange(soci::use(key, "key"));
    s.exchange(soci::use(report, "report"));
    s.exchange(soci::use(at, "at"));
  });
  st.execute(true);
}

} // namespace receiptd::db

#include "db/job_queue.hpp"

#include <functional>

#include "db/sql_jobs.hpp"
#include "db/work_written.hpp"
#include "model/identifiers.hpp"

namespace receiptd::db {

namespace q = sql::jobs;

namespace {

template <class Bind>
soci::statement make(soci::session& s, std::string_view sql, Bind&& bind) {
  return prepare(s, std::string(sql), std::forward<Bind>(bind));
}

soci::statement make_selecting(soci::session& s, std::string_view tmpl, job_row& row,
                               const std::function<void(soci::statement&)>& bind_keys) {
  auto names = column_names([&](auto f) { row.all_columns(f); });
  return prepare(s, render(tmpl, names), [&](soci::statement& st) {
    row.all_columns(bind_into{st});
    bind_keys(st);
  });
}

} // namespace

model::validation_job job_row::job() const {
  model::validation_job j;
  j.id = id;
  j.kind = parse_column(model::parse_record_kind(record_kind), "record_kind", record_kind);
  j.record_id = record_id;
  j.app_id = app_id;
  j.attempts = attempts;
  j.next_attempt_at = next_attempt_at;
  j.version = version;
  j.last_error = last_error;
  j.lease_owner = lease_owner.get();
  j.lease_until = lease_until.get<model::unix_ms>();
  return j;
}

job_queue::job_queue(connection& c)
  : insert_(make(c.session(), q::insert_if_missing,
                 [this](soci::statement& st) {
                   st.exchange(soci::use(new_id_, "id"));
                   st.exchange(soci::use(new_record_kind_, "record_kind"));
                   st.exchange(soci::use(new_record_id_, "record_id"));
                   st.exchange(soci::use(new_app_id_, "app_id"));
                   st.exchange(soci::use(new_next_attempt_at_, "next_attempt_at"));
                 })),
    remove_(make(c.session(), q::delete_for_record,
                 [this](soci::statement& st) {
                   st.exchange(soci::use(key_record_kind_, "key_record_kind"));
                   st.exchange(soci::use(key_record_id_, "key_record_id"));
                 })),
    claim_(make_selecting(
      c.session(), c.kind() == dialect::postgresql ? q::claim_postgresql : q::claim_sqlite, row_,
      [this](soci::statement& st) {
        st.exchange(soci::use(now_, "due_at"));
        st.exchange(soci::use(now_, "lease_free_at"));
        st.exchange(soci::use(batch_size_, "batch_size"));
        st.exchange(soci::use(lease_owner_, "lease_owner"));
        st.exchange(soci::use(lease_until_, "lease_until"));
      })),
    remove_fenced_(make(c.session(), q::delete_fenced,
                        [this](soci::statement& st) {
                          st.exchange(soci::use(key_id_, "key_id"));
                          st.exchange(soci::use(key_version_, "key_version"));
                        })),
    reschedule_(make(c.session(), q::reschedule_fenced,
                     [this](soci::statement& st) {
                       st.exchange(soci::use(attempts_, "attempts"));
                       st.exchange(soci::use(next_attempt_at_, "next_attempt_at"));
                       st.exchange(soci::use(last_error_, "last_error"));
                       st.exchange(soci::use(key_id_, "key_id"));
                       st.exchange(soci::use(key_version_, "key_version"));
                     })),
    list_(make_selecting(c.session(), q::list, row_, [](soci::statement&) {})) {}

void job_queue::ensure(model::record_kind kind, const std::string& record_id,
                       const std::string& app_id, model::unix_ms first_attempt_at) {
  new_id_ = model::make_uuid();
  new_record_kind_ = to_string(kind);
  new_record_id_ = record_id;
  new_app_id_ = app_id;
  new_next_attempt_at_ = first_attempt_at;
  execute_change(insert_);
  note_work(work_kind::jobs, first_attempt_at);
}

void job_queue::remove(model::record_kind kind, const std::string& record_id) {
  key_record_kind_ = to_string(kind);
  key_record_id_ = record_id;
  execute_change(remove_);
}

std::vector<model::validation_job> job_queue::claim(const std::string& owner, model::unix_ms now,
                                                    model::unix_ms lease_until, int limit) {
  std::vector<model::validation_job> out;
  lease_owner_ = owner;
  now_ = now;
  lease_until_ = lease_until;
  batch_size_ = limit;
  for_each_row(claim_, [&] { out.push_back(row_.job()); });
  return out;
}

bool job_queue::remove_fenced(const model::validation_job& job) {
  key_id_ = job.id;
  key_version_ = job.version;
  return execute_change(remove_fenced_) == 1;
}

bool job_queue::reschedule_fenced(const model::validation_job& job) {
  attempts_ = job.attempts;
  next_attempt_at_ = job.next_attempt_at;
  last_error_ = job.last_error;
  key_id_ = job.id;
  key_version_ = job.version;
  if (execute_change(reschedule_) != 1)
    return false;
  note_work(work_kind::jobs, job.next_attempt_at);
  return true;
}

std::vector<model::validation_job> job_queue::list() {
  std::vector<model::validation_job> out;
  for_each_row(list_, [&] { out.push_back(row_.job()); });
  return out;
}

} // namespace receiptd::db

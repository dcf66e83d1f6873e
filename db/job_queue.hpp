#pragma once
// validation_jobs through statements prepared once per session.

#include <string>
#include <vector>

#include "db/connection.hpp"
#include "db/statements.hpp"
#include "model/records.hpp"

namespace receiptd::db {

struct job_row {
  std::string id;
  std::string record_kind;
  std::string record_id;
  std::string app_id;
  int attempts = 0;
  long long next_attempt_at = 0;
  long long version = 0;
  std::string last_error;
  nullable<std::string> lease_owner;
  nullable<long long> lease_until;

  template <class F>
  void all_columns(F&& f) {
    f("id", id);
    f("record_kind", record_kind);
    f("record_id", record_id);
    f("app_id", app_id);
    f("attempts", attempts);
    f("next_attempt_at", next_attempt_at);
    f("version", version);
    f("last_error", last_error);
    f("lease_owner", lease_owner);
    f("lease_until", lease_until);
  }

  model::validation_job job() const; // throws corrupt_row
};

class job_queue {
public:
  explicit job_queue(connection& c);
  job_queue(const job_queue&) = delete;
  job_queue& operator=(const job_queue&) = delete;

  // Gives a pending record a job due at first_attempt_at unless it has one.
  void ensure(model::record_kind kind, const std::string& record_id, const std::string& app_id,
              model::unix_ms first_attempt_at);
  // Removes the record's job, if any.
  void remove(model::record_kind kind, const std::string& record_id);
  // Leases up to `limit` due jobs; call inside a write transaction.
  std::vector<model::validation_job> claim(const std::string& owner, model::unix_ms now,
                                           model::unix_ms lease_until, int limit);
  // Deletes the job if job.version is still current.
  bool remove_fenced(const model::validation_job& job);
  // Stores attempts, next_attempt_at and last_error and frees the lease if
  // job.version is still current.
  bool reschedule_fenced(const model::validation_job& job);
  std::vector<model::validation_job> list();

private:
  // Bound by reference into the statements below: declared first, never moved.
  job_row row_;
  std::string new_id_;
  std::string new_record_kind_;
  std::string new_record_id_;
  std::string new_app_id_;
  long long new_next_attempt_at_ = 0;
  std::string key_id_;
  std::string key_record_kind_;
  std::string key_record_id_;
  long long key_version_ = 0;
  std::string lease_owner_;
  long long lease_until_ = 0;
  long long now_ = 0;
  int batch_size_ = 0;
  int attempts_ = 0;
  long long next_attempt_at_ = 0;
  std::string last_error_;

  soci::statement insert_;
  soci::statement remove_;
  soci::statement claim_;
  soci::statement remove_fenced_;
  soci::statement reschedule_;
  soci::statement list_;
};

} // namespace receiptd::db

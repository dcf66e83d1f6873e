#pragma once
// What a session's save batches read of each app, kept between batches: its
// purchase terms (from its row) and its webhook endpoints. Every change to apps,
// access_tokens and webhook_endpoints bumps the auth revision (db/sql_apps.hpp),
// so what was read at one revision holds while the revision stays. A batch
// confirms the revision before it trusts what is kept: its one statement checks it
// on PostgreSQL (sql::records::insert_many_starting), or it reads it in its
// transaction (sql_database::save_batch). No I/O here: `read` does it.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/purchase_projection.hpp"
#include "model/webhooks.hpp"

namespace receiptd::db {

class app_settings {
public:
  // The revision what is kept was read at; nullopt when nothing is known.
  std::optional<std::int64_t> revision() const { return revision_; }
  // The revision as just read: what was kept of another is dropped.
  void at(std::int64_t revision);
  // The revision moved past what is kept, by an unknown amount: all dropped.
  void forget();

  // What is kept of the app; `read` fills what is missing.
  const purchase_terms& terms(const std::string& app_id,
                              const std::function<purchase_terms()>& read);
  const std::vector<model::webhook_endpoint>&
  endpoints(const std::string& app_id,
            const std::function<std::vector<model::webhook_endpoint>()>& read);

private:
  std::optional<std::int64_t> revision_;
  std::map<std::string, purchase_terms, std::less<>> terms_;
  std::map<std::string, std::vector<model::webhook_endpoint>, std::less<>> endpoints_;
};

} // namespace receiptd::db

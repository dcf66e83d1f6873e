#include "db/app_settings.hpp"

namespace receiptd::db {

void app_settings::at(std::int64_t revision) {
  if (revision_ != revision)
    forget();
  revision_ = revision;
}

void app_settings::forget() {
  revision_.reset();
  terms_.clear();
  endpoints_.clear();
}

const purchase_terms& app_settings::terms(const std::string& app_id,
                                          const std::function<purchase_terms()>& read) {
  auto it = terms_.find(app_id);
  if (it == terms_.end())
    it = terms_.emplace(app_id, read()).first;
  return it->second;
}

const std::vector<model::webhook_endpoint>&
app_settings::endpoints(const std::string& app_id,
                        const std::function<std::vector<model::webhook_endpoint>()>& read) {
  auto it = endpoints_.find(app_id);
  if (it == endpoints_.end())
    it = endpoints_.emplace(app_id, read()).first;
  return it->second;
}

} // namespace receiptd::db

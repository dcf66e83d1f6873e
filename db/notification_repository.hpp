#pragma once
// store_notifications, and the records a store notification is about,
// through statements prepared once per session.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/connection.hpp"
#include "db/record_rows.hpp"
#include "db/statements.hpp"
#include "model/store_a/notification.hpp"
#include "model/store_b/rtdn.hpp"

namespace receiptd::db {

struct store_notification_row {
  std::string id;
  std::string app_id;
  std::string store;
  std::string notification_id;
  std::string type;
  std::string subtype;
  std::string environment;
  nullable<long long> signed_date;
  long long received_at = 0;

  template <class F>
  void all_columns(F&& f) {
    f("id", id);
    f("app_id", app_id);
    f("store", store);
    f("notification_id", notification_id);
    f("type", type);
    f("subtype", subtype);
    f("environment", environment);
    f("signed_date", signed_date);
    f("received_at", received_at);
  }
};

class notification_repository {
public:
  explicit notification_repository(connection& c);
  notification_repository(const notification_repository&) = delete;
  notification_repository& operator=(const notification_repository&) = delete;

  // Records an App Store notification for the app; false when the app has one
  // with this notificationUUID already (a duplicate).
  bool insert_store_a(const std::string& app_id, const model::store_a::notification& n,
                      model::unix_ms received_at);
  // Records a Play RTDN for the app: type the notification's kind
  // (store_b::to_string), subtype its notificationType ('' when it has none),
  // signed_date its eventTimeMillis; false when the app has one with this
  // messageId already (a duplicate).
  bool insert_store_b(const std::string& app_id, const model::store_b::rtdn& n,
                      model::environment env, model::unix_ms received_at);
  // The app's StoreKit 2 records keyed by transaction_id, or of that
  // original_transaction_id (either may be empty: matches nothing), in id order,
  // locked for the transaction on PostgreSQL.
  std::vector<model::transaction_record> transactions(const std::string& app_id,
                                                      const std::string& transaction_id,
                                                      const std::string& original_transaction_id);
  // The ids of the app's receipts holding an in-app purchase of transaction_id,
  // in id order.
  std::vector<std::string> receipts(const std::string& app_id, const std::string& transaction_id);

private:
  // Bound by reference into the statements below: declared first, never moved.
  store_notification_row notification_;
  transaction_row transaction_;
  std::string found_id_;
  std::string key_app_id_;
  std::string key_transaction_id_;
  std::string key_original_transaction_id_;

  soci::statement insert_;
  soci::statement transactions_;
  soci::statement receipts_;
};

} // namespace receiptd::db

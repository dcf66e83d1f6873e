#include "db/admin.hpp"

#include <functional>

#include <soci/soci.h>

#include "db/backends.hpp"
#include "db/redact.hpp"
#include "db/sql_admin.hpp"
#include "db/url.hpp"

namespace receiptd::db {

namespace q = sql::admin;

namespace {

bool plain_identifier(const std::string& name) {
  if (name.empty() || name.size() > 63 || (name[0] >= '0' && name[0] <= '9'))
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

// Runs `work` on a session to the server, with the checks and error values shared
// by the operations below.
template <class T>
model::result<T> on_server(const std::string& server_url, const std::string& name,
                           const std::function<T(soci::session&)>& work) {
  if (dialect_of(server_url) != dialect::postgresql)
    return failure("not a postgresql:// URL");
  if (!plain_identifier(name))
    return failure("'" + name + "' is not a plain lower-case identifier");
  register_backends();
  try {
    soci::session s(with_connection_defaults(server_url));
    return work(s);
  } catch (const std::exception& e) {
    return failure("database " + name + ": " + safe_message(e));
  }
}

} // namespace

model::result<std::string> create_postgresql_database(const std::string& server_url,
                                                      const std::string& name) {
  return on_server<std::string>(server_url, name, [&](soci::session& s) {
    s << std::string(q::create_database) + name;
    return with_url_parameter(server_url, "dbname", name);
  });
}

model::result<bool> drop_postgresql_database(const std::string& server_url,
                                             const std::string& name) {
  return on_server<bool>(server_url, name, [&](soci::session& s) {
    s << std::string(q::drop_database_prefix) + name + std::string(q::drop_database_suffix);
    return true;
  });
}

model::result<int> terminate_postgresql_sessions(const std::string& server_url,
                                                 const std::string& name) {
  return on_server<int>(server_url, name, [&](soci::session& s) {
    long long ended = 0;
    std::string bound_name = name;
    s << std::string(q::terminate_sessions), soci::use(bound_name, "name"), soci::into(ended);
    return static_cast<int>(ended);
  });
}

} // namespace receiptd::db

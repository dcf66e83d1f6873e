#include "cmd/receiptctl_common.hpp"

#include <boost/json/serialize.hpp>

#include <iostream>

namespace receiptd::cmd {

int fail(const std::string& message, int code) {
  std::cerr << "receiptctl: " << message << "\n";
  return code;
}

void print(const ctl_options& a, const boost::json::value& v, const std::string& human) {
  if (a.json)
    std::cout << boost::json::serialize(v) << "\n";
  else
    std::cout << human;
}

std::optional<model::app> find_app(db::database& db, const std::string& key, std::string& problem) {
  auto found = db.find_app(key);
  if (!found) {
    problem = found.err().message();
    return std::nullopt;
  }
  if (!*found)
    problem = "no app with id or name " + key;
  return *found;
}

} // namespace receiptd::cmd

#include "db/redact.hpp"

#include <soci/soci.h>

#include "model/database_url.hpp"

namespace receiptd::db {

namespace {

constexpr std::string_view connect_failed = "Cannot establish connection to the database.";

bool sql_identifier(const std::string& s) {
  if (s.empty() || s.size() > 63 || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
      return false;
  return true;
}

} // namespace

std::string redacted_message(const std::string& message) {
  // PostgreSQL: "ERROR:  primary\nDETAIL:  …\nHINT: …"; keep the primary line.
  std::string primary = message.substr(0, message.find('\n'));
  // SOCI's "Cannot establish connection to the database.\n" + libpq's reason on
  // the next line ("connection to server at … failed: Connection refused"): the
  // reason is the primary message.
  if (primary == connect_failed && primary.size() < message.size()) {
    auto reason = message.substr(primary.size() + 1);
    primary.pop_back();
    primary += ": " + reason.substr(0, reason.find('\n'));
  }
  for (const char* marker : {"DETAIL:", "HINT:", "CONTEXT:", " while executing", " with :"})
    if (auto at = primary.find(marker); at != std::string::npos)
      primary.erase(at);
  std::string out;
  out.reserve(primary.size());
  for (std::size_t i = 0; i < primary.size(); ++i) {
    char q = primary[i];
    if (q != '"' && q != '\'') {
      out += q;
      continue;
    }
    auto close = primary.find(q, i + 1);
    if (close == std::string::npos) { // an unterminated quote: drop the rest
      out += q;
      out += "…";
      break;
    }
    auto quoted = primary.substr(i + 1, close - i - 1);
    out += q;
    out += sql_identifier(quoted) ? quoted : "…";
    out += q;
    i = close;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\r'))
    out.pop_back();
  return out;
}

std::string safe_message(const std::exception& e) {
  if (auto* soci_e = dynamic_cast<const soci::soci_error*>(&e))
    return redacted_message(soci_e->get_error_message());
  return redacted_message(e.what());
}

std::string redacted_url(const std::string& url) {
  return model::redacted_database_url(url);
}

} // namespace receiptd::db

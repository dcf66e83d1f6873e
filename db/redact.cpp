#include "db/redact.hpp"

#include <soci/soci.h>

#include "db/url.hpp"

namespace receiptd::db {

namespace {

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
  return url_parameter(url, "password") ? with_url_parameter(url, "password", "***") : url;
}

} // namespace receiptd::db

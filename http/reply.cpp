#include "http/reply.hpp"

#include <pistache/http_defs.h>

#include "http/admission.hpp"
#include "model/resource_json.hpp"

namespace receiptd::http {

void inbound_request::credential_verified() const {
  if (body_share)
    body_share->verified();
}

reply error_reply(const model::error& e) {
  const auto& kind = model::kind_of(e.code());
  return reply{kind.status, model::error_body(e.fields()),
               e.retry_after() ? e.retry_after() : kind.retry_after};
}

std::string response_text(const reply& r, const std::string& trace_id, connection_option connection,
                          bool head) {
  std::string text;
  text.reserve(256 + r.body.size());
  text += "HTTP/1.1 ";
  text += std::to_string(r.status);
  text += ' ';
  text += Pistache::Http::codeString(static_cast<Pistache::Http::Code>(r.status));
  text += "\r\nContent-Type: ";
  text += r.content_type;
  text += "\r\nContent-Length: ";
  text += std::to_string(r.body.size());
  text += "\r\n";
  if (connection == connection_option::close)
    text += "Connection: close\r\n";
  else if (connection == connection_option::keep_alive)
    text += "Connection: keep-alive\r\n";
  if (!trace_id.empty())
    text += "X-Request-Id: " + trace_id + "\r\n";
  if (r.retry_after_seconds)
    text += "Retry-After: " + std::to_string(*r.retry_after_seconds) + "\r\n";
  if (!r.location.empty())
    text += "Location: " + r.location + "\r\n";
  if (r.status == 405) {
    text += "Allow: ";
    text += r.allow;
    text += "\r\n";
  }
  if (r.status == 401)
    text += "WWW-Authenticate: Bearer realm=\"receiptd\"\r\n";
  text += "\r\n";
  if (!head)
    text += r.body;
  return text;
}

} // namespace receiptd::http

#include "http/reply.hpp"

#include "model/resource_json.hpp"

namespace receiptd::http {

reply error_reply(const model::error& e) {
  const auto& kind = model::kind_of(e.code());
  return reply{kind.status, model::error_body(e.fields()), kind.retry_after};
}

} // namespace receiptd::http

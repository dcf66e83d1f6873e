#include "model/app.hpp"

#include "model/encoding.hpp"

namespace receiptd::model {

bool rtdn_token_matches(const app& a, std::string_view token) {
  return !a.rtdn_token.empty() && constant_time_equal(token, a.rtdn_token);
}

} // namespace receiptd::model

#include "model/transfer_policy.hpp"

#include <charconv>

namespace receiptd::model {

bool transfer_policy::allows(int transfers_so_far) const {
  switch (mode) {
    case kind::transfer:
      return true;
    case kind::keep:
      return false;
    case kind::reject_after:
      return transfers_so_far < limit;
  }
  return false;
}

std::optional<transfer_policy> parse_transfer_policy(std::string_view text) {
  if (text == "transfer")
    return transfer_policy{transfer_policy::kind::transfer, 0};
  if (text == "keep")
    return transfer_policy{transfer_policy::kind::keep, 0};
  constexpr std::string_view prefix = "reject_after=";
  if (text.substr(0, prefix.size()) != prefix)
    return std::nullopt;
  auto digits = text.substr(prefix.size());
  int n = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || n < 0
      || n > 1'000'000)
    return std::nullopt;
  return transfer_policy{transfer_policy::kind::reject_after, n};
}

std::string to_string(const transfer_policy& p) {
  switch (p.mode) {
    case transfer_policy::kind::transfer:
      return "transfer";
    case transfer_policy::kind::keep:
      return "keep";
    case transfer_policy::kind::reject_after:
      return "reject_after=" + std::to_string(p.limit);
  }
  return "transfer";
}

} // namespace receiptd::model

// The device check of verify_receipt (DESIGN.md §2, §3).

#include "model/store_a/device_hash.hpp"

#include "model/encoding.hpp"
#include "model/identifiers.hpp"
#include "model/store_a/parsed.hpp"
#include "model/store_a/text.hpp"

namespace receiptd::model::store_a {

namespace {

// identifier_for_vendor as raw bytes: a UUID (16 bytes, iOS) or a MAC address
// (6 bytes, macOS: Apple hashes the primary interface's MAC there).
std::optional<std::string> device_id_bytes(std::string_view id) {
  if (auto uuid = parse_uuid(id))
    return std::string(uuid->begin(), uuid->end());
  if (auto mac = parse_mac_address(id))
    return std::string(mac->begin(), mac->end());
  return std::nullopt;
}

} // namespace

status device_matches(const decoded_receipt& r, std::string_view id) {
  auto mismatch
    = [](std::string why) { return refusal(fraud_reason::device_hash_mismatch, std::move(why)); };
  if (const auto* u = std::get_if<unified_receipt>(&r.detail)) {
    auto bytes = device_id_bytes(id);
    if (!bytes)
      return mismatch("identifier_for_vendor is neither a UUID nor a MAC address");
    if (u->sha1_hash.empty())
      return mismatch("receipt carries no device hash (attribute 5)");
    // Apple, "Receipt Validation Programming Guide", "Compute the GUID hash":
    // SHA-1 over the device identifier, the opaque value and the bundle id
    // attribute's value bytes, in that order.
    std::string input;
    input.reserve(bytes->size() + u->opaque.size() + u->bundle_id_raw.size());
    input.append(*bytes).append(u->opaque).append(u->bundle_id_raw);
    if (!constant_time_equal(sha1(input), u->sha1_hash))
      return mismatch("SHA-1(identifier_for_vendor, opaque, bundle id) differs from attribute 5");
    return done{};
  }
  const auto& t = std::get<transaction_receipt>(r.detail);
  auto it = t.purchase_info.find("unique-vendor-identifier");
  if (it == t.purchase_info.end())
    return mismatch("receipt carries no unique-vendor-identifier");
  if (!text::iequals(it->second, id))
    return mismatch("unique-vendor-identifier differs from identifier_for_vendor");
  return done{};
}

} // namespace receiptd::model::store_a

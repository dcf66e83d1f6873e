// parse_signed_transaction (jws.hpp): a verified JWSTransactionDecodedPayload
// (Apple, "JWSTransactionDecodedPayload", App Store Server API) as receiptd
// stores it. Lenient where Apple's payloads vary between years (absent fields,
// unknown ones, Xcode's fractional milliseconds), closed on what the resource
// relies on.

#include <cstdint>
#include <limits>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "model/store_a/jws.hpp"
#include "model/store_a/jws_internal.hpp"

namespace receiptd::model::store_a {

namespace {

// Identifiers and short texts Apple sends are tens of bytes; anything longer is
// not Apple's.
constexpr std::size_t max_text_bytes = 256;

class reader {
public:
  explicit reader(const boost::json::object& o) : o_(o) {}

  field_errors errors;

  // A required non-empty string of at most max_text_bytes.
  void required_text(const char* key, std::string& out) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr)
      return fail(key, "is missing");
    if (!v->is_string() || v->get_string().empty() || v->get_string().size() > max_text_bytes)
      return fail(key, "is not a non-empty string of at most 256 bytes");
    out = v->get_string();
  }

  // An optional string: absent, null or "" is nullopt; another type is an error.
  void text(const char* key, std::optional<std::string>& out) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr || v->is_null())
      return;
    if (!v->is_string() || v->get_string().size() > max_text_bytes)
      return fail(key, "is not a string of at most 256 bytes");
    if (!v->get_string().empty())
      out = std::string(v->get_string());
  }

  // An optional instant (json_unix_ms).
  void date(const char* key, std::optional<unix_ms>& out) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr || v->is_null())
      return;
    out = json_unix_ms(*v);
    if (!out)
      fail(key, "is not a date in unix milliseconds");
  }

  // An optional integer within [lo, hi].
  template <class T>
  void integer(const char* key, std::optional<T>& out, std::int64_t lo, std::int64_t hi) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr || v->is_null())
      return;
    std::optional<std::int64_t> n;
    if (v->is_int64())
      n = v->get_int64();
    else if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(hi))
      n = static_cast<std::int64_t>(v->get_uint64());
    if (!n || *n < lo || *n > hi)
      return fail(key, "is not an integer in range");
    out = static_cast<T>(*n);
  }

  const boost::json::value* find(const char* key) const { return o_.if_contains(key); }

  void fail(const char* key, const char* what) {
    errors.push_back({"signed_transaction", "malformed_receipt",
                      std::string("signed transaction ") + key + " " + what});
  }

private:
  const boost::json::object& o_;
};

} // namespace

result<signed_transaction> parse_signed_transaction(std::string_view payload) {
  boost::system::error_code ec;
  const auto doc = boost::json::parse(payload, ec);
  if (ec || !doc.is_object())
    return field_error{"signed_transaction", "malformed_receipt",
                       "signed transaction payload is not a JSON object"};
  reader r(doc.get_object());
  signed_transaction t;
  r.required_text("transactionId", t.transaction_id);
  r.required_text("originalTransactionId", t.original_transaction_id);
  r.required_text("bundleId", t.bundle_id);
  r.required_text("productId", t.product_id);

  // Apple's three values (JWSTransactionDecodedPayload.environment).
  std::string env;
  r.required_text("environment", env);
  if (env == "Production")
    t.env = environment::production;
  else if (env == "Sandbox")
    t.env = environment::sandbox;
  else if (env == "Xcode")
    t.env = environment::xcode;
  else if (!env.empty())
    r.fail("environment", "is not Production, Sandbox or Xcode");

  // "Auto-Renewable Subscription", "Non-Consumable", "Consumable",
  // "Non-Renewing Subscription": kept as Apple spells it.
  std::optional<std::string> type;
  r.text("type", type);
  t.type = type.value_or("");

  r.date("purchaseDate", t.purchase_date);
  r.date("originalPurchaseDate", t.original_purchase_date);
  r.date("expiresDate", t.expires_date);
  r.date("revocationDate", t.revocation_date);
  r.date("signedDate", t.signed_date);
  // 0: refunded for another reason, 1: for an issue in the app; later values kept.
  r.integer("revocationReason", t.revocation_reason, 0, std::numeric_limits<int>::max());
  std::optional<int> quantity;
  r.integer("quantity", quantity, 1, std::numeric_limits<int>::max());
  t.quantity = quantity.value_or(1);
  // Milliunits of the currency (1990 is 1.99): an integer.
  r.integer("price", t.price, std::numeric_limits<std::int64_t>::min(),
            std::numeric_limits<std::int64_t>::max());

  r.text("appAccountToken", t.app_account_token);
  r.text("storefront", t.storefront);
  r.text("currency", t.currency);
  r.text("inAppOwnershipType", t.in_app_ownership_type);
  r.text("transactionReason", t.transaction_reason);
  r.text("appTransactionId", t.app_transaction_id);
  // A string of digits in every payload seen; taken as a number too.
  if (const auto* v = r.find("webOrderLineItemId"); v != nullptr && v->is_uint64())
    t.web_order_line_item_id = std::to_string(v->get_uint64());
  else if (v != nullptr && v->is_int64() && v->get_int64() >= 0)
    t.web_order_line_item_id = std::to_string(v->get_int64());
  else
    r.text("webOrderLineItemId", t.web_order_line_item_id);

  if (!r.errors.empty())
    return r.errors;
  return t;
}

} // namespace receiptd::model::store_a

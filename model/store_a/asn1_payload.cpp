// The payload of a unified receipt: SET OF ReceiptAttribute, where
//   ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }
// and in-app purchase records (type 17) nest the same structure in their value.
// Attribute numbers and value types: Apple, "Receipt Validation Programming Guide",
// "Receipt Fields" (archived); 1707 and 1713 are undocumented but present in every
// App Store receipt since 2015 (RevenueCat and TPInAppReceipt decode them the same way).

#include <climits>
#include <string>

#include "model/store_a/der.hpp"
#include "model/store_a/parsed.hpp"
#include "model/store_a/text.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::store_a {

namespace {

namespace attr {
// Receipt attributes.
constexpr std::int64_t receipt_type = 0;
constexpr std::int64_t bundle_id = 2;
constexpr std::int64_t app_version = 3;
constexpr std::int64_t opaque = 4;
constexpr std::int64_t sha1_hash = 5;
constexpr std::int64_t age_rating = 10;
constexpr std::int64_t creation_date = 12;
constexpr std::int64_t in_app = 17;
constexpr std::int64_t original_app_version = 19;
constexpr std::int64_t expiration_date = 21;
// In-app purchase attributes.
constexpr std::int64_t quantity = 1701;
constexpr std::int64_t product_id = 1702;
constexpr std::int64_t transaction_id = 1703;
constexpr std::int64_t purchase_date = 1704;
constexpr std::int64_t original_transaction_id = 1705;
constexpr std::int64_t original_purchase_date = 1706;
constexpr std::int64_t product_type = 1707;
constexpr std::int64_t expires_date = 1708;
constexpr std::int64_t web_order_line_item_id = 1711;
constexpr std::int64_t cancellation_date = 1712;
constexpr std::int64_t is_trial_period = 1713;
constexpr std::int64_t is_in_intro_offer_period = 1719;
} // namespace attr

// Decodes attribute values; the first failure is kept in error_.
class attribute_decoder {
public:
  const std::string& error() const { return error_; }

  // Calls fn(type, value) for every attribute of a SET; false on bad framing or
  // when fn returns false.
  template <class Fn>
  bool for_each(std::string_view set_der, const char* what, Fn&& fn) {
    auto set = der::read(set_der, der::tag::set);
    if (!set || !set_der.empty())
      return fail(std::string(what) + ": not a single ASN.1 SET");
    auto items = set->value;
    while (!items.empty()) {
      auto seq = der::read(items, der::tag::sequence);
      if (!seq)
        return fail(std::string(what) + ": attribute is not a SEQUENCE");
      auto fields = seq->value;
      auto type = der::read(fields, der::tag::integer);
      auto version = der::read(fields, der::tag::integer);
      auto value = der::read(fields, der::tag::octet_string);
      if (!type || !version || !value || !fields.empty())
        return fail(std::string(what) + ": attribute is not {INTEGER, INTEGER, OCTET STRING}");
      auto type_number = der::to_int64(type->value);
      if (!type_number)
        return fail(std::string(what) + ": attribute type out of range");
      if (!fn(*type_number, value->value))
        return false;
    }
    return true;
  }

  // UTF8String (Apple's choice for text), IA5String (dates) or PrintableString.
  bool string(std::string_view value, std::string& out, const char* name) {
    auto in = value;
    auto t = der::read(in);
    if (!t || !in.empty()
        || (t->tag != der::tag::utf8_string && t->tag != der::tag::ia5_string
            && t->tag != der::tag::printable_string))
      return fail(std::string(name) + ": not an ASN.1 string");
    if (!text::is_valid_utf8(t->value))
      return fail(std::string(name) + ": not valid UTF-8");
    out.assign(t->value);
    return true;
  }

  // RFC 3339 in an IA5String; an empty string means absent.
  bool date(std::string_view value, std::optional<unix_ms>& out, const char* name) {
    std::string s;
    if (!string(value, s, name))
      return false;
    if (s.empty()) {
      out.reset();
      return true;
    }
    out = parse_rfc3339(s);
    return out ? true : fail(std::string(name) + ": not an RFC 3339 date");
  }

  bool integer(std::string_view value, std::int64_t& out, const char* name) {
    auto in = value;
    auto t = der::read(in, der::tag::integer);
    std::optional<std::int64_t> v;
    if (t && in.empty())
      v = der::to_int64(t->value);
    if (!v)
      return fail(std::string(name) + ": not an INTEGER");
    out = *v;
    return true;
  }

  bool small_int(std::string_view value, int& out, const char* name) {
    std::int64_t v;
    if (!integer(value, v, name))
      return false;
    if (v < 0 || v > INT_MAX)
      return fail(std::string(name) + ": out of range");
    out = static_cast<int>(v);
    return true;
  }

  bool flag(std::string_view value, std::optional<bool>& out, const char* name) {
    std::int64_t v;
    if (!integer(value, v, name))
      return false;
    if (v != 0 && v != 1)
      return fail(std::string(name) + ": not 0 or 1");
    out = v == 1;
    return true;
  }

  // A singular attribute seen twice is ambiguous: two readers could disagree
  // on which one counts.
  bool once(bool& seen, std::int64_t type) {
    if (seen)
      return fail("attribute " + std::to_string(type) + " appears twice");
    seen = true;
    return true;
  }

  bool fail(std::string message) {
    if (error_.empty())
      error_ = std::move(message);
    return false;
  }

private:
  std::string error_;
};

bool decode_in_app(attribute_decoder& d, std::string_view value, apple_in_app_purchase& p) {
  bool seen[32] = {}; // indexed by type - 1700
  return d.for_each(value, "in-app purchase", [&](std::int64_t type, std::string_view v) {
    if (type < 1700 || type >= 1732)
      return true; // other attributes are reserved by Apple: ignored
    if (!d.once(seen[type - 1700], type))
      return false;
    switch (type) {
      case attr::quantity:
        return d.small_int(v, p.quantity, "quantity (1701)");
      case attr::product_id:
        return d.string(v, p.product_id, "product id (1702)");
      case attr::transaction_id:
        return d.string(v, p.transaction_id, "transaction id (1703)");
      case attr::purchase_date:
        return d.date(v, p.purchase_date, "purchase date (1704)");
      case attr::original_transaction_id:
        return d.string(v, p.original_transaction_id, "original transaction id (1705)");
      case attr::original_purchase_date:
        return d.date(v, p.original_purchase_date, "original purchase date (1706)");
      case attr::product_type: {
        int t = 0;
        if (!d.small_int(v, t, "product type (1707)"))
          return false;
        p.product_type = t;
        return true;
      }
      case attr::expires_date:
        return d.date(v, p.expires_date, "expires date (1708)");
      case attr::web_order_line_item_id: {
        std::int64_t id = 0;
        if (!d.integer(v, id, "web order line item id (1711)"))
          return false;
        if (id < 0)
          return d.fail("web order line item id (1711): negative");
        // Non-subscription purchases carry INTEGER 0: no line item (AppReceiptValidator
        // and RevenueCat map it to nil as well).
        if (id != 0)
          p.web_order_line_item_id = std::to_string(id);
        return true;
      }
      case attr::cancellation_date:
        return d.date(v, p.cancellation_date, "cancellation date (1712)");
      case attr::is_trial_period:
        return d.flag(v, p.is_trial_period, "trial period (1713)");
      case attr::is_in_intro_offer_period:
        return d.flag(v, p.is_in_intro_offer_period, "intro offer period (1719)");
      default:
        return true;
    }
  });
}

} // namespace

result<unified_receipt> decode_payload(std::string_view payload, const payload_options& options) {
  unified_receipt r;
  r.payload_size = payload.size();
  attribute_decoder d;
  bool seen[22] = {}; // singular receipt attributes, indexed by type
  std::size_t in_app_count = 0;
  bool ok = d.for_each(payload, "receipt payload", [&](std::int64_t type, std::string_view v) {
    if (type == attr::in_app) {
      if (!options.in_app)
        return true; // skipped whole: its framing was checked by for_each
      // Counted before decoding: each purchase becomes a stored row and ~300
      // bytes of every answer, so their number is what a receipt may cost.
      if (++in_app_count > options.max_in_app_purchases)
        return d.fail("more than " + std::to_string(options.max_in_app_purchases)
                      + " in-app purchases (store-a.max-in-app-purchases)");
      apple_in_app_purchase p;
      if (!decode_in_app(d, v, p))
        return false;
      r.in_app.push_back(std::move(p));
      return true;
    }
    switch (type) {
      case attr::receipt_type:
      case attr::bundle_id:
      case attr::app_version:
      case attr::opaque:
      case attr::sha1_hash:
      case attr::age_rating:
      case attr::creation_date:
      case attr::original_app_version:
      case attr::expiration_date:
        if (!d.once(seen[type], type))
          return false;
        break;
      default:
        return true; // undocumented or reserved: ignored
    }
    switch (type) {
      case attr::receipt_type:
        return d.string(v, r.receipt_type, "receipt type (0)");
      case attr::bundle_id:
        r.bundle_id_raw.assign(v); // the device hash covers the encoded value as signed
        return d.string(v, r.bundle_id, "bundle id (2)");
      case attr::app_version:
        return d.string(v, r.app_version, "app version (3)");
      case attr::opaque:
        r.opaque.assign(v);
        return true;
      case attr::sha1_hash:
        r.sha1_hash.assign(v);
        return true;
      case attr::age_rating:
        return d.string(v, r.age_rating, "age rating (10)");
      case attr::creation_date:
        return d.date(v, r.creation_date, "creation date (12)");
      case attr::original_app_version:
        return d.string(v, r.original_app_version, "original app version (19)");
      case attr::expiration_date:
        return d.date(v, r.expiration_date, "expiration date (21)");
    }
    return true;
  });
  if (!ok)
    return malformed(d.error());
  return r;
}

} // namespace receiptd::model::store_a

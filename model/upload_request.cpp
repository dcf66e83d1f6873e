#include "model/upload_request.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include <boost/json/error.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/encoding.hpp"
#include "model/identifiers.hpp"
#include "model/json_fields.hpp"
#include "model/store_a/jws.hpp"

namespace receiptd::model {

namespace {

namespace json = boost::json;

// Walks one request object, collecting field errors as it reads.
class reader {
public:
  explicit reader(const json::object& obj) : obj_(obj) {}

  field_errors& errors() { return errors_; }

  void fail(std::string field, std::string code, std::string message) {
    errors_.push_back({std::move(field), std::move(code), std::move(message)});
  }

  // A required, non-empty string of at most `max_length` bytes, as a view into
  // the parsed body (empty when it is not acceptable).
  std::string_view required_view(const char* field, std::size_t max_length) {
    auto* v = obj_.if_contains(field);
    if (!v || v->is_null()) {
      fail(field, "missing", std::string(field) + " is required");
      return {};
    }
    if (!v->is_string()) {
      fail(field, "wrong_type", std::string(field) + " must be a string");
      return {};
    }
    if (v->get_string().empty()) {
      fail(field, "blank", std::string(field) + " must not be empty");
      return {};
    }
    if (too_long(v->get_string(), field, max_length) || has_nul(v->get_string(), field))
      return {};
    return v->get_string();
  }

  std::string required_string(const char* field, std::size_t max_length) {
    return std::string(required_view(field, max_length));
  }

  // An optional string: absent or null → nullopt.
  std::optional<std::string> optional_string(const char* field, std::size_t max_length) {
    auto* v = obj_.if_contains(field);
    if (!v || v->is_null())
      return std::nullopt;
    if (!v->is_string()) {
      fail(field, "wrong_type", std::string(field) + " must be a string");
      return std::nullopt;
    }
    if (too_long(v->get_string(), field, max_length) || has_nul(v->get_string(), field))
      return std::nullopt;
    return std::string(v->get_string());
  }

  bool too_long(std::string_view text, const std::string& field, std::size_t max_length,
                const std::string& what = {}) {
    if (text.size() <= max_length)
      return false;
    fail(field, "too_long",
         (what.empty() ? field : what) + " is longer than " + std::to_string(max_length)
           + " bytes");
    return true;
  }

  // No text field may carry NUL: it is never part of a genuine receipt or
  // purchase, and databases cannot store it in text.
  bool has_nul(std::string_view text, const char* field) {
    if (text.find('\0') == std::string_view::npos)
      return false;
    fail(field, "invalid_characters", std::string(field) + " must not contain NUL characters");
    return true;
  }

  upload_common common() {
    upload_common c;
    c.user_identifier = optional_string("user_identifier", max_user_identifier_length);
    if (auto* m = obj_.if_contains("metadata"); m && !m->is_null()) {
      if (!m->is_object())
        fail("metadata", "wrong_type", "metadata must be a JSON object");
      else if (depth_of(*m) > max_metadata_depth)
        fail("metadata", "too_deep",
             "metadata is nested deeper than " + std::to_string(max_metadata_depth) + " levels");
      else if (has_infinity(*m))
        fail("metadata", "number_out_of_range",
             "metadata holds a number beyond the range of a double");
      else if (auto text = json::serialize(*m); !too_long(text, "metadata", max_metadata_bytes))
        c.metadata = std::move(text);
    }
    if (auto* ip = obj_.if_contains("ip_address")) {
      if (ip->is_null()) {
        c.ip.k = ip_choice::kind::null;
      } else if (!ip->is_string()) {
        fail("ip_address", "wrong_type", "ip_address must be a string or null");
      } else if (!too_long(ip->get_string(), "ip_address", max_ip_address_length)) {
        if (auto canonical = canonical_ip(ip->get_string())) {
          c.ip.k = ip_choice::kind::address;
          c.ip.address = std::move(*canonical);
        } else {
          fail("ip_address", "invalid_ip_address", "ip_address is not an IPv4 or IPv6 address");
        }
      }
    }
    return c;
  }

  // Nesting depth: an object or array is one level more than its deepest member.
  // Bounded: the body parser stops at max_body_depth.
  // Boost.JSON reads 1e309 as infinity and would write it back as `Infinity`,
  // which is not JSON: the stored metadata would come back as null (found by
  // tests/fuzz upload_store_b). RFC 8259 §6 lets a parser limit the range.
  static bool has_infinity(const json::value& v) {
    if (auto* d = v.if_double())
      return !std::isfinite(*d);
    if (auto* o = v.if_object())
      return std::any_of(o->begin(), o->end(),
                         [](const auto& kv) { return has_infinity(kv.value()); });
    if (auto* a = v.if_array())
      return std::any_of(a->begin(), a->end(), [](const auto& x) { return has_infinity(x); });
    return false;
  }

  static std::size_t depth_of(const json::value& v) {
    std::size_t deepest = 0;
    if (auto* o = v.if_object())
      for (const auto& kv : *o)
        deepest = std::max(deepest, depth_of(kv.value()));
    else if (auto* a = v.if_array())
      for (const auto& x : *a)
        deepest = std::max(deepest, depth_of(x));
    else
      return 0;
    return deepest + 1;
  }

private:
  const json::object& obj_;
  field_errors errors_;
};

// Parses the body into an object, or says why it is not one.
result<json::value> parse_object(std::string_view body, json::storage_ptr storage) {
  boost::system::error_code ec;
  json::parse_options opts;
  opts.max_depth = max_body_depth;
  auto v = json::parse(body, ec, std::move(storage), opts);
  if (ec == json::error::too_deep)
    return field_error{"", "too_deep",
                       "the request body is nested deeper than " + std::to_string(max_body_depth)
                         + " levels"};
  if (ec)
    return field_error{"", "invalid_json", "the request body is not valid JSON"};
  if (!v.is_object())
    return field_error{"", "not_an_object", "the request body must be a JSON object"};
  return v;
}

// The body's document, parsed into a block of the stack (model/json_fields.hpp):
// what an upload reads from it is copied out before the parse's caller returns.
class parsed_body {
public:
  explicit parsed_body(std::string_view body) : doc_(parse_object(body, block_.storage())) {}
  parsed_body(const parsed_body&) = delete;
  parsed_body& operator=(const parsed_body&) = delete;
  result<json::value>& doc() { return doc_; }

private:
  stack_block<8192> block_;
  result<json::value> doc_;
};

bool is_alpha2(std::string_view s) {
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  return s.size() == 2 && letter(s[0]) && letter(s[1]);
}

} // namespace

echo_fields upload_common::echo(std::string_view peer_ip) const {
  echo_fields e;
  e.user_identifier = user_identifier;
  e.metadata = metadata;
  switch (ip.k) {
    case ip_choice::kind::omitted:
      if (auto canonical = canonical_ip(peer_ip))
        e.ip_address = std::move(*canonical);
      break;
    case ip_choice::kind::null:
      break;
    case ip_choice::kind::address:
      e.ip_address = ip.address;
      break;
  }
  return e;
}

result<store_a_upload> parse_store_a_upload(std::string_view body) {
  parsed_body parsed(body);
  auto& doc = parsed.doc();
  if (!doc)
    return doc.errors();
  reader r(doc->get_object());
  store_a_upload out;
  if (auto text = r.required_view("receipt", max_receipt_length); !text.empty()) {
    if (auto bytes = base64_decode(text); bytes && !bytes->empty()) {
      out.receipt_bytes = std::move(*bytes);
      out.receipt_data = base64_encode(out.receipt_bytes);
    } else {
      r.fail("receipt", "invalid_base64", "receipt is not valid base64");
    }
  }
  // Longer than two letters is not a country code: said by the format rule below.
  if (auto cc = r.optional_string("country_code", 64)) {
    if (is_alpha2(*cc)) {
      for (auto& c : *cc)
        c = static_cast<char>(c & ~0x20); // upper-case ASCII letter
      out.country_code = std::move(*cc);
    } else {
      r.fail("country_code", "invalid_country_code",
             "country_code must be an ISO 3166-1 alpha-2 code (two letters)");
    }
  }
  if (auto idfv = r.optional_string("identifier_for_vendor", max_identifier_for_vendor_length)) {
    if (is_uuid(*idfv) || parse_mac_address(*idfv))
      out.identifier_for_vendor = std::move(*idfv);
    else
      r.fail("identifier_for_vendor", "invalid_identifier_for_vendor",
             "identifier_for_vendor must be a UUID (8-4-4-4-12 hex digits), or the MAC "
             "address a macOS receipt is bound to");
  }
  out.common = r.common();
  if (!r.errors().empty())
    return std::move(r.errors());
  return out;
}

result<store_a_transaction_upload> parse_store_a_transaction_upload(std::string_view body) {
  parsed_body parsed(body);
  auto& doc = parsed.doc();
  if (!doc)
    return doc.errors();
  reader r(doc->get_object());
  store_a_transaction_upload out;
  if (auto text = r.required_view("signed_transaction", max_signed_transaction_length);
      !text.empty()) {
    if (store_a::split_jws(text))
      out.signed_transaction = std::string(text);
    else
      r.fail("signed_transaction", "invalid_jws",
             "signed_transaction must be a compact JWS: three base64url segments joined by '.' "
             "(Transaction.jwsRepresentation)");
  }
  out.common = r.common();
  if (!r.errors().empty())
    return std::move(r.errors());
  return out;
}

result<app_transaction_upload> parse_app_transaction_upload(std::string_view body) {
  parsed_body parsed(body);
  auto& doc = parsed.doc();
  if (!doc)
    return doc.errors();
  reader r(doc->get_object());
  app_transaction_upload out;
  if (auto text = r.required_view("signed_app_transaction", max_signed_transaction_length);
      !text.empty()) {
    if (store_a::split_jws(text))
      out.signed_app_transaction = std::string(text);
    else
      r.fail("signed_app_transaction", "invalid_jws",
             "signed_app_transaction must be a compact JWS: three base64url segments joined by "
             "'.' (AppTransaction.jwsRepresentation)");
  }
  for (auto [field, out_uuid] :
       {std::pair{"device_verification_nonce", &out.device_verification_nonce},
        std::pair{"device_verification_id", &out.device_verification_id}}) {
    auto text = r.optional_string(field, max_identifier_for_vendor_length);
    if (!text)
      continue;
    if (!is_uuid(*text)) {
      r.fail(field, "invalid_uuid", std::string(field) + " must be a UUID");
      continue;
    }
    std::transform(text->begin(), text->end(), text->begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    *out_uuid = std::move(*text);
  }
  out.common = r.common();
  if (!r.errors().empty())
    return std::move(r.errors());
  return out;
}

result<store_b_upload> parse_store_b_upload(std::string_view body) {
  parsed_body parsed(body);
  auto& doc = parsed.doc();
  if (!doc)
    return doc.errors();
  reader r(doc->get_object());
  store_b_upload out;
  out.purchase_data = r.required_string("purchase_data", max_purchase_data_length);
  if (!out.purchase_data.empty()) {
    auto data = store_b::parse_purchase_data(out.purchase_data);
    if (data) {
      out.data = std::move(*data);
      // What the purchase data says is stored and indexed like the legacy fields.
      const auto& d = out.data;
      r.too_long(d.package_name, "purchase_data", max_package_name_length,
                 "purchase_data's packageName");
      r.too_long(d.product_id, "purchase_data", max_product_id_length, "purchase_data's productId");
      r.too_long(d.purchase_token, "purchase_data", max_purchase_token_length,
                 "purchase_data's purchaseToken");
      if (d.order_id)
        r.too_long(*d.order_id, "purchase_data", max_order_id_length, "purchase_data's orderId");
    } else {
      for (auto& e : data.errors())
        r.errors().push_back(e);
    }
  }
  // An empty signature is not malformed input but a missing proof (Play's static
  // test responses come unsigned): it is judged as an invalid signature.
  auto* sig = doc->get_object().if_contains("purchase_signature");
  if (!sig || sig->is_null())
    r.fail("purchase_signature", "missing", "purchase_signature is required");
  else if (!sig->is_string())
    r.fail("purchase_signature", "wrong_type", "purchase_signature must be a string");
  else if (!r.too_long(sig->get_string(), "purchase_signature", max_purchase_signature_length)) {
    auto bytes = sig->get_string().find('\0') == std::string::npos
      ? base64_decode(sig->get_string())
      : std::nullopt;
    if (bytes) {
      out.signature_bytes = std::move(*bytes);
      out.purchase_signature = base64_encode(out.signature_bytes);
    } else {
      r.fail("purchase_signature", "invalid_base64", "purchase_signature is not valid base64");
    }
  }
  out.common = r.common();
  if (!r.errors().empty())
    return std::move(r.errors());
  return out;
}

result<store_b_legacy_upload> parse_store_b_legacy_upload(std::string_view body) {
  parsed_body parsed(body);
  auto& doc = parsed.doc();
  if (!doc)
    return doc.errors();
  reader r(doc->get_object());
  store_b_legacy_upload out;
  out.package_name = r.required_string("package_name", max_package_name_length);
  out.purchase_token = r.required_string("purchase_token", max_purchase_token_length);
  out.product_id = r.required_string("product_id", max_product_id_length);
  out.order_id = r.optional_string("order_id", max_order_id_length);
  out.common = r.common();
  if (!r.errors().empty())
    return std::move(r.errors());
  return out;
}

result<std::string> parse_store_a_notification_request(std::string_view body) {
  auto bad = [](field_errors errors) { return error(errc::bad_request, std::move(errors)); };
  parsed_body parsed(body);
  auto& doc = parsed.doc();
  if (!doc)
    return bad(doc.errors());
  const auto& o = doc->get_object();
  auto* payload = o.if_contains("signedPayload");
  if (!payload)
    return bad({{"signedPayload", "missing", "signedPayload is required"}});
  if (!payload->is_string())
    return bad({{"signedPayload", "not_a_string", "signedPayload must be a string"}});
  std::string_view jws = payload->get_string();
  if (jws.size() > max_notification_length)
    return bad(
      {{"signedPayload", "too_long",
        "signedPayload is longer than " + std::to_string(max_notification_length) + " bytes"}});
  if (!store_a::split_jws(jws))
    return bad({{"signedPayload", "invalid_jws",
                 "signedPayload is not a compact JWS (three base64url segments)"}});
  return std::string(jws);
}

} // namespace receiptd::model

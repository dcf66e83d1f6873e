// iOS 6 "transaction receipts" (SKPaymentTransaction.transactionReceipt, deprecated
// in iOS 7): base64 of an old-style plist whose "purchase-info" is itself base64
// of a plist, and whose "signature" is a binary blob. Layout of the blob, from
// Apple's sample VerificationController.m (2012) and DESIGN.md §3:
//   1 byte version (2: 128-byte RSA-1024 signature, 3: 256-byte RSA-2048 signature)
//   the signature
//   4-byte big-endian length of the certificate, then the DER leaf certificate.

#include <climits>

#include "model/encoding.hpp"
#include "model/store_a/der.hpp"
#include "model/store_a/parsed.hpp"
#include "model/store_a/plist.hpp"
#include "model/store_a/text.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::store_a {

namespace {

struct signature_blob {
  int version = 0;
  std::string_view signature;
  std::string_view leaf_der;
};

result<signature_blob> split_blob(std::string_view blob) {
  if (blob.empty())
    return malformed("empty signature");
  signature_blob out;
  out.version = static_cast<std::uint8_t>(blob[0]);
  std::size_t sig_len = 0;
  if (out.version == 2)
    sig_len = 128;
  else if (out.version == 3)
    sig_len = 256;
  else
    return malformed("unknown signature blob version " + std::to_string(out.version));
  if (blob.size() < 1 + sig_len + 4)
    return malformed("signature blob too short");
  out.signature = blob.substr(1, sig_len);
  std::size_t cert_len = 0;
  for (std::size_t i = 0; i < 4; ++i)
    cert_len = (cert_len << 8) | static_cast<std::uint8_t>(blob[1 + sig_len + i]);
  auto rest = blob.substr(1 + sig_len + 4);
  if (cert_len == 0 || cert_len != rest.size())
    return malformed("certificate length does not match the signature blob");
  out.leaf_der = rest;
  return out;
}

// purchase-info dates: "…-ms" fields are decimal milliseconds; the others are
// Apple's "2015-11-18 04:34:41 Etc/GMT"; expires-date is milliseconds in iOS 6
// receipts even though its name lacks the suffix. The first of `keys` present
// and non-empty sets `out`; none leaves it unchanged.
status read_date(const plist_dict& info, std::initializer_list<const char*> keys,
                 std::optional<unix_ms>& out) {
  for (const char* key : keys) {
    auto it = info.find(key);
    if (it == info.end() || it->second.empty())
      continue;
    if (auto ms = text::parse_decimal(it->second))
      out = *ms;
    else if (auto gmt = parse_apple_gmt(it->second))
      out = gmt;
    else if (auto rfc = parse_rfc3339(it->second))
      out = rfc;
    else
      return malformed(std::string("purchase-info ") + key + " is not a date");
    return done{};
  }
  return done{};
}

// Absent: `out` unchanged.
status read_flag(const plist_dict& info, const char* key, std::optional<bool>& out) {
  auto it = info.find(key);
  if (it == info.end())
    return done{};
  if (it->second == "true" || it->second == "1")
    out = true;
  else if (it->second == "false" || it->second == "0")
    out = false;
  else
    return malformed(std::string("purchase-info ") + key + " is not a boolean");
  return done{};
}

std::string value_of(const plist_dict& info, const char* key) {
  auto it = info.find(key);
  return it == info.end() ? std::string() : it->second;
}

result<apple_in_app_purchase> build_purchase(const plist_dict& info) {
  apple_in_app_purchase p;
  p.product_id = value_of(info, "product-id");
  p.transaction_id = value_of(info, "transaction-id");
  p.original_transaction_id = value_of(info, "original-transaction-id");
  if (auto it = info.find("quantity"); it != info.end()) {
    auto q = text::parse_decimal(it->second);
    if (!q || *q > INT_MAX)
      return malformed("purchase-info quantity is not a number");
    p.quantity = static_cast<int>(*q);
  }
  if (auto it = info.find("web-order-line-item-id"); it != info.end() && it->second != "0") {
    if (!text::parse_decimal(it->second))
      return malformed("purchase-info web-order-line-item-id is not a number");
    p.web_order_line_item_id = it->second;
  }
  // In this order: the first field that does not parse is the one reported.
  if (auto read = read_date(info, {"purchase-date-ms", "purchase-date"}, p.purchase_date); !read)
    return read.err();
  if (auto read = read_date(info, {"original-purchase-date-ms", "original-purchase-date"},
                            p.original_purchase_date);
      !read)
    return read.err();
  if (auto read = read_date(info, {"expires-date", "expires-date-ms", "expires-date-formatted"},
                            p.expires_date);
      !read)
    return read.err();
  if (auto read
      = read_date(info, {"cancellation-date-ms", "cancellation-date"}, p.cancellation_date);
      !read)
    return read.err();
  if (auto read = read_flag(info, "is-trial-period", p.is_trial_period); !read)
    return read.err();
  if (auto read = read_flag(info, "is-in-intro-offer-period", p.is_in_intro_offer_period); !read)
    return read.err();
  return p;
}

} // namespace

result<parsed_receipt> parse_transaction_envelope(std::string_view plist_text) {
  auto outer = parse_plist_dict(plist_text, "transaction receipt");
  if (!outer)
    return outer.errors();
  auto sig_it = outer->find("signature");
  auto info_it = outer->find("purchase-info");
  if (info_it == outer->end())
    return malformed("transaction receipt has no purchase-info");
  if (sig_it == outer->end())
    return malformed("transaction receipt has no signature");

  auto blob = base64_decode(sig_it->second);
  if (!blob)
    return malformed("transaction receipt signature is not base64");
  auto parts = split_blob(*blob);
  if (!parts)
    return malformed("transaction receipt signature: " + parts.err().message());
  // Framing only: one DER SEQUENCE filling the rest of the blob, of a
  // certificate's size. Decoding it is verification's job (through the
  // certificate cache).
  auto cert_bytes = parts->leaf_der;
  auto cert = der::read(cert_bytes, der::tag::sequence);
  if (!cert || !cert_bytes.empty())
    return malformed("transaction receipt certificate is not one DER SEQUENCE");
  if (parts->leaf_der.size() > max_certificate_bytes)
    return malformed("transaction receipt certificate is larger than any Apple certificate");

  auto info_bytes = base64_decode(info_it->second);
  if (!info_bytes)
    return malformed("purchase-info is not base64");

  parsed_receipt out;
  auto& d = out.receipt;
  d.style = receipt_style::transaction;
  // "environment" sits outside the signature: it only picks the verifyReceipt
  // URL to try first, and the store's answer wins (DESIGN.md §3).
  d.env
    = value_of(*outer, "environment") == "Sandbox" ? environment::sandbox : environment::production;
  transaction_receipt t;
  t.signature_version = parts->version;
  t.signature.assign(parts->signature);
  t.leaf_der.assign(parts->leaf_der);
  t.purchase_info_bytes = std::move(*info_bytes);
  d.signed_content_hash = sha256_hex(t.purchase_info_bytes);
  t.outer = std::move(outer).value();
  d.detail = std::move(t);
  return out;
}

std::optional<field_error> decode_purchase_info(parsed_receipt& envelope) {
  auto& d = envelope.receipt;
  auto& t = std::get<transaction_receipt>(d.detail);
  auto info = parse_plist_dict(t.purchase_info_bytes, "purchase-info");
  if (!info)
    return info.errors().front();
  auto purchase = build_purchase(*info);
  if (!purchase)
    return purchase.errors().front();
  d.bundle_id = value_of(*info, "bid");
  d.signed_at = purchase->purchase_date;
  d.in_app.assign(1, std::move(purchase).value());
  t.purchase_info = std::move(info).value();
  return std::nullopt;
}

result<parsed_receipt> parse_transaction(std::string_view plist_text) {
  auto out = parse_transaction_envelope(plist_text);
  if (!out)
    return out.errors();
  if (auto error = decode_purchase_info(*out))
    return *error;
  return out;
}

} // namespace receiptd::model::store_a

#include "tests/support/crypto/test_ca.hpp"

#include <cstring>
#include <ctime>
#include <stdexcept>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/dsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "model/encoding.hpp"

namespace receiptd::test_support {

namespace {

template <auto free_fn>
struct deleter {
  template <class T>
  void operator()(T* p) const noexcept {
    free_fn(p);
  }
};
using bio_ptr = std::unique_ptr<BIO, deleter<BIO_free_all>>;
using x509_ptr = std::unique_ptr<X509, deleter<X509_free>>;
using pkcs7_ptr = std::unique_ptr<PKCS7, deleter<PKCS7_free>>;
using ext_ptr = std::unique_ptr<X509_EXTENSION, deleter<X509_EXTENSION_free>>;
using obj_ptr = std::unique_ptr<ASN1_OBJECT, deleter<ASN1_OBJECT_free>>;
using octets_ptr = std::unique_ptr<ASN1_OCTET_STRING, deleter<ASN1_OCTET_STRING_free>>;
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, deleter<EVP_MD_CTX_free>>;

[[noreturn]] void fail(const char* what) {
  char buf[256] = "";
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  ERR_clear_error();
  throw std::runtime_error(std::string("test_ca: ") + what + ": " + buf);
}

void check(bool ok, const char* what) {
  if (!ok)
    fail(what);
}

const EVP_MD* md_of(digest d) {
  return d == digest::sha1 ? EVP_sha1() : EVP_sha256();
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

void add_ext(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, ctx, nid, value);
  check(ext != nullptr, "extension");
  ext_ptr owned{ext};
  check(X509_add_ext(cert, ext, -1) == 1, "add extension");
}

void add_marker(X509* cert, const std::string& oid) {
  obj_ptr obj{OBJ_txt2obj(oid.c_str(), 1)};
  check(obj != nullptr, "marker OID");
  octets_ptr value{ASN1_OCTET_STRING_new()};
  static const unsigned char der_null[] = {0x05, 0x00};
  check(value && ASN1_OCTET_STRING_set(value.get(), der_null, 2) == 1, "marker value");
  ext_ptr ext{X509_EXTENSION_create_by_OBJ(nullptr, obj.get(), 0, value.get())};
  check(ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1, "marker extension");
}

using pkey_ctx_ptr = std::unique_ptr<EVP_PKEY_CTX, deleter<EVP_PKEY_CTX_free>>;
using bn_ptr = std::unique_ptr<BIGNUM, deleter<BN_free>>;

EVP_PKEY* make_key(const cert_options& o) {
  EVP_PKEY* key = nullptr;
  if (o.key_algorithm == "EC") {
    key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  } else if (o.key_algorithm == "DSA") {
    pkey_ctx_ptr pctx{EVP_PKEY_CTX_new_from_name(nullptr, "DSA", nullptr)};
    EVP_PKEY* params = nullptr;
    check(pctx && EVP_PKEY_paramgen_init(pctx.get()) == 1
            && EVP_PKEY_CTX_set_dsa_paramgen_bits(pctx.get(), o.key_bits) == 1
            && EVP_PKEY_paramgen(pctx.get(), &params) == 1,
          "DSA parameters");
    std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY_free>> owned{params};
    pkey_ctx_ptr kctx{EVP_PKEY_CTX_new_from_pkey(nullptr, params, nullptr)};
    check(kctx && EVP_PKEY_keygen_init(kctx.get()) == 1 && EVP_PKEY_keygen(kctx.get(), &key) == 1,
          "DSA key");
  } else if (o.rsa_exponent == 65537 && o.rsa_exponent_shift == 0) {
    key = EVP_RSA_gen(static_cast<unsigned>(o.key_bits));
  } else {
    bn_ptr e{BN_new()};
    check(e != nullptr, "exponent");
    if (o.rsa_exponent_shift > 0)
      check(BN_set_bit(e.get(), o.rsa_exponent_shift) == 1 && BN_add_word(e.get(), 1) == 1,
            "exponent");
    else
      check(BN_set_word(e.get(), o.rsa_exponent) == 1, "exponent");
    pkey_ctx_ptr ctx{EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr)};
    check(ctx && EVP_PKEY_keygen_init(ctx.get()) == 1
            && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), o.key_bits) == 1
            && EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx.get(), e.get()) == 1
            && EVP_PKEY_keygen(ctx.get(), &key) == 1,
          "RSA key with exponent");
  }
  check(key != nullptr, "key");
  return key;
}

// ---- DER for the receipt payload ---------------------------------------------

std::string tlv(std::uint8_t tag, std::string_view content) {
  std::string out(1, static_cast<char>(tag));
  auto n = content.size();
  if (n < 0x80) {
    out += static_cast<char>(n);
  } else {
    std::string len;
    for (; n > 0; n >>= 8)
      len.insert(len.begin(), static_cast<char>(n & 0xFF));
    out += static_cast<char>(0x80 | len.size());
    out += len;
  }
  out.append(content);
  return out;
}

std::string integer(std::int64_t v) {
  std::string bytes;
  auto u = static_cast<std::uint64_t>(v);
  for (int i = 0; i < 8; ++i)
    bytes.insert(bytes.begin(), static_cast<char>((u >> (8 * i)) & 0xFF));
  // Minimal two's complement (X.690 §8.3.2).
  while (bytes.size() > 1
         && ((bytes[0] == 0 && !(bytes[1] & 0x80))
             || (static_cast<unsigned char>(bytes[0]) == 0xFF && (bytes[1] & 0x80))))
    bytes.erase(bytes.begin());
  return tlv(0x02, bytes);
}

std::string utf8(std::string_view s) {
  return tlv(0x0C, s);
}
std::string ia5(std::string_view s) {
  return tlv(0x16, s);
}

std::string rfc3339(unix_ms ms) {
  auto s = model::format_utc(ms); // "2023-02-22 14:30:15 UTC"
  return s.substr(0, 10) + "T" + s.substr(11, 8) + "Z";
}

std::string attribute(std::int64_t type, std::string_view value) {
  return tlv(0x30, integer(type) + integer(1) + tlv(0x04, value));
}

std::string in_app_set(const model::apple_in_app_purchase& p, bool write_absent) {
  std::string a;
  auto date = [&](std::int64_t type, const std::optional<unix_ms>& d) {
    if (d)
      a += attribute(type, ia5(rfc3339(*d)));
    else if (write_absent)
      a += attribute(type, ia5(""));
  };
  auto flag = [&](std::int64_t type, const std::optional<bool>& b) {
    if (b || write_absent)
      a += attribute(type, integer(b.value_or(false) ? 1 : 0));
  };
  a += attribute(1701, integer(p.quantity));
  a += attribute(1702, utf8(p.product_id));
  a += attribute(1703, utf8(p.transaction_id));
  date(1704, p.purchase_date);
  a += attribute(1705, utf8(p.original_transaction_id));
  date(1706, p.original_purchase_date);
  if (p.product_type)
    a += attribute(1707, integer(*p.product_type));
  date(1708, p.expires_date);
  if (p.web_order_line_item_id)
    a += attribute(1711, integer(std::stoll(*p.web_order_line_item_id)));
  else if (write_absent)
    a += attribute(1711, integer(0));
  date(1712, p.cancellation_date);
  flag(1713, p.is_trial_period);
  flag(1719, p.is_in_intro_offer_period);
  return tlv(0x31, a);
}

// ---- plist text -----------------------------------------------------------------

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string plist(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out = "{\n";
  for (const auto& [k, v] : entries)
    out += "\t" + quoted(k) + " = " + quoted(v) + ";\n";
  return out + "}";
}

} // namespace

unix_ms utc(int year, int month, int day, int hour, int minute, int second) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<unix_ms>(timegm(&tm)) * 1000;
}

std::string test_cert::pem() const {
  bio_ptr bio{BIO_new(BIO_s_mem())};
  check(bio && PEM_write_bio_X509(bio.get(), cert_.get()) == 1, "PEM certificate");
  return bio_text(bio.get());
}

std::string test_cert::der() const {
  unsigned char* out = nullptr;
  int n = i2d_X509(cert_.get(), &out);
  check(n > 0, "DER certificate");
  std::string s(reinterpret_cast<char*>(out), static_cast<std::size_t>(n));
  OPENSSL_free(out);
  return s;
}

std::string test_cert::key_pem() const {
  bio_ptr bio{BIO_new(BIO_s_mem())};
  check(bio
          && PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr)
            == 1,
        "PEM key");
  return bio_text(bio.get());
}

test_cert load_cert(std::string_view cert_pem, std::string_view key_pem) {
  test_cert out;
  bio_ptr cert_bio{BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()))};
  X509* cert = cert_bio ? PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr) : nullptr;
  check(cert != nullptr, "PEM certificate to load");
  out.cert_.reset(cert, X509_free);
  if (!key_pem.empty()) {
    bio_ptr key_bio{BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()))};
    EVP_PKEY* key
      = key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr) : nullptr;
    check(key != nullptr, "PEM private key to load");
    out.key_.reset(key, EVP_PKEY_free);
  }
  return out;
}

test_cert make_cert(const cert_options& o, const test_cert* issuer) {
  test_cert out;
  EVP_PKEY* key = make_key(o);
  out.key_.reset(key, EVP_PKEY_free);
  X509* cert = X509_new();
  check(cert != nullptr, "X509_new");
  out.cert_.reset(cert, X509_free);

  check(X509_set_version(cert, X509_VERSION_3) == 1, "version");
  std::uint64_t serial = 0;
  check(RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof serial) == 1, "serial");
  check(
    ASN1_INTEGER_set_int64(X509_get_serialNumber(cert), static_cast<std::int64_t>(serial >> 1) | 1)
      == 1,
    "serial");
  X509_NAME* name = X509_get_subject_name(cert);
  auto add_entry = [&](const char* field, const std::string& value) {
    check(X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                     reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                     0)
            == 1,
          "subject");
  };
  add_entry("O", o.organization);
  if (!o.organizational_unit.empty())
    add_entry("OU", o.organizational_unit);
  add_entry("CN", o.common_name);
  X509* issuer_cert = issuer ? issuer->x509() : cert;
  EVP_PKEY* issuer_key = issuer ? issuer->key() : key;
  check(X509_set_issuer_name(cert, X509_get_subject_name(issuer_cert)) == 1, "issuer");
  check(ASN1_TIME_set(X509_getm_notBefore(cert), static_cast<time_t>(o.not_before / 1000))
            != nullptr
          && ASN1_TIME_set(X509_getm_notAfter(cert), static_cast<time_t>(o.not_after / 1000))
            != nullptr,
        "validity");
  check(X509_set_pubkey(cert, key) == 1, "public key");

  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer_cert, cert, nullptr, nullptr, 0);
  add_ext(cert, &ctx, NID_basic_constraints, o.is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
  add_ext(cert, &ctx, NID_key_usage,
          o.is_ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
  add_ext(cert, &ctx, NID_subject_key_identifier, "hash");
  if (issuer)
    add_ext(cert, &ctx, NID_authority_key_identifier, "keyid:always");
  if (!o.extended_key_usage.empty())
    add_ext(cert, &ctx, NID_ext_key_usage, o.extended_key_usage.c_str());
  for (const auto& oid : o.marker_oids)
    add_marker(cert, oid);

  check(X509_sign(cert, issuer_key, md_of(o.signature_digest)) > 0, "certificate signature");
  return out;
}

test_pki make_test_pki(const pki_options& o) {
  test_pki pki;
  cert_options root;
  root.common_name = o.name + " Root CA";
  root.key_algorithm = o.key_algorithm;
  root.is_ca = true;
  root.signature_digest = o.signature_digest;
  root.not_before = o.not_before;
  root.not_after = o.not_after;
  pki.root = make_cert(root);

  cert_options mid = root;
  mid.common_name = apple_wwdr_name;
  mid.organization = apple_organization;
  mid.organizational_unit = o.name;
  if (o.intermediate_marker)
    mid.marker_oids = {apple_wwdr_intermediate_oid};
  pki.intermediate = make_cert(mid, &pki.root);

  cert_options leaf;
  leaf.common_name = apple_receipt_signing_name;
  leaf.organization = apple_organization;
  leaf.organizational_unit = o.name;
  leaf.key_algorithm = o.key_algorithm;
  leaf.key_bits = o.leaf_key_bits;
  leaf.signature_digest = o.signature_digest;
  leaf.not_before = o.not_before;
  leaf.not_after = o.leaf_not_after;
  if (o.leaf_marker)
    leaf.marker_oids = {apple_receipt_signing_oid};
  pki.leaf = make_cert(leaf, &pki.intermediate);

  if (o.with_itunes) {
    cert_options itunes = root;
    itunes.common_name = apple_itunes_ca_name;
    itunes.organization = apple_organization;
    itunes.organizational_unit = o.name;
    itunes.marker_oids = {apple_itunes_intermediate_oid};
    pki.itunes_intermediate = make_cert(itunes, &pki.root);

    // As every real v2 leaf: RSA-1024, OU "Apple iTunes Store", OID …6.5.1.
    cert_options v2 = leaf;
    v2.common_name = apple_purchase_receipt_name;
    v2.organizational_unit = "Apple iTunes Store";
    v2.key_algorithm = "RSA";
    v2.key_bits = 1024;
    v2.marker_oids = {apple_purchase_receipt_oid};
    pki.transaction_leaf_v2 = make_cert(v2, &pki.itunes_intermediate);
  }
  return pki;
}

receipt_signer apple_like_signer(const test_pki& pki, digest content_digest) {
  receipt_signer s;
  s.cert = pki.leaf;
  s.chain = {pki.intermediate};
  s.content_digest = content_digest;
  return s;
}

model::apple_in_app_purchase purchase(std::string product_id, std::string transaction_id,
                                      unix_ms purchase_date) {
  model::apple_in_app_purchase p;
  p.product_id = std::move(product_id);
  p.original_transaction_id = transaction_id;
  p.transaction_id = std::move(transaction_id);
  p.purchase_date = purchase_date;
  p.original_purchase_date = purchase_date;
  p.quantity = 1;
  return p;
}

std::string make_unified_payload(const unified_receipt_params& p) {
  std::string attrs;
  const std::string bundle_value = utf8(p.bundle_id);
  if (p.receipt_type)
    attrs += attribute(0, utf8(*p.receipt_type));
  attrs += attribute(2, bundle_value);
  if (p.app_version)
    attrs += attribute(3, utf8(*p.app_version));
  if (p.opaque)
    attrs += attribute(4, *p.opaque);
  if (p.sha1_hash)
    attrs += attribute(5, *p.sha1_hash);
  else if (p.device_id)
    attrs += attribute(5, model::sha1(*p.device_id + p.opaque.value_or("") + bundle_value));
  if (p.creation_date)
    attrs += attribute(12, ia5(rfc3339(*p.creation_date)));
  for (const auto& purchase : p.in_app)
    attrs += attribute(17, in_app_set(purchase, p.write_absent_in_app_fields));
  if (p.original_app_version)
    attrs += attribute(19, utf8(*p.original_app_version));
  if (p.expiration_date)
    attrs += attribute(21, ia5(rfc3339(*p.expiration_date)));
  for (const auto& [type, value] : p.extra_attributes)
    attrs += attribute(type, value);
  return tlv(0x31, attrs);
}

std::string sign_pkcs7(std::string_view content, const receipt_signer& s) {
  int flags = PKCS7_BINARY | PKCS7_PARTIAL | PKCS7_NOSMIMECAP;
  if (!s.signed_attributes)
    flags |= PKCS7_NOATTR;
  bio_ptr in{BIO_new_mem_buf(content.data(), static_cast<int>(content.size()))};
  pkcs7_ptr p7{PKCS7_sign(nullptr, nullptr, nullptr, nullptr, flags)};
  check(in && p7, "PKCS7_sign");
  check(PKCS7_sign_add_signer(p7.get(), s.cert.x509(), s.cert.key(), md_of(s.content_digest), flags)
          != nullptr,
        "PKCS7 signer");
  for (const auto& c : s.chain)
    check(PKCS7_add_certificate(p7.get(), c.x509()) == 1, "PKCS7 certificate");
  check(PKCS7_final(p7.get(), in.get(), flags) == 1, "PKCS7_final");
  unsigned char* out = nullptr;
  int n = i2d_PKCS7(p7.get(), &out);
  check(n > 0, "i2d_PKCS7");
  std::string der(reinterpret_cast<char*>(out), static_cast<std::size_t>(n));
  OPENSSL_free(out);
  return der;
}

std::string make_unified_receipt(const unified_receipt_params& params,
                                 const receipt_signer& signer) {
  return sign_pkcs7(make_unified_payload(params), signer);
}

std::string make_transaction_receipt(const transaction_receipt_params& p, const test_cert& leaf) {
  std::vector<std::pair<std::string, std::string>> info = {
    {"bid", p.bundle_id},
    {"product-id", p.product_id},
    {"transaction-id", p.transaction_id},
    {"original-transaction-id", p.original_transaction_id},
    {"purchase-date-ms", std::to_string(p.purchase_date)},
    {"purchase-date", model::format_utc(p.purchase_date).substr(0, 19) + " Etc/GMT"},
    {"original-purchase-date-ms",
     std::to_string(p.original_purchase_date.value_or(p.purchase_date))},
    {"quantity", std::to_string(p.quantity)},
  };
  if (p.expires_date)
    info.emplace_back("expires-date", std::to_string(*p.expires_date));
  if (p.web_order_line_item_id)
    info.emplace_back("web-order-line-item-id", *p.web_order_line_item_id);
  if (p.unique_vendor_identifier)
    info.emplace_back("unique-vendor-identifier", *p.unique_vendor_identifier);
  if (p.is_trial_period)
    info.emplace_back("is-trial-period", *p.is_trial_period ? "true" : "false");
  for (const auto& e : p.extra_purchase_info)
    info.push_back(e);
  const std::string purchase_info = plist(info);

  // Signed bytes: version byte ‖ purchase-info; SHA1withRSA (DESIGN.md §3).
  const auto version = static_cast<unsigned char>(p.blob_version);
  md_ctx_ptr ctx{EVP_MD_CTX_new()};
  std::size_t sig_len = 0;
  check(ctx && EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha1(), nullptr, leaf.key()) == 1
          && EVP_DigestSignUpdate(ctx.get(), &version, 1) == 1
          && EVP_DigestSignUpdate(ctx.get(), purchase_info.data(), purchase_info.size()) == 1
          && EVP_DigestSignFinal(ctx.get(), nullptr, &sig_len) == 1,
        "transaction signature");
  std::string sig(sig_len, '\0');
  check(EVP_DigestSignFinal(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &sig_len) == 1,
        "transaction signature");
  sig.resize(sig_len);
  const std::size_t expected = p.blob_version == 2 ? 128 : 256;
  if (sig.size() != expected)
    throw std::runtime_error("test_ca: blob version " + std::to_string(p.blob_version)
                             + " needs an RSA-" + std::to_string(expected * 8) + " leaf");
  const std::string cert = leaf.der();
  std::string blob(1, static_cast<char>(version));
  blob += sig;
  for (int shift = 24; shift >= 0; shift -= 8)
    blob += static_cast<char>((cert.size() >> shift) & 0xFF);
  blob += cert;

  std::vector<std::pair<std::string, std::string>> outer = {
    {"signature", model::base64_encode(blob)},
    {"purchase-info", model::base64_encode(purchase_info)},
  };
  if (p.environment)
    outer.emplace_back("environment", *p.environment);
  outer.emplace_back("pod", "100");
  outer.emplace_back("signing-status", "0");
  return plist(outer);
}

// ---- hostile structures ---------------------------------------------------------

std::string der_tlv(std::uint8_t tag, std::string_view content) {
  return tlv(tag, content);
}

std::string make_in_app_flood_payload(std::size_t count, const std::string& bundle_id) {
  std::string attrs = attribute(2, utf8(bundle_id));
  attrs += attribute(12, ia5(rfc3339(utc(2024, 6, 1, 12))));
  const std::string tiny = attribute(17, tlv(0x31, "")); // 30 0A 02 01 11 02 01 01 04 02 31 00
  attrs.reserve(attrs.size() + count * tiny.size());
  for (std::size_t i = 0; i < count; ++i)
    attrs += tiny;
  return tlv(0x31, attrs);
}

std::string sha256_algorithm() {
  // SEQUENCE { OID 2.16.840.1.101.3.4.2.1, NULL }
  return tlv(0x30, std::string("\x06\x09\x60\x86\x48\x01\x65\x03\x04\x02\x01\x05\x00", 13));
}

std::string make_signed_data(const signed_data_parts& p) {
  static const std::string oid_data("\x06\x09\x2A\x86\x48\x86\xF7\x0D\x01\x07\x01", 11);
  static const std::string oid_signed("\x06\x09\x2A\x86\x48\x86\xF7\x0D\x01\x07\x02", 11);
  auto concat = [](const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& x : parts)
      out += x;
    return out;
  };
  std::string body = tlv(0x02, "\x01");
  body += tlv(0x31, concat(p.digest_algorithms));
  body += p.content_info.empty() ? tlv(0x30, oid_data + tlv(0xA0, tlv(0x04, p.content)))
                                 : p.content_info;
  if (!p.certificates.empty())
    body += tlv(0xA0, concat(p.certificates));
  if (!p.crls.empty())
    body += tlv(0xA1, concat(p.crls));
  body += tlv(0x31, concat(p.signer_infos));
  return tlv(0x30, oid_signed + tlv(0xA0, tlv(0x30, body)));
}

} // namespace receiptd::test_support

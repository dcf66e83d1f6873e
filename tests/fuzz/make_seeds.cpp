// Writes the seed corpora of tests/fuzz/corpus/<target>/: the public vectors of
// tests/data in each target's input layout, plus receipts generated with the test
// PKI (tests/support/crypto) for shapes no public vector has (SHA-1 and signed
// attributes, many in-app entries, absent fields, v3 transaction blobs, …).
// Run by hand when a target's layout changes; the output is checked in:
//   cmake --build build --target fuzz_make_seeds && build/tests/fuzz/fuzz_make_seeds
//   tests/fuzz/corpus
// Generated files are named gen-*, files from tests/data real-*; both are
// rewritten, other files in corpus/ (hand-written seeds) are left alone.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <openssl/evp.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

#include <boost/json.hpp>

#include "model/encoding.hpp"
#include "model/store_a/receipt.hpp"
#include "tests/support/crypto/test_ca.hpp"
#include "tests/support/crypto/test_jws.hpp"
#include "tests/support/crypto/test_oidc.hpp"

namespace fs = std::filesystem;
namespace ts = receiptd::test_support;
namespace sa = receiptd::model::store_a;
using receiptd::model::base64_decode;
using receiptd::model::base64_encode;
using receiptd::model::base64url_decode;

namespace {

const std::string sep = "|@|";
fs::path out_dir;

std::string read(const std::string& rel) {
  std::ifstream in(std::string(RECEIPTD_SOURCE_DIR) + "/" + rel, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + rel);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string b64file(const std::string& rel) {
  auto bytes = base64_decode(read(rel));
  if (!bytes)
    throw std::runtime_error(rel + " is not base64");
  return *bytes;
}

void write(const std::string& target, const std::string& name, const std::string& bytes) {
  fs::create_directories(out_dir / target);
  std::ofstream(out_dir / target / name, std::ios::binary) << bytes;
}

// The content octets of a PKCS#7 SignedData (the unified receipt's payload).
std::string payload_of(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  PKCS7* p7 = d2i_PKCS7(nullptr, &p, static_cast<long>(der.size()));
  if (p7 == nullptr)
    throw std::runtime_error("not PKCS#7");
  const ASN1_OCTET_STRING* s = p7->d.sign->contents->d.data;
  std::string out(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                  static_cast<std::size_t>(ASN1_STRING_length(s)));
  PKCS7_free(p7);
  return out;
}

// store_a_transaction's structured layout: purchase-info text, blob, other entries.
std::string transaction_parts(const std::string& outer_text) {
  auto d = sa::decode_receipt(outer_text);
  if (!d)
    throw std::runtime_error("transaction receipt does not decode");
  const auto& t = std::get<sa::transaction_receipt>(d->detail);
  std::string blob(1, static_cast<char>(t.signature_version));
  blob += t.signature;
  const auto n = t.leaf_der.size();
  for (int shift = 24; shift >= 0; shift -= 8)
    blob += static_cast<char>((n >> shift) & 0xff);
  blob += t.leaf_der;
  std::string extra;
  for (const auto& [k, v] : t.outer)
    if (k != "signature" && k != "purchase-info")
      extra += "\t\"" + k + "\" = \"" + v + "\";\n";
  return std::string("\x01", 1) + t.purchase_info_bytes + sep + blob + sep + extra;
}

std::string play_sign(EVP_PKEY* key, const std::string& data) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::size_t len = 0;
  std::string sig;
  if (EVP_DigestSignInit(ctx, nullptr, EVP_sha1(), nullptr, key) != 1
      || EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(data.data()),
                        data.size())
        != 1)
    throw std::runtime_error("sign");
  sig.resize(len);
  if (EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size())
      != 1)
    throw std::runtime_error("sign");
  sig.resize(len);
  EVP_MD_CTX_free(ctx);
  return base64_encode(sig);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

const char* const unified_vectors[] = {
  "appreceiptvalidator-mindnode-production-macos",
  "appreceiptvalidator-purchasingexperiments-sandbox-ios",
  "kvitto-production-macos-xcode7",
  "mbaasy-grandunified-sandbox-2015",
  "revenuecat-sample1-sandbox-ios",
  "tpinappreceipt-production-ios",
  "tpinappreceipt-sandbox-g5-ios",
  "xcode-storekit-empty",
  "xcode-storekit-with-transaction",
};
const char* const transaction_vectors[] = {
  "es-purchaser-consumable-sandbox-2015",
  "mbaasy-yearly-subscription-sandbox-2015",
  "mindmob-download-sandbox-2012",
  "apple-library-legacy-minimal-unsigned",
};

void store_a_seeds() {
  // Public vectors.
  for (const char* v : unified_vectors) {
    auto der = b64file(std::string("tests/data/apple-unified/") + v + "/receipt.b64");
    write("store_a_unified", std::string("real-") + v, der);
    write("store_a_payload", std::string("real-") + v, payload_of(der));
  }
  for (const char* v : transaction_vectors) {
    auto text = b64file(std::string("tests/data/apple-transaction/") + v + "/receipt.b64");
    write("store_a_transaction", std::string("real-raw-") + v, std::string(1, '\0') + text);
    if (std::string(v) != "apple-library-legacy-minimal-unsigned")
      write("store_a_transaction", std::string("real-parts-") + v, transaction_parts(text));
  }

  // Generated unified receipts.
  auto pki = ts::make_test_pki();
  auto signer = ts::apple_like_signer(pki);
  using ts::utc;
  ts::unified_receipt_params base;
  base.device_id = std::string(16, '\x42');
  base.in_app.push_back(ts::purchase("com.example.pro", "1000001", utc(2024, 5, 1)));
  auto sub = ts::purchase("com.example.monthly", "1000002", utc(2024, 5, 2));
  sub.expires_date = utc(2024, 6, 2);
  sub.web_order_line_item_id = "230000000000001";
  sub.is_trial_period = true;
  sub.is_in_intro_offer_period = false;
  sub.cancellation_date = utc(2024, 5, 20);
  sub.product_type = 3;
  base.in_app.push_back(sub);

  struct variant {
    const char* name;
    ts::unified_receipt_params params;
    ts::receipt_signer signer;
  };
  std::vector<variant> variants;
  variants.push_back({"gen-sha256", base, signer});
  auto sha1_signer = ts::apple_like_signer(pki, ts::digest::sha1);
  variants.push_back({"gen-sha1", base, sha1_signer});
  auto attrs_signer = signer;
  attrs_signer.signed_attributes = true;
  variants.push_back({"gen-signed-attributes", base, attrs_signer});
  auto leaf_only = signer;
  leaf_only.chain.clear();
  variants.push_back({"gen-leaf-only", base, leaf_only});
  auto sparse = base;
  sparse.receipt_type.reset();
  sparse.app_version.reset();
  sparse.original_app_version.reset();
  sparse.opaque.reset();
  sparse.device_id.reset();
  sparse.creation_date.reset();
  sparse.write_absent_in_app_fields = false;
  variants.push_back({"gen-sparse", sparse, signer});
  auto many = base;
  many.expiration_date = utc(2025, 1, 1);
  many.receipt_type = "Production";
  for (int i = 0; i < 12; ++i)
    many.in_app.push_back(ts::purchase("com.example.item" + std::to_string(i),
                                       std::to_string(2000000 + i), utc(2024, 5, 3)));
  variants.push_back({"gen-many-in-app", many, signer});
  auto odd = base;
  odd.receipt_type = "Xcode";
  odd.sha1_hash = std::string(20, '\0');
  odd.extra_attributes = {{10, std::string("\x0c\x02\x34\x2b", 4)},
                          {-1, std::string("\x05\x00", 2)},
                          {1000000, std::string("\x30\x80\x00\x00", 4)},
                          {17, std::string("\x31\x00", 2)}};
  variants.push_back({"gen-odd-attributes", odd, signer});
  for (const auto& v : variants) {
    write("store_a_unified", v.name, ts::make_unified_receipt(v.params, v.signer));
    write("store_a_payload", v.name, ts::make_unified_payload(v.params));
  }

  // Generated transaction receipts, blob versions 2 (RSA-1024 leaf) and 3.
  ts::pki_options v2_options;
  v2_options.leaf_key_bits = 1024;
  v2_options.signature_digest = ts::digest::sha1;
  auto pki_v2 = ts::make_test_pki(v2_options);
  ts::transaction_receipt_params tp;
  tp.unique_vendor_identifier = "956328D9-CC6A-47F4-BE40-6953FB0AB6C7";
  tp.web_order_line_item_id = "1000000030000001";
  tp.expires_date = utc(2016, 11, 18);
  tp.is_trial_period = false;
  tp.extra_purchase_info = {{"item-id", "1061237830"}, {"version-external-identifier", "0"}};
  auto v2 = ts::make_transaction_receipt(tp, pki_v2.leaf);
  write("store_a_transaction", "gen-raw-v2", std::string(1, '\0') + v2);
  write("store_a_transaction", "gen-parts-v2", transaction_parts(v2));
  tp.blob_version = 3;
  tp.environment.reset();
  auto v3 = ts::make_transaction_receipt(tp, pki.leaf);
  write("store_a_transaction", "gen-raw-v3", std::string(1, '\0') + v3);
  write("store_a_transaction", "gen-parts-v3", transaction_parts(v3));

  // Upload bodies carrying receipts.
  auto body = [](const std::string& receipt_b64, const std::string& extra) {
    return "{\"receipt\":\"" + receipt_b64 + "\"" + extra + "}";
  };
  write("upload_store_a", "real-minimal",
        body(read("tests/data/apple-unified/tpinappreceipt-sandbox-g5-ios/receipt.b64"), ""));
  write("upload_store_a", "real-all-fields",
        body(read("tests/data/apple-unified/tpinappreceipt-sandbox-g5-ios/receipt.b64"),
             ",\"country_code\":\"de\",\"identifier_for_vendor\":"
             "\"956328D9-CC6A-47F4-BE40-6953FB0AB6C7\",\"user_identifier\":\"user-42\","
             "\"ip_address\":\"2001:db8::1\",\"metadata\":{\"a\":[1,2.5,true,null],"
             "\"b\":{\"c\":\"\\u00e9\"}}"));
  write("upload_store_a", "real-transaction",
        body(read("tests/data/apple-transaction/mindmob-download-sandbox-2012/receipt.b64"),
             ",\"ip_address\":null,\"user_identifier\":null,\"metadata\":null"));
  write("upload_store_a", "gen-wrapped-base64",
        body(base64_encode(ts::make_unified_receipt(many, signer)).insert(64, "\\n"),
             ",\"ip_address\":\"192.0.2.10\",\"country_code\":\"US\""));
}

void store_b_seeds() {
  const char* const vectors[] = {"go-iap-playstore-fixed-key", "voltrue2-trivialdrive-subscription",
                                 "android-easy-checkout-test-keypair"};
  for (const char* v : vectors) {
    std::string dir = std::string("tests/data/google-play/") + v + "/";
    auto data = read(dir + "signed_data.txt");
    auto sig = read(dir + "signature.b64");
    write("store_b_purchase", std::string("real-") + v, data + sep + sig);
    write("upload_store_b", std::string("real-") + v,
          "{\"purchase_data\":" + json_string(data) + ",\"purchase_signature\":\"" + sig
            + "\",\"user_identifier\":\"u1\",\"ip_address\":null}");
  }
  write("store_b_purchase", "real-negative-wrong-signature",
        read("tests/data/google-play/go-iap-playstore-fixed-key/signed_data.txt") + sep
          + read("tests/data/google-play/go-iap-playstore-fixed-key/negative/signature_wrong.b64"));

  // Purchases signed with android-easy-checkout's published test key.
  auto der = b64file(
    "tests/data/google-play/android-easy-checkout-test-keypair/test_private_key_pkcs8.b64");
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  EVP_PKEY* key = d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(der.size()));
  if (key == nullptr)
    throw std::runtime_error("test private key");
  const char* const purchases[] = {
    R"({"packageName":"com.example.receiptd","productId":"coins_100","purchaseTime":1700000000000,"purchaseState":4,"purchaseToken":"tok-pending","quantity":3,"acknowledged":false})",
    R"({"orderId":"GPA.3333-4444-5555-66666..0","packageName":"com.example.receiptd","productId":"premium_yearly","purchaseTime":1700000000000,"purchaseState":0,"purchaseToken":"tok-sub","autoRenewing":false,"acknowledged":true,"obfuscatedAccountId":"x"})",
  };
  int i = 0;
  for (const char* pd : purchases) {
    auto sig = play_sign(key, pd);
    write("store_b_purchase", "gen-" + std::to_string(i), pd + sep + sig);
    write("upload_store_b", "gen-" + std::to_string(i++),
          "{\"purchase_data\":" + json_string(pd) + ",\"purchase_signature\":\"" + sig
            + "\",\"metadata\":{\"level\":7},\"ip_address\":\"10.0.0.1\"}");
  }
  EVP_PKEY_free(key);

  write(
    "upload_store_b_legacy", "gen-full",
    R"({"package_name":"com.example.receiptd","purchase_token":"opaque-token-up-to-1000-characters","product_id":"premium_yearly","order_id":"GPA.1234-5678-9012-34567","user_identifier":"user-1","ip_address":"::ffff:192.0.2.1","metadata":{"k":"v"}})");
  write("upload_store_b_legacy", "gen-minimal",
        R"({"package_name":"my.package","purchase_token":"some-token","product_id":"myproduct"})");
  write(
    "upload_store_b_legacy", "gen-wrong-types",
    R"({"package_name":1,"purchase_token":"","product_id":null,"order_id":[],"ip_address":"300.1.1.1","metadata":"x"})");
}

void store_answer_seeds() {
  const char* const apple[]
    = {"aporat-inAppPurchaseResponse", "aporat-status-21002-malformed",
       "revenuecat-verifyReceiptSample1", "voltrue2-latest_receipt_info-with-duplicates"};
  for (const char* f : apple)
    write("store_a_verify_receipt_api", std::string("real-") + f,
          std::string(1, '\0')
            + read(std::string("tests/data/responses/apple-verifyReceipt/") + f + ".json"));
  const std::pair<const char*, std::string> hand[] = {
    {"gen-21007", std::string(1, '\0') + R"({"status":21007})"},
    {"gen-21008-sandbox", std::string(1, '\x08') + R"({"status":21008})"},
    {"gen-21100-retryable", std::string(1, '\0') + R"({"status":21100,"is-retryable":true})"},
    {"gen-21003", std::string(1, '\0') + R"({"status":21003,"environment":"Production"})"},
    {"gen-html", std::string(1, '\0') + "<html><body>Service Unavailable</body></html>"},
    {"gen-ios6",
     std::string(1, '\0')
       + R"({"status":0,"receipt":{"bid":"com.example.receiptd","transaction_id":"1000000000000001","product_id":"p","expires_date":"1479427200000","is_trial_period":"false","web_order_line_item_id":"1000000030000001","cancellation_date_ms":"1470000000000"}})"},
    {"gen-503", std::string(1, '\x03') + "{}"},
  };
  for (const auto& [name, bytes] : hand)
    write("store_a_verify_receipt_api", name, bytes);

  // byte 0: bits 0-2 status index (200, 0, 400, 401, 403, 404, 410, 500), bit 3
  // subscriptionsv2, bit 4 token endpoint, bit 5 product "myproduct".
  const std::pair<const char*, unsigned char> google[] = {
    {"candy_check-products.acknowledge-400-already_acknowledged", 2},
    {"candy_check-products.acknowledge-400-refunded", 2},
    {"candy_check-products.get-200-valid_but_not_consumed", 0},
    {"candy_check-purchases.get-401-permission_denied", 3},
    {"candy_check-subscriptions.get-200-valid_but_expired", 8},
    {"guardian-subscriptionsv2.get-active-DE-freetrial-offer", 8},
    {"guardian-subscriptionsv2.get-active-GB", 8},
  };
  for (const auto& [f, mode] : google)
    write("store_b_play_api", std::string("real-") + f,
          std::string(1, static_cast<char>(mode))
            + read(std::string("tests/data/responses/google-play-developer-api/") + f + ".json"));
  write("store_b_play_api", "gen-token",
        std::string(1, '\x10')
          + R"({"access_token":"ya29.c.b0Aaek","expires_in":3599,"token_type":"Bearer"})");
  write("store_b_play_api", "gen-token-error",
        std::string(1, '\x12') + R"({"error":"invalid_grant","error_description":"Invalid JWT"})");
  write(
    "store_b_play_api", "gen-product-mismatch",
    std::string(1, '\x00')
      + R"({"kind":"androidpublisher#productPurchase","productId":"cheap","purchaseState":0,"purchaseType":0,"purchaseTimeMillis":"1700000000000","acknowledgementState":1})");
  write(
    "store_b_play_api", "gen-subscription-lines",
    std::string(1, '\x08')
      + R"({"kind":"androidpublisher#subscriptionPurchaseV2","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","startTime":"2024-01-01T00:00:00.123Z","testPurchase":{},"acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED","lineItems":[{"productId":"premium_yearly","expiryTime":"2025-01-01T00:00:00Z","autoRenewingPlan":{"autoRenewEnabled":true}}]})");
  // The line item fields since 2024 (installments, offerPhase, a deferred
  // replacement, latestSuccessfulOrderId), a prepaid plan, and products.get's
  // refundableQuantity after a quantity-based partial refund.
  write(
    "store_b_play_api", "gen-subscription-installments",
    std::string(1, '\x08')
      + R"({"kind":"androidpublisher#subscriptionPurchaseV2","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","latestOrderId":"GPA.old","lineItems":[{"productId":"premium_yearly","expiryTime":"2025-01-01T00:00:00Z","latestSuccessfulOrderId":"GPA.1-2..3","offerPhase":{"introductoryPrice":{}},"autoRenewingPlan":{"autoRenewEnabled":true,"installmentDetails":{"initialCommittedPaymentsCount":12,"subsequentCommittedPaymentsCount":12,"remainingCommittedPaymentsCount":"9","pendingCancellation":{}}},"deferredItemReplacement":{"productId":"premium_monthly"}}]})");
  write(
    "store_b_play_api", "gen-subscription-prepaid",
    std::string(1, '\x08')
      + R"({"kind":"androidpublisher#subscriptionPurchaseV2","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"productId":"premium_yearly","expiryTime":"2025-01-01T00:00:00Z","prepaidPlan":{"allowExtendAfterTime":"2024-12-01T00:00:00Z"},"offerPhase":{"basePrice":{}}}]})");
  write("store_b_play_api", "gen-product-partial-refund",
        std::string(1, '\x20')
          + R"({"kind":"androidpublisher#productPurchase","productId":"myproduct","purchaseState":0,"purchaseTimeMillis":"1700000000000","quantity":3,"refundableQuantity":1})");
}

// ---- StoreKit 2 JWS, App Store notifications, Play RTDN, server answers ------

// The decoded header, payload and signature of a compact JWS (the structured
// layout of store_a_signed_transaction: they are base64url-encoded again there).
std::string jws_parts(const std::string& jws) {
  auto first = jws.find('.');
  auto last = jws.rfind('.');
  auto header = base64url_decode(jws.substr(0, first));
  auto payload = base64url_decode(jws.substr(first + 1, last - first - 1));
  auto signature = base64url_decode(jws.substr(last + 1));
  if (!header || !payload || !signature)
    throw std::runtime_error("not a compact JWS");
  return *header + sep + *payload + sep + *signature;
}

std::string jws_payload(const std::string& jws) {
  auto first = jws.find('.');
  auto payload = base64url_decode(jws.substr(first + 1, jws.rfind('.') - first - 1));
  if (!payload)
    throw std::runtime_error("not a compact JWS");
  return *payload;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  return s;
}

const char* const jws_transaction_vectors[]
  = {"apple-lib-python-xcode-2023", "dmzlingyin-aitubo-autorenew-production-2025",
     "hound-pupotty-autorenew-sandbox-2023", "session-pro-revoked-refund-sandbox-2025"};
const char* const jws_notification_vectors[]
  = {"aporat-test-sandbox-2022", "dmzlingyin-aitubo-did-change-renewal-status-production-2025",
     "session-pro-refund-sandbox-2025", "session-pro-did-renew-sandbox-2025"};

void jws_seeds() {
  // store_a_signed_transaction: byte 0 mod 3 is the layout, bit (byte 0 / 3) & 1
  // accepts Xcode transactions.
  for (const char* v : jws_transaction_vectors) {
    auto jws = trimmed(read(std::string("tests/data/apple-jws-transaction/") + v + "/jws.txt"));
    write("store_a_signed_transaction", std::string("real-") + v, std::string(1, '\0') + jws);
    write("store_a_signed_transaction", std::string("real-parts-") + v,
          std::string(1, '\x01') + jws_parts(jws));
    write("store_a_signed_transaction", std::string("real-upload-") + v,
          std::string(1, '\x02') + "{\"signed_transaction\":\"" + jws
            + "\",\"user_identifier\":\"u1\",\"metadata\":{\"k\":[1]},\"ip_address\":null}");
  }
  write("store_a_signed_transaction", "real-xcode-accepted",
        std::string(1, '\x03')
          + trimmed(read("tests/data/apple-jws-transaction/apple-lib-python-xcode-2023/jws.txt")));

  // Signed by the test PKI: the signature verifies, the chain is not Apple's.
  auto pki = ts::make_jws_pki();
  ts::transaction_fields t;
  t.expires_date = ts::utc(2024, 7, 1, 12);
  t.app_account_token = "7e3fb20b-4cdb-47cc-936d-99d65f608138";
  t.web_order_line_item_id = "2000000000000002";
  auto gen = ts::make_storekit_jws(ts::transaction_payload_json(t), pki);
  write("store_a_signed_transaction", "gen-test-pki", std::string(1, '\0') + gen);
  write("store_a_signed_transaction", "gen-parts-test-pki",
        std::string(1, '\x01') + jws_parts(gen));
  ts::transaction_fields x = t;
  x.environment = "Xcode";
  x.revocation_date = ts::utc(2024, 6, 10);
  x.revocation_reason = 1;
  auto xcode
    = ts::make_storekit_jws(ts::transaction_payload_json(x), {pki.root.der()}, pki.root.key());
  write("store_a_signed_transaction", "gen-parts-self-signed-xcode",
        std::string(1, '\x04') + jws_parts(xcode));

  // store_a_app_transaction: the same three layouts; the structured one also
  // carries the device's nonce and id (the ones the payload was bound to).
  ts::app_transaction_fields a;
  a.preorder_date = ts::utc(2021, 2, 1);
  auto app_jws = ts::make_storekit_jws(ts::app_transaction_payload_json(a), pki);
  write("store_a_app_transaction", "gen-test-pki", std::string(1, '\0') + app_jws);
  write("store_a_app_transaction", "gen-parts-device",
        std::string(1, '\x01') + jws_parts(app_jws) + sep + a.device_verification_nonce + sep
          + a.device_verification_id);
  write("store_a_app_transaction", "gen-upload-device",
        std::string(1, '\x02') + "{\"signed_app_transaction\":\"" + app_jws
          + "\",\"device_verification_nonce\":\"" + a.device_verification_nonce
          + "\",\"device_verification_id\":\"" + a.device_verification_id
          + "\",\"user_identifier\":\"u1\",\"metadata\":{\"k\":[1]}}");
  ts::app_transaction_fields ax = a;
  ax.receipt_type = "Xcode";
  ax.app_transaction_id.reset();
  auto app_xcode
    = ts::make_storekit_jws(ts::app_transaction_payload_json(ax), {pki.root.der()}, pki.root.key());
  write("store_a_app_transaction", "gen-parts-self-signed-xcode",
        std::string(1, '\x04') + jws_parts(app_xcode) + sep + sep);

  // store_a_notification: byte 0 even, the request body; odd, the payloads.
  for (const char* v : jws_notification_vectors) {
    auto jws = trimmed(read(std::string("tests/data/apple-jws-notification/") + v + "/jws.txt"));
    write("store_a_notification", std::string("real-") + v,
          std::string(1, '\0') + "{\"signedPayload\":\"" + jws + "\"}");
    auto payload = jws_payload(jws);
    boost::system::error_code ec;
    auto doc = boost::json::parse(payload, ec);
    std::string nested[2];
    if (!ec && doc.is_object())
      if (auto* d = doc.get_object().if_contains("data"); d && d->is_object()) {
        const char* keys[] = {"signedTransactionInfo", "signedRenewalInfo"};
        for (int i = 0; i < 2; ++i)
          if (auto* n = d->get_object().if_contains(keys[i]); n && n->is_string())
            nested[i] = jws_payload(std::string(n->get_string()));
      }
    write("store_a_notification", std::string("real-payloads-") + v,
          std::string(1, '\x01') + payload + sep + nested[0] + sep + nested[1]);
  }
  write(
    "store_a_notification", "gen-other-app",
    std::string(1, '\x02') + "{\"signedPayload\":\""
      + trimmed(read("tests/data/apple-jws-notification/session-pro-refund-sandbox-2025/jws.txt"))
      + "\",\"extra\":1}");
  write(
    "store_a_notification", "gen-payloads-summary",
    std::string(1, '\x01')
      + R"({"notificationType":"RENEWAL_EXTENSION","subtype":"SUMMARY","notificationUUID":"u-1","version":"2.0","signedDate":1700000000000,"summary":{"bundleId":"com.example.receiptd","environment":"Xcode","appAppleId":1,"requestIdentifier":"r"}})"
      + sep + sep + "null");
}

void rtdn_seeds() {
  auto der = b64file(
    "tests/data/google-play/android-easy-checkout-test-keypair/test_private_key_pkcs8.b64");
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  std::shared_ptr<EVP_PKEY> key(d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(der.size())),
                                EVP_PKEY_free);
  if (!key)
    throw std::runtime_error("test private key");
  // store_b_rtdn.cpp's expectation; now is fuzz_support's fixed_now (1700000000 s).
  const std::string header = R"({"alg":"RS256","kid":"fuzz-k1","typ":"JWT"})";
  const std::string email = R"("email":"rtdn-push@receiptd-fuzz.iam.gserviceaccount.com")";
  const std::string aud = R"("aud":"https://receiptd.example/store/store_b/fuzz")";
  const std::string tokens[] = {
    ts::rs256_jwt(
      header,
      "{" + aud + "," + email
        + R"(,"email_verified":true,"exp":1700003600,"iat":1699999990,"iss":"https://accounts.google.com","sub":"1"})",
      key.get()),
    ts::rs256_jwt(
      header,
      R"({"aud":["x","https://receiptd.example/store/store_b/fuzz"],"exp":1700000030.5,"iss":"accounts.google.com"})",
      key.get()),
  };
  const char* const vectors[] = {"bat-go-subscription-purchased-docs",
                                 "bat-go-one-time-product-purchased-docs",
                                 "bat-go-voided-purchase-docs",
                                 "bat-go-test-notification-docs",
                                 "dmzlingyin-aitubo-subscription-canceled-2025",
                                 "bat-go-negative-data-not-base64"};
  int i = 0;
  for (const char* v : vectors) {
    const int which = i++ % 2;
    write("store_b_rtdn", std::string("real-") + v,
          std::string(1, static_cast<char>(which == 0 ? 1 : 0)) + tokens[which] + sep
            + trimmed(read(std::string("tests/data/google-play-rtdn/") + v + "/body.json")));
  }
  // The kinds and fields since 2024: a pending refund review, a kind Play adds
  // later, a quantity-based partial refund of a one-time product.
  const std::string unsigned_token
    = ts::base64url(R"({"alg":"none","kid":"fuzz-k1"})") + "."
    + ts::base64url("{" + aud + R"(,"exp":1700003600,"iss":"accounts.google.com"})") + ".e30";
  const std::pair<const char*, const char*> kinds[] = {
    {"gen-pending-refund-review",
     R"("pendingRefundReviewNotification":{"version":"1.0","pendingRefundToken":"prt-1","orderId":"GPA.1234-5678-9012-34567","refundReason":7})"},
    {"gen-other-kind", R"("futureThingNotification":{"version":"1.0","purchaseToken":"t"})"},
    {"gen-voided-partial",
     R"("voidedPurchaseNotification":{"purchaseToken":"token-7","orderId":"GPA.1","productType":2,"refundType":2})"},
    {"gen-price-step-up",
     R"("subscriptionNotification":{"version":"1.0","notificationType":22,"purchaseToken":"token-8","subscriptionId":"gold"})"},
  };
  for (const auto& [name, kind] : kinds) {
    auto data = std::string(R"({"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1746683885460",)")
      + kind + "}";
    write("store_b_rtdn", name,
          std::string(1, '\x00') + unsigned_token + sep + R"({"message":{"data":")"
            + base64_encode(data) + R"(","messageId":"7"}})");
  }
  write("store_b_rtdn", "gen-hs256-none",
        std::string(1, '\x01') + ts::base64url(R"({"alg":"none","kid":"fuzz-k1"})") + "."
          + ts::base64url("{" + aud + R"(,"exp":1700003600,"iss":"accounts.google.com"})") + ".e30"
          + sep + R"({"message":{"data":"e30=","messageId":"1"}})");
}

void server_answer_seeds() {
  auto transaction = trimmed(
    read("tests/data/apple-jws-transaction/session-pro-autorenew-renewal-sandbox-2025/jws.txt"));
  auto renewal = trimmed(
    read("tests/data/apple-jws-renewal/session-pro-downgrade-pending-sandbox-2025/jws.txt"));
  boost::system::error_code ec;
  auto claims = boost::json::parse(jws_payload(transaction), ec);
  if (ec)
    throw std::runtime_error("session-pro transaction payload");
  std::string original(claims.as_object().at("originalTransactionId").as_string());
  // byte 0: bits 0-3 the status (200, 0, 404, 429, 401, 403, 500, 503, 204, 400,
  // 408, 409, 410, 302, 100, 599), bits 4-5 the call.
  const std::pair<const char*, std::string> seeds[] = {
    {"real-transaction-info-200",
     std::string(1, '\x00') + "{\"signedTransactionInfo\":\"" + transaction + "\"}"},
    {"gen-transaction-info-404",
     std::string(1, '\x02')
       + R"({"errorCode":4040010,"errorMessage":"Transaction id not found."})"},
    {"gen-transaction-info-429-date",
     std::string(1, '\x03') + R"({"errorCode":4290000})" + sep + "Sun, 06 Nov 1994 08:49:37 GMT"},
    {"gen-transaction-info-429-seconds", std::string(1, '\x03') + sep + "120"},
    {"gen-transaction-info-401", std::string(1, '\x04')},
    {"gen-transaction-info-500", std::string(1, '\x06') + R"({"errorCode":5000001})"},
    {"real-statuses-200",
     std::string(1, '\x10')
       + R"({"environment":"Sandbox","bundleId":"b","data":[{"subscriptionGroupIdentifier":"1","lastTransactions":[{"originalTransactionId":")"
       + original + R"(","status":1,"signedTransactionInfo":")" + transaction
       + R"(","signedRenewalInfo":")" + renewal + "\"}]}]}"},
    {"gen-statuses-429", std::string(1, '\x13') + "{}" + sep + "Sunday, 06-Nov-94 08:49:37 GMT"},
    {"gen-voided-page",
     std::string(1, '\x20')
       + R"({"tokenPagination":{"nextPageToken":"next-1"},"voidedPurchases":[{"kind":"androidpublisher#voidedPurchase","purchaseToken":"tok-1","purchaseTimeMillis":"1699000000000","voidedTimeMillis":"1699500000000","orderId":"GPA.1","voidedSource":2,"voidedReason":7},{"purchaseToken":"tok-2","voidedTimeMillis":1699600000000,"voidedQuantity":1}]})"},
    {"gen-voided-empty", std::string(1, '\x20') + "{}"},
    {"gen-voided-503", std::string(1, '\x27') + "<html>unavailable</html>"},
    {"real-acknowledge-400-already-acknowledged",
     std::string(1, '\x39')
       + read("tests/data/responses/google-play-developer-api/"
              "candy_check-products.acknowledge-400-already_acknowledged.json")},
    {"gen-acknowledge-204",
     std::string(1, '\x38') + sep
       + R"({"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1699990000000","purchaseState":0,"consumptionState":0,"purchaseType":0,"acknowledgementState":0})"},
    {"real-acknowledge-503-after-products-get",
     std::string(1, '\x37') + sep
       + read("tests/data/responses/google-play-developer-api/"
              "candy_check-products.get-200-valid_but_not_consumed.json")},
    {"gen-acknowledge-401", std::string(1, '\x34') + R"({"error":{"code":401,"message":"x"}})"},
  };
  for (const auto& [name, bytes] : seeds)
    write("store_server_answers", name, bytes);
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds tests/fuzz/corpus\n");
    return 2;
  }
  out_dir = argv[1];
  try {
    store_a_seeds();
    store_b_seeds();
    store_answer_seeds();
    jws_seeds();
    rtdn_seeds();
    server_answer_seeds();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}

// Every public Store A vector (tests/data/apple-*): decoded fields against what
// its expected.json asserts, the signature and chain against the real Apple roots
// at the receipt's own date, and tampering.

#include <catch2/catch.hpp>

#include <cstring>

#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

#include "model/identifiers.hpp"
#include "model/timestamp.hpp"
#include "tests/unit/store_a_fixtures.hpp"

using namespace store_a_fixtures;
using namespace receiptd::model;
namespace json = boost::json;

namespace {

std::string str(const json::value& v) {
  return std::string(v.as_string());
}

std::optional<unix_ms> rfc(const json::value& v) {
  if (v.is_null())
    return std::nullopt;
  auto ms = parse_rfc3339(str(v));
  REQUIRE(ms);
  return ms;
}

std::optional<unix_ms> epoch_s(const json::value& v) {
  if (v.is_null())
    return std::nullopt;
  return v.to_number<std::int64_t>() * 1000;
}

const sa::unified_receipt& unified(const sa::decoded_receipt& d) {
  REQUIRE(std::holds_alternative<sa::unified_receipt>(d.detail));
  return std::get<sa::unified_receipt>(d.detail);
}

sa::decoded_receipt decode_ok(const std::string& bytes) {
  auto r = sa::decode_receipt(bytes);
  INFO((r ? std::string() : r.errors().front().message));
  REQUIRE(r);
  return std::move(r).value();
}

// RevenueCat's InAppPurchase.ProductType raw values for attribute 1707.
int revenuecat_product_type(const std::string& name) {
  if (name == "nonConsumable")
    return 0;
  if (name == "consumable")
    return 1;
  if (name == "nonRenewingSubscription")
    return 2;
  if (name == "autoRenewableSubscription")
    return 3;
  FAIL("unknown product type " << name);
  return -1;
}

// One in-app purchase as AppReceiptValidator (ISO dates) or RevenueCat (epoch
// seconds) assert it. Every key is compared; an unknown key fails the test, so
// nothing the file asserts can be skipped silently.
void check_purchase(const json::object& exp, const apple_in_app_purchase& p) {
  for (const auto& [key, v] : exp) {
    INFO("in-app key " << key);
    if (key == "quantity")
      CHECK(p.quantity == v.to_number<int>());
    else if (key == "productIdentifier" || key == "productId")
      CHECK(p.product_id == str(v));
    else if (key == "transactionIdentifier" || key == "transactionId")
      CHECK(p.transaction_id == str(v));
    else if (key == "originalTransactionIdentifier" || key == "originalTransactionId")
      CHECK(p.original_transaction_id == str(v));
    else if (key == "purchaseDate")
      CHECK(p.purchase_date == rfc(v));
    else if (key == "originalPurchaseDate")
      CHECK(p.original_purchase_date == rfc(v));
    else if (key == "subscriptionExpirationDate")
      CHECK(p.expires_date == rfc(v));
    else if (key == "purchaseDate_epoch_s")
      CHECK(p.purchase_date == epoch_s(v));
    else if (key == "originalPurchaseDate_epoch_s")
      CHECK(p.original_purchase_date == epoch_s(v));
    else if (key == "expiresDate_epoch_s" || key == "expiresDate")
      CHECK(p.expires_date == epoch_s(v));
    else if (key == "cancellationDate")
      CHECK(p.cancellation_date == rfc(v));
    else if (key == "webOrderLineItemId") {
      // INTEGER 0 (non-subscriptions) is "no line item": RevenueCat reports 0,
      // AppReceiptValidator nil; receiptd leaves it absent.
      if (v.is_null() || v.to_number<std::int64_t>() == 0)
        CHECK_FALSE(p.web_order_line_item_id);
      else
        CHECK(p.web_order_line_item_id == std::to_string(v.to_number<std::int64_t>()));
    } else if (key == "productType")
      CHECK(p.product_type == revenuecat_product_type(str(v)));
    else if (key == "isInTrialPeriod")
      CHECK(p.is_trial_period == v.as_bool());
    else if (key == "isInIntroOfferPeriod") {
      if (v.is_null())
        CHECK_FALSE(p.is_in_intro_offer_period);
      else
        CHECK(p.is_in_intro_offer_period == v.as_bool());
    } else if (key == "promotionalOfferIdentifier")
      CHECK(v.is_null()); // attribute 1721 is not modelled; every vector asserts null
    else
      FAIL("unhandled in-app key " << key);
  }
}

// A receipt-level "asserts" object in the AppReceiptValidator or RevenueCat shape.
void check_receipt(const json::object& exp, const sa::decoded_receipt& d) {
  const auto& u = unified(d);
  for (const auto& [key, v] : exp) {
    INFO("receipt key " << key);
    if (key == "bundleIdentifier" || key == "bundleId")
      CHECK(d.bundle_id == str(v));
    else if (key == "bundleIdData_b64")
      CHECK(base64_encode(u.bundle_id_raw) == str(v));
    else if (key == "appVersion" || key == "applicationVersion")
      CHECK(u.app_version == str(v));
    else if (key == "originalAppVersion" || key == "originalApplicationVersion")
      CHECK(u.original_app_version == str(v));
    else if (key == "opaqueValue_b64")
      CHECK(base64_encode(u.opaque) == str(v));
    else if (key == "sha1Hash_b64")
      CHECK(base64_encode(u.sha1_hash) == str(v));
    else if (key == "opaqueValue" && str(v) == "<not nil>")
      CHECK_FALSE(u.opaque.empty());
    else if (key == "sha1Hash" && str(v) == "<not nil>")
      CHECK(u.sha1_hash.size() == 20);
    else if (key == "receiptCreationDate")
      CHECK(u.creation_date == rfc(v));
    else if (key == "creationDate_epoch_s")
      CHECK(u.creation_date == epoch_s(v));
    else if (key == "expirationDate")
      CHECK(u.expiration_date == rfc(v));
    else if (key == "environment")
      CHECK(to_string(d.env) == str(v));
    else if (key == "inAppPurchases.count")
      CHECK(d.in_app.size() == v.to_number<std::size_t>());
    else if (key == "inAppPurchaseReceipts" || key == "inAppPurchases (in receipt order)") {
      const auto& list = v.as_array();
      REQUIRE(d.in_app.size() == list.size());
      for (std::size_t i = 0; i < list.size(); ++i) {
        INFO("purchase #" << i);
        check_purchase(list[i].as_object(), d.in_app[i]);
      }
    } else if (key == "first_purchase") {
      REQUIRE_FALSE(d.in_app.empty());
      check_purchase(v.as_object(), d.in_app.front());
    } else if (key == "last_purchase") {
      REQUIRE_FALSE(d.in_app.empty());
      check_purchase(v.as_object(), d.in_app.back());
    } else if (key == "note")
      continue;
    else
      FAIL("unhandled receipt key " << key);
  }
}

// Runs check_receipt on every "asserts" block of a vector's expected.json.
int check_all_asserts(const std::string& name, const sa::decoded_receipt& d) {
  auto exp = expected_json("apple-unified", name);
  int blocks = 0;
  for (const auto& entry : exp.at("asserted_by_source_tests").as_array()) {
    const auto& asserts = entry.at("asserts").as_object();
    INFO("upstream test " << entry.at("test").as_string());
    if (const auto* receipt = asserts.if_contains("receipt"))
      check_receipt(receipt->as_object(), d);
    else if (const auto* result = asserts.if_contains("result.receipt"))
      check_receipt(result->as_object(), d);
    else
      check_receipt(asserts, d);
    ++blocks;
  }
  return blocks;
}

sa::verification verify(const std::string& bytes, const sa::trust_anchors& anchors,
                        const std::string& bundle, std::optional<std::string> ifv = {},
                        std::optional<unix_ms> at = {}) {
  return sa::verify_receipt(bytes, anchors, bundle, ifv, sa::verify_options{at});
}

// The PKCS#7 content and signature as byte ranges of the DER, for tampering.
struct pkcs7_layout {
  std::size_t payload_offset = 0, payload_size = 0;
  std::size_t signature_offset = 0, signature_size = 0;
};

pkcs7_layout locate(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  PKCS7* p7 = d2i_PKCS7(nullptr, &p, static_cast<long>(der.size()));
  REQUIRE(p7 != nullptr);
  auto find = [&](const ASN1_STRING* s) {
    std::string_view needle(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                            static_cast<std::size_t>(ASN1_STRING_length(s)));
    auto at = std::string_view(der).find(needle);
    REQUIRE(at != std::string_view::npos);
    return at;
  };
  pkcs7_layout out;
  out.payload_offset = find(p7->d.sign->contents->d.data);
  out.payload_size = static_cast<std::size_t>(ASN1_STRING_length(p7->d.sign->contents->d.data));
  auto* si = sk_PKCS7_SIGNER_INFO_value(PKCS7_get_signer_info(p7), 0);
  out.signature_offset = find(si->enc_digest);
  out.signature_size = static_cast<std::size_t>(ASN1_STRING_length(si->enc_digest));
  PKCS7_free(p7);
  return out;
}

std::string uuid_text(const std::string& raw16) {
  auto hex = hex_encode(raw16);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-"
    + hex.substr(16, 4) + "-" + hex.substr(20);
}

} // namespace

TEST_CASE("AppReceiptValidator and RevenueCat vectors decode to every asserted value",
          "[store_a][vectors]") {
  for (const char* name : {"appreceiptvalidator-mindnode-production-macos",
                           "appreceiptvalidator-purchasingexperiments-sandbox-ios",
                           "mbaasy-grandunified-sandbox-2015", "revenuecat-sample1-sandbox-ios"}) {
    SECTION(name) {
      auto d = decode_ok(vector_bytes("apple-unified", name));
      CHECK(d.style == receipt_style::unified);
      CHECK(check_all_asserts(name, d) >= 1);
    }
  }
}

TEST_CASE("header fields and environments of the unified vectors", "[store_a][vectors]") {
  // Upstream assertions are in expected.json; the bundle ids, versions and
  // creation dates of the vectors whose tests assert only structure come from the
  // local decode documented in tests/data/SOURCES.md.
  struct row {
    const char* name;
    const char* type;
    environment env;
    const char* bundle;
    const char* version;
    const char* original;
    const char* created;
    std::size_t in_app;
  };
  const row rows[] = {
    {"appreceiptvalidator-mindnode-production-macos", "Production", environment::production,
     "com.ideasoncanvas.mindnode.macos", "2023.2.2", "5.0", "2023-08-28T10:24:05Z", 3},
    {"appreceiptvalidator-purchasingexperiments-sandbox-ios", "ProductionSandbox",
     environment::sandbox, "com.hannesoid.PurchasingExperiments", "1", "1.0",
     "2023-02-22T14:30:15Z", 2},
    {"kvitto-production-macos-xcode7", "Production", environment::production, "com.apple.dt.Xcode",
     "7.0", "4.3", "2015-09-22T08:55:28Z", 0},
    {"mbaasy-grandunified-sandbox-2015", "ProductionSandbox", environment::sandbox,
     "com.mbaasy.ios.demo", "1", "1.0", "2015-08-13T07:50:46Z", 7},
    {"revenuecat-sample1-sandbox-ios", "ProductionSandbox", environment::sandbox,
     "com.revenuecat.sampleapp", "4", "1.0", "2020-07-22T17:39:08Z", 9},
    {"tpinappreceipt-production-ios", "Production", environment::production,
     "org.getpure.pure-iphone", "15741", "434", "2024-02-23T17:27:16Z", 4},
    {"tpinappreceipt-sandbox-g5-ios", "ProductionSandbox", environment::sandbox,
     "dev.bonzer.weeka.app", "2", "1.0", "2025-12-26T18:39:47Z", 2},
    {"xcode-storekit-empty", "Xcode", environment::sandbox,
     "com.example.naturelab.backyardbirds.example", "1", "", "2023-10-19T01:18:54Z", 0},
    {"xcode-storekit-with-transaction", "Xcode", environment::sandbox,
     "com.example.naturelab.backyardbirds.example", "1", "", "2023-10-19T01:45:40Z", 1},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      auto d = decode_ok(vector_bytes("apple-unified", r.name));
      const auto& u = unified(d);
      CHECK(u.receipt_type == r.type);
      CHECK(d.env == r.env);
      CHECK(d.bundle_id == r.bundle);
      CHECK(u.bundle_id == r.bundle);
      CHECK(u.app_version == r.version);
      CHECK(u.original_app_version == r.original);
      CHECK(u.creation_date == parse_rfc3339(r.created));
      CHECK(d.signed_at == u.creation_date);
      CHECK(d.in_app.size() == r.in_app);
      CHECK(u.in_app.size() == r.in_app);
      CHECK(u.opaque.size() >= 4);
      CHECK(u.sha1_hash.size() == 20);
      CHECK(u.payload_size > 0);
    }
  }
}

TEST_CASE("Kvitto Mac App Store receipt (Xcode 7.0)", "[store_a][vectors]") {
  // Cocoanetics/Kvitto KvittoTests.swift: testDecodeReceiptPayload, testDecodeRegularReceipt.
  auto d = decode_ok(vector_bytes("apple-unified", "kvitto-production-macos-xcode7"));
  const auto& u = unified(d);
  CHECK(u.payload_size == 505);
  CHECK(d.bundle_id == "com.apple.dt.Xcode");
  CHECK(u.app_version == "7.0");
  CHECK(u.original_app_version == "4.3");
  CHECK(u.opaque.size() == 16);
  CHECK(u.sha1_hash.size() == 20);
  CHECK_FALSE(u.expiration_date);
  CHECK(u.creation_date);
  CHECK(u.age_rating == "4+");
  CHECK(u.receipt_type == "Production");
  CHECK(d.in_app.empty());
}

TEST_CASE("TPInAppReceipt and Xcode vectors", "[store_a][vectors]") {
  SECTION("production: valid structure, environment production, non-empty fields") {
    auto d = decode_ok(vector_bytes("apple-unified", "tpinappreceipt-production-ios"));
    CHECK(d.env == environment::production);
    CHECK_FALSE(d.bundle_id.empty());
    CHECK_FALSE(unified(d).app_version.empty());
    CHECK(unified(d).payload_size > 0);
  }
  SECTION("sandbox G5: environment productionSandbox") {
    auto d = decode_ok(vector_bytes("apple-unified", "tpinappreceipt-sandbox-g5-ios"));
    CHECK(unified(d).receipt_type == "ProductionSandbox");
    CHECK(d.env == environment::sandbox);
    CHECK_FALSE(d.bundle_id.empty());
  }
  SECTION("Xcode with a transaction: one purchase, transaction id \"0\"") {
    auto d = decode_ok(vector_bytes("apple-unified", "xcode-storekit-with-transaction"));
    CHECK(unified(d).receipt_type == "Xcode");
    REQUIRE(d.in_app.size() == 1);
    CHECK(d.in_app[0].transaction_id == "0");
    CHECK(d.in_app[0].product_id == "pass.premium"); // local decode (SOURCES.md)
    // Xcode writes expiration date 4001-01-01 (local decode).
    CHECK(unified(d).expiration_date == parse_rfc3339("4001-01-01T00:00:00Z"));
  }
  SECTION("Xcode empty: no purchase, so no transaction id") {
    auto d = decode_ok(vector_bytes("apple-unified", "xcode-storekit-empty"));
    CHECK(d.in_app.empty());
  }
}

TEST_CASE("every unified vector verifies against the real roots at its creation date",
          "[store_a][vectors][crypto]") {
  for (const char* name : unified_vectors) {
    SECTION(name) {
      auto bytes = vector_bytes("apple-unified", name);
      auto bundle = decode_ok(bytes).bundle_id;
      if (is_xcode(name)) {
        // Signed by Xcode's self-signed StoreKit certificate: only the opt-in
        // sandbox root anchors it, and it then counts as xcode.
        auto v = verify(bytes, apple_and_storekit_anchors(), bundle);
        INFO(v.detail);
        CHECK(v.reason == fraud_reason::none);
        REQUIRE(v.receipt);
        CHECK(v.receipt->env == environment::xcode);
        auto apple_only = verify(bytes, apple_anchors(), bundle);
        CHECK(apple_only.reason == fraud_reason::untrusted_certificate);
        CHECK(apple_only.receipt);
      } else {
        auto v = verify(bytes, apple_anchors(), bundle);
        INFO(v.detail);
        CHECK(v.reason == fraud_reason::none);
        CHECK(v.detail.empty());
        // The StoreKit root is irrelevant to App Store receipts.
        CHECK(verify(bytes, apple_and_storekit_anchors(), bundle).reason == fraud_reason::none);
      }
    }
  }
}

TEST_CASE("the evaluation date matters: App Store chains have expired by now",
          "[store_a][vectors][crypto]") {
  const auto now = now_ms();
  for (const char* name : unified_vectors) {
    SECTION(name) {
      auto bytes = vector_bytes("apple-unified", name);
      auto d = decode_ok(bytes);
      if (is_xcode(name)) {
        // The StoreKit certificate is valid until 2040.
        CHECK(verify(bytes, apple_and_storekit_anchors(), d.bundle_id, {}, now).reason
              == fraud_reason::none);
      } else {
        auto v = verify(bytes, apple_anchors(), d.bundle_id, {}, now);
        CHECK(v.reason == fraud_reason::untrusted_certificate);
        CHECK_THAT(v.detail, Catch::Contains("expired"));
        // Explicitly at the creation date: valid again.
        CHECK(verify(bytes, apple_anchors(), d.bundle_id, {}, d.signed_at).reason
              == fraud_reason::none);
        // Before Apple issued the leaf: not yet valid.
        CHECK(verify(bytes, apple_anchors(), d.bundle_id, {}, 946684800000).reason
              == fraud_reason::untrusted_certificate);
      }
    }
  }
}

TEST_CASE("one flipped byte in the payload or the signature fails every unified vector",
          "[store_a][vectors][crypto]") {
  for (const char* name : unified_vectors) {
    SECTION(name) {
      const auto& anchors = apple_and_storekit_anchors();
      auto bytes = vector_bytes("apple-unified", name);
      auto bundle = decode_ok(bytes).bundle_id;
      auto layout = locate(bytes);

      // A byte of the bundle id string: still well-formed, so the signature is what fails.
      auto in_payload = std::string_view(bytes).substr(layout.payload_offset, layout.payload_size);
      auto at = in_payload.find(bundle);
      REQUIRE(at != std::string_view::npos);
      auto tampered = bytes;
      tampered[layout.payload_offset + at + 2] ^= 0x01;
      auto v = verify(tampered, anchors, bundle);
      CHECK(v.reason == fraud_reason::invalid_signature);
      REQUIRE(v.receipt); // still decodes: the record keeps what the receipt claims
      CHECK(v.receipt->bundle_id != bundle);

      // TPInAppReceipt's corruptedSignedDataFails: payload bytes [5] and [10] ^ 0xFF.
      tampered = bytes;
      tampered[layout.payload_offset + 5] ^= 0xFF;
      tampered[layout.payload_offset + 10] ^= 0xFF;
      auto r = verify(tampered, anchors, bundle).reason;
      CHECK((r == fraud_reason::invalid_signature || r == fraud_reason::malformed_receipt));

      // corruptedSignatureFails: signature bytes [5] and [10] ^ 0xFF.
      tampered = bytes;
      tampered[layout.signature_offset + 5] ^= 0xFF;
      tampered[layout.signature_offset + 10] ^= 0xFF;
      CHECK(verify(tampered, anchors, bundle).reason == fraud_reason::invalid_signature);

      // One bit of the last signature byte.
      tampered = bytes;
      tampered[layout.signature_offset + layout.signature_size - 1] ^= 0x01;
      CHECK(verify(tampered, anchors, bundle).reason == fraud_reason::invalid_signature);
    }
  }
}

TEST_CASE("embedded chain manipulations of real receipts", "[store_a][vectors][crypto]") {
  // Certificates are not covered by the signature: an attacker can drop or swap them.
  auto bytes = vector_bytes("apple-unified", "tpinappreceipt-sandbox-g5-ios");
  auto bundle = decode_ok(bytes).bundle_id;
  auto rewrite = [&](auto&& edit) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    PKCS7* p7 = d2i_PKCS7(nullptr, &p, static_cast<long>(bytes.size()));
    REQUIRE(p7 != nullptr);
    edit(p7->d.sign->cert);
    unsigned char* out = nullptr;
    int n = i2d_PKCS7(p7, &out);
    PKCS7_free(p7);
    REQUIRE(n > 0);
    std::string der(reinterpret_cast<char*>(out), static_cast<std::size_t>(n));
    OPENSSL_free(out);
    return der;
  };
  REQUIRE(verify(bytes, apple_anchors(), bundle).reason == fraud_reason::none);

  SECTION("leaf only (TPInAppReceipt chainVerifierFailsWhenSingleNonXcodeCertificate)") {
    auto der = rewrite([](STACK_OF(X509) * certs) {
      while (sk_X509_num(certs) > 1)
        X509_free(sk_X509_pop(certs));
    });
    auto v = verify(der, apple_anchors(), bundle);
    CHECK(v.reason == fraud_reason::untrusted_certificate);
  }
  SECTION("no certificates at all: the signer cannot be found") {
    auto der = rewrite([](STACK_OF(X509) * certs) {
      while (sk_X509_num(certs) > 0)
        X509_free(sk_X509_pop(certs));
    });
    CHECK(verify(der, apple_anchors(), bundle).reason == fraud_reason::invalid_signature);
  }
  SECTION("a different root (TPInAppReceipt wrongRootCertificateFails)") {
    // Trusting only the StoreKit certificate (a self-signed root) instead of Apple Root CA.
    auto wrong = load({{trust_pem("storekit-test.pem")}, {}, {}});
    CHECK(verify(bytes, *wrong, bundle).reason == fraud_reason::untrusted_certificate);
    // An intermediate cannot be configured as a root at all.
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    PKCS7* p7 = d2i_PKCS7(nullptr, &p, static_cast<long>(bytes.size()));
    REQUIRE(p7 != nullptr);
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, sk_X509_value(p7->d.sign->cert, 1));
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    std::string intermediate_pem(data, static_cast<std::size_t>(n));
    BIO_free(bio);
    PKCS7_free(p7);
    auto bad = sa::load_trust_anchors({{intermediate_pem}, {}, {}});
    REQUIRE_FALSE(bad);
    CHECK(bad.errors().front().code == "invalid_certificate");
  }
}

TEST_CASE("device hash of the unified vectors", "[store_a][vectors]") {
  SECTION("TPInAppReceipt sandbox G5 with its device UUID") {
    auto bytes = vector_bytes("apple-unified", "tpinappreceipt-sandbox-g5-ios");
    auto bundle = decode_ok(bytes).bundle_id;
    auto ok = verify(bytes, apple_anchors(), bundle, "956328D9-CC6A-47F4-BE40-6953FB0AB6C7");
    CHECK(ok.reason == fraud_reason::none);
    CHECK(verify(bytes, apple_anchors(), bundle, "956328d9-cc6a-47f4-be40-6953fb0ab6c7").reason
          == fraud_reason::none);
    auto zero = verify(bytes, apple_anchors(), bundle, "00000000-0000-0000-0000-000000000000");
    CHECK(zero.reason == fraud_reason::device_hash_mismatch);
    CHECK(verify(bytes, apple_anchors(), bundle, "not a uuid").reason
          == fraud_reason::device_hash_mismatch);
  }
  SECTION("AppReceiptValidator PurchasingExperiments with 5hgQmGLdQz+7lGddOBXSYw==") {
    auto raw = base64_decode("5hgQmGLdQz+7lGddOBXSYw==");
    REQUIRE(raw);
    REQUIRE(raw->size() == 16); // a UUID's bytes
    auto id = uuid_text(*raw);
    REQUIRE(parse_uuid(id));
    auto bytes
      = vector_bytes("apple-unified", "appreceiptvalidator-purchasingexperiments-sandbox-ios");
    auto v = verify(bytes, apple_anchors(), "com.hannesoid.PurchasingExperiments", id);
    INFO(v.detail);
    CHECK(v.reason == fraud_reason::none); // upstream: validation succeeds
    auto flipped = *raw;
    flipped[15] ^= 1;
    CHECK(verify(bytes, apple_anchors(), "com.hannesoid.PurchasingExperiments", uuid_text(flipped))
            .reason
          == fraud_reason::device_hash_mismatch);
  }
  SECTION("AppReceiptValidator MindNode (macOS) with its MAC address") {
    auto bytes = vector_bytes("apple-unified", "appreceiptvalidator-mindnode-production-macos");
    const char* bundle = "com.ideasoncanvas.mindnode.macos";
    CHECK(verify(bytes, apple_anchors(), bundle, "f8:ff:c2:1e:91:82").reason == fraud_reason::none);
    CHECK(verify(bytes, apple_anchors(), bundle, "F8-FF-C2-1E-91-82").reason == fraud_reason::none);
    CHECK(verify(bytes, apple_anchors(), bundle, "f8:ff:c2:1e:91:83").reason
          == fraud_reason::device_hash_mismatch);
  }
}

TEST_CASE("bundle id check comes after the signature and chain", "[store_a][vectors]") {
  auto bytes = vector_bytes("apple-unified", "revenuecat-sample1-sandbox-ios");
  auto v = verify(bytes, apple_anchors(), "com.example.other");
  CHECK(v.reason == fraud_reason::bundle_id_mismatch);
  REQUIRE(v.receipt);
  CHECK(v.receipt->bundle_id == "com.revenuecat.sampleapp");
  // The fraud order: a bad signature wins over a bundle mismatch.
  auto layout = locate(bytes);
  bytes[layout.signature_offset] ^= 0x40;
  CHECK(verify(bytes, apple_anchors(), "com.example.other").reason
        == fraud_reason::invalid_signature);
}

// ---- transaction (iOS 6) receipts ---------------------------------------------

namespace {

const sa::transaction_receipt& transaction(const sa::decoded_receipt& d) {
  REQUIRE(std::holds_alternative<sa::transaction_receipt>(d.detail));
  return std::get<sa::transaction_receipt>(d.detail);
}

// Rebuilds the outer plist with one value replaced (the decoder's map is sorted,
// which is fine: only purchase-info and signature are signed/checked).
std::string with_outer(const sa::transaction_receipt& t, const std::string& key,
                       const std::string& value) {
  std::string out = "{\n";
  for (auto [k, v] : t.outer) {
    if (k == key)
      v = value;
    out += "\t\"" + k + "\" = \"" + v + "\";\n";
  }
  return out + "}";
}

} // namespace

TEST_CASE("transaction receipts decode to their purchase-info", "[store_a][vectors]") {
  // Upstream tests assert only that unified parsers reject these (and, for
  // mindmob, that Apple's verifyReceipt accepted it with productId, purchaseDate and
  // quantity set); the values below are the locally decoded ones in SOURCES.md.
  SECTION("mbaasy yearly subscription") {
    auto d
      = decode_ok(vector_bytes("apple-transaction", "mbaasy-yearly-subscription-sandbox-2015"));
    CHECK(d.style == receipt_style::transaction);
    CHECK(d.env == environment::sandbox);
    CHECK(d.bundle_id == "com.mbaasy.ios.demo");
    const auto& t = transaction(d);
    CHECK(t.signature_version == 2);
    CHECK(t.signature.size() == 128);
    CHECK(t.leaf_der.size() == 855);
    CHECK(t.outer.at("pod") == "100");
    CHECK(t.outer.at("signing-status") == "0");
    CHECK(t.purchase_info.at("unique-vendor-identifier") == "4E5E1A3B-F01A-4855-820F-F349F1242148");
    REQUIRE(d.in_app.size() == 1);
    const auto& p = d.in_app[0];
    CHECK(p.product_id == "yearly");
    CHECK(p.transaction_id == "1000000181298734");
    CHECK(p.original_transaction_id == "1000000180636226");
    CHECK(p.purchase_date == 1447821281000);
    CHECK(p.purchase_date == parse_apple_gmt("2015-11-18 04:34:41 Etc/GMT"));
    CHECK(p.original_purchase_date == 1447778081000);
    CHECK(p.expires_date == 1448346881000);
    CHECK(p.expires_date == parse_apple_gmt("2015-11-24 06:34:41 Etc/GMT"));
    CHECK(p.web_order_line_item_id == "1000000030938713");
    CHECK(p.quantity == 1);
    CHECK_FALSE(p.cancellation_date);
    CHECK(d.signed_at == p.purchase_date);
  }
  SECTION("es purchaser consumable") {
    auto d = decode_ok(vector_bytes("apple-transaction", "es-purchaser-consumable-sandbox-2015"));
    CHECK(d.style == receipt_style::transaction);
    CHECK(d.env == environment::sandbox);
    CHECK(d.bundle_id == "com.es.Purchaser");
    REQUIRE(d.in_app.size() == 1);
    const auto& p = d.in_app[0];
    CHECK(p.product_id == "purchaser.consumableFeature");
    CHECK(p.transaction_id == "1000000181492557");
    CHECK(p.original_transaction_id == "1000000181492557");
    CHECK(p.purchase_date == 1448296347138);
    CHECK(p.original_purchase_date == 1448296347138);
    CHECK(p.quantity == 1);
    CHECK_FALSE(p.expires_date);
    CHECK_FALSE(p.web_order_line_item_id);
    CHECK(transaction(d).purchase_info.at("item-id") == "1061557484");
  }
  SECTION("mindmob download (2012)") {
    auto d = decode_ok(vector_bytes("apple-transaction", "mindmob-download-sandbox-2012"));
    CHECK(d.bundle_id == "com.mindmobapp.MindMob");
    CHECK(d.env == environment::sandbox);
    REQUIRE(d.in_app.size() == 1);
    const auto& p = d.in_app[0];
    CHECK(p.product_id == "com.mindmobapp.download"); // upstream: truthy
    CHECK(p.purchase_date == 1335798355868);          // upstream: truthy
    CHECK(p.quantity == 1);                           // upstream: truthy
    CHECK(p.transaction_id == "1000000046178817");
    CHECK_FALSE(transaction(d).purchase_info.count("unique-vendor-identifier"));
  }
  SECTION("the environment key decides; absent means production") {
    auto bytes = vector_bytes("apple-transaction", "es-purchaser-consumable-sandbox-2015");
    auto d = decode_ok(bytes);
    auto production = with_outer(transaction(d), "environment", "Production");
    CHECK(decode_ok(production).env == environment::production);
  }
}

TEST_CASE("Apple's unsigned legacy mock is rejected as malformed", "[store_a][vectors]") {
  // apple/app-store-server-library-python mock: {"purchase-info" = …} and nothing
  // else. Without "signature" it is not a transaction receipt (DESIGN.md §3 style
  // detection) and not PKCS#7 either: malformed_receipt, not invalid_signature,
  // because there is no signature to be wrong.
  auto bytes = vector_bytes("apple-transaction", "apple-library-legacy-minimal-unsigned");
  auto d = sa::decode_receipt(bytes);
  REQUIRE_FALSE(d);
  CHECK(d.errors().front().field == "receipt");
  CHECK(d.errors().front().code == "malformed_receipt");
  CHECK_THAT(d.errors().front().message, Catch::Contains("no signature"));
  auto v = verify(bytes, apple_anchors(), "");
  CHECK(v.reason == fraud_reason::malformed_receipt);
  CHECK_FALSE(v.receipt);
}

TEST_CASE("transaction vectors verify at their purchase date and not now",
          "[store_a][vectors][crypto]") {
  for (const char* name : transaction_vectors) {
    SECTION(name) {
      auto bytes = vector_bytes("apple-transaction", name);
      auto d = decode_ok(bytes);
      auto v = verify(bytes, apple_anchors(), d.bundle_id);
      INFO(v.detail);
      CHECK(v.reason == fraud_reason::none);
      auto now = verify(bytes, apple_anchors(), d.bundle_id, {}, now_ms());
      CHECK(now.reason == fraud_reason::untrusted_certificate);
      CHECK_THAT(now.detail, Catch::Contains("expired"));
      // Without the iTunes Store intermediate the leaf cannot be chained.
      auto no_intermediate = load({{trust_pem("apple-root-ca.pem")}, {}, {}});
      CHECK(verify(bytes, *no_intermediate, d.bundle_id).reason
            == fraud_reason::untrusted_certificate);
      CHECK(verify(bytes, apple_anchors(), "com.example.other").reason
            == fraud_reason::bundle_id_mismatch);
    }
  }
}

TEST_CASE("tampered transaction receipts", "[store_a][vectors][crypto]") {
  for (const char* name : transaction_vectors) {
    SECTION(name) {
      auto bytes = vector_bytes("apple-transaction", name);
      auto d = decode_ok(bytes);
      const auto& t = transaction(d);

      // purchase-info quantity 1 → 2 (the CHECKS.txt tamper check).
      auto info = t.purchase_info_bytes;
      auto at = info.find("\"quantity\" = \"1\"");
      REQUIRE(at != std::string::npos);
      info[at + 14] = '2';
      auto tampered = with_outer(t, "purchase-info", base64_encode(info));
      auto v = verify(tampered, apple_anchors(), d.bundle_id);
      CHECK(v.reason == fraud_reason::invalid_signature);
      // What a forged receipt claims is not decoded, let alone kept: its style only.
      REQUIRE(v.receipt);
      CHECK(v.receipt->style == receipt_style::transaction);
      CHECK(v.receipt->in_app.empty());
      CHECK(v.receipt->bundle_id.empty());

      // One byte of the signature.
      auto blob = *base64_decode(t.outer.at("signature"));
      blob[5] ^= 0x01;
      CHECK(
        verify(with_outer(t, "signature", base64_encode(blob)), apple_anchors(), d.bundle_id).reason
        == fraud_reason::invalid_signature);

      // The version byte is signed too: 2 → 3 breaks the blob layout.
      blob = *base64_decode(t.outer.at("signature"));
      blob[0] = 3;
      CHECK(
        verify(with_outer(t, "signature", base64_encode(blob)), apple_anchors(), d.bundle_id).reason
        == fraud_reason::malformed_receipt);

      // The untouched receipt re-serialized still verifies (order of keys is free).
      CHECK(verify(with_outer(t, "pod", "100"), apple_anchors(), d.bundle_id).reason
            == fraud_reason::none);
    }
  }
}

TEST_CASE("transaction device check uses unique-vendor-identifier", "[store_a][vectors]") {
  auto bytes = vector_bytes("apple-transaction", "es-purchaser-consumable-sandbox-2015");
  const char* bundle = "com.es.Purchaser";
  CHECK(verify(bytes, apple_anchors(), bundle, "5C275B5A-3E66-4026-9523-845B225755FC").reason
        == fraud_reason::none);
  CHECK(verify(bytes, apple_anchors(), bundle, "5c275b5a-3e66-4026-9523-845b225755fc").reason
        == fraud_reason::none);
  CHECK(verify(bytes, apple_anchors(), bundle, "5C275B5A-3E66-4026-9523-845B225755FD").reason
        == fraud_reason::device_hash_mismatch);
  // A receipt from before vendor identifiers cannot confirm the device.
  auto old = vector_bytes("apple-transaction", "mindmob-download-sandbox-2012");
  CHECK(
    verify(old, apple_anchors(), "com.mindmobapp.MindMob", "5C275B5A-3E66-4026-9523-845B225755FC")
      .reason
    == fraud_reason::device_hash_mismatch);
}

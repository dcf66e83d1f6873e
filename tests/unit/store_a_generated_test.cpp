// Receipts signed by a test PKI built here with OpenSSL, for the cases no public
// vector covers. The test roots go through load_trust_anchors like Apple's.

#include <catch2/catch.hpp>

#include "model/identifiers.hpp"
#include "model/store_a/trust.hpp" // internal: the cache test looks inside
#include "tests/support/crypto/test_ca.hpp"
#include "tests/unit/store_a_fixtures.hpp"

using namespace store_a_fixtures;
using namespace receiptd::model;
namespace ts = receiptd::test_support;

namespace {

// RSA key generation is slow: one PKI per shape for the whole binary.
const ts::test_pki& pki_sha256() {
  static const auto pki = ts::make_test_pki({});
  return pki;
}

const ts::test_pki& pki_sha1() {
  static const auto pki = [] {
    ts::pki_options o;
    o.name = "receiptd sha1";
    o.signature_digest = ts::digest::sha1;
    return ts::make_test_pki(o);
  }();
  return pki;
}

// Transaction leaves, shaped like Apple's (test_ca.hpp): v2 blobs are signed by
// the RSA-1024 PurchaseReceiptCertificate under the iTunes-Store-like CA, v3
// blobs by the RSA-2048 receipt-signing leaf under the WWDR-like CA.
const ts::test_cert& transaction_leaf(int bits) {
  return bits == 1024 ? pki_sha256().transaction_leaf_v2 : pki_sha256().leaf;
}

const sa::trust_anchors& test_anchors() {
  static const auto anchors
    = load({{pki_sha256().root.pem(), pki_sha1().root.pem()},
            {pki_sha256().intermediate.pem(), pki_sha256().itunes_intermediate.pem()},
            {}});
  return *anchors;
}

sa::verification verify(const std::string& bytes, const sa::trust_anchors& anchors,
                        const std::string& bundle, std::optional<std::string> ifv = {},
                        std::optional<unix_ms> at = {}) {
  return sa::verify_receipt(bytes, anchors, bundle, ifv, sa::verify_options{at});
}

apple_in_app_purchase full_purchase(int i) {
  auto p = ts::purchase("com.example.receiptd.monthly", "20000000000" + std::to_string(1000 + i),
                        ts::utc(2024, 1, 1) + i * 3600000LL);
  p.original_transaction_id = "200000000001000";
  p.original_purchase_date = ts::utc(2024, 1, 1);
  p.expires_date = *p.purchase_date + 30LL * 86400000;
  p.web_order_line_item_id = std::to_string(700000000000 + i);
  p.is_trial_period = i == 0;
  p.is_in_intro_offer_period = false;
  p.product_type = 3;
  p.quantity = 1;
  return p;
}

} // namespace

TEST_CASE("generated unified receipt: every field round-trips", "[store_a][generated]") {
  ts::unified_receipt_params p;
  p.bundle_id = "com.example.receiptd";
  p.receipt_type = "Production";
  p.app_version = "3.2";
  p.original_app_version = "1.0";
  p.opaque = std::string("\x00\x01\x02\xff opaque", 10);
  p.creation_date = ts::utc(2024, 6, 1, 12, 30, 15);
  p.expiration_date = ts::utc(2024, 7, 1);
  auto consumable = ts::purchase("com.example.receiptd.coins", "100", ts::utc(2024, 5, 1));
  consumable.quantity = 5;
  consumable.cancellation_date = ts::utc(2024, 5, 2);
  p.in_app = {consumable, full_purchase(0), full_purchase(1)};
  auto bytes = ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha256()));

  auto v = verify(bytes, test_anchors(), "com.example.receiptd");
  INFO(v.detail);
  REQUIRE(v.reason == fraud_reason::none);
  REQUIRE(v.receipt);
  const auto& d = *v.receipt;
  CHECK(d.style == receipt_style::unified);
  CHECK(d.env == environment::production);
  CHECK(d.bundle_id == "com.example.receiptd");
  CHECK(d.signed_at == p.creation_date);
  const auto& u = std::get<sa::unified_receipt>(d.detail);
  CHECK(u.receipt_type == "Production");
  CHECK(u.app_version == "3.2");
  CHECK(u.original_app_version == "1.0");
  CHECK(u.opaque == *p.opaque);
  CHECK(u.expiration_date == p.expiration_date);
  CHECK(u.bundle_id_raw == std::string("\x0c\x14") + "com.example.receiptd");
  REQUIRE(d.in_app.size() == 3);
  CHECK(d.in_app[0].product_id == "com.example.receiptd.coins");
  CHECK(d.in_app[0].quantity == 5);
  CHECK(d.in_app[0].cancellation_date == ts::utc(2024, 5, 2));
  CHECK_FALSE(d.in_app[0].expires_date);           // written as "" → absent
  CHECK_FALSE(d.in_app[0].web_order_line_item_id); // written as INTEGER 0 → absent
  CHECK(d.in_app[0].is_trial_period == false);
  CHECK_FALSE(d.in_app[0].product_type);
  for (int i = 0; i < 2; ++i) {
    const auto& got = d.in_app[1 + i];
    const auto want = full_purchase(i);
    CHECK(got.product_id == want.product_id);
    CHECK(got.transaction_id == want.transaction_id);
    CHECK(got.original_transaction_id == want.original_transaction_id);
    CHECK(got.purchase_date == want.purchase_date);
    CHECK(got.original_purchase_date == want.original_purchase_date);
    CHECK(got.expires_date == want.expires_date);
    CHECK(got.web_order_line_item_id == want.web_order_line_item_id);
    CHECK(got.is_trial_period == want.is_trial_period);
    CHECK(got.is_in_intro_offer_period == want.is_in_intro_offer_period);
    CHECK(got.product_type == 3);
    CHECK_FALSE(got.cancellation_date);
  }
}

TEST_CASE("generated unified receipts: digests and signer shapes", "[store_a][generated]") {
  ts::unified_receipt_params p;
  SECTION("SHA-256 content digest, SHA-256 certificates") {
    auto bytes
      = ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha256(), ts::digest::sha256));
    CHECK(verify(bytes, test_anchors(), p.bundle_id).reason == fraud_reason::none);
  }
  SECTION("SHA-1 content digest, SHA-1 certificates") {
    auto bytes = ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha1(), ts::digest::sha1));
    auto v = verify(bytes, test_anchors(), p.bundle_id);
    INFO(v.detail);
    CHECK(v.reason == fraud_reason::none);
  }
  SECTION("SHA-1 content digest under SHA-256 certificates") {
    auto bytes = ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha256(), ts::digest::sha1));
    CHECK(verify(bytes, test_anchors(), p.bundle_id).reason == fraud_reason::none);
  }
  SECTION("with signed attributes (messageDigest checked)") {
    auto signer = ts::apple_like_signer(pki_sha256());
    signer.signed_attributes = true;
    auto bytes = ts::make_unified_receipt(p, signer);
    CHECK(verify(bytes, test_anchors(), p.bundle_id).reason == fraud_reason::none);
  }
  SECTION("the root embedded as well") {
    auto signer = ts::apple_like_signer(pki_sha256());
    signer.chain.push_back(pki_sha256().root);
    CHECK(verify(ts::make_unified_receipt(p, signer), test_anchors(), p.bundle_id).reason
          == fraud_reason::none);
  }
  SECTION("a root the service does not trust") {
    auto signer = ts::apple_like_signer(pki_sha1());
    auto sha256_only = load({{pki_sha256().root.pem()}, {}, {}});
    auto v = verify(ts::make_unified_receipt(p, signer), *sha256_only, p.bundle_id);
    CHECK(v.reason == fraud_reason::untrusted_certificate);
  }
}

TEST_CASE("generated unified receipts: chain and OID failures", "[store_a][generated]") {
  ts::unified_receipt_params p;
  SECTION("bundle id mismatch with a valid signature") {
    auto bytes = ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha256()));
    auto v = verify(bytes, test_anchors(), "com.example.someone-else");
    CHECK(v.reason == fraud_reason::bundle_id_mismatch);
    REQUIRE(v.receipt);
    CHECK(v.receipt->bundle_id == p.bundle_id);
    // Exact comparison: case matters.
    CHECK(verify(bytes, test_anchors(), "COM.example.receiptd").reason
          == fraud_reason::bundle_id_mismatch);
  }
  SECTION("leaf without the receipt-signing OID") {
    ts::cert_options o;
    o.common_name = "leaf without marker";
    auto leaf = ts::make_cert(o, &pki_sha256().intermediate);
    ts::receipt_signer signer{leaf, {pki_sha256().intermediate}};
    auto v = verify(ts::make_unified_receipt(p, signer), test_anchors(), p.bundle_id);
    CHECK(v.reason == fraud_reason::untrusted_certificate);
    CHECK_THAT(v.detail, Catch::Contains("1.2.840.113635.100.6.11.1"));
  }
  SECTION("intermediate without the WWDR OID") {
    ts::pki_options o;
    o.name = "no intermediate marker";
    o.intermediate_marker = false;
    auto pki = ts::make_test_pki(o);
    auto anchors = load({{pki.root.pem()}, {}, {}});
    auto v = verify(ts::make_unified_receipt(p, ts::apple_like_signer(pki)), *anchors, p.bundle_id);
    CHECK(v.reason == fraud_reason::untrusted_certificate);
    CHECK_THAT(v.detail, Catch::Contains("1.2.840.113635.100.6.2.1"));
  }
  SECTION("intermediate missing from the receipt") {
    ts::receipt_signer signer{pki_sha256().leaf, {}};
    auto v = verify(ts::make_unified_receipt(p, signer), test_anchors(), p.bundle_id);
    CHECK(v.reason == fraud_reason::untrusted_certificate);
    // Configured intermediates are for transaction receipts only: test_anchors()
    // holds this very intermediate and still does not complete the chain.
  }
  SECTION("signed by the intermediate itself (intermediate as leaf)") {
    ts::receipt_signer signer{pki_sha256().intermediate, {}};
    CHECK(verify(ts::make_unified_receipt(p, signer), test_anchors(), p.bundle_id).reason
          == fraud_reason::untrusted_certificate);
  }
  SECTION("signed by the leaf, leaf used as intermediate too") {
    ts::receipt_signer signer{pki_sha256().leaf, {pki_sha256().leaf}};
    CHECK(verify(ts::make_unified_receipt(p, signer), test_anchors(), p.bundle_id).reason
          == fraud_reason::untrusted_certificate);
  }
  SECTION("creation date outside the leaf's validity, and an explicit date") {
    ts::pki_options o;
    o.name = "short-lived leaf";
    o.not_before = ts::utc(2021, 1, 1);
    o.leaf_not_after = ts::utc(2023, 1, 1);
    auto pki = ts::make_test_pki(o);
    auto anchors = load({{pki.root.pem()}, {}, {}});
    p.creation_date = ts::utc(2022, 6, 1);
    auto bytes = ts::make_unified_receipt(p, ts::apple_like_signer(pki));
    CHECK(verify(bytes, *anchors, p.bundle_id).reason == fraud_reason::none);
    CHECK(verify(bytes, *anchors, p.bundle_id, {}, ts::utc(2023, 6, 1)).reason
          == fraud_reason::untrusted_certificate);
    p.creation_date = ts::utc(2020, 6, 1); // before the chain existed
    CHECK(
      verify(ts::make_unified_receipt(p, ts::apple_like_signer(pki)), *anchors, p.bundle_id).reason
      == fraud_reason::untrusted_certificate);
  }
}

TEST_CASE("generated unified receipts: many purchases and missing attributes",
          "[store_a][generated]") {
  SECTION("50 in-app purchases, in order") {
    ts::unified_receipt_params p;
    for (int i = 0; i < 50; ++i)
      p.in_app.push_back(full_purchase(i));
    auto bytes = ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha256()));
    auto v = verify(bytes, test_anchors(), p.bundle_id);
    REQUIRE(v.reason == fraud_reason::none);
    REQUIRE(v.receipt->in_app.size() == 50);
    for (int i = 0; i < 50; ++i) {
      CHECK(v.receipt->in_app[i].transaction_id == full_purchase(i).transaction_id);
      CHECK(v.receipt->in_app[i].web_order_line_item_id == full_purchase(i).web_order_line_item_id);
    }
    CHECK(std::get<sa::unified_receipt>(v.receipt->detail).in_app.size() == 50);
  }
  SECTION("only bundle id and creation date; minimal purchases") {
    ts::unified_receipt_params p;
    p.receipt_type.reset();
    p.app_version.reset();
    p.original_app_version.reset();
    p.opaque.reset();
    p.write_absent_in_app_fields = false;
    apple_in_app_purchase minimal;
    minimal.product_id = "com.example.receiptd.min";
    minimal.transaction_id = "1";
    p.in_app = {minimal};
    auto bytes = ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha256()));
    auto v = verify(bytes, test_anchors(), p.bundle_id);
    INFO(v.detail);
    REQUIRE(v.reason == fraud_reason::none);
    const auto& d = *v.receipt;
    const auto& u = std::get<sa::unified_receipt>(d.detail);
    CHECK(d.env == environment::production); // no receipt type: production
    CHECK(u.receipt_type.empty());
    CHECK(u.app_version.empty());
    CHECK(u.opaque.empty());
    CHECK(u.sha1_hash.empty());
    CHECK_FALSE(u.expiration_date);
    REQUIRE(d.in_app.size() == 1);
    CHECK(d.in_app[0].product_id == "com.example.receiptd.min");
    CHECK(d.in_app[0].quantity == 1);
    CHECK_FALSE(d.in_app[0].purchase_date);
    CHECK_FALSE(d.in_app[0].is_trial_period);
    CHECK_FALSE(d.in_app[0].is_in_intro_offer_period);
    // No hash in the receipt: a device id cannot be confirmed.
    CHECK(verify(bytes, test_anchors(), p.bundle_id, "956328D9-CC6A-47F4-BE40-6953FB0AB6C7").reason
          == fraud_reason::device_hash_mismatch);
  }
  SECTION("no creation date: the chain is evaluated now") {
    ts::unified_receipt_params p;
    p.creation_date.reset();
    auto v = verify(ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha256())),
                    test_anchors(), p.bundle_id);
    CHECK(v.reason == fraud_reason::none); // the test chain is valid until 2040
    CHECK_FALSE(v.receipt->signed_at);
  }
  SECTION("undocumented attributes are ignored") {
    ts::unified_receipt_params p;
    p.extra_attributes = {{8, "\x16\x00"}, {1000, "anything"}, {-5, ""}};
    auto v = verify(ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha256())),
                    test_anchors(), p.bundle_id);
    CHECK(v.reason == fraud_reason::none);
  }
}

TEST_CASE("generated unified receipts: device hash", "[store_a][generated]") {
  const std::string uuid = "956328D9-CC6A-47F4-BE40-6953FB0AB6C7";
  auto raw = parse_uuid(uuid);
  REQUIRE(raw);
  ts::unified_receipt_params p;
  p.device_id = std::string(raw->begin(), raw->end());
  auto bytes = ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha256()));
  CHECK(verify(bytes, test_anchors(), p.bundle_id, uuid).reason == fraud_reason::none);
  CHECK(verify(bytes, test_anchors(), p.bundle_id, "956328D9-CC6A-47F4-BE40-6953FB0AB6C8").reason
        == fraud_reason::device_hash_mismatch);
  // No identifier sent: the check is skipped.
  CHECK(verify(bytes, test_anchors(), p.bundle_id).reason == fraud_reason::none);
  // The bundle check comes first.
  CHECK(verify(bytes, test_anchors(), "com.other", "00000000-0000-0000-0000-000000000000").reason
        == fraud_reason::bundle_id_mismatch);
}

TEST_CASE("generated receipts under an opt-in sandbox root", "[store_a][generated]") {
  // Like Xcode's StoreKit certificate: self-signed, no Apple markers, signs receipts itself.
  static const auto storekit = [] {
    ts::cert_options o;
    o.common_name = "receiptd StoreKit";
    return ts::make_cert(o);
  }();
  auto with_sandbox = load({{pki_sha256().root.pem()}, {}, {storekit.pem()}});
  ts::unified_receipt_params p;
  ts::receipt_signer signer{storekit, {}};
  SECTION("Xcode receipt type") {
    p.receipt_type = "Xcode";
    auto bytes = ts::make_unified_receipt(p, signer);
    auto v = verify(bytes, *with_sandbox, p.bundle_id);
    CHECK(v.reason == fraud_reason::none);
    CHECK(v.receipt->env == environment::xcode);
    CHECK(verify(bytes, test_anchors(), p.bundle_id).reason == fraud_reason::untrusted_certificate);
  }
  SECTION("a sandbox root cannot mint production receipts") {
    p.receipt_type = "Production";
    auto v = verify(ts::make_unified_receipt(p, signer), *with_sandbox, p.bundle_id);
    CHECK(v.reason == fraud_reason::none);
    CHECK(v.receipt->env == environment::xcode);
  }
  SECTION("App Store receipts keep their own environment") {
    p.receipt_type = "Production";
    auto v = verify(ts::make_unified_receipt(p, ts::apple_like_signer(pki_sha256())), *with_sandbox,
                    p.bundle_id);
    CHECK(v.reason == fraud_reason::none);
    CHECK(v.receipt->env == environment::production);
  }
}

TEST_CASE("generated transaction receipts with v2 and v3 blobs", "[store_a][generated]") {
  for (int version : {2, 3}) {
    DYNAMIC_SECTION("blob version " << version) {
      const auto& leaf = transaction_leaf(version == 2 ? 1024 : 2048);
      ts::transaction_receipt_params p;
      p.blob_version = version;
      p.product_id = "com.example.receiptd.yearly";
      p.transaction_id = "1000000181298734";
      p.original_transaction_id = "1000000180636226";
      p.purchase_date = ts::utc(2024, 2, 1, 10);
      p.original_purchase_date = ts::utc(2024, 1, 1);
      p.quantity = 2;
      p.expires_date = ts::utc(2025, 2, 1, 10);
      p.web_order_line_item_id = "1000000030938713";
      p.unique_vendor_identifier = "4E5E1A3B-F01A-4855-820F-F349F1242148";
      p.is_trial_period = true;
      auto bytes = ts::make_transaction_receipt(p, leaf);

      auto v = verify(bytes, test_anchors(), p.bundle_id, "4e5e1a3b-f01a-4855-820f-f349f1242148");
      INFO(v.detail);
      REQUIRE(v.reason == fraud_reason::none);
      const auto& d = *v.receipt;
      CHECK(d.style == receipt_style::transaction);
      CHECK(d.env == environment::sandbox);
      CHECK(d.bundle_id == p.bundle_id);
      CHECK(d.signed_at == p.purchase_date);
      const auto& t = std::get<sa::transaction_receipt>(d.detail);
      CHECK(t.signature_version == version);
      CHECK(t.signature.size() == (version == 2 ? 128u : 256u));
      REQUIRE(d.in_app.size() == 1);
      const auto& got = d.in_app[0];
      CHECK(got.product_id == p.product_id);
      CHECK(got.transaction_id == p.transaction_id);
      CHECK(got.original_transaction_id == p.original_transaction_id);
      CHECK(got.purchase_date == p.purchase_date);
      CHECK(got.original_purchase_date == p.original_purchase_date);
      CHECK(got.quantity == 2);
      CHECK(got.expires_date == p.expires_date);
      CHECK(got.web_order_line_item_id == p.web_order_line_item_id);
      CHECK(got.is_trial_period == true);

      CHECK(verify(bytes, test_anchors(), "com.other").reason == fraud_reason::bundle_id_mismatch);
      CHECK(
        verify(bytes, test_anchors(), p.bundle_id, "00000000-0000-0000-0000-000000000000").reason
        == fraud_reason::device_hash_mismatch);
      // The intermediate must be configured: transaction receipts embed only the leaf.
      auto root_only = load({{pki_sha256().root.pem()}, {}, {}});
      CHECK(verify(bytes, *root_only, p.bundle_id).reason == fraud_reason::untrusted_certificate);
      // Before the chain existed.
      CHECK(verify(bytes, test_anchors(), p.bundle_id, {}, ts::utc(2019, 1, 1)).reason
            == fraud_reason::untrusted_certificate);
      // Production: no environment key.
      p.environment.reset();
      CHECK(sa::decode_receipt(ts::make_transaction_receipt(p, leaf))->env
            == environment::production);
    }
  }
  SECTION("a leaf from an unknown CA") {
    ts::pki_options o;
    o.name = "foreign";
    o.leaf_key_bits = 1024;
    auto foreign = ts::make_test_pki(o);
    ts::transaction_receipt_params p;
    CHECK(verify(ts::make_transaction_receipt(p, foreign.leaf), test_anchors(), p.bundle_id).reason
          == fraud_reason::untrusted_certificate);
  }
}

TEST_CASE("validly signed but hostile payloads are malformed", "[store_a][generated]") {
  auto signer = ts::apple_like_signer(pki_sha256());
  auto malformed_when_signed = [&](const std::string& payload) {
    auto v = verify(ts::sign_pkcs7(payload, signer), test_anchors(), "com.example.receiptd");
    INFO(v.detail);
    CHECK(v.reason == fraud_reason::malformed_receipt);
    CHECK_FALSE(v.receipt);
  };
  ts::unified_receipt_params p;
  auto good = ts::make_unified_payload(p);
  SECTION("empty content") {
    malformed_when_signed("");
  }
  SECTION("not a SET") {
    malformed_when_signed("\x30\x00");
  }
  SECTION("bytes after the SET") {
    malformed_when_signed(good + "x");
  }
  SECTION("truncated SET") {
    malformed_when_signed(good.substr(0, good.size() - 1));
  }
  SECTION("bundle id twice") {
    p.extra_attributes = {{2, std::string("\x0c\x04", 2) + "evil"}};
    malformed_when_signed(ts::make_unified_payload(p));
  }
  SECTION("bundle id not UTF-8") {
    p.extra_attributes = {{3, std::string("\x0c\x02\xc3\x28", 4)}};
    p.app_version.reset();
    malformed_when_signed(ts::make_unified_payload(p));
  }
  SECTION("creation date not RFC 3339") {
    p.creation_date.reset();
    p.extra_attributes = {{12, std::string("\x16\x0a") + "yesterday!"}};
    malformed_when_signed(ts::make_unified_payload(p));
  }
  SECTION("in-app quantity not an INTEGER") {
    auto in_app = std::string("\x31\x0c\x30\x0a\x02\x02\x06\xa5\x02\x01\x01\x04\x01\x00", 14);
    p.extra_attributes = {{17, in_app}};
    malformed_when_signed(ts::make_unified_payload(p));
  }
  SECTION("attribute type wider than 64 bits") {
    auto attr
      = std::string("\x30\x10\x02\x09\x01\x00\x00\x00\x00\x00\x00\x00\x00\x02\x01\x01\x04\x00", 18);
    malformed_when_signed(std::string("\x31\x12", 2) + attr);
  }
  SECTION("more certificates than any receipt carries") {
    auto many = signer;
    for (int i = 0; i < 16; ++i)
      many.chain.push_back(pki_sha256().root);
    auto v = verify(ts::make_unified_receipt(p, many), test_anchors(), p.bundle_id);
    CHECK(v.reason == fraud_reason::malformed_receipt);
    many.chain.resize(15); // 16 in all: still fine
    CHECK(verify(ts::make_unified_receipt(p, many), test_anchors(), p.bundle_id).reason
          == fraud_reason::none);
  }
  SECTION("indefinite length inside the payload") {
    malformed_when_signed(std::string("\x31\x80\x00\x00", 4));
  }
}

TEST_CASE("the verification cache admits only verified chains and stays exact",
          "[store_a][generated][cache]") {
  // Fresh anchors, so the counts below are this test's own.
  auto anchors = load({{pki_sha256().root.pem()}, {pki_sha256().intermediate.pem()}, {}});
  const auto& cache = anchors->cache();
  ts::unified_receipt_params p;
  auto signer = ts::apple_like_signer(pki_sha256());

  SECTION("failed verifications remember nothing") {
    auto tampered = ts::make_unified_receipt(p, signer);
    tampered[tampered.size() - 2] ^= 1; // the signature
    CHECK(verify(tampered, *anchors, p.bundle_id).reason == fraud_reason::invalid_signature);
    ts::receipt_signer no_intermediate{pki_sha256().leaf, {}};
    CHECK(verify(ts::make_unified_receipt(p, no_intermediate), *anchors, p.bundle_id).reason
          == fraud_reason::untrusted_certificate);
    CHECK(cache.certificate_count() == 0);
  }
  SECTION("certificates a receipt carries beside its chain are not admitted") {
    static const auto junk = [] {
      ts::cert_options o;
      o.common_name = "junk";
      return ts::make_cert(o);
    }();
    signer.chain.push_back(junk);
    signer.chain.push_back(pki_sha256().root); // an embedded copy of the root is the chain's own
    CHECK(verify(ts::make_unified_receipt(p, signer), *anchors, p.bundle_id).reason
          == fraud_reason::none);
    CHECK(cache.certificate_count() == 3); // leaf, intermediate, root copy
  }
  SECTION("a remembered chain stands only inside its validity window") {
    auto bytes = ts::make_unified_receipt(p, signer);
    CHECK(verify(bytes, *anchors, p.bundle_id).reason == fraud_reason::none);
    CHECK(cache.certificate_count() == 2);
    for (int i = 0; i < 3; ++i) // from memory now
      CHECK(verify(bytes, *anchors, p.bundle_id).reason == fraud_reason::none);
    CHECK(verify(bytes, *anchors, p.bundle_id, {}, ts::utc(2019, 12, 31, 23, 59, 59)).reason
          == fraud_reason::untrusted_certificate);
    CHECK(verify(bytes, *anchors, p.bundle_id, {}, ts::utc(2020, 1, 1)).reason
          == fraud_reason::none);
    CHECK(verify(bytes, *anchors, p.bundle_id, {}, ts::utc(2040, 1, 1) + 999).reason
          == fraud_reason::none);
    CHECK(verify(bytes, *anchors, p.bundle_id, {}, ts::utc(2040, 1, 1, 0, 0, 1)).reason
          == fraud_reason::untrusted_certificate);
    // Same leaf, intermediate no longer embedded: the memo does not apply.
    ts::receipt_signer leaf_only{pki_sha256().leaf, {}};
    CHECK(verify(ts::make_unified_receipt(p, leaf_only), *anchors, p.bundle_id).reason
          == fraud_reason::untrusted_certificate);
    // A transaction receipt by the same leaf is judged by its own rules.
    ts::transaction_receipt_params tp;
    tp.blob_version = 3;
    tp.purchase_date = ts::utc(2024, 3, 1);
    CHECK(verify(ts::make_transaction_receipt(tp, pki_sha256().leaf), *anchors, tp.bundle_id).reason
          == fraud_reason::none);
  }
}

// App Store Server API: the in-app purchase key, the ES256 JWT, the Get
// Transaction Info URL and how its answers map onto the status table.
#include <catch2/catch.hpp>

#include "tests/support/crypto/test_jws.hpp"

#include <boost/json/parse.hpp>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstring>
#include <memory>
#include <set>

#include "model/encoding.hpp"
#include "model/store_a/history.hpp"
#include "model/store_a/server_api.hpp"
#include "tests/support/crypto/test_ca.hpp"

using namespace receiptd::model;
using namespace receiptd::model::store_a;
namespace test_support = receiptd::test_support;
using receiptd::test_support::utc;

namespace {

using pkey_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

const std::string issuer = "57246542-96fe-1a63-e053-0824d011072a";
const std::string key_id = "2X9R4HXF34";

pkey_ptr ec_key(const char* curve) {
  pkey_ptr key{EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", curve), EVP_PKEY_free};
  REQUIRE(key);
  return key;
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  auto len = BIO_get_mem_data(bio, &data);
  std::string text(data, static_cast<size_t>(len));
  BIO_free(bio);
  return text;
}

// PKCS#8 PEM, as App Store Connect's .p8 files are; with a passphrase: encrypted.
std::string private_pem(EVP_PKEY* key, const char* passphrase = nullptr) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (passphrase)
    REQUIRE(PEM_write_bio_PKCS8PrivateKey(bio, key, EVP_aes_256_cbc(), passphrase,
                                          static_cast<int>(std::strlen(passphrase)), nullptr,
                                          nullptr)
            == 1);
  else
    REQUIRE(PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1);
  return bio_text(bio);
}

std::string public_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  REQUIRE(PEM_write_bio_PUBKEY(bio, key) == 1);
  return bio_text(bio);
}

// Verifies a JWS ES256 signature (raw r ‖ s) with a public key given as PEM: the
// raw form is turned back into DER, as OpenSSL wants it.
bool verifies(const std::string& public_key_pem, const std::string& input,
              const std::string& raw_signature) {
  BIO* bio = BIO_new_mem_buf(public_key_pem.data(), static_cast<int>(public_key_pem.size()));
  pkey_ptr pub{PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr), EVP_PKEY_free};
  BIO_free(bio);
  REQUIRE(pub);
  return test_support::es256_verifies(input, raw_signature, pub.get());
}

// The one field error of a parse that must fail.
field_error only_error(const result<std::shared_ptr<const server_api_key>>& parsed) {
  REQUIRE_FALSE(parsed.ok());
  REQUIRE(parsed.errors().size() == 1);
  return parsed.errors().front();
}

} // namespace

TEST_CASE("an App Store in-app purchase key parses; ids and key are checked per field",
          "[server_api]") {
  auto p256 = ec_key("P-256");
  auto pem = private_pem(p256.get());

  auto parsed = server_api_key::parse(issuer, key_id, pem);
  REQUIRE(parsed);
  CHECK((*parsed)->issuer_id() == issuer);
  CHECK((*parsed)->key_id() == key_id);

  SECTION("issuer id") {
    for (const auto& [bad, code] : std::vector<std::pair<std::string, std::string>>{
           {"", "missing"},
           {std::string(257, 'a'), "too_long"},
           {issuer + "\n", "invalid_characters"},
           {"57246542 96fe", "invalid_characters"},
           {"issuer-\xc3\xa9", "invalid_characters"},
           {std::string("a\0b", 3), "invalid_characters"}}) {
      INFO("issuer id: " << bad);
      auto e = only_error(server_api_key::parse(bad, key_id, pem));
      CHECK(e.field == "app_store_issuer_id");
      CHECK(e.code == code);
    }
    CHECK(server_api_key::parse(std::string(256, 'a'), key_id, pem)); // the longest allowed
  }
  SECTION("key id") {
    for (const auto& bad : {std::string(), std::string(257, 'K'), std::string("2X9R4 HXF34")}) {
      auto e = only_error(server_api_key::parse(issuer, bad, pem));
      CHECK(e.field == "app_store_key_id");
    }
  }
  SECTION("private key") {
    auto key_error = [&](const std::string& text) {
      auto e = only_error(server_api_key::parse(issuer, key_id, text));
      CHECK(e.field == "app_store_private_key");
      return e.code;
    };
    CHECK(key_error("") == "missing");
    CHECK(key_error("MIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQg") == "not_pem");
    CHECK(key_error("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
          == "not_private_key");
    CHECK(key_error(public_pem(p256.get())) == "not_private_key"); // the public half only
    // Encrypted: refused without asking for a passphrase (this would hang otherwise).
    CHECK(key_error(private_pem(p256.get(), "secret")) == "not_private_key");
    CHECK(key_error(private_pem(ec_key("P-384").get())) == "not_p256");
    CHECK(key_error(pem + std::string(16 * 1024, '\n')) == "too_long");
    pkey_ptr rsa{EVP_RSA_gen(2048), EVP_PKEY_free};
    REQUIRE(rsa);
    CHECK(key_error(private_pem(rsa.get())) == "not_p256");
  }
  SECTION("every bad field is named") {
    auto all = server_api_key::parse("", "", "nope");
    REQUIRE_FALSE(all.ok());
    std::set<std::string> fields;
    for (const auto& e : all.errors())
      fields.insert(e.field);
    CHECK(
      fields
      == std::set<std::string>{"app_store_issuer_id", "app_store_key_id", "app_store_private_key"});
  }
}

TEST_CASE("the Server API JWT: ES256 over the documented header and claims", "[server_api]") {
  auto key = ec_key("P-256");
  auto parsed = server_api_key::parse(issuer, key_id, private_pem(key.get()));
  REQUIRE(parsed);
  const auto& api_key = **parsed;
  const unix_ms now = 1'700'000'000'999;

  auto jwt = api_key.make_jwt(now, "com.example.app");
  auto parts = test_support::split_compact(jwt);
  REQUIRE(parts.size() == 3);
  CHECK(test_support::base64url_decode(parts[0])
        == R"({"alg":"ES256","kid":"2X9R4HXF34","typ":"JWT"})");
  CHECK(test_support::base64url_decode(parts[1])
        == R"({"iss":"57246542-96fe-1a63-e053-0824d011072a","iat":1700000000,"exp":1700001800,)"
           R"("aud":"appstoreconnect-v1","bid":"com.example.app"})");
  auto signature = test_support::base64url_decode(parts[2]);
  CHECK(signature.size() == 64);
  auto input = parts[0] + "." + parts[1];
  CHECK(verifies(public_pem(key.get()), input, signature));
  // The check can fail: another input, another key.
  CHECK_FALSE(verifies(public_pem(key.get()), input + "x", signature));
  CHECK_FALSE(verifies(public_pem(ec_key("P-256").get()), input, signature));

  SECTION("lifetime: as asked, at most 60 minutes") {
    auto claims = [&](std::chrono::seconds lifetime) {
      return boost::json::parse(test_support::base64url_decode(
        test_support::split_compact(api_key.make_jwt(now, "b", lifetime))[1]));
    };
    CHECK(claims(std::chrono::minutes(10)).at("exp") == 1700000600);
    CHECK(claims(std::chrono::minutes(60)).at("exp") == 1700003600);
    CHECK(claims(std::chrono::hours(2)).at("exp") == 1700003600);
    CHECK(claims(std::chrono::hours(2)).at("iat") == 1700000000);
  }
  SECTION("a later JWT differs, and so does a second one at the same instant") {
    auto later = api_key.make_jwt(now + 60'000, "com.example.app");
    CHECK(later != jwt);
    CHECK(boost::json::parse(test_support::base64url_decode(test_support::split_compact(later)[1]))
            .at("iat")
          == 1700000060);
    auto again = api_key.make_jwt(now, "com.example.app");
    CHECK(test_support::split_compact(again)[1] == parts[1]);
    CHECK(again != jwt); // ECDSA's fresh nonce
    CHECK(
      verifies(public_pem(key.get()),
               test_support::split_compact(again)[0] + "." + test_support::split_compact(again)[1],
               test_support::base64url_decode(test_support::split_compact(again)[2])));
  }
}

TEST_CASE("Get Transaction Info URLs escape the transaction id", "[server_api]") {
  // Apple's recommended hosts since 2026-05-05 (App Store Server API changelog).
  CHECK(transaction_info_url(default_server_api_url, "2000000123456789")
        == "https://api.storekit.apple.com/inApps/v1/transactions/2000000123456789");
  CHECK(transaction_info_url(default_server_api_sandbox_url, "1")
        == "https://api.storekit-sandbox.apple.com/inApps/v1/transactions/1");
  CHECK(transaction_info_url("http://127.0.0.1:9/sandbox//", "a/b c?d")
        == "http://127.0.0.1:9/sandbox/inApps/v1/transactions/a%2Fb%20c%3Fd");
}

TEST_CASE("Get Transaction Info answers map onto the status table", "[server_api][status]") {
  const unix_ms now = utc(2015, 10, 21, 7, 26, 30);
  auto classify
    = [&](int status, std::string body, std::string retry_after = "", std::string transport = "") {
        auto a = classify_transaction_info(status, body, transport, retry_after, now);
        INFO("HTTP " << status << " " << body << " → " << a.verdict.detail);
        CHECK(!a.verdict.detail.empty());
        CHECK(a.verdict.detail.size() <= 160); // a few words, never the body
        CHECK(a.verdict.detail.find("errorMessage") == std::string::npos);
        return a;
      };

  SECTION("200 with signedTransactionInfo: confirmed, still to be verified") {
    auto a = classify(200, R"({"signedTransactionInfo":"eyJhbGciOiJFUzI1NiJ9.e30.c2ln"})");
    CHECK(a.verdict.outcome == store_outcome::confirmed);
    CHECK(a.signed_transaction_info == "eyJhbGciOiJFUzI1NiJ9.e30.c2ln");
    CHECK_FALSE(a.transaction_not_found);
    CHECK_FALSE(a.verdict.operator_problem);
    CHECK_FALSE(a.retry_after_ms);
  }
  SECTION("200 without the field, with another type, or not JSON: unreachable") {
    for (const auto& body :
         {std::string("{}"), std::string(R"({"signedTransactionInfo":42})"),
          std::string(R"({"signedTransactionInfo":""})"), std::string("[]"),
          std::string("<html><body>" + std::string(5000, 'x') + "</body></html>")}) {
      auto a = classify(200, body);
      CHECK(a.verdict.outcome == store_outcome::unreachable);
      CHECK(a.signed_transaction_info.empty());
      CHECK_FALSE(a.verdict.operator_problem);
    }
    auto html = classify(200, "<html>down for maintenance</html>");
    CHECK(html.verdict.detail.find("maintenance") == std::string::npos);
    CHECK(html.verdict.body.empty()); // only JSON answers are kept
  }
  SECTION("404 TransactionIdNotFound: rejected, for the caller to ask the other host") {
    auto a = classify(404, R"({"errorCode":4040010,"errorMessage":"Transaction id not found."})");
    CHECK(a.verdict.outcome == store_outcome::rejected);
    CHECK(a.transaction_not_found);
    CHECK(a.verdict.detail.find("4040010") != std::string::npos);
    CHECK_FALSE(a.verdict.operator_problem);
  }
  SECTION("404 with another errorCode, or none: unreachable") {
    for (const auto& body : {std::string(R"({"errorCode":4040001,"errorMessage":"x"})"),
                             std::string(R"({"errorMessage":"Not Found"})"), std::string(""),
                             std::string("<html>404</html>")}) {
      auto a = classify(404, body);
      CHECK(a.verdict.outcome == store_outcome::unreachable);
      CHECK_FALSE(a.transaction_not_found);
    }
    CHECK(classify(404, R"({"errorCode":4040001})").verdict.detail.find("4040001")
          != std::string::npos);
  }
  SECTION("401 and 403: our credentials refused, an operator problem") {
    auto unauthorized = classify(401, "");
    CHECK(unauthorized.verdict.outcome == store_outcome::unreachable);
    CHECK(unauthorized.verdict.operator_problem);
    CHECK(unauthorized.verdict.detail.find("JWT") != std::string::npos);
    auto forbidden = classify(403, R"({"errorCode":4030000})");
    CHECK(forbidden.verdict.outcome == store_outcome::unreachable);
    CHECK(forbidden.verdict.operator_problem);
    CHECK(forbidden.verdict.detail.find("credentials") != std::string::npos);
  }
  SECTION("429: unreachable, with Retry-After in ms") {
    const std::string body = R"({"errorCode":4290000,"errorMessage":"Rate limit exceeded."})";
    auto seconds = classify(429, body, "7");
    CHECK(seconds.verdict.outcome == store_outcome::unreachable);
    CHECK_FALSE(seconds.verdict.operator_problem);
    CHECK(seconds.retry_after_ms == 7000);
    CHECK(seconds.verdict.detail.find("4290000") != std::string::npos);
    // An HTTP date, 90 s after `now`, in each form RFC 9110 has a recipient accept.
    CHECK(classify(429, body, "Wed, 21 Oct 2015 07:28:00 GMT").retry_after_ms == 90'000);
    CHECK(classify(429, body, "Wednesday, 21-Oct-15 07:28:00 GMT").retry_after_ms == 90'000);
    CHECK(classify(429, body, "Wed Oct 21 07:28:00 2015").retry_after_ms == 90'000);
    CHECK(classify(429, body, " 120 ").retry_after_ms == 120'000);
    CHECK(classify(429, body, "Wed, 21 Oct 2015 07:00:00 GMT").retry_after_ms == 0); // past
    for (const auto& bad : {"", "soon", "-5", "1.5", "99999999999", "Wed, 32 Oct 2015 07:28:00 GMT",
                            "Wed, 21 Foo 2015 07:28:00 GMT", "Wed, 21 Oct 2015 25:28:00 GMT"}) {
      INFO("Retry-After: " << bad);
      auto a = classify(429, body, bad);
      CHECK(a.verdict.outcome == store_outcome::unreachable);
      CHECK_FALSE(a.retry_after_ms);
    }
  }
  SECTION("5xx, other statuses, no answer: unreachable, not an operator problem") {
    auto internal = classify(500, R"({"errorCode":5000000,"errorMessage":"An unknown error."})");
    CHECK(internal.verdict.outcome == store_outcome::unreachable);
    CHECK(internal.verdict.detail == "HTTP 500 (errorCode 5000000)");
    CHECK_FALSE(internal.verdict.operator_problem);
    auto unavailable = classify(503, "<html>" + std::string(10'000, 'x') + "</html>");
    CHECK(unavailable.verdict.outcome == store_outcome::unreachable);
    CHECK(unavailable.verdict.detail == "HTTP 503");
    CHECK(classify(400, R"({"errorCode":4000006})").verdict.outcome == store_outcome::unreachable);
    CHECK(classify(302, "").verdict.outcome == store_outcome::unreachable);

    auto refused = classify(0, "", "", "Couldn't connect to server");
    CHECK(refused.verdict.outcome == store_outcome::unreachable);
    CHECK(refused.verdict.detail == "store unreachable: Couldn't connect to server");
    CHECK_FALSE(refused.verdict.operator_problem);
    auto long_error = classify(0, "", "", std::string(1000, 'e') + "\n\x01");
    CHECK(long_error.verdict.outcome == store_outcome::unreachable);
  }
}

TEST_CASE("Get Transaction History: its URL and how a page reads", "[server_api][history]") {
  CHECK(transaction_history_url("https://api.storekit.apple.com/", "2000000000000001")
        == "https://api.storekit.apple.com/inApps/v2/history/2000000000000001");
  CHECK(transaction_history_url("https://api.storekit-sandbox.apple.com", "1 2", "a&b=c")
        == "https://api.storekit-sandbox.apple.com/inApps/v2/history/1%202?revision=a%26b%3Dc");
  const unix_ms now = utc(2024, 6, 1);

  auto page = classify_transaction_history(
    200,
    R"({"revision":"r2","bundleId":"com.example","appAppleId":1,"environment":"Sandbox",)"
    R"("hasMore":true,"signedTransactions":["a.b.c","d.e.f"]})",
    "", "", now);
  CHECK(page.verdict.outcome == store_outcome::confirmed);
  CHECK(page.verdict.env == environment::sandbox);
  CHECK(page.has_more);
  CHECK(page.revision == "r2");
  CHECK(page.bundle_id == "com.example");
  CHECK(page.signed_transactions == std::vector<std::string>{"a.b.c", "d.e.f"});

  auto last = classify_transaction_history(
    200, R"({"revision":"r3","environment":"Production","hasMore":false,"signedTransactions":[]})",
    "", "", now);
  CHECK(last.verdict.outcome == store_outcome::confirmed);
  CHECK(last.verdict.env == environment::production);
  CHECK_FALSE(last.has_more);

  for (const char* bad : {R"({"hasMore":true,"signedTransactions":[]})", // nowhere to go on
                          R"({"revision":"r","signedTransactions":[]})",
                          R"({"revision":"r","hasMore":false})",
                          R"({"revision":"r","hasMore":false,"signedTransactions":[1]})",
                          R"({"revision":"r","hasMore":false,"signedTransactions":[""]})",
                          R"({"revision":5,"hasMore":false,"signedTransactions":[]})",
                          "<html></html>", "[]"}) {
    INFO(bad);
    auto a = classify_transaction_history(200, bad, "", "", now);
    CHECK(a.verdict.outcome == store_outcome::unreachable);
    CHECK(a.signed_transactions.empty());
  }
  auto unknown = classify_transaction_history(
    404, R"({"errorCode":4040010,"errorMessage":"Transaction id not found."})", "", "", now);
  CHECK(unknown.verdict.outcome == store_outcome::rejected);
  CHECK(unknown.transaction_not_found);
  auto limited = classify_transaction_history(
    429, R"({"errorCode":4290000,"errorMessage":"Rate limit exceeded."})", "", "2", now);
  CHECK(limited.verdict.outcome == store_outcome::unreachable);
  CHECK(limited.retry_after_ms == 2000);
  CHECK(classify_transaction_history(401, "", "", "", now).verdict.operator_problem);
  CHECK(classify_transaction_history(0, "", "timeout", "", now).verdict.outcome
        == store_outcome::unreachable);
}

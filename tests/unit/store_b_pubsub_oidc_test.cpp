// Pub/Sub push authentication (model/store_b/pubsub_oidc.hpp): Google-shaped
// OIDC ID tokens, RS256-signed here with a freshly generated RSA-2048 key
// published in a JWKS the way https://www.googleapis.com/oauth2/v3/certs
// writes it. A genuine token verifies and yields its claims; each check is
// shown refusing a token that fails only that check (the refusal message names
// the check); the JWKS reader keeps exactly the usable RS256 keys.

#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "model/encoding.hpp"
#include "model/store_b/pubsub_oidc.hpp"
#include "tests/support/crypto/test_ca.hpp"
#include "tests/support/crypto/test_jws.hpp"
#include "tests/support/crypto/test_oidc.hpp"

using namespace receiptd::model;
using namespace receiptd::model::store_b;
namespace ts = receiptd::test_support;
namespace json = boost::json;

namespace {

using ts::pkey_ptr;

pkey_ptr rsa_key(std::size_t bits = 2048) {
  return ts::make_rsa_key(bits);
}

// Key generation costs ~100 ms: one signing key and one stranger per binary.
EVP_PKEY* google_key() {
  static const auto key = rsa_key();
  return key.get();
}
EVP_PKEY* other_key() {
  static const auto key = rsa_key();
  return key.get();
}

json::object jwk(EVP_PKEY* key, const std::string& kid) {
  return ts::rsa_jwk(key, kid);
}

std::string jwks(std::vector<json::value> keys) {
  return ts::jwks_json(keys);
}

std::shared_ptr<const oidc_keys> google_keys() {
  static const auto keys = [] {
    auto parsed = oidc_keys::parse_jwks(jwks({jwk(google_key(), "k1")}));
    if (!parsed)
      throw std::runtime_error("test JWKS refused: " + parsed.err().message());
    return *parsed;
  }();
  return keys;
}

// header.payload as given, byte for byte, RS256-signed by `key`.
std::string token(std::string_view header, std::string_view payload, EVP_PKEY* key = google_key()) {
  return ts::rs256_jwt(header, payload, key);
}

const unix_ms now = ts::utc(2025, 3, 1, 12);
const std::int64_t now_s = now / 1000;
const std::string audience = "https://receiptd.example.com/store_b/rtdn";
const std::string push_account = "rtdn-push@example-project.iam.gserviceaccount.com";

json::object header(std::string kid = "k1") {
  return {{"alg", "RS256"}, {"kid", std::move(kid)}, {"typ", "JWT"}};
}

// What Pub/Sub sends (authenticate-push-subscriptions: "Claims").
json::object claims() {
  return {{"aud", audience},
          {"azp", "113774264463038321964"},
          {"email", push_account},
          {"email_verified", true},
          {"exp", now_s + 3600},
          {"iat", now_s},
          {"iss", "https://accounts.google.com"},
          {"sub", "113774264463038321964"}};
}

std::string token(const json::object& h, const json::object& c, EVP_PKEY* key = google_key()) {
  return token(json::serialize(h), json::serialize(c), key);
}

oidc_expectation expectation() {
  oidc_expectation e;
  e.audience = audience;
  e.service_account = push_account;
  return e; // leeway 60 s
}

result<oidc_claims> check(const std::string& jwt, const oidc_expectation& e = expectation()) {
  return verify_push_token(jwt, *google_keys(), e, now);
}

// "<accepted>", or the refusal's message ("<code …>" first when the code is
// not unauthorized), so one CHECK_THAT names the check that refused.
std::string outcome(const result<oidc_claims>& r) {
  if (r)
    return "<accepted>";
  if (r.err().code() != errc::unauthorized)
    return "<code " + std::string(name_of(r.err().code())) + "> " + r.err().message();
  return r.err().message();
}

std::string with(json::object c, const char* name, json::value v) {
  c[name] = std::move(v);
  return token(header(), c);
}

std::string without(json::object c, const char* name) {
  c.erase(name);
  return token(header(), c);
}

} // namespace

TEST_CASE("a genuine Pub/Sub push token verifies and yields its claims", "[pubsub_oidc]") {
  auto r = check(token(header(), claims()));
  REQUIRE(outcome(r) == "<accepted>");
  CHECK(r->issuer == "https://accounts.google.com");
  CHECK(r->subject == "113774264463038321964");
  CHECK(r->email == push_account);
  CHECK(r->expires_at == (now_s + 3600) * 1000);

  // Google's other spelling of the issuer.
  auto bare = check(with(claims(), "iss", "accounts.google.com"));
  REQUIRE(outcome(bare) == "<accepted>");
  CHECK(bare->issuer == "accounts.google.com");

  // No service account configured: any email, verified or not.
  auto any = expectation();
  any.service_account.clear();
  auto c = claims();
  c["email"] = "someone-else@example.com";
  c["email_verified"] = false;
  auto r_any = check(token(header(), c), any);
  REQUIRE(outcome(r_any) == "<accepted>");
  CHECK(r_any->email == "someone-else@example.com");
  // The same token where an account is expected.
  CHECK_THAT(outcome(check(token(header(), c))),
             Catch::Equals("token email is not the configured service account"));
}

TEST_CASE("a push token's signature must be Google's over exactly its bytes", "[pubsub_oidc]") {
  const auto genuine = token(header(), claims());
  const auto parts = ts::split_compact(genuine);
  REQUIRE(parts.size() == 3);

  SECTION("signed by another key under the same kid") {
    CHECK_THAT(outcome(check(token(header(), claims(), other_key()))),
               Catch::Equals("token signature does not verify"));
  }
  SECTION("one bit of the signature flipped") {
    auto sig = ts::base64url_decode(parts[2]);
    sig[sig.size() / 2] ^= 0x01;
    CHECK_THAT(outcome(check(parts[0] + "." + parts[1] + "." + base64url_encode(sig))),
               Catch::Equals("token signature does not verify"));
  }
  SECTION("the payload replaced, the signature kept") {
    auto c = claims();
    c["email"] = "attacker@example.com";
    c["email_verified"] = true;
    const auto forged = parts[0] + "." + base64url_encode(json::serialize(c)) + "." + parts[2];
    CHECK_THAT(outcome(check(forged)), Catch::Equals("token signature does not verify"));
  }
  SECTION("a signature truncated") {
    auto sig = ts::base64url_decode(parts[2]);
    sig.pop_back();
    CHECK_THAT(outcome(check(parts[0] + "." + parts[1] + "." + base64url_encode(sig))),
               Catch::Equals("token signature does not verify"));
  }
}

TEST_CASE("a push token's kid must name a configured key", "[pubsub_oidc]") {
  CHECK_THAT(outcome(check(token(header("k2"), claims()))),
             Catch::StartsWith("token kid is not among the configured keys"));
  auto h = header();
  h.erase("kid");
  CHECK_THAT(outcome(check(token(h, claims()))), Catch::Equals("token header has no kid"));
  h["kid"] = 1;
  CHECK_THAT(outcome(check(token(h, claims()))), Catch::Equals("token header has no kid"));
}

TEST_CASE("only RS256 is accepted, whatever the token's header asks for", "[pubsub_oidc]") {
  const std::string refused = "token header alg is not RS256";
  const auto payload = json::serialize(claims());

  SECTION("alg none, with and without a signature") {
    const json::object none{{"alg", "none"}, {"kid", "k1"}};
    const auto unsigned_token
      = base64url_encode(json::serialize(none)) + "." + base64url_encode(payload) + ".";
    CHECK_THAT(outcome(check(unsigned_token)),
               Catch::Equals("token is not three base64url segments"));
    // Even a signature that is Google's key's over these bytes does not make "none" RS256.
    CHECK_THAT(outcome(check(token(json::serialize(none), payload))), Catch::Equals(refused));
  }
  SECTION("HS256 keyed with the public key (algorithm confusion)") {
    const json::object hs{{"alg", "HS256"}, {"kid", "k1"}};
    const auto input = base64url_encode(json::serialize(hs)) + "." + base64url_encode(payload);
    const auto secret = jwks({jwk(google_key(), "k1")});
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    REQUIRE(HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
                 reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &mac_len)
            != nullptr);
    const auto hmac_token
      = input + "." + base64url_encode(std::string(reinterpret_cast<char*>(mac), mac_len));
    CHECK_THAT(outcome(check(hmac_token)), Catch::Equals(refused));
    CHECK_THAT(outcome(check(token(json::serialize(hs), payload))), Catch::Equals(refused));
  }
  SECTION("ES256, signed by an EC key, or by the RSA key") {
    const json::object es{{"alg", "ES256"}, {"kid", "k1"}};
    auto ec = ts::make_cert([] {
      ts::cert_options o;
      o.key_algorithm = "EC";
      return o;
    }());
    CHECK_THAT(outcome(check(ts::sign_es256_jws(json::serialize(es), payload, ec.key()))),
               Catch::Equals(refused));
    CHECK_THAT(outcome(check(token(json::serialize(es), payload))), Catch::Equals(refused));
  }
  SECTION("RS384, alg missing, alg not a string") {
    CHECK_THAT(outcome(check(token(R"({"alg":"RS384","kid":"k1"})", payload))),
               Catch::Equals(refused));
    CHECK_THAT(outcome(check(token(R"({"kid":"k1"})", payload))), Catch::Equals(refused));
    CHECK_THAT(outcome(check(token(R"({"alg":["RS256"],"kid":"k1"})", payload))),
               Catch::Equals(refused));
  }
  SECTION("a critical extension is not understood") {
    CHECK_THAT(
      outcome(check(token(R"({"alg":"RS256","kid":"k1","crit":["b64"],"b64":false})", payload))),
      Catch::Equals("token header has crit parameters"));
  }
}

TEST_CASE("a push token is three canonical base64url segments of JSON objects", "[pubsub_oidc]") {
  const auto genuine = token(header(), claims());
  const auto p = ts::split_compact(genuine);
  const std::string not_three = "token is not three base64url segments";
  const std::string not_base64url = "a token segment is not canonical base64url";

  for (const auto& bad :
       {std::string(), p[0], p[0] + "." + p[1], p[0] + "." + p[1] + ".", genuine + ".",
        genuine + "." + p[2], "." + p[1] + "." + p[2], p[0] + ".." + p[2], std::string("..")}) {
    INFO(bad.substr(0, 60));
    CHECK_THAT(outcome(check(bad)), Catch::Equals(not_three));
  }
  // Padding, the standard alphabet, whitespace, a non-canonical last character.
  CHECK_THAT(outcome(check(p[0] + "=." + p[1] + "." + p[2])), Catch::Equals(not_base64url));
  CHECK_THAT(outcome(check(p[0] + "." + p[1] + "." + p[2].substr(0, 10) + "+" + p[2].substr(11))),
             Catch::Equals(not_base64url));
  CHECK_THAT(outcome(check(p[0] + "." + p[1] + " ." + p[2])), Catch::Equals(not_base64url));
  CHECK_THAT(outcome(check("Bearer " + genuine)), Catch::Equals(not_base64url));
  // 256 signature bytes are 342 characters whose last carries 2 unused bits.
  REQUIRE(p[2].size() == 342);
  auto last = p[2];
  last.back() = last.back() == 'A' ? 'B' : static_cast<char>(last.back() + 1);
  CHECK_THAT(outcome(check(p[0] + "." + p[1] + "." + last)), Catch::Equals(not_base64url));
  CHECK(outcome(check(p[0] + "." + p[1] + "." + p[2])) == "<accepted>");

  CHECK_THAT(outcome(check(token("not json", json::serialize(claims())))),
             Catch::Equals("token header is not a JSON object"));
  CHECK_THAT(outcome(check(token(R"(["RS256"])", json::serialize(claims())))),
             Catch::Equals("token header is not a JSON object"));
  // Signed, so the payload is read; still not claims.
  CHECK_THAT(outcome(check(token(json::serialize(header()), "{\"iss\":"))),
             Catch::Equals("token payload is not a JSON object"));
  CHECK_THAT(outcome(check(token(json::serialize(header()), "\"claims\""))),
             Catch::Equals("token payload is not a JSON object"));
}

TEST_CASE("a push token must come from Google for this audience", "[pubsub_oidc]") {
  const std::string wrong_iss = "token iss is not accounts.google.com";
  CHECK_THAT(outcome(check(with(claims(), "iss", "https://evil.example.com"))),
             Catch::Equals(wrong_iss));
  CHECK_THAT(outcome(check(with(claims(), "iss", "http://accounts.google.com"))),
             Catch::Equals(wrong_iss));
  CHECK_THAT(outcome(check(without(claims(), "iss"))), Catch::Equals(wrong_iss));

  const std::string wrong_aud = "token aud is not the configured audience";
  CHECK_THAT(outcome(check(with(claims(), "aud", "https://other.example.com/push"))),
             Catch::Equals(wrong_aud));
  CHECK_THAT(outcome(check(with(claims(), "aud", json::string(audience + "/")))),
             Catch::Equals(wrong_aud));
  CHECK_THAT(outcome(check(without(claims(), "aud"))), Catch::Equals(wrong_aud));
  CHECK_THAT(outcome(check(with(claims(), "aud", json::array{"https://other.example.com"}))),
             Catch::Equals(wrong_aud));
  CHECK_THAT(outcome(check(with(claims(), "aud", json::array{}))), Catch::Equals(wrong_aud));
  // RFC 7519 §4.1.3: aud may be an array; holding the audience is enough.
  CHECK(outcome(check(with(claims(), "aud", json::array{"https://other.example.com", audience})))
        == "<accepted>");

  // An empty configured audience would accept any aud: it accepts nothing.
  auto unset = expectation();
  unset.audience.clear();
  CHECK_THAT(outcome(check(token(header(), claims()), unset)), Catch::StartsWith("no audience"));
}

TEST_CASE("a push token is refused outside its lifetime plus the leeway", "[pubsub_oidc]") {
  const std::string expired = "token expired";
  // exp must be after now − 60 s.
  CHECK_THAT(outcome(check(with(claims(), "exp", now_s - 61))), Catch::Equals(expired));
  CHECK_THAT(outcome(check(with(claims(), "exp", now_s - 60))), Catch::Equals(expired));
  CHECK(outcome(check(with(claims(), "exp", now_s - 59))) == "<accepted>");
  CHECK(outcome(check(with(claims(), "exp", now_s + 1))) == "<accepted>");
  CHECK(outcome(check(with(claims(), "exp", static_cast<double>(now_s) - 59.5))) == "<accepted>");
  CHECK_THAT(outcome(check(without(claims(), "exp"))),
             Catch::Equals("token has no exp NumericDate"));
  CHECK_THAT(outcome(check(with(claims(), "exp", json::string(std::to_string(now_s + 3600))))),
             Catch::Equals("token has no exp NumericDate"));

  // iat (when present) must be at most now + 60 s.
  const std::string future = "token iat is in the future";
  CHECK_THAT(outcome(check(with(claims(), "iat", now_s + 61))), Catch::Equals(future));
  CHECK(outcome(check(with(claims(), "iat", now_s + 60))) == "<accepted>");
  CHECK(outcome(check(without(claims(), "iat"))) == "<accepted>");
  CHECK_THAT(outcome(check(with(claims(), "iat", "yesterday"))),
             Catch::Equals("token iat is not a NumericDate"));

  // The leeway is the expectation's.
  auto strict = expectation();
  strict.leeway = std::chrono::seconds(0);
  CHECK_THAT(outcome(check(with(claims(), "exp", now_s - 1), strict)), Catch::Equals(expired));
  CHECK_THAT(outcome(check(with(claims(), "iat", now_s + 1), strict)), Catch::Equals(future));
  auto lenient = expectation();
  lenient.leeway = std::chrono::seconds(300);
  CHECK(outcome(check(with(claims(), "exp", now_s - 299), lenient)) == "<accepted>");
  CHECK(outcome(check(with(claims(), "iat", now_s + 300), lenient)) == "<accepted>");
}

TEST_CASE("a push token must name the configured, verified service account", "[pubsub_oidc]") {
  const std::string wrong_email = "token email is not the configured service account";
  CHECK_THAT(
    outcome(check(with(claims(), "email", "other@example-project.iam.gserviceaccount.com"))),
    Catch::Equals(wrong_email));
  CHECK_THAT(outcome(check(with(claims(), "email", json::string(push_account + " ")))),
             Catch::Equals(wrong_email));
  CHECK_THAT(outcome(check(without(claims(), "email"))), Catch::Equals(wrong_email));

  const std::string unverified = "token email is not verified (email_verified is not true)";
  CHECK_THAT(outcome(check(with(claims(), "email_verified", false))), Catch::Equals(unverified));
  CHECK_THAT(outcome(check(with(claims(), "email_verified", "true"))), Catch::Equals(unverified));
  CHECK_THAT(outcome(check(without(claims(), "email_verified"))), Catch::Equals(unverified));
}

TEST_CASE("a push token over 16 KiB is refused before it is read", "[pubsub_oidc]") {
  // Genuine tokens around the bound: a padding claim grows the payload a byte at a time.
  constexpr std::size_t bound = 16 * 1024;
  auto padded
    = [](std::size_t n) { return with(claims(), "pad", json::string(std::string(n, 'x'))); };
  // Base64url writes 3 bytes as 4 characters: start a little below the bound.
  std::size_t n = 10'000;
  n += (bound - padded(n).size()) * 3 / 4 - 8;
  std::string largest_accepted, smallest_refused;
  for (; smallest_refused.empty(); ++n) {
    auto t = padded(n);
    (t.size() <= bound ? largest_accepted : smallest_refused) = std::move(t);
  }
  REQUIRE_FALSE(largest_accepted.empty());
  CHECK(largest_accepted.size() > bound - 4);
  CHECK(outcome(check(largest_accepted)) == "<accepted>");
  CHECK_THAT(outcome(check(smallest_refused)), Catch::Equals("token is over 16 KiB"));
  CHECK_THAT(outcome(check(std::string(1024 * 1024, 'a'))), Catch::Equals("token is over 16 KiB"));
}

TEST_CASE("a JWKS keeps exactly its usable RS256 keys", "[pubsub_oidc]") {
  auto with_key = [](json::object k, const char* name, json::value v) {
    k[name] = std::move(v);
    return k;
  };
  auto without_key = [](json::object k, const char* name) {
    k.erase(name);
    return k;
  };
  // kid k1 is the signing key in each set, next to one entry that must be skipped.
  auto keys_with = [](json::value extra) {
    auto parsed = oidc_keys::parse_jwks(jwks({std::move(extra), jwk(google_key(), "k1")}));
    REQUIRE(parsed);
    return *parsed;
  };
  const auto genuine = token(header(), claims());
  const auto by_k2 = token(header("k2"), claims(), other_key());

  SECTION("Google's shape: both keys usable") {
    auto keys = keys_with(jwk(other_key(), "k2"));
    CHECK(keys->size() == 2);
    CHECK(outcome(verify_push_token(genuine, *keys, expectation(), now)) == "<accepted>");
    CHECK(outcome(verify_push_token(by_k2, *keys, expectation(), now)) == "<accepted>");
    // Without alg and use (both optional in RFC 7517).
    auto bare = keys_with(without_key(without_key(jwk(other_key(), "k2"), "alg"), "use"));
    CHECK(bare->size() == 2);
    CHECK(outcome(verify_push_token(by_k2, *bare, expectation(), now)) == "<accepted>");
  }

  const auto k2 = jwk(other_key(), "k2");
  std::vector<std::pair<std::string, json::value>> skipped;
  auto skip = [&](std::string what, json::value entry) {
    skipped.emplace_back(std::move(what), std::move(entry));
  };
  skip("an EC key",
       json::object{{"kty", "EC"},
                    {"kid", "k2"},
                    {"crv", "P-256"},
                    {"x", "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"},
                    {"y", "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}});
  skip("kty oct", with_key(k2, "kty", "oct"));
  skip("kty missing", without_key(k2, "kty"));
  skip("no kid", without_key(k2, "kid"));
  skip("an empty kid", with_key(k2, "kid", ""));
  skip("a kid not a string", with_key(k2, "kid", 2));
  skip("alg RS384", with_key(k2, "alg", "RS384"));
  skip("use enc", with_key(k2, "use", "enc"));
  skip("n padded", with_key(k2, "n", json::string(std::string(k2.at("n").as_string()) + "==")));
  skip("n in the standard alphabet", with_key(k2, "n", "ab+/"));
  skip("n missing", without_key(k2, "n"));
  skip("e zero", with_key(k2, "e", "AA"));
  skip("RSA-4160 (model/key_limits.hpp)",
       with_key(k2, "n", json::string(base64url_encode(std::string(520, '\xc3')))));
  skip("a string, not a key", json::string("k2"));
  skip("an array, not a key", json::array{k2});
  for (const auto& [what, entry] : skipped) {
    SECTION(what) {
      auto keys = keys_with(entry);
      CHECK(keys->size() == 1);
      CHECK(outcome(verify_push_token(genuine, *keys, expectation(), now)) == "<accepted>");
      CHECK_THAT(outcome(verify_push_token(by_k2, *keys, expectation(), now)),
                 Catch::StartsWith("token kid is not among the configured keys"));
    }
  }

  SECTION("a repeated kid keeps its first key") {
    auto parsed = oidc_keys::parse_jwks(jwks({jwk(google_key(), "k1"), jwk(other_key(), "k1")}));
    REQUIRE(parsed);
    CHECK((*parsed)->size() == 1);
    CHECK(outcome(verify_push_token(genuine, **parsed, expectation(), now)) == "<accepted>");
    CHECK_THAT(outcome(verify_push_token(token(header(), claims(), other_key()), **parsed,
                                         expectation(), now)),
               Catch::Equals("token signature does not verify"));
    // And the other way round.
    auto reversed = oidc_keys::parse_jwks(jwks({jwk(other_key(), "k1"), jwk(google_key(), "k1")}));
    REQUIRE(reversed);
    CHECK_THAT(outcome(verify_push_token(genuine, **reversed, expectation(), now)),
               Catch::Equals("token signature does not verify"));
  }
  SECTION("an unusable entry does not claim its kid (RFC 7517 §4.5: kty may differ)") {
    auto ec_k1 = jwk(other_key(), "k1");
    ec_k1["kty"] = "EC";
    auto parsed = oidc_keys::parse_jwks(jwks({ec_k1, jwk(google_key(), "k1")}));
    REQUIRE(parsed);
    CHECK((*parsed)->size() == 1);
    CHECK(outcome(verify_push_token(genuine, **parsed, expectation(), now)) == "<accepted>");
  }
}

TEST_CASE("a JWKS without a usable key is an error", "[pubsub_oidc]") {
  auto refusal = [](std::string_view text) -> std::string {
    auto r = oidc_keys::parse_jwks(text);
    if (r)
      return "<accepted>";
    if (r.err().code() != errc::invalid_request || r.errors().front().field != "jwks")
      return "<code " + std::string(name_of(r.err().code())) + ", field " + r.errors().front().field
        + ">";
    return r.err().message();
  };
  const std::string not_json = "the JWKS is not a JSON object";
  CHECK_THAT(refusal(""), Catch::Equals(not_json));
  CHECK_THAT(refusal("{\"keys\":["), Catch::Equals(not_json));
  CHECK_THAT(refusal("-----BEGIN PUBLIC KEY-----"), Catch::Equals(not_json));
  CHECK_THAT(refusal(jwks({jwk(google_key(), "k1")}).substr(1)), Catch::Equals(not_json));
  CHECK_THAT(refusal("[" + json::serialize(jwk(google_key(), "k1")) + "]"),
             Catch::Equals(not_json));

  const std::string no_keys = "the JWKS has no \"keys\" array";
  CHECK_THAT(refusal("{}"), Catch::Equals(no_keys));
  CHECK_THAT(refusal(json::serialize(jwk(google_key(), "k1"))), Catch::Equals(no_keys));
  CHECK_THAT(refusal(R"({"keys":{"k1":{}}})"), Catch::Equals(no_keys));

  const std::string none_usable = "the JWKS holds no RSA signing key";
  CHECK_THAT(refusal(R"({"keys":[]})"), Catch::StartsWith(none_usable));
  auto k = jwk(google_key(), "k1");
  k.erase("kid");
  CHECK_THAT(refusal(jwks({k})), Catch::StartsWith(none_usable));
  k = jwk(google_key(), "k1");
  k["kty"] = "EC";
  CHECK_THAT(refusal(jwks({k})), Catch::StartsWith(none_usable));

  // Over 1 MiB, even though every byte of it is a usable JWKS.
  auto big = jwk(google_key(), "k1");
  big["x-padding"] = std::string(1024 * 1024, 'p');
  CHECK_THAT(refusal(jwks({big})), Catch::Equals("the JWKS is over 1 MiB"));
  big["x-padding"] = std::string(1024 * 1024 - 1000, 'p');
  CHECK(refusal(jwks({big})) == "<accepted>");
}

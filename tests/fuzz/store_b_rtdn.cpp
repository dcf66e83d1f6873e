// Google Play real-time developer notifications (POST /store/store_b/…): the
// Pub/Sub push's OIDC token (Authorization: Bearer, verify_push_token against a
// JWKS) and its body (parse_rtdn_push: the envelope, strict base64 message.data,
// the DeveloperNotification).
//
// Input: the bearer token, "|@|", the push body. The first byte's low bit says
// whether the configured service account must be the token's email.
// The JWKS holds the RSA key of tests/data/google-play/android-easy-checkout-
// test-keypair under kid "fuzz-k1"; make_seeds.cpp signs the seeds' tokens
// with its published private half.

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "model/encoding.hpp"
#include "model/resource_json.hpp"
#include "model/store_b/pubsub_oidc.hpp"
#include "model/store_b/rtdn.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace receiptd;
namespace sb = model::store_b;

// What make_seeds.cpp's tokens name (tests/fuzz/README.md).
constexpr const char* audience = "https://receiptd.example/store/store_b/fuzz";
constexpr const char* service_account = "rtdn-push@receiptd-fuzz.iam.gserviceaccount.com";

std::string big_endian(EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &bn) != 1)
    std::abort();
  std::string out(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return out;
}

const sb::oidc_keys& keys() {
  static const auto parsed = [] {
    auto der = model::base64_decode(fuzz::source_file(
      "tests/data/google-play/android-easy-checkout-test-keypair/public_key.b64"));
    const auto* p = der ? reinterpret_cast<const unsigned char*>(der->data()) : nullptr;
    EVP_PKEY* key = p ? d2i_PUBKEY(nullptr, &p, static_cast<long>(der->size())) : nullptr;
    if (key == nullptr)
      std::abort();
    boost::json::object jwk{{"kty", "RSA"},
                            {"alg", "RS256"},
                            {"use", "sig"},
                            {"kid", "fuzz-k1"},
                            {"n", model::base64url_encode(big_endian(key, OSSL_PKEY_PARAM_RSA_N))},
                            {"e", model::base64url_encode(big_endian(key, OSSL_PKEY_PARAM_RSA_E))}};
    EVP_PKEY_free(key);
    auto k = sb::oidc_keys::parse_jwks(
      boost::json::serialize(boost::json::object{{"keys", boost::json::array{jwk}}}));
    if (!k || (*k)->size() != 1)
      std::abort();
    return *k;
  }();
  return *parsed;
}

// Refusals are 401 values; a pass says what the expectation asked for, and
// holds for that token only (a changed byte or a later instant refuses it).
void check_token(std::string_view jwt, bool require_account) {
  sb::oidc_expectation expect;
  expect.audience = audience;
  if (require_account)
    expect.service_account = service_account;
  auto claims = sb::verify_push_token(jwt, keys(), expect, fuzz::fixed_now);
  if (fuzz::verbose())
    std::fprintf(stderr, "verify_push_token: %s\n",
                 claims ? "verified" : claims.err().message().c_str());
  if (!claims) {
    FUZZ_CHECK(claims.err().code() == model::errc::unauthorized);
    FUZZ_CHECK(!claims.err().message().empty());
    return;
  }
  FUZZ_CHECK(claims->issuer == "accounts.google.com"
             || claims->issuer == "https://accounts.google.com");
  const model::unix_ms leeway_ms = std::chrono::milliseconds(expect.leeway).count();
  FUZZ_CHECK(claims->expires_at > fuzz::fixed_now - leeway_ms);
  if (require_account)
    FUZZ_CHECK(claims->email == service_account);
  for (int segment = 0; segment < 3; ++segment)
    FUZZ_CHECK(
      !sb::verify_push_token(fuzz::tampered(jwt, segment), keys(), expect, fuzz::fixed_now));
  FUZZ_CHECK(!sb::verify_push_token(jwt, keys(), expect, claims->expires_at + leeway_ms));
  auto nobody = expect;
  nobody.audience.clear();
  FUZZ_CHECK(!sb::verify_push_token(jwt, keys(), nobody, fuzz::fixed_now));
}

// apply_voided_notification on answers of every shape the parsed push could
// meet: it voids only what the answer confirms, and applying it twice changes
// nothing more.
void check_voided(const sb::rtdn& n) {
  for (int shape = 0; shape < 4; ++shape) {
    model::play_purchase p;
    p.kind = shape < 3 ? model::product_kind::product : model::product_kind::subscription;
    p.purchase_state = model::purchase_state::purchased;
    p.quantity = 3;
    p.refundable_quantity = shape; // 0: none left, 1–2: partial
    if (shape == 3)
      p.subscription_state = "SUBSCRIPTION_STATE_EXPIRED";
    const bool changed = sb::apply_voided_notification(p, n, fuzz::fixed_now);
    FUZZ_CHECK(changed == (n.kind == sb::rtdn_kind::voided_purchase));
    if (!changed)
      continue;
    FUZZ_CHECK(p.voided_time && p.purchase_state == model::purchase_state::refunded);
    FUZZ_CHECK(p.voided_quantity == (shape == 1 || shape == 2 ? std::optional<int>(3 - shape)
                                                               : std::nullopt));
    FUZZ_CHECK(!sb::apply_voided_notification(p, n, fuzz::fixed_now + 1));
  }
}

// 400 values naming the envelope or the data; a parsed push names a purchase
// (or is a test) within the documented bounds.
void check_push(std::string_view body) {
  auto n = sb::parse_rtdn_push(body);
  if (!n) {
    FUZZ_CHECK(n.err().code() == model::errc::bad_request);
    for (const auto& e : n.errors())
      FUZZ_CHECK((e.field == "message" || e.field == "message.data") && !e.code.empty()
                 && !e.message.empty());
    fuzz::parses_as_json(model::error_body(n.errors()));
    return;
  }
  FUZZ_CHECK(!n->message_id.empty() && n->message_id.size() <= 256);
  FUZZ_CHECK(!n->package_name.empty() && n->package_name.size() <= 256);
  FUZZ_CHECK(n->product_id.size() <= 256);
  FUZZ_CHECK(!n->event_time || *n->event_time >= 0);
  if (!sb::names_purchase(*n)) {
    // A test, a pending refund review, a kind Play adds later: nothing to ask.
    FUZZ_CHECK(n->purchase_token.empty() && n->notification_type == 0);
    FUZZ_CHECK(!sb::asks_subscriptions(*n));
    FUZZ_CHECK(n->kind_key.size() <= 64);
    FUZZ_CHECK(n->kind == sb::rtdn_kind::other || n->kind_key.empty());
  } else {
    FUZZ_CHECK(!n->purchase_token.empty() && n->purchase_token.size() <= 2048);
  }
  FUZZ_CHECK(sb::notification_type_name(*n).empty() || n->notification_type > 0);
  check_voided(*n);
  if (n->kind == sb::rtdn_kind::subscription)
    FUZZ_CHECK(sb::asks_subscriptions(*n));
  if (n->kind == sb::rtdn_kind::one_time_product || n->kind == sb::rtdn_kind::test)
    FUZZ_CHECK(!sb::asks_subscriptions(*n));
  FUZZ_CHECK(!sb::to_string(n->kind).empty());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  auto fields = fuzz::split_fields(fuzz::as_text(data + 1, size - 1), 2);
  check_token(fields[0], data[0] & 1);
  check_push(fields[1]);
  return 0;
}

#include "model/store_a/server_api.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>

#include "model/encoding.hpp"
#include "model/json_fields.hpp"
#include "model/retry_after.hpp"
#include "model/store_a/openssl_ptr.hpp"
#include "model/store_b/service_account.hpp" // url_encode

namespace receiptd::model::store_a {

namespace json = boost::json;

struct server_api_key::impl {
  ossl::evp_pkey_ptr key;
};

server_api_key::server_api_key(std::string issuer, std::string key, std::unique_ptr<impl> p)
  : issuer_id_(std::move(issuer)), key_id_(std::move(key)), impl_(std::move(p)) {}

server_api_key::~server_api_key() = default;

namespace {

// Ids go into the JWT verbatim: a pasted newline or space would only show up
// later as a 401 from Apple, so they are refused here.
std::optional<field_error> check_id(const char* field, std::string_view id) {
  if (id.empty())
    return field_error{field, "missing", std::string(field) + " is empty"};
  if (id.size() > 256)
    return field_error{field, "too_long", std::string(field) + " is longer than 256 bytes"};
  for (unsigned char c : id)
    if (c <= 0x20 || c >= 0x7f)
      return field_error{field, "invalid_characters",
                         std::string(field) + " holds characters other than visible ASCII"};
  return std::nullopt;
}

// An encrypted PEM never prompts for a passphrase (OpenSSL's default callback
// reads the terminal): it is refused like any other unusable key.
int no_passphrase(char*, int, int, void*) {
  return -1;
}

// ECDSA's DER SEQUENCE {r, s} → JWS's raw r ‖ s, each left-padded to 32 bytes
// (RFC 7518 §3.4). Empty when the DER is not a P-256 signature.
std::string raw_signature(std::string_view der) {
  auto* p = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
  if (!sig)
    return {};
  std::string raw(64, '\0');
  auto* out = reinterpret_cast<unsigned char*>(raw.data());
  bool ok = BN_bn2binpad(ECDSA_SIG_get0_r(sig), out, 32) == 32
    && BN_bn2binpad(ECDSA_SIG_get0_s(sig), out + 32, 32) == 32;
  ECDSA_SIG_free(sig);
  return ok ? raw : std::string();
}

std::string sign_es256(EVP_PKEY* key, std::string_view input) {
  ossl::evp_md_ctx_ptr ctx{EVP_MD_CTX_new()};
  auto* data = reinterpret_cast<const unsigned char*>(input.data());
  size_t len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1
      || EVP_DigestSign(ctx.get(), nullptr, &len, data, input.size()) != 1)
    return {};
  std::string der(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(der.data()), &len, data,
                     input.size())
      != 1)
    return {};
  der.resize(len);
  return raw_signature(der);
}

// What a transport error or an answer may put into a detail: a short, printable
// excerpt (details go to logs and to a job's last_error).
std::string excerpt(std::string_view text, std::size_t max = 120) {
  std::string out;
  for (unsigned char c : text.substr(0, max))
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  if (text.size() > max)
    out += "...";
  return out;
}

} // namespace

result<std::shared_ptr<const server_api_key>>
server_api_key::parse(std::string_view issuer_id, std::string_view key_id,
                      std::string_view private_key_pem) {
  constexpr const char* key_field = "app_store_private_key";
  constexpr std::size_t max_private_key_pem = 16 * 1024; // a .p8 file is about 250 bytes
  field_errors errors;
  if (auto e = check_id("app_store_issuer_id", issuer_id))
    errors.push_back(std::move(*e));
  if (auto e = check_id("app_store_key_id", key_id))
    errors.push_back(std::move(*e));
  ossl::error_queue_guard guard;
  ossl::evp_pkey_ptr key;
  if (private_key_pem.empty()) {
    errors.push_back({key_field, "missing", "app_store_private_key is empty"});
  } else if (private_key_pem.size() > max_private_key_pem) {
    errors.push_back({key_field, "too_long", "app_store_private_key is larger than 16 KiB"});
  } else if (private_key_pem.find("-----BEGIN ") == std::string_view::npos) {
    errors.push_back({key_field, "not_pem", "app_store_private_key is not PEM text (a .p8 file)"});
  } else {
    ossl::bio_ptr bio{
      BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size()))};
    if (bio)
      key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
    char group[64] = {};
    size_t group_len = 0;
    if (!key) {
      errors.push_back({key_field, "not_private_key",
                        "app_store_private_key holds no unencrypted PEM private key"});
    } else if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_EC
               || EVP_PKEY_get_utf8_string_param(key.get(), OSSL_PKEY_PARAM_GROUP_NAME, group,
                                                 sizeof group, &group_len)
                 != 1
               || std::string_view(group, group_len) != SN_X9_62_prime256v1) {
      errors.push_back({key_field, "not_p256",
                        "app_store_private_key is not an EC P-256 key (App Store Connect's "
                        "in-app purchase key, .p8)"});
    }
  }
  if (!errors.empty())
    return errors;
  auto p = std::make_unique<impl>();
  p->key = std::move(key);
  return std::make_shared<const server_api_key>(std::string(issuer_id), std::string(key_id),
                                                std::move(p));
}

std::string server_api_key::make_jwt(unix_ms now, std::string_view bundle_id,
                                     std::chrono::seconds lifetime) const {
  // Apple refuses a token whose exp is more than 60 minutes after iat
  // ("Generating JSON Web Tokens for API requests").
  lifetime = std::clamp(lifetime, std::chrono::seconds(0), std::chrono::seconds(3600));
  auto iat = now / 1000;
  json::object header{{"alg", "ES256"}, {"kid", key_id_}, {"typ", "JWT"}};
  json::object claims{{"iss", issuer_id_},
                      {"iat", iat},
                      {"exp", iat + lifetime.count()},
                      {"aud", server_api_audience},
                      {"bid", bundle_id}};
  auto input
    = base64url_encode(json::serialize(header)) + '.' + base64url_encode(json::serialize(claims));
  ossl::error_queue_guard guard;
  return input + '.' + base64url_encode(sign_es256(impl_->key.get(), input));
}

namespace {

std::string server_api_url(std::string_view base_url, std::string_view path,
                           std::string_view transaction_id) {
  std::string url(base_url);
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  url += path;
  url += store_b::url_encode(transaction_id);
  return url;
}

} // namespace

std::string transaction_info_url(std::string_view base_url, std::string_view transaction_id) {
  return server_api_url(base_url, "/inApps/v1/transactions/", transaction_id);
}

std::string subscription_statuses_url(std::string_view base_url, std::string_view transaction_id) {
  return server_api_url(base_url, "/inApps/v1/subscriptions/", transaction_id);
}

namespace {

// App Store Server API, Get Transaction Info: 200 TransactionInfoResponse
// {"signedTransactionInfo": JWS}; errors are {"errorCode": n, "errorMessage": …}
// (404 4040010 TransactionIdNotFound, 429 4290000 RateLimitExceeded, 500
// 5000000/5000001 GeneralInternalError(Retryable)); 401 has an empty body and
// means the JWT was refused. `o`: the body when it is a JSON object.
transaction_info_answer classify_answer(int http_status, const json::object* o,
                                        std::string_view retry_after_header, unix_ms now) {
  transaction_info_answer a;
  auto code = "HTTP " + std::to_string(http_status);
  std::optional<std::int64_t> error_code;
  if (o)
    error_code = json_int(o->if_contains("errorCode"));
  auto with_error_code
    = error_code ? code + " (errorCode " + std::to_string(*error_code) + ")" : code;

  switch (http_status) {
    case 200: {
      if (!o) {
        a.verdict = unreachable_verdict("HTTP 200 without a JSON object");
        return a;
      }
      auto* info = o->if_contains("signedTransactionInfo");
      if (!info || !info->is_string() || info->get_string().empty()) {
        a.verdict = unreachable_verdict("HTTP 200 without signedTransactionInfo");
        return a;
      }
      a.verdict.outcome = store_outcome::confirmed;
      a.verdict.detail = code;
      a.signed_transaction_info = std::string(info->get_string());
      return a;
    }
    case 404:
      if (error_code == 4040010) {
        a.verdict.outcome = store_outcome::rejected;
        a.verdict.detail = "HTTP 404 TransactionIdNotFound (errorCode 4040010)";
        a.transaction_not_found = true;
        return a;
      }
      a.verdict
        = unreachable_verdict(error_code ? with_error_code : code + " without an errorCode");
      return a;
    case 401:
      a.verdict = unreachable_verdict(
        "HTTP 401: the App Store Server API refused our JWT (check the app's issuer id, key id "
        "and private key)",
        true);
      return a;
    case 403:
      a.verdict = unreachable_verdict(
        "HTTP 403: the App Store Server API refused the app's credentials (key revoked or not "
        "allowed for this app?)",
        true);
      return a;
    case 429: {
      a.retry_after_ms = parse_retry_after(retry_after_header, now);
      auto detail = with_error_code + " rate limited";
      if (a.retry_after_ms)
        detail += ", retry after " + std::to_string(*a.retry_after_ms) + " ms";
      a.verdict = unreachable_verdict(std::move(detail));
      honour_retry_after(a.verdict, http_status, retry_after_header, now);
      return a;
    }
    default:
      a.verdict = unreachable_verdict(with_error_code);
      honour_retry_after(a.verdict, http_status, retry_after_header, now); // a 503's
      return a;
  }
}

} // namespace

transaction_info_answer classify_transaction_info(int http_status, std::string_view body,
                                                  std::string_view transport_error,
                                                  std::string_view retry_after_header,
                                                  unix_ms now) {
  if (http_status == 0) {
    transaction_info_answer a;
    a.verdict = unreachable_verdict("store unreachable: " + excerpt(transport_error));
    return a;
  }
  boost::system::error_code ec;
  auto doc = json::parse(body, ec);
  const json::object* o = !ec && doc.is_object() ? &doc.get_object() : nullptr;
  auto a = classify_answer(http_status, o, retry_after_header, now);
  if (o) // JSON text, for logs and enrichment; an HTML page is not kept
    a.verdict.body = std::string(body);
  return a;
}

namespace {

// StatusResponse {"data": [{"subscriptionGroupIdentifier", "lastTransactions":
// [{"originalTransactionId", "status", "signedTransactionInfo",
// "signedRenewalInfo"}]}], "environment", "bundleId", "appAppleId"}.
std::optional<std::vector<subscription_status_entry>> status_entries(const json::object& o) {
  auto* data = o.if_contains("data");
  if (!data || !data->is_array())
    return std::nullopt;
  std::vector<subscription_status_entry> out;
  for (const auto& group : data->get_array()) {
    auto* last = group.is_object() ? group.get_object().if_contains("lastTransactions") : nullptr;
    if (!last || !last->is_array())
      return std::nullopt;
    for (const auto& item : last->get_array()) {
      if (!item.is_object())
        return std::nullopt;
      const auto& i = item.get_object();
      auto* original = i.if_contains("originalTransactionId");
      // An integer, not json_int's digit string too: Apple writes a number.
      const auto* number = i.if_contains("status");
      const bool integer = number && (number->is_int64() || number->is_uint64());
      const std::int64_t status = integer ? json_int(number).value_or(-1) : -1;
      auto* info = i.if_contains("signedTransactionInfo");
      auto* renewal = i.if_contains("signedRenewalInfo");
      if (!original || !original->is_string() || status < 0
          || status > std::numeric_limits<int>::max() || !info || !info->is_string()
          || info->get_string().empty() || (renewal && !renewal->is_string()))
        return std::nullopt;
      subscription_status_entry e;
      e.original_transaction_id = std::string(original->get_string());
      e.status = static_cast<int>(status);
      e.signed_transaction_info = std::string(info->get_string());
      if (renewal)
        e.signed_renewal_info = std::string(renewal->get_string());
      out.push_back(std::move(e));
    }
  }
  return out;
}

} // namespace

subscription_statuses_answer classify_subscription_statuses(int http_status, std::string_view body,
                                                            std::string_view transport_error,
                                                            std::string_view retry_after_header,
                                                            unix_ms now) {
  subscription_statuses_answer out;
  if (http_status != 200) {
    auto a = classify_transaction_info(http_status, body, transport_error, retry_after_header, now);
    out.verdict = std::move(a.verdict);
    out.transaction_not_found = a.transaction_not_found;
    out.retry_after_ms = a.retry_after_ms;
    return out;
  }
  boost::system::error_code ec;
  auto doc = json::parse(body, ec);
  auto entries = !ec && doc.is_object() ? status_entries(doc.get_object()) : std::nullopt;
  if (!entries) {
    out.verdict = unreachable_verdict("HTTP 200 without a list of subscription statuses");
    return out;
  }
  out.verdict.outcome = store_outcome::confirmed;
  out.verdict.detail = "HTTP 200";
  out.verdict.body = std::string(body);
  out.entries = std::move(*entries);
  return out;
}

} // namespace receiptd::model::store_a

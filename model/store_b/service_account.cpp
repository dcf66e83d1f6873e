#include "model/store_b/service_account.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "model/encoding.hpp"

namespace receiptd::model::store_b {

struct service_account::impl {
  EVP_PKEY* key = nullptr;
  ~impl() { EVP_PKEY_free(key); }
};

service_account::service_account(std::string email, std::string uri, std::string key_id,
                                 std::unique_ptr<impl> p)
  : client_email_(std::move(email)),
    token_uri_(std::move(uri)),
    private_key_id_(std::move(key_id)),
    impl_(std::move(p)) {}

service_account::~service_account() = default;

result<std::shared_ptr<const service_account>> service_account::parse(std::string_view json) {
  auto fail = [](std::string code, std::string message) {
    return field_error{"store_b_service_account", std::move(code), std::move(message)};
  };
  boost::system::error_code ec;
  auto doc = boost::json::parse(json, ec);
  if (ec || !doc.is_object())
    return fail("invalid_json", "the service account is not a JSON object");
  const auto& obj = doc.get_object();
  auto text = [&](const char* key) -> std::string {
    auto* v = obj.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  auto email = text("client_email");
  auto pem = text("private_key");
  auto uri = text("token_uri");
  if (email.empty())
    return fail("missing", "the service account has no client_email");
  if (pem.empty())
    return fail("missing", "the service account has no private_key");
  if (uri.empty())
    uri = default_token_uri;
  auto i = std::make_unique<impl>();
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  i->key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (!i->key || EVP_PKEY_get_base_id(i->key) != EVP_PKEY_RSA)
    return fail("invalid_key", "the service account's private_key is not an RSA PEM key");
  return std::make_shared<const service_account>(std::move(email), std::move(uri),
                                                 text("private_key_id"), std::move(i));
}

std::string service_account::make_assertion(unix_ms now) const {
  auto iat = now / 1000;
  boost::json::object header{{"alg", "RS256"}, {"typ", "JWT"}};
  if (!private_key_id_.empty())
    header["kid"] = private_key_id_;
  boost::json::object claims{{"iss", client_email_},
                             {"scope", androidpublisher_scope},
                             {"aud", token_uri_},
                             {"iat", iat},
                             {"exp", iat + 3600}};
  auto input = base64url_encode(boost::json::serialize(header)) + '.'
    + base64url_encode(boost::json::serialize(claims));
  std::string sig;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t len = 0;
  if (ctx && EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, impl_->key) == 1
      && EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                        input.size())
        == 1) {
    sig.resize(len);
    if (EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                       reinterpret_cast<const unsigned char*>(input.data()), input.size())
        == 1)
      sig.resize(len);
    else
      sig.clear();
  }
  EVP_MD_CTX_free(ctx);
  return input + '.' + base64url_encode(sig);
}

std::string service_account::token_request_body(unix_ms now) const {
  return "grant_type=" + url_encode("urn:ietf:params:oauth:grant-type:jwt-bearer")
    + "&assertion=" + url_encode(make_assertion(now));
}

std::optional<access_token> parse_token_response(int http_status, std::string_view body,
                                                 unix_ms now) {
  if (http_status != 200)
    return std::nullopt;
  boost::system::error_code ec;
  auto doc = boost::json::parse(body, ec);
  if (ec || !doc.is_object())
    return std::nullopt;
  const auto& obj = doc.get_object();
  auto* token = obj.if_contains("access_token");
  if (!token || !token->is_string() || token->get_string().empty())
    return std::nullopt;
  std::int64_t lifetime = 3600;
  if (auto* e = obj.if_contains("expires_in")) {
    if (e->is_int64())
      lifetime = e->get_int64();
    else if (e->is_uint64())
      lifetime = static_cast<std::int64_t>(e->get_uint64());
  }
  return access_token{std::string(token->get_string()), now + lifetime * 1000};
}

std::string url_encode(std::string_view text) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() * 3 / 2);
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
        || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

} // namespace receiptd::model::store_b

#include "model/store_b/licence_key.hpp"

#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <mutex>

#include "model/encoding.hpp"
#include "model/key_limits.hpp"

namespace receiptd::model::store_b {

struct licence_key::impl {
  EVP_PKEY* key = nullptr;
  // A context set up once for SHA-1 verification with `key`: each check copies
  // it instead of running EVP_DigestVerifyInit, whose algorithm fetch and key
  // export cost about a third of a verification. Read under `copying` only
  // (OpenSSL does not say that copying from one context on several threads at
  // once is safe).
  EVP_MD_CTX* ready = nullptr;
  std::mutex copying;
  ~impl() {
    EVP_MD_CTX_free(ready);
    EVP_PKEY_free(key);
  }
};

licence_key::licence_key(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
licence_key::~licence_key() = default;

result<std::shared_ptr<const licence_key>> licence_key::parse(std::string_view base64_spki) {
  auto der = base64_decode(base64_spki);
  if (!der || der->empty())
    return field_error{"store_b_public_key", "invalid_base64", "the licence key is not base64"};
  auto p = reinterpret_cast<const unsigned char*>(der->data());
  auto i = std::make_unique<impl>();
  i->key = d2i_PUBKEY(nullptr, &p, static_cast<long>(der->size()));
  if (!i->key || EVP_PKEY_get_base_id(i->key) != EVP_PKEY_RSA)
    return field_error{"store_b_public_key", "invalid_key",
                       "the licence key is not an RSA SubjectPublicKeyInfo"};
  // Refused where it is loaded (receiptctl, and each app context), not on each
  // upload: Play licence keys are RSA-2048, and a larger modulus or exponent
  // only makes every signature check of this app cost more (key_limits.hpp).
  if (auto problem = rsa_key_problem(i->key); !problem.empty())
    return field_error{"store_b_public_key", "invalid_key",
                       "the licence key is refused: " + problem
                         + " (Play licence keys are RSA-2048)"};
  i->ready = EVP_MD_CTX_new();
  if (!i->ready || EVP_DigestVerifyInit(i->ready, nullptr, EVP_sha1(), nullptr, i->key) != 1)
    return field_error{"store_b_public_key", "invalid_key",
                       "the licence key cannot verify SHA-1 RSA signatures"};
  return std::make_shared<const licence_key>(std::move(i));
}

bool licence_key::verify(std::string_view data, std::string_view sig) const {
  if (sig.empty())
    return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx)
    return false;
  bool copied = false;
  {
    std::lock_guard lock(impl_->copying);
    copied = EVP_MD_CTX_copy_ex(ctx, impl_->ready) == 1;
  }
  bool ok = copied
    && EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                        reinterpret_cast<const unsigned char*>(data.data()), data.size())
      == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

} // namespace receiptd::model::store_b

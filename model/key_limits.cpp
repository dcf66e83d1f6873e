#include "model/key_limits.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

namespace receiptd::model {

std::string rsa_key_problem(const EVP_PKEY* key) {
  if (key == nullptr || !EVP_PKEY_is_a(key, "RSA"))
    return {};
  const int bits = EVP_PKEY_get_bits(key);
  const auto name = "RSA-" + std::to_string(bits) + " key: ";
  if (bits < min_rsa_bits)
    return name + "fewer than " + std::to_string(min_rsa_bits) + " bits";
  if (bits > max_rsa_bits)
    return name + "more than " + std::to_string(max_rsa_bits) + " bits";
  BIGNUM* e = nullptr;
  if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_E, &e) != 1 || e == nullptr)
    return name + "no readable public exponent";
  const int e_bits = BN_num_bits(e);
  BN_free(e);
  if (e_bits > max_rsa_exponent_bits)
    return name + "public exponent of " + std::to_string(e_bits) + " bits (more than "
      + std::to_string(max_rsa_exponent_bits) + ")";
  return {};
}

} // namespace receiptd::model

#pragma once
// Sane sizes for the public keys receiptd verifies signatures with. A key comes with the bytes it checks (an embedded PKCS#7 signer, a
// transaction receipt's leaf) or from an operator (a Play licence key), and its
// size sets what one verification costs: OpenSSL accepts RSA moduli up to 16,384
// bits and, up to 3,072 bits, public exponents as long as the modulus, which
// turns one verification into the work of a private-key operation (measured: a
// receipt signed with RSA-3072 and a 3,001-bit exponent took 4.4 ms to verify,
// a genuine one ~20 µs). Every key Apple and Google sign receipts with is
// RSA-1024 or RSA-2048 with e = 65537.

#include <openssl/types.h>

#include <string>

namespace receiptd::model {

inline constexpr int min_rsa_bits = 1024;
inline constexpr int max_rsa_bits = 4096;
// OpenSSL's own bound for moduli above 3,072 bits (OPENSSL_RSA_MAX_PUBEXP_BITS),
// applied to every size.
inline constexpr int max_rsa_exponent_bits = 64;

// Why an RSA key is refused, in a few words ("RSA-8192 key: more than 4096
// bits"), or "" when its modulus and exponent are within the bounds above.
// Keys of other types are not judged here ("").
std::string rsa_key_problem(const EVP_PKEY* key);

} // namespace receiptd::model

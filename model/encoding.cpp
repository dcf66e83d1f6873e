#include "model/encoding.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <pthread.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

namespace receiptd::model {

namespace {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> make_decode_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t)
    v = -1;
  for (int i = 0; i < 64; ++i)
    t[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
  return t;
}

constexpr auto decode_table = make_decode_table();

using strict_table = std::array<std::int8_t, 256>;

constexpr strict_table make_table(char c62, char c63) {
  strict_table t{};
  for (auto& v : t)
    v = -1;
  for (int i = 0; i < 62; ++i)
    t[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
  t[static_cast<unsigned char>(c62)] = 62;
  t[static_cast<unsigned char>(c63)] = 63;
  return t;
}
constexpr auto base64url_table = make_table('-', '_'); // RFC 4648 §5
constexpr auto base64_table = make_table('+', '/');    // RFC 4648 §4

// Strict unpadded base64 in the given alphabet (base64url_decode's rules).
// A JWS header and payload are ~4 KB and up to 64 KiB: decoded a quantum at a
// time into the final buffer.
std::optional<std::string> decode_unpadded(std::string_view text, const strict_table& table) {
  const std::size_t n = text.size();
  if (n % 4 == 1)
    return std::nullopt;
  std::string out(n / 4 * 3 + (n % 4 == 0 ? 0 : n % 4 - 1), '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  const auto* in = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const int a = table[in[i]], b = table[in[i + 1]], c = table[in[i + 2]], d = table[in[i + 3]];
    if ((a | b | c | d) < 0)
      return std::nullopt;
    const auto v = static_cast<std::uint32_t>(a << 18 | b << 12 | c << 6 | d);
    *o++ = static_cast<unsigned char>(v >> 16);
    *o++ = static_cast<unsigned char>(v >> 8);
    *o++ = static_cast<unsigned char>(v);
  }
  if (const auto rest = n - i; rest >= 2) {
    const int a = table[in[i]], b = table[in[i + 1]], c = rest == 3 ? table[in[i + 2]] : 0;
    if ((a | b | c) < 0 || (rest == 2 ? (b & 0x0F) : (c & 0x03)) != 0)
      return std::nullopt;
    const auto v = static_cast<std::uint32_t>(a << 18 | b << 12 | c << 6);
    *o++ = static_cast<unsigned char>(v >> 16);
    if (rest == 3)
      *o++ = static_cast<unsigned char>(v >> 8);
  }
  return out;
}

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Written into a buffer sized once: a Play signature (256 bytes) and a digest's
// hex are encoded on every upload.
std::string encode(std::string_view bytes, const char* abc, bool pad) {
  const std::size_t whole = bytes.size() / 3, rest = bytes.size() % 3;
  std::string out(whole * 4 + (rest == 0 ? 0 : pad ? 4 : rest + 1), '\0');
  char* o = out.data();
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::size_t q = 0; q < whole; ++q, in += 3) {
    const std::uint32_t n = std::uint32_t{in[0]} << 16 | std::uint32_t{in[1]} << 8 | in[2];
    o[0] = abc[(n >> 18) & 63];
    o[1] = abc[(n >> 12) & 63];
    o[2] = abc[(n >> 6) & 63];
    o[3] = abc[n & 63];
    o += 4;
  }
  if (rest > 0) {
    std::uint32_t n = std::uint32_t{in[0]} << 16;
    if (rest == 2)
      n |= std::uint32_t{in[1]} << 8;
    *o++ = abc[(n >> 18) & 63];
    *o++ = abc[(n >> 12) & 63];
    if (rest == 2)
      *o++ = abc[(n >> 6) & 63];
    else if (pad)
      *o++ = '=';
    if (pad)
      *o++ = '=';
  }
  return out;
}

} // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out(text.size() / 4 * 3 + 3, '\0');
  char* o = out.data();
  uint32_t acc = 0;
  int bits = 0;
  size_t symbols = 0;
  size_t padding = 0;
  for (char c : text) {
    if (is_space(c))
      continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0)
      return std::nullopt; // data after padding
    auto v = decode_table[static_cast<unsigned char>(c)];
    if (v < 0)
      return std::nullopt;
    ++symbols;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      *o++ = static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  out.resize(static_cast<std::size_t>(o - out.data()));
  auto rest = symbols % 4;
  if (rest == 1 || padding > 2)
    return std::nullopt;
  if (padding > 0 && (symbols + padding) % 4 != 0)
    return std::nullopt;
  // Non-canonical trailing bits are tolerated, as most decoders do.
  return out;
}

std::string base64_encode(std::string_view bytes) {
  return encode(bytes, alphabet, true);
}

std::string base64url_encode(std::string_view bytes) {
  static constexpr char url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  return encode(bytes, url, false);
}

std::string hex_encode(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '\0');
  char* o = out.data();
  for (unsigned char c : bytes) {
    *o++ = digits[c >> 4];
    *o++ = digits[c & 15];
  }
  return out;
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n;
    std::uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= n)
      return false;
    for (std::size_t k = 1; k <= n; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80)
        return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr std::uint32_t min_for_length[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_for_length[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n + 1;
  }
  return true;
}

int hex_digit_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::string sha1(std::string_view bytes) {
  std::string out(SHA_DIGEST_LENGTH, '\0');
  SHA1(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
       reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

// The algorithm fetched once and a context per thread: OpenSSL 3's one-shot
// SHA256() looks the algorithm up and allocates a context on every call (about
// 5,000 instructions and 5 allocations per upload, counted by bench/load).
std::string sha256(std::string_view bytes) {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(
    EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  std::string out(SHA256_DIGEST_LENGTH, '\0');
  unsigned int n = 0;
  if (!md || !ctx || EVP_DigestInit_ex2(ctx.get(), md, nullptr) != 1
      || EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1
      || EVP_DigestFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &n) != 1
      || n != SHA256_DIGEST_LENGTH)
    throw std::runtime_error("OpenSSL SHA-256 failed");
  return out;
}

namespace {

void fill_random(unsigned char* out, std::size_t n) {
  if (RAND_bytes(out, static_cast<int>(n)) != 1)
    throw std::runtime_error("OpenSSL RAND_bytes failed");
}

// Bumped in a forked child: what a thread had drawn before the fork is never
// handed out again, in the child or twice.
std::atomic<unsigned> fork_generation{0};

// OpenSSL's CSPRNG output, drawn a block at a time per thread: each RAND_bytes
// call asks the kernel for the process id (OpenSSL 3's fork check), a system
// call per record id and per trace id otherwise. Bytes handed out are wiped
// from the block.
struct random_block {
  std::array<unsigned char, 512> bytes{};
  std::size_t used = 512;
  unsigned generation = 0;

  ~random_block() { OPENSSL_cleanse(bytes.data(), bytes.size()); }

  void take(unsigned char* out, std::size_t n) {
    static std::once_flag registered;
    std::call_once(registered,
                   [] { pthread_atfork(nullptr, nullptr, [] { fork_generation.fetch_add(1); }); });
    auto generation_now = fork_generation.load(std::memory_order_relaxed);
    if (generation != generation_now) {
      used = bytes.size();
      generation = generation_now;
    }
    if (bytes.size() - used < n) {
      fill_random(bytes.data(), bytes.size());
      used = 0;
    }
    std::memcpy(out, bytes.data() + used, n);
    OPENSSL_cleanse(bytes.data() + used, n);
    used += n;
  }
};

} // namespace

void random_bytes(unsigned char* out, std::size_t n) {
  if (n > 64)
    return fill_random(out, n);
  thread_local random_block block;
  block.take(out, n);
}

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  random_bytes(reinterpret_cast<unsigned char*>(out.data()), n);
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  return decode_unpadded(text, base64url_table);
}

std::optional<std::string> strict_base64_decode(std::string_view text) {
  if (text.size() % 4 != 0)
    return std::nullopt;
  std::size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=')
    ++pad;
  return decode_unpadded(text.substr(0, text.size() - pad), base64_table);
}

bool is_base64url(std::string_view text) {
  // One load per byte, no early exit: a StoreKit 2 upload checks JWS of several KB.
  bool ok = true;
  for (char c : text)
    ok &= base64url_table[static_cast<unsigned char>(c)] >= 0;
  return ok;
}

} // namespace receiptd::model

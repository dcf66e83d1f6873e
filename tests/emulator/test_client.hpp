#pragma once
// Test-side helpers: the emulator as a child process, a libcurl client, and
// RSA keys / JWTs for the Store B token endpoint.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <curl/curl.h>
#include <openssl/types.h>

namespace emulator_test {

// Starts receiptd-emulator on free ports and waits for its ready file;
// SIGTERM (then SIGKILL) on destruction.
class emulator_process {
public:
  explicit emulator_process(std::vector<std::string> extra_args = {});
  ~emulator_process();
  emulator_process(const emulator_process&) = delete;
  emulator_process& operator=(const emulator_process&) = delete;

  std::string control_url(std::string_view path) const;
  std::string store_a_url(std::string_view path) const;
  std::string store_b_url(std::string_view path) const;
  // The stores' HTTP/2 over TLS listeners (trust control_url("/control/tls/certificate")).
  std::string store_a_h2_url(std::string_view path) const;
  std::string store_b_h2_url(std::string_view path) const;
  std::uint16_t store_a_port() const { return store_a_; }
  std::uint16_t store_b_port() const { return store_b_; }
  pid_t pid() const { return pid_; }
  // Stops with SIGTERM and returns the exit status (-1 when it had to be killed).
  int stop();

private:
  pid_t pid_ = -1;
  std::string dir_;
  std::uint16_t control_ = 0, store_a_ = 0, store_b_ = 0, store_a_h2_ = 0, store_b_h2_ = 0;
};

struct http_result {
  CURLcode code = CURLE_OK; // CURLE_COULDNT_CONNECT when refused
  long status = 0;
  std::string body;
  std::string content_type;
  std::string connection;   // the Connection response header
  std::string retry_after;  // the Retry-After response header
  double seconds = 0;       // total time of the transfer
  long new_connections = 0; // 0 when a kept-alive connection was reused

  boost::json::value json() const; // throws when the body is not JSON
};

// One curl easy handle: consecutive requests reuse the connection.
class http_client {
public:
  http_client();
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  http_result request(const std::string& method, const std::string& url,
                      const std::string& body = "", const std::vector<std::string>& headers = {});
  http_result get(const std::string& url, const std::vector<std::string>& headers = {}) {
    return request("GET", url, "", headers);
  }
  http_result post(const std::string& url, const std::string& body,
                   const std::vector<std::string>& headers = {}) {
    return request("POST", url, body, headers);
  }
  http_result put(const std::string& url, const std::string& body) {
    return request("PUT", url, body);
  }

private:
  CURL* curl_;
};

// n concurrent POSTs of `body` to `url`, each on its own connection (curl multi).
std::vector<http_result> concurrent_posts(const std::string& url, const std::string& body, int n);

class rsa_key {
public:
  rsa_key(); // a fresh 2048-bit key
  ~rsa_key();
  rsa_key(const rsa_key&) = delete;
  rsa_key& operator=(const rsa_key&) = delete;
  std::string public_pem() const;
  std::string private_pem() const; // PKCS#8, as in a service-account JSON
  std::string sign_sha256(std::string_view data) const;

private:
  EVP_PKEY* key_;
};

// A compact RS256 JWT over `claims` (header {"alg":"RS256","typ":"JWT"}).
std::string make_jwt(const rsa_key& key, const boost::json::object& claims);
// The claims Google expects from a service account, valid from now for an hour.
boost::json::object service_account_claims(const std::string& email, const std::string& token_url);
std::int64_t unix_now();

// ---- App Store Server API: ES256 JWTs and StoreKit JWS, checked independently
// of the emulator's own code.

// "PUBLIC KEY" PEM (SubjectPublicKeyInfo) of any key.
std::string public_key_pem(EVP_PKEY* key);
// A compact ES256 JWT with exactly this header and these claims.
std::string make_es256_jwt(EVP_PKEY* key, const boost::json::object& header,
                           const boost::json::object& claims);
// Apple's header {"alg":"ES256","kid":key_id,"typ":"JWT"} and claims {"iss","iat":now,
// "exp":now+1800,"aud":"appstoreconnect-v1","bid"}.
boost::json::object server_api_header(const std::string& key_id);
boost::json::object server_api_claims(const std::string& issuer_id, const std::string& bundle_id);

struct decoded_jws {
  boost::json::object header;
  boost::json::value payload;
  std::string signing_input; // "<header>.<payload>"
  std::string signature;     // raw r ‖ s
};
// Strict: three base64url segments, header an object, payload JSON; else throws.
decoded_jws decode_jws(const std::string& compact);
// ES256 over the signing input with x5c[0]'s key (r ‖ s turned into DER here).
bool jws_signature_verifies(const decoded_jws& jws);
// x5c is exactly [leaf, intermediate, root], root byte for byte the PEM given,
// leaf ← intermediate ← root verifies now with OpenSSL, and the leaf and
// intermediate carry Apple's OIDs. "" when so, else what is wrong.
std::string jws_chain_problem(const decoded_jws& jws, const std::string& root_pem);

std::string read_file(const std::string& path);
std::string url_encode(std::string_view text);

} // namespace emulator_test

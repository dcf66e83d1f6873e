#include "test_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "model/encoding.hpp"
#include "tests/support/crypto/test_jws.hpp"

extern char** environ;

namespace emulator_test {

using namespace std::chrono_literals;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

// ---- emulator_process

emulator_process::emulator_process(std::vector<std::string> extra_args) {
  char tmpl[] = "/tmp/emulator-test-XXXXXX";
  if (!::mkdtemp(tmpl))
    throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  const std::string ready = dir_ + "/ready";

  std::vector<std::string> args{EMULATOR_PATH, "--ready-file=" + ready};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The ready line also goes to stdout; keep it out of the test output.
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  int rc = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw std::runtime_error(std::string("cannot start ") + EMULATOR_PATH);

  // Poll for the ready file (written with rename: complete when present).
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("the emulator exited during start-up");
    }
    if (::access(ready.c_str(), R_OK) == 0) {
      auto ports = boost::json::parse(read_file(ready)).as_object();
      control_ = static_cast<std::uint16_t>(ports.at("control").to_number<int>());
      store_a_ = static_cast<std::uint16_t>(ports.at("store_a").to_number<int>());
      store_b_ = static_cast<std::uint16_t>(ports.at("store_b").to_number<int>());
      store_a_h2_ = static_cast<std::uint16_t>(ports.at("store_a_h2").to_number<int>());
      store_b_h2_ = static_cast<std::uint16_t>(ports.at("store_b_h2").to_number<int>());
      return;
    }
    std::this_thread::sleep_for(10ms);
  }
  stop();
  throw std::runtime_error("the emulator did not become ready");
}

int emulator_process::stop() {
  if (pid_ <= 0)
    return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(10ms);
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return -1;
}

emulator_process::~emulator_process() {
  stop();
  std::remove((dir_ + "/ready").c_str());
  ::rmdir(dir_.c_str());
}

std::string emulator_process::control_url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(control_) + std::string(path);
}
std::string emulator_process::store_a_url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(store_a_) + std::string(path);
}
std::string emulator_process::store_b_url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(store_b_) + std::string(path);
}
std::string emulator_process::store_a_h2_url(std::string_view path) const {
  return "https://127.0.0.1:" + std::to_string(store_a_h2_) + std::string(path);
}
std::string emulator_process::store_b_h2_url(std::string_view path) const {
  return "https://127.0.0.1:" + std::to_string(store_b_h2_) + std::string(path);
}

// ---- http

boost::json::value http_result::json() const {
  return boost::json::parse(body);
}

namespace {

size_t collect_body(char* data, size_t size, size_t n, void* out) {
  static_cast<http_result*>(out)->body.append(data, size * n);
  return size * n;
}

size_t collect_header(char* data, size_t size, size_t n, void* out) {
  std::string line(data, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (auto& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    value.erase(value.find_last_not_of("\r\n ") + 1);
    if (name == "connection")
      static_cast<http_result*>(out)->connection = value;
    if (name == "retry-after")
      static_cast<http_result*>(out)->retry_after = value;
  }
  return size * n;
}

struct curl_global {
  curl_global() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

void prepare(CURL* curl, http_result& result, const std::string& method, const std::string& url,
             const std::string& body, curl_slist* headers) {
  static curl_global init;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 20000L); // fail, never hang
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &result);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &result);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, nullptr);
  } else {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method == "POST" ? nullptr : method.c_str());
  }
}

void finish(CURL* curl, http_result& result) {
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
  char* type = nullptr;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type);
  result.content_type = type ? type : "";
  curl_easy_getinfo(curl, CURLINFO_TOTAL_TIME, &result.seconds);
  curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &result.new_connections);
}

curl_slist* header_list(const std::vector<std::string>& headers) {
  // No "Expect: 100-continue" round trip for large bodies.
  curl_slist* list = curl_slist_append(nullptr, "Expect:");
  for (const auto& h : headers)
    list = curl_slist_append(list, h.c_str());
  return list;
}

} // namespace

http_client::http_client() : curl_(curl_easy_init()) {}
http_client::~http_client() {
  curl_easy_cleanup(curl_);
}

http_result http_client::request(const std::string& method, const std::string& url,
                                 const std::string& body, const std::vector<std::string>& headers) {
  http_result result;
  curl_slist* list = header_list(headers);
  prepare(curl_, result, method, url, body, list);
  result.code = curl_easy_perform(curl_);
  finish(curl_, result);
  curl_slist_free_all(list);
  return result;
}

std::vector<http_result> concurrent_posts(const std::string& url, const std::string& body, int n) {
  std::vector<http_result> results(static_cast<std::size_t>(n));
  std::vector<CURL*> handles;
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
  curl_slist* list = header_list({});
  for (int i = 0; i < n; ++i) {
    CURL* h = curl_easy_init();
    prepare(h, results[static_cast<std::size_t>(i)], "POST", url, body, list);
    curl_easy_setopt(h, CURLOPT_PRIVATE,
                     reinterpret_cast<char*>(&results[static_cast<std::size_t>(i)]));
    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    curl_multi_add_handle(multi, h);
    handles.push_back(h);
  }
  int running = 0;
  do {
    curl_multi_perform(multi, &running);
    while (true) {
      int left = 0;
      CURLMsg* msg = curl_multi_info_read(multi, &left);
      if (!msg)
        break;
      if (msg->msg == CURLMSG_DONE) {
        char* priv = nullptr;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        auto* r = reinterpret_cast<http_result*>(priv);
        r->code = msg->data.result;
        finish(msg->easy_handle, *r);
      }
    }
    if (running)
      curl_multi_poll(multi, nullptr, 0, 100, nullptr);
  } while (running);
  for (CURL* h : handles) {
    curl_multi_remove_handle(multi, h);
    curl_easy_cleanup(h);
  }
  curl_multi_cleanup(multi);
  curl_slist_free_all(list);
  return results;
}

std::string url_encode(std::string_view text) {
  static curl_global init;
  CURL* curl = curl_easy_init();
  char* escaped = curl_easy_escape(curl, text.data(), static_cast<int>(text.size()));
  std::string out = escaped;
  curl_free(escaped);
  curl_easy_cleanup(curl);
  return out;
}

// ---- keys and JWTs

rsa_key::rsa_key() : key_(EVP_RSA_gen(2048)) {
  if (!key_)
    throw std::runtime_error("RSA key generation failed");
}
rsa_key::~rsa_key() {
  EVP_PKEY_free(key_);
}

namespace {
template <class Writer>
std::string pem(Writer write) {
  BIO* bio = BIO_new(BIO_s_mem());
  write(bio);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(len));
  BIO_free(bio);
  return out;
}
} // namespace

std::string rsa_key::public_pem() const {
  return pem([this](BIO* b) { PEM_write_bio_PUBKEY(b, key_); });
}

std::string rsa_key::private_pem() const {
  return pem(
    [this](BIO* b) { PEM_write_bio_PrivateKey(b, key_, nullptr, nullptr, 0, nullptr, nullptr); });
}

std::string rsa_key::sign_sha256(std::string_view data) const {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t len = 0;
  std::string sig;
  if (EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key_) == 1
      && EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(data.data()),
                        data.size())
        == 1) {
    sig.resize(len);
    EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                   reinterpret_cast<const unsigned char*>(data.data()), data.size());
    sig.resize(len);
  }
  EVP_MD_CTX_free(ctx);
  return sig;
}

std::string make_jwt(const rsa_key& key, const boost::json::object& claims) {
  using receiptd::model::base64url_encode;
  std::string input = base64url_encode(R"({"alg":"RS256","typ":"JWT"})") + "."
    + base64url_encode(boost::json::serialize(claims));
  return input + "." + base64url_encode(key.sign_sha256(input));
}

boost::json::object service_account_claims(const std::string& email, const std::string& token_url) {
  auto now = unix_now();
  return {{"iss", email},
          {"scope", "https://www.googleapis.com/auth/androidpublisher"},
          {"aud", token_url},
          {"iat", now},
          {"exp", now + 3600}};
}

// ---- App Store Server API

std::string public_key_pem(EVP_PKEY* key) {
  return pem([key](BIO* b) { PEM_write_bio_PUBKEY(b, key); });
}

std::string make_es256_jwt(EVP_PKEY* key, const boost::json::object& header,
                           const boost::json::object& claims) {
  return receiptd::test_support::sign_es256_jws(boost::json::serialize(header),
                                                boost::json::serialize(claims), key);
}

boost::json::object server_api_header(const std::string& key_id) {
  return {{"alg", "ES256"}, {"kid", key_id}, {"typ", "JWT"}};
}

boost::json::object server_api_claims(const std::string& issuer_id, const std::string& bundle_id) {
  auto now = unix_now();
  return {{"iss", issuer_id},
          {"iat", now},
          {"exp", now + 1800},
          {"aud", "appstoreconnect-v1"},
          {"bid", bundle_id}};
}

namespace {

std::string base64url_decode(std::string_view text) {
  if (text.empty()
      || text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                "0123456789-_")
        != std::string_view::npos)
    throw std::runtime_error("not base64url: " + std::string(text.substr(0, 40)));
  std::string standard(text);
  for (auto& c : standard)
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  auto bytes = receiptd::model::base64_decode(standard);
  if (!bytes)
    throw std::runtime_error("not base64url: " + std::string(text.substr(0, 40)));
  return *bytes;
}

template <auto free_fn>
struct deleter {
  template <class T>
  void operator()(T* p) const noexcept {
    free_fn(p);
  }
};
using x509_ptr = std::unique_ptr<X509, deleter<X509_free>>;

x509_ptr certificate(const boost::json::value& base64_der) {
  auto der = receiptd::model::base64_decode(base64_der.as_string());
  if (!der)
    return nullptr;
  const auto* p = reinterpret_cast<const unsigned char*>(der->data());
  return x509_ptr{d2i_X509(nullptr, &p, static_cast<long>(der->size()))};
}

bool has_extension(X509* cert, const char* oid) {
  std::unique_ptr<ASN1_OBJECT, deleter<ASN1_OBJECT_free>> obj{OBJ_txt2obj(oid, 1)};
  return obj && X509_get_ext_by_OBJ(cert, obj.get(), -1) >= 0;
}

} // namespace

decoded_jws decode_jws(const std::string& compact) {
  auto dot1 = compact.find('.');
  auto dot2 = dot1 == std::string::npos ? dot1 : compact.find('.', dot1 + 1);
  if (dot2 == std::string::npos || compact.find('.', dot2 + 1) != std::string::npos)
    throw std::runtime_error("not three segments");
  decoded_jws out;
  out.header = boost::json::parse(base64url_decode(compact.substr(0, dot1))).as_object();
  out.payload = boost::json::parse(base64url_decode(compact.substr(dot1 + 1, dot2 - dot1 - 1)));
  out.signing_input = compact.substr(0, dot2);
  out.signature = base64url_decode(compact.substr(dot2 + 1));
  return out;
}

bool jws_signature_verifies(const decoded_jws& jws) {
  const auto* x5c = jws.header.if_contains("x5c");
  if (!x5c || !x5c->is_array() || x5c->as_array().empty() || jws.signature.size() != 64)
    return false;
  auto leaf = certificate(x5c->as_array()[0]);
  if (!leaf)
    return false;
  std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY_free>> key{X509_get_pubkey(leaf.get())};
  std::unique_ptr<ECDSA_SIG, deleter<ECDSA_SIG_free>> sig{ECDSA_SIG_new()};
  const auto* raw = reinterpret_cast<const unsigned char*>(jws.signature.data());
  BIGNUM* r = BN_bin2bn(raw, 32, nullptr);
  BIGNUM* s = BN_bin2bn(raw + 32, 32, nullptr);
  if (!key || !sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return false;
  }
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(sig.get(), &der);
  if (der_len <= 0)
    return false;
  std::unique_ptr<EVP_MD_CTX, deleter<EVP_MD_CTX_free>> ctx{EVP_MD_CTX_new()};
  bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) == 1
    && EVP_DigestVerify(ctx.get(), der, static_cast<std::size_t>(der_len),
                        reinterpret_cast<const unsigned char*>(jws.signing_input.data()),
                        jws.signing_input.size())
      == 1;
  OPENSSL_free(der);
  return ok;
}

std::string jws_chain_problem(const decoded_jws& jws, const std::string& root_pem) {
  const auto* x5c = jws.header.if_contains("x5c");
  if (!x5c || !x5c->is_array() || x5c->as_array().size() != 3)
    return "x5c is not three certificates";
  auto leaf = certificate(x5c->as_array()[0]);
  auto intermediate = certificate(x5c->as_array()[1]);
  auto root = certificate(x5c->as_array()[2]);
  if (!leaf || !intermediate || !root)
    return "an x5c entry is not a DER certificate";
  std::unique_ptr<BIO, deleter<BIO_free>> bio{
    BIO_new_mem_buf(root_pem.data(), static_cast<int>(root_pem.size()))};
  x509_ptr anchor{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)};
  if (!anchor || X509_cmp(anchor.get(), root.get()) != 0)
    return "x5c[2] is not the given root";
  if (!has_extension(leaf.get(), receiptd::test_support::apple_receipt_signing_oid))
    return "the leaf lacks 1.2.840.113635.100.6.11.1";
  if (!has_extension(intermediate.get(), receiptd::test_support::apple_wwdr_intermediate_oid))
    return "the intermediate lacks 1.2.840.113635.100.6.2.1";
  std::unique_ptr<X509_STORE, deleter<X509_STORE_free>> store{X509_STORE_new()};
  struct stack_free {
    void operator()(STACK_OF(X509) * p) const noexcept { sk_X509_free(p); }
  };
  std::unique_ptr<STACK_OF(X509), stack_free> untrusted{sk_X509_new_null()};
  std::unique_ptr<X509_STORE_CTX, deleter<X509_STORE_CTX_free>> ctx{X509_STORE_CTX_new()};
  if (!store || !untrusted || !ctx || X509_STORE_add_cert(store.get(), anchor.get()) != 1
      || sk_X509_push(untrusted.get(), intermediate.get()) <= 0
      || X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), untrusted.get()) != 1)
    return "OpenSSL set-up failed";
  // The marker OIDs are not critical; nothing else unusual for OpenSSL to refuse.
  if (X509_verify_cert(ctx.get()) != 1)
    return std::string("chain: ")
      + X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
  return "";
}

} // namespace emulator_test

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
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "model/encoding.hpp"

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

} // namespace emulator_test

#include "harness.hpp"

#include <openssl/hmac.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <signal.h>
#include <stdexcept>

#include "model/encoding.hpp"
#include "tests/support/db/test_db.hpp"

namespace receiptd::test {

namespace json = boost::json;

namespace {

void require(bool ok, const std::string& what) {
  if (!ok)
    throw std::runtime_error(what);
}

} // namespace

std::string data_file(const std::string& relative) {
  return read_text(std::string(RECEIPTD_SOURCE_DIR) + "/tests/data/" + relative);
}

std::string unique(const std::string& prefix) {
  static std::atomic<int> n{0};
  return prefix + "-" + model::hex_encode(model::random_bytes(4)) + "-" + std::to_string(++n);
}

std::string unique_package(const std::string& name) {
  auto p = "com.receiptd." + unique(name);
  for (auto& c : p)
    if (c == '-')
      c = '_';
  return p;
}

// ---- emulator -----------------------------------------------------------------

emulator_process::emulator_process(const std::string& dir) {
  auto ready = dir + "/emulator.ready";
  proc_ = std::make_unique<child_process>(
    std::vector<std::string>{RECEIPTD_EMULATOR, "--ready-file=" + ready}, dir + "/emulator.log");
  require(eventually([&] { return !read_text(ready).empty(); }),
          "the emulator did not start: " + proc_->log());
  auto ports = json::parse(read_text(ready));
  control_ = static_cast<unsigned short>(ports.at("control").to_number<int>());
  store_a_ = static_cast<unsigned short>(ports.at("store_a").to_number<int>());
  store_b_ = static_cast<unsigned short>(ports.at("store_b").to_number<int>());
  store_b_h2_ = static_cast<unsigned short>(ports.at("store_b_h2").to_number<int>());
  store_a_h2_ = static_cast<unsigned short>(ports.at("store_a_h2").to_number<int>());
  auto pki = control("GET", "/control/store_a/server_api/pki");
  server_api_root_pem_ = pki.at("root_pem").as_string().c_str();
}

std::string emulator_process::control_url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(control_) + path;
}

json::value emulator_process::control(const std::string& method, const std::string& path,
                                      const json::value& body) {
  auto r = http_call(method, "http://127.0.0.1:" + std::to_string(control_) + path,
                     body.is_null() ? std::string() : json::serialize(body),
                     {"Content-Type: application/json"});
  require(r.status >= 200 && r.status < 300,
          "emulator control " + method + " " + path + " → " + std::to_string(r.status) + " "
            + r.body + r.error);
  if (r.body.empty())
    return nullptr;
  auto answer = r.json();
  // What receiptd delivered to the webhook receiver, however a test reads it, is
  // held against docs/openapi.yaml's webhooks.
  if (method == "GET" && path.rfind("/control/webhooks/", 0) == 0 && answer.is_object())
    if (const auto* list = answer.as_object().if_contains("deliveries"); list && list->is_array())
      for (const auto& d : list->as_array())
        if (const auto* body = d.as_object().if_contains("body"); body && body->is_string())
          record_webhook_body(std::string(body->get_string()));
  return answer;
}

void emulator_process::set_mode(const std::string& store, const std::string& mode, int delay_ms,
                                int status) {
  json::object body{{"mode", mode}};
  if (delay_ms)
    body["delay_ms"] = delay_ms;
  if (status)
    body["status"] = status;
  control("PUT", "/control/stores/" + store + "/mode", body);
}

std::string emulator_process::store_a_production_url() const {
  return "http://127.0.0.1:" + std::to_string(store_a_) + "/verifyReceipt";
}

std::string emulator_process::store_a_sandbox_url() const {
  return "http://127.0.0.1:" + std::to_string(store_a_) + "/sandbox/verifyReceipt";
}

std::string emulator_process::store_a_server_api_url() const {
  return "http://127.0.0.1:" + std::to_string(store_a_);
}

std::string emulator_process::store_a_server_api_sandbox_url() const {
  return "http://127.0.0.1:" + std::to_string(store_a_) + "/sandbox";
}

std::string emulator_process::store_b_url() const {
  return "http://127.0.0.1:" + std::to_string(store_b_);
}

std::string emulator_process::store_b_h2_url() const {
  return "https://127.0.0.1:" + std::to_string(store_b_h2_);
}

std::string emulator_process::store_a_h2_url() const {
  return "https://127.0.0.1:" + std::to_string(store_a_h2_);
}

std::string emulator_process::tls_certificate_pem() const {
  auto r = http_call("GET", control_url("/control/tls/certificate"));
  require(r.status == 200, "emulator control GET /control/tls/certificate → " + r.body + r.error);
  return r.body;
}

// ---- receiptd -------------------------------------------------------------------

service_process::service_process(std::string dir, std::string db_url, std::vector<std::string> args)
  : dir_(std::move(dir)), db_url_(std::move(db_url)), args_(std::move(args)) {}

service_process::~service_process() {
  if (running())
    stop();
}

void service_process::start() {
  port_ = free_port();
  record_exchanges_with(port_); // every answer is held against docs/openapi.yaml
  std::vector<std::string> argv{RECEIPTD_BINARY, "--http.port=" + std::to_string(port_),
                                "--db.url=" + db_url_, "--trace.file=" + trace_file(),
                                "--bootstrap.create-first-app=false"};
  argv.insert(argv.end(), args_.begin(), args_.end());
  proc_ = std::make_unique<child_process>(argv, dir_ + "/receiptd.log", RECEIPTD_SOURCE_DIR);
  bool up = eventually([&] {
    if (!proc_->running())
      return true;
    return http_call("GET", url("/healthz")).status == 200;
  });
  require(up && proc_->running(), "receiptd did not start:\n" + proc_->log());
}

int service_process::stop() {
  proc_->signal(SIGTERM);
  return proc_->wait(std::chrono::seconds(30));
}

void service_process::kill9() {
  proc_->signal(SIGKILL);
  proc_->wait(std::chrono::seconds(10));
}

std::string service_process::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

http_response service_process::post(const std::string& path, const std::string& body,
                                    const std::string& token, std::vector<std::string> headers) {
  headers.push_back("Content-Type: application/json");
  headers.push_back("Accept: application/json");
  if (!token.empty())
    headers.push_back("Authorization: Bearer " + token);
  return http_call("POST", url(path), body, headers);
}

http_response service_process::get(const std::string& path, const std::string& token) {
  std::vector<std::string> headers{"Accept: application/json"};
  if (!token.empty())
    headers.push_back("Authorization: Bearer " + token);
  return http_call("GET", url(path), {}, headers);
}

http_response service_process::del(const std::string& path, const std::string& token) {
  std::vector<std::string> headers{"Accept: application/json"};
  if (!token.empty())
    headers.push_back("Authorization: Bearer " + token);
  return http_call("DELETE", url(path), {}, headers);
}

// ---- webhooks -------------------------------------------------------------------

std::string hmac_sha256_hex(const std::string& key, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n);
  return model::hex_encode(std::string(reinterpret_cast<const char*>(out), n));
}

hook_endpoint add_endpoint(suite& s, const test_app& app, const std::string& events) {
  hook_endpoint e;
  e.name = unique("hook");
  std::vector<std::string> args{"webhook", "add", app.id,
                                "--url=" + s.emulator.control_url("/webhooks/" + e.name)};
  if (!events.empty())
    args.push_back("--events=" + events);
  auto r = s.ctl(args);
  require(r.code == 0, "receiptctl webhook add failed: " + r.err + r.out);
  e.id = std::string(r.json.at("id").as_string());
  e.secret = std::string(r.json.at("secret").as_string());
  return e;
}

json::array received(suite& s, const hook_endpoint& e) {
  return s.emulator.control("GET", "/control/webhooks/" + e.name).at("deliveries").as_array();
}

std::string delivery_header(const json::value& delivery, const std::string& name) {
  for (auto& [k, v] : delivery.at("headers").as_object()) {
    std::string_view key = k;
    if (key.size() == name.size()
        && std::equal(key.begin(), key.end(), name.begin(),
                      [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
      return v.is_string() ? std::string(v.get_string()) : json::serialize(v);
  }
  return "";
}

// ---- the suite ------------------------------------------------------------------

namespace {

// The one certificate of an Xcode-signed JWS (its header's x5c), as PEM.
std::string xcode_certificate_pem(const std::string& vector_name) {
  auto header = json::parse(data_file("apple-jws-transaction/" + vector_name + "/header.json"));
  auto der = model::base64_decode(header.at("x5c").at(0).as_string());
  require(der.has_value(), "x5c of " + vector_name + " is not base64");
  const auto* p = reinterpret_cast<const unsigned char*>(der->data());
  X509* cert = d2i_X509(nullptr, &p, static_cast<long>(der->size()));
  require(cert != nullptr, "x5c of " + vector_name + " is not a certificate");
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  X509_free(cert);
  return pem;
}

// The trust options of the suite's receiptd: Apple's material from config/trust
// plus the test PKI and the emulator's StoreKit 2 root, written out as PEM
// files; the StoreKit test roots are Xcode's receipt certificate and the
// certificate of the public Xcode-signed transaction (as an operator would
// configure their own project's).
std::vector<std::string> trust_args(const std::string& dir, const test_support::test_pki& pki,
                                    const test_support::test_pki& jws_pki,
                                    const emulator_process& emulator) {
  std::string trust = std::string(RECEIPTD_SOURCE_DIR) + "/config/trust/";
  write_text(dir + "/test-root.pem", pki.root.pem());
  write_text(dir + "/test-jws-root.pem", jws_pki.root.pem());
  write_text(dir + "/test-intermediate.pem", pki.intermediate.pem());
  write_text(dir + "/test-itunes-intermediate.pem", pki.itunes_intermediate.pem());
  write_text(dir + "/emulator-storekit-root.pem", emulator.server_api_root_pem());
  write_text(dir + "/storekit-test-roots.pem",
             read_text(trust + "storekit-test.pem")
               + xcode_certificate_pem("apple-lib-python-xcode-2023"));
  return {"--store-a.trust-roots=[\"" + trust + "apple-root-ca.pem\",\"" + trust
            + "apple-root-ca-g3.pem\",\"" + dir + "/test-root.pem\",\"" + dir
            + "/emulator-storekit-root.pem\",\"" + dir + "/test-jws-root.pem\"]",
          "--store-a.intermediates=[\"" + trust + "apple-itunes-store-ca.pem\",\"" + trust
            + "apple-wwdr-ca.pem\",\"" + dir + "/test-intermediate.pem\",\"" + dir
            + "/test-itunes-intermediate.pem\"]",
          "--store-a.storekit-test-root=" + dir + "/storekit-test-roots.pem"};
}

std::vector<std::string> service_args(const std::string& dir, const test_support::test_pki& pki,
                                      const test_support::test_pki& jws_pki,
                                      const emulator_process& emulator) {
  std::vector<std::string> args{
    "--store-a.production-url=" + emulator.store_a_production_url(),
    "--store-a.sandbox-url=" + emulator.store_a_sandbox_url(),
    "--store-a.server-api-url=" + emulator.store_a_server_api_url(),
    "--store-a.server-api-sandbox-url=" + emulator.store_a_server_api_sandbox_url(),
    "--store-b.api-url=" + emulator.store_b_url(), "--store-a.timeout=1500ms",
    "--store-b.timeout=1500ms", "--validator.store-deadline=2s", "--retry.initial=200ms",
    "--retry.max=1s", "--retry.poll-interval=100ms", "--retry.lease=4s",
    "--webhooks.initial-backoff=100ms", "--webhooks.max-backoff=400ms",
    "--webhooks.poll-interval=100ms", "--webhooks.timeout=2s", "--webhooks.lease=3s",
    // The upkeep's own receiptd turns these on (play_upkeep_test.cpp,
    // transaction_refresh_test.cpp): elsewhere a poll would add store calls to
    // tests that count them.
    "--store-b.voided-purchases=false", "--store-b.refresh-interval=0s",
    // The orders API adds a call to every Play upload and a sweep: on in the
    // receiptds of store_b_products_v2_test.cpp only.
    "--store-b.orders=false",
    "--store-a.refresh-interval=0s", "--http.threads=2", "--scheduler.max-threads=2",
    // The notification tests sign fixed 2024 dates; the bound on a notification's
    // age has its own test (purchases_test.cpp) with the default.
    "--notifications.max-age=200000h",
    // Every test uploads from 127.0.0.1, one client network: its limit is tested by
    // receiptds of their own (admission_test.cpp).
    "--limits.client-rate=0", no_token_cache};
  auto trust = trust_args(dir, pki, jws_pki, emulator);
  args.insert(args.end(), trust.begin(), trust.end());
  return args;
}

} // namespace

std::vector<std::string> standard_service_args(suite& s) {
  return service_args(s.dir, s.pki, s.jws_pki, s.emulator);
}

suite::suite()
  : dialect(dialect_under_test()),
    dir(make_temp_dir("receiptd-functional")),
    db_url(fresh_database_url(dialect)),
    pki(test_support::make_test_pki()),
    rogue(test_support::make_test_pki({"rogue"})),
    jws_pki(test_support::make_jws_pki("receiptd notifications test")),
    rogue_jws_pki(test_support::make_jws_pki("rogue notifications")),
    emulator(dir),
    service(dir, db_url, service_args(dir, pki, jws_pki, emulator)) {
  service.start();
}

ctl_result suite::ctl(std::vector<std::string> args) {
  args.insert(args.begin(), {RECEIPTCTL_BINARY, "--db.url=" + db_url, "--json"});
  auto r = run_program(args);
  ctl_result out{r.exit_code, nullptr, r.out, r.err};
  boost::system::error_code ec;
  auto v = json::parse(r.out, ec);
  if (!ec)
    out.json = v;
  return out;
}

suite& the_suite() {
  static suite s;
  return s;
}

// ---- apps -----------------------------------------------------------------------

namespace {

// Runs `receiptctl app create …` and takes the new app's id and token.
void fill_from_ctl(suite& s, const std::vector<std::string>& args, test_app& app) {
  auto r = s.ctl(args);
  require(r.code == 0 && r.json.is_object(), "receiptctl app create failed: " + r.err + r.out);
  app.id = r.json.at("id").as_string().c_str();
  app.token = r.json.at("token").as_string().c_str();
  app.token_id = r.json.at("token_id").as_string().c_str();
}

} // namespace

// ---- Store A helpers ----------------------------------------------------------

test_app create_store_a_app(suite& s, const std::string& bundle_id,
                            const std::string& shared_secret) {
  test_app app;
  app.name = unique("app");
  app.bundle_id = bundle_id;
  std::vector<std::string> args{"app", "create", "--name=" + app.name, "--bundle-id=" + bundle_id};
  if (!shared_secret.empty())
    args.push_back("--shared-secret=" + shared_secret);
  fill_from_ctl(s, args, app);
  return app;
}

std::string receipt_vector(const std::string& kind, const std::string& name) {
  auto text = data_file("apple-" + kind + "/" + name + "/receipt.b64");
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

// ---- Store A StoreKit 2 helpers ---------------------------------------------------

storekit_app create_storekit_app(suite& s, const std::string& bundle_id, bool with_key,
                                 const std::vector<std::string>& extra_args) {
  storekit_app app;
  app.name = unique("app");
  app.bundle_id = bundle_id;
  std::vector<std::string> args{"app", "create", "--name=" + app.name, "--bundle-id=" + bundle_id};
  if (with_key) {
    test_support::cert_options key;
    key.key_algorithm = "EC";
    auto cert = test_support::make_cert(key);
    app.issuer_id = "57246542-96fe-1a63-e053-" + model::hex_encode(model::random_bytes(6));
    app.key_id = model::hex_encode(model::random_bytes(5));
    app.key_file = s.dir + "/" + unique("AuthKey") + ".p8";
    write_text(app.key_file, cert.key_pem());
    s.emulator.control("POST", "/control/store_a/server_api/keys",
                       json::object{{"issuer_id", app.issuer_id},
                                    {"key_id", app.key_id},
                                    {"bundle_id", bundle_id},
                                    {"private_key_pem", cert.key_pem()}});
    args.push_back("--app-store-issuer-id=" + app.issuer_id);
    args.push_back("--app-store-key-id=" + app.key_id);
    args.push_back("--app-store-private-key-file=" + app.key_file);
  }
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  fill_from_ctl(s, args, app);
  return app;
}

std::string register_transaction(suite& s, const json::object& fields) {
  auto r = s.emulator.control("POST", "/control/store_a/transactions", fields);
  return r.at("signed_transaction").as_string().c_str();
}

std::string fresh_transaction_id() {
  auto hex = model::hex_encode(model::random_bytes(6));
  return "2" + std::to_string(std::stoull(hex, nullptr, 16) % 1000000000000000ULL);
}

json::value upload_confirmed_transaction(suite& s, const storekit_app& app,
                                         const std::string& transaction_id, std::string* jws_out) {
  constexpr std::int64_t june_2024 = 1717243200000, days_30 = 30LL * 86400000;
  auto jws = register_transaction(s,
                                  json::object{{"transaction_id", transaction_id},
                                               {"original_transaction_id", transaction_id},
                                               {"bundle_id", app.bundle_id},
                                               {"product_id", app.bundle_id + ".monthly"},
                                               {"environment", "Sandbox"},
                                               {"purchase_date_ms", june_2024},
                                               {"expires_date_ms", june_2024 + days_30}});
  auto r = s.service.post("/client/store_a/transactions", transaction_body(jws), app.token);
  require(r.status == 200, "transaction upload → " + std::to_string(r.status) + " " + r.body);
  if (jws_out)
    *jws_out = jws;
  return r.json();
}

std::string transaction_body(const std::string& jws, const std::string& extra_fields) {
  return "{\"signed_transaction\":" + json::serialize(json::value(jws)) + extra_fields + "}";
}

std::string jws_vector(const std::string& kind, const std::string& name) {
  return data_file("apple-jws-" + kind + "/" + name + "/jws.txt");
}

// ---- Store B helpers ----------------------------------------------------------

service_account_file make_service_account(suite& s) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  BIO* priv = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(priv, key, nullptr, nullptr, 0, nullptr, nullptr);
  BIO* pub = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(pub, key);
  auto text = [](BIO* b) {
    char* data = nullptr;
    auto len = BIO_get_mem_data(b, &data);
    return std::string(data, static_cast<std::size_t>(len));
  };
  service_account_file f;
  f.email = unique("svc") + "@receiptd-tests.iam.gserviceaccount.com";
  json::object sa{{"type", "service_account"}, {"project_id", "receiptd-tests"},
                  {"private_key_id", "k1"},    {"private_key", text(priv)},
                  {"client_email", f.email},   {"token_uri", s.emulator.token_uri()}};
  s.emulator.control("POST", "/control/store_b/service_accounts",
                     json::object{{"client_email", f.email}, {"public_key_pem", text(pub)}});
  BIO_free(priv);
  BIO_free(pub);
  EVP_PKEY_free(key);
  f.path = s.dir + "/" + unique("service-account") + ".json";
  write_text(f.path, json::serialize(sa));
  return f;
}

test_app create_store_b_app(suite& s, const std::string& package_name,
                            const std::string& licence_key_b64, bool with_service_account) {
  test_app app;
  app.name = unique("app");
  app.package_name = package_name;
  std::vector<std::string> args{"app", "create", "--name=" + app.name,
                                "--package-name=" + package_name};
  if (!licence_key_b64.empty())
    args.push_back("--license-key=" + licence_key_b64);
  if (with_service_account)
    args.push_back("--service-account-file=" + make_service_account(s).path);
  fill_from_ctl(s, args, app);
  return app;
}

std::string test_licence_key() {
  auto k = data_file("google-play/android-easy-checkout-test-keypair/public_key.b64");
  while (!k.empty() && (k.back() == '\n' || k.back() == '\r'))
    k.pop_back();
  return k;
}

std::string sign_purchase(const std::string& data) {
  static EVP_PKEY* key = [] {
    auto der = *model::base64_decode(
      data_file("google-play/android-easy-checkout-test-keypair/test_private_key_pkcs8.b64"));
    auto p = reinterpret_cast<const unsigned char*>(der.data());
    return d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(der.size()));
  }();
  require(key != nullptr, "cannot load the Play test private key");
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::size_t len = 0;
  EVP_DigestSignInit(ctx, nullptr, EVP_sha1(), nullptr, key);
  EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(data.data()),
                 data.size());
  std::string sig(len, '\0');
  EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                 reinterpret_cast<const unsigned char*>(data.data()), data.size());
  EVP_MD_CTX_free(ctx);
  sig.resize(len);
  return model::base64_encode(sig);
}

std::string purchase_data_json(const std::string& package, const std::string& product,
                               const std::string& token, bool subscription,
                               const std::string& order_id) {
  // Key order and spacing as the Play Billing client writes them.
  std::string s = "{";
  if (!order_id.empty())
    s += "\"orderId\":\"" + order_id + "\",";
  s += "\"packageName\":\"" + package + "\",\"productId\":\"" + product
    + "\",\"purchaseTime\":1700000000000,\"purchaseState\":0,\"purchaseToken\":\"" + token
    + "\",\"quantity\":1";
  if (subscription)
    s += ",\"autoRenewing\":true";
  s += ",\"acknowledged\":false}";
  return s;
}

std::string store_b_body(const std::string& data, const std::string& signature,
                         const std::string& extra_fields) {
  json::object o{{"purchase_data", data}, {"purchase_signature", signature}};
  auto s = json::serialize(o);
  if (!extra_fields.empty())
    s.insert(s.size() - 1, "," + extra_fields);
  return s;
}

void register_purchase(suite& s, const std::string& package, const std::string& product,
                       const std::string& token, const std::string& kind, bool test,
                       int http_status) {
  json::object body{{"package_name", package},
                    {"product_id", product},
                    {"token", token},
                    {"kind", kind},
                    {"test", test},
                    {"purchase_state", 0},
                    {"acknowledged", true},
                    {"order_id", "GPA.1234-5678-9012-34567"}};
  if (kind == "subscription") {
    body["auto_renewing"] = true;
    body["expiry_ms"] = 1893456000000;
  }
  if (http_status != 200)
    body["http_status"] = http_status;
  s.emulator.control("POST", "/control/store_b/purchases", body);
}

} // namespace receiptd::test

#pragma once
// The functional test bench: the real receiptd binary and the store emulator
// over real sockets, on the database chosen by RECEIPTD_TEST_DB (sqlite or
// postgresql), with apps made by the real receiptctl.

#include <memory>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "db/database.hpp"
#include "tests/support/crypto/test_ca.hpp"
#include "tests/support/crypto/test_jws.hpp"
#include "http_client.hpp"
#include "process.hpp"

namespace receiptd::test {

class emulator_process {
public:
  explicit emulator_process(const std::string& dir);
  boost::json::value control(const std::string& method, const std::string& path,
                             const boost::json::value& body = nullptr);
  void reset() { control("POST", "/control/reset"); }
  void set_mode(const std::string& store, const std::string& mode, int delay_ms = 0,
                int status = 0);
  boost::json::value calls() { return control("GET", "/control/calls"); }
  // A URL on the control port (the webhook receiver, PROTOCOL.md).
  std::string control_url(const std::string& path) const;

  std::string store_a_production_url() const;
  std::string store_a_sandbox_url() const;
  std::string store_b_url() const;
  std::string token_uri() const { return store_b_url() + "/token"; }
  // Store B over TLS with HTTP/2 only, as Google answers (PROTOCOL.md "HTTP/2"), and
  // the certificate a client must trust for it (PEM).
  std::string store_b_h2_url() const;
  std::string store_a_h2_url() const; // its HTTP/2 listener's base URL (TLS, ALPN "h2")
  std::string tls_certificate_pem() const;
  // The App Store Server API's two hosts, and the root of the PKI the emulator
  // signs StoreKit 2 transactions with (PROTOCOL.md).
  std::string store_a_server_api_url() const;
  std::string store_a_server_api_sandbox_url() const;
  const std::string& server_api_root_pem() const { return server_api_root_pem_; }

private:
  std::unique_ptr<child_process> proc_;
  unsigned short control_ = 0, store_a_ = 0, store_b_ = 0, store_b_h2_ = 0, store_a_h2_ = 0;
  std::string server_api_root_pem_;
};

class service_process {
public:
  service_process(std::string dir, std::string db_url, std::vector<std::string> args);
  ~service_process();

  void start(); // spawns receiptd and waits for /healthz
  int stop();   // SIGTERM, waits; returns the exit status
  void kill9(); // SIGKILL, waits
  bool running() { return proc_ && proc_->running(); }
  std::string log() const { return proc_ ? proc_->log() : std::string(); }
  std::string trace_file() const { return dir_ + "/trace.jsonl"; }
  const std::string& db_url() const { return db_url_; }
  unsigned short port() const { return port_; }
  pid_t pid() const { return proc_ ? proc_->pid() : -1; }
  std::string url(const std::string& path) const;

  http_response post(const std::string& path, const std::string& body, const std::string& token,
                     std::vector<std::string> headers = {});
  http_response get(const std::string& path, const std::string& token);
  http_response del(const std::string& path, const std::string& token);

private:
  std::string dir_, db_url_;
  std::vector<std::string> args_;
  unsigned short port_ = 0;
  std::unique_ptr<child_process> proc_;
};

struct ctl_result {
  int code = -1;
  boost::json::value json; // null unless stdout was JSON
  std::string out, err;
};

// One emulator and one receiptd per test binary run. receiptd trusts Apple's
// real roots plus a test PKI made here, configured the way an operator adds a
// root (store-a.trust-roots / intermediates), and the Xcode StoreKit test root.
struct suite {
  suite();
  db::dialect dialect;
  std::string dir;
  std::string db_url;
  test_support::test_pki pki;   // configured as trusted
  test_support::test_pki rogue; // not configured anywhere
  // Apple-shaped StoreKit chains (store notifications are signed here): the
  // first configured as trusted, the second nowhere.
  test_support::test_pki jws_pki;
  test_support::test_pki rogue_jws_pki;
  emulator_process emulator;
  service_process service;

  // receiptctl --db.url=… --json ARGS
  ctl_result ctl(std::vector<std::string> args);
};
suite& the_suite();
// The options the suite's own receiptd runs with (emulator URLs, trust material,
// short retries), for a second receiptd with one option changed.
std::vector<std::string> standard_service_args(suite& s);

// Among those options: the suite's receiptd runs without the token cache, since its
// tests change tokens and apps through receiptctl and expect the effect on the next
// request. token_cache_test.cpp runs a receiptd of its own with the shipped cache.
inline const std::string no_token_cache = "--auth.token-cache-ttl=0s";

// A JSON value as text: a string's characters, anything else serialized.
inline std::string str(const boost::json::value& v) {
  return v.is_string() ? std::string(v.get_string()) : boost::json::serialize(v);
}

std::string unique(const std::string& prefix);
// A Store B package name of its own: com.receiptd.NAME_…
std::string unique_package(const std::string& name);

struct test_app {
  std::string id, name, token, token_id;
  std::string package_name, bundle_id;
};

// ---- Store A ----------------------------------------------------------------

test_app create_store_a_app(suite& s, const std::string& bundle_id,
                            const std::string& shared_secret = "");

// A real receipt of tests/data/apple-*/NAME/receipt.b64.
std::string receipt_vector(const std::string& kind, const std::string& name);

// ---- Store A StoreKit 2 (App Store Server API) ------------------------------

// An app with a bundle id and App Store Server API credentials: a fresh EC
// P-256 key written as a .p8 file, set through receiptctl and registered with
// the emulator (with_key false: the app has none).
struct storekit_app : test_app {
  std::string issuer_id, key_id, key_file;
};
storekit_app create_storekit_app(suite& s, const std::string& bundle_id, bool with_key = true,
                                 const std::vector<std::string>& extra_args = {});

// Registers a transaction with the emulator's Server API (PROTOCOL.md:
// POST /control/store_a/transactions) and returns the JWS a device would upload.
std::string register_transaction(suite& s, const boost::json::object& fields);

// A decimal transaction id like Apple's (16 digits), unique per test run.
std::string fresh_transaction_id();

// A subscription transaction of the app (Sandbox, bought 2024-06-01T12:00Z for 30
// days) registered with the emulator, uploaded to the suite's receiptd and
// confirmed (200); its resource, and the JWS uploaded in `jws_out`.
boost::json::value upload_confirmed_transaction(suite& s, const storekit_app& app,
                                                const std::string& transaction_id,
                                                std::string* jws_out = nullptr);

// The upload body of POST /client/store_a/transactions.
std::string transaction_body(const std::string& jws, const std::string& extra_fields = "");

// A real Apple JWS of tests/data/apple-jws-KIND/NAME/jws.txt.
std::string jws_vector(const std::string& kind, const std::string& name);

// ---- Webhooks (the emulator's receiver, PROTOCOL.md) --------------------------

// HMAC-SHA256 in lower-case hex, computed here with OpenSSL, not with receiptd's code.
std::string hmac_sha256_hex(const std::string& key, const std::string& data);

// A header of a delivery the receiver recorded, by name in any case; "" when absent.
std::string delivery_header(const boost::json::value& delivery, const std::string& name);

// An endpoint of the app at a receiver of its own at the emulator (its name),
// added with receiptctl (events: a comma list, empty for all).
struct hook_endpoint {
  std::string id, secret, name;
};
hook_endpoint add_endpoint(suite& s, const test_app& app, const std::string& events = "");
// Every delivery the endpoint's receiver recorded, in order.
boost::json::array received(suite& s, const hook_endpoint& e);

// ---- Store B ----------------------------------------------------------------

// A fresh service-account key pair: its JSON file, registered with the emulator.
struct service_account_file {
  std::string path;
  std::string email;
};
service_account_file make_service_account(suite& s);

// Creates an app through receiptctl (licence key, package name and a registered
// service account unless told otherwise).
test_app create_store_b_app(suite& s, const std::string& package_name,
                            const std::string& licence_key_b64, bool with_service_account = true);

// Google's reserved test key pair of android-easy-checkout (tests/data): lets the
// tests sign purchase data of their own, like Play would.
std::string test_licence_key();
std::string sign_purchase(const std::string& purchase_data); // base64 SHA1withRSA

// Purchase data JSON as Play writes it.
std::string purchase_data_json(const std::string& package, const std::string& product,
                               const std::string& token, bool subscription = false,
                               const std::string& order_id = "GPA.1234-5678-9012-34567");

// The upload body of the signed endpoint.
std::string store_b_body(const std::string& data, const std::string& signature,
                         const std::string& extra_fields = "");

// Registers a purchase with the emulator's Play API.
void register_purchase(suite& s, const std::string& package, const std::string& product,
                       const std::string& token, const std::string& kind = "product",
                       bool test = false, int http_status = 200);

std::string data_file(const std::string& relative);

} // namespace receiptd::test

#pragma once
// Shared helpers of the store_a_*_test.cpp files: the public vectors under
// tests/data and the trust material under config/trust, loaded through the same
// API production uses.

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include <boost/json.hpp>

#include "model/encoding.hpp"
#include "model/store_a/receipt.hpp"

namespace store_a_fixtures {

namespace sa = receiptd::model::store_a;

// Every App Store Server Notification of tests/data/apple-jws-notification.
inline const char* const notification_vectors[] = {
  "aporat-test-sandbox-2022",
  "dmzlingyin-aitubo-did-change-renewal-status-production-2025",
  "session-pro-consumption-request-sandbox-2025",
  "session-pro-did-change-renewal-pref-downgrade-sandbox-2025",
  "session-pro-did-change-renewal-pref-upgrade-sandbox-2025",
  "session-pro-did-change-renewal-status-disabled-sandbox-2025",
  "session-pro-did-renew-sandbox-2025",
  "session-pro-expired-voluntary-sandbox-2025",
  "session-pro-refund-sandbox-2025",
  "session-pro-subscribed-resubscribe-sandbox-2025",
  "session-pro-test-sandbox-2025",
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string data_path(const std::string& rel) {
  return std::string(RECEIPTD_TEST_DATA) + "/" + rel;
}

inline std::string trust_pem(const std::string& file) {
  return read_file(std::string(RECEIPTD_SOURCE_DIR) + "/config/trust/" + file);
}

// The decoded bytes of tests/data/<kind>/<name>/receipt.b64.
inline std::string vector_bytes(const std::string& kind, const std::string& name) {
  auto bytes
    = receiptd::model::base64_decode(read_file(data_path(kind + "/" + name + "/receipt.b64")));
  if (!bytes)
    throw std::runtime_error(name + ": receipt.b64 is not base64");
  return *bytes;
}

inline boost::json::value expected_json(const std::string& kind, const std::string& name) {
  return boost::json::parse(read_file(data_path(kind + "/" + name + "/expected.json")));
}

inline std::shared_ptr<const sa::trust_anchors> load(const sa::trust_config& cfg) {
  auto a = sa::load_trust_anchors(cfg);
  if (!a)
    throw std::runtime_error("trust: " + a.errors().front().message);
  return *a;
}

// Production trust: Apple Root CA; iTunes Store CA and WWDR CA for transaction receipts.
inline const sa::trust_anchors& apple_anchors() {
  static const auto anchors
    = load({{trust_pem("apple-root-ca.pem")},
            {trust_pem("apple-itunes-store-ca.pem"), trust_pem("apple-wwdr-ca.pem")},
            {}});
  return *anchors;
}

// The same plus the opt-in Xcode StoreKit test root.
inline const sa::trust_anchors& apple_and_storekit_anchors() {
  static const auto anchors
    = load({{trust_pem("apple-root-ca.pem")},
            {trust_pem("apple-itunes-store-ca.pem"), trust_pem("apple-wwdr-ca.pem")},
            {trust_pem("storekit-test.pem")}});
  return *anchors;
}

inline const char* const unified_vectors[] = {
  "appreceiptvalidator-mindnode-production-macos",
  "appreceiptvalidator-purchasingexperiments-sandbox-ios",
  "kvitto-production-macos-xcode7",
  "mbaasy-grandunified-sandbox-2015",
  "revenuecat-sample1-sandbox-ios",
  "tpinappreceipt-production-ios",
  "tpinappreceipt-sandbox-g5-ios",
  "xcode-storekit-empty",
  "xcode-storekit-with-transaction",
};

inline const char* const transaction_vectors[] = {
  "es-purchaser-consumable-sandbox-2015",
  "mbaasy-yearly-subscription-sandbox-2015",
  "mindmob-download-sandbox-2012",
};

inline bool is_xcode(const std::string& name) {
  return name.rfind("xcode-", 0) == 0;
}

inline receiptd::model::unix_ms now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

} // namespace store_a_fixtures

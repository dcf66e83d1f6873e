#pragma once
// An app owns access tokens and the store credentials its uploads are checked with.

#include <string>

namespace receiptd::model {

struct app {
  std::string id; // UUID, the resource's app_family_id
  std::string name;
  std::string bundle_id;               // Store A: must equal the receipt's bundle id
  std::string package_name;            // Store B: must equal purchase data packageName
  std::string store_a_shared_secret;   // verifyReceipt "password"; may be empty
  std::string store_b_public_key;      // Play licence key: base64 X.509 SubjectPublicKeyInfo
  std::string store_b_service_account; // service-account JSON text; may be empty
};

} // namespace receiptd::model

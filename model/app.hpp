#pragma once
// An app owns access tokens and the store credentials its uploads are checked with.

#include <string>
#include <string_view>

#include "model/customer_options.hpp"
#include "model/transfer_policy.hpp"

namespace receiptd::model {

struct app {
  std::string id; // UUID, the resource's app_family_id
  std::string name;
  std::string bundle_id;               // Store A: must equal the receipt's bundle id
  std::string package_name;            // Store B: must equal purchase data packageName
  std::string store_a_shared_secret;   // verifyReceipt "password"; may be empty
  std::string store_b_public_key;      // Play licence key: base64 X.509 SubjectPublicKeyInfo
  std::string store_b_service_account; // service-account JSON text; may be empty
  // App Store Server API: App Store Connect's in-app purchase key.
  // All three set, or none (empty: none); checked with
  // store_a::server_api_key::parse before they are stored.
  std::string app_store_issuer_id;
  std::string app_store_key_id;
  std::string app_store_private_key; // PEM text of the .p8 file
  // Xcode StoreKit test receipts (signed with a key that ships with every Xcode) are
  // accepted, as environment xcode, only for an app that opts in.
  bool accept_storekit_test_receipts = false;
  transfer_policy transfers; // a re-upload naming another user_identifier
  // Store B real-time developer notifications: the secret of the push
  // URL's ?token=, compared in constant time; empty until `receiptctl app
  // rtdn-url` makes one (then pushes are refused: 401).
  std::string rtdn_token;
  // Play purchases validated for this app are acknowledged by receiptd
  // (model/store_b/acknowledgement.hpp); off: the app acknowledges them itself.
  bool acknowledge_purchases = false;
  // Entitlement rules: JSON text (model/entitlements/rules.hpp, to_json /
  // parse_rules); "{}" (or empty): none. Kept as text on the app and compiled
  // once per version of the row (actors/app_context.hpp), so a change reaches a
  // running receiptd the way new credentials do (the auth revision).
  std::string entitlement_rules = "{}";
  // Customers: which tokens may look them up, and whether StoreKit 2's
  // appAccountToken / Play's obfuscatedExternalAccountId name them.
  customer_lookup_policy customer_lookup = customer_lookup_policy::client;
  customer_id_source customer_id_from = customer_id_source::none;
  // Read, never written: the app has at least one webhook endpoint.
  // A change to its endpoints bumps the auth revision, so a cached app learns of
  // it within auth.revocation-check.
  bool has_webhooks = false;

  bool operator==(const app&) const = default;
};

// Whether `token` is the app's push secret (the URL's ?token=), in constant time;
// an app without one has not asked for pushes (receiptctl app rtdn-url) and takes none.
bool rtdn_token_matches(const app& a, std::string_view token);

} // namespace receiptd::model

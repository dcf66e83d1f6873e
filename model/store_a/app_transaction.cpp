// An app transaction (app_transaction.hpp): Apple's JWSAppTransactionDecodedPayload
// ("JWSAppTransactionDecodedPayload", App Store Server API 1.17; StoreKit
// AppTransaction), its device binding (StoreKit, AppStore.deviceVerificationID)
// and its record.

#include "model/store_a/app_transaction.hpp"

#include <limits>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <openssl/evp.h>

#include "model/encoding.hpp"
#include "model/store_a/payload_reader.hpp"
#include "model/store_time.hpp"

namespace receiptd::model::store_a {

namespace {

constexpr std::string_view device_verification_names[]
  = {"not_checked", "nonce_matched", "verified", "mismatch"};

std::string sha384(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha384(), nullptr) != 1)
    return {};
  return std::string(reinterpret_cast<const char*>(digest), size);
}

std::string lower(std::string text) {
  for (auto& c : text)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return text;
}

void reject(app_transaction_record& r, fraud_reason reason, std::string detail) {
  apply_fraud(r, reason);
  r.store_detail = std::move(detail);
}

// A verified payload as an app transaction; Apple signs the Xcode receipt type
// only under Xcode's own key, never its chain.
result<app_transaction> app_transaction_of(const jws_verification& v, const char* field) {
  auto t = parse_app_transaction(v.payload);
  if (!t)
    return t;
  if (v.xcode != (t->env == environment::xcode))
    return field_error{field, "malformed_receipt",
                       v.xcode ? "a JWS under a StoreKit test root names another receiptType"
                               : "an App Store signed app transaction names the Xcode receiptType"};
  return t;
}

} // namespace

result<app_transaction> parse_app_transaction(std::string_view payload) {
  boost::system::error_code ec;
  const auto doc = boost::json::parse(payload, ec);
  if (ec || !doc.is_object())
    return field_error{"signed_app_transaction", "malformed_receipt",
                       "app transaction payload is not a JSON object"};
  field_errors errors;
  payload_reader r(doc.get_object(), "signed_app_transaction", "malformed_receipt",
                   "app transaction ", errors);
  app_transaction t;
  r.required_text("bundleId", t.bundle_id);
  // receiptType: Apple's environments; "ProductionSandbox" is how receipts (and
  // early app transactions) name the sandbox.
  std::string type;
  r.required_text("receiptType", type);
  if (type == "Production")
    t.env = environment::production;
  else if (type == "Sandbox" || type == "ProductionSandbox")
    t.env = environment::sandbox;
  else if (type == "Xcode")
    t.env = environment::xcode;
  else if (!type.empty())
    r.fail("receiptType", "is not Production, Sandbox or Xcode");

  r.text("appTransactionId", t.app_transaction_id);
  r.integer("appAppleId", t.app_apple_id, 0, std::numeric_limits<std::int64_t>::max());
  r.integer("versionExternalIdentifier", t.version_external_identifier, 0,
            std::numeric_limits<std::int64_t>::max());
  r.text("applicationVersion", t.application_version);
  r.text("originalApplicationVersion", t.original_application_version);
  r.text("originalPlatform", t.original_platform);
  r.text("deviceVerification", t.device_verification);
  r.text("deviceVerificationNonce", t.device_verification_nonce);
  r.date("receiptCreationDate", t.receipt_creation_date);
  r.date("originalPurchaseDate", t.original_purchase_date);
  r.date("preorderDate", t.preorder_date);
  if (!errors.empty())
    return errors;
  return t;
}

jws_verification verify_app_transaction_jws(std::string_view compact,
                                            const trust_anchors& anchors) {
  jws_options options;
  options.date_key = "receiptCreationDate";
  return verify_jws(compact, anchors, options);
}

std::string_view to_string(device_verification x) {
  return device_verification_names[static_cast<std::size_t>(x)];
}

std::optional<device_verification> parse_device_verification(std::string_view text) {
  for (std::size_t i = 0; i < std::size(device_verification_names); ++i)
    if (device_verification_names[i] == text)
      return static_cast<device_verification>(i);
  return std::nullopt;
}

device_verification check_device(const app_transaction& t,
                                 const std::optional<std::string>& nonce,
                                 const std::optional<std::string>& device_id) {
  if (!nonce && !device_id)
    return device_verification::not_checked;
  if (!t.device_verification_nonce)
    return device_verification::mismatch;
  const auto signed_nonce = lower(*t.device_verification_nonce);
  if (nonce && lower(*nonce) != signed_nonce)
    return device_verification::mismatch;
  if (!device_id)
    return device_verification::nonce_matched;
  if (!t.device_verification)
    return device_verification::mismatch;
  // StoreKit, AppStore.deviceVerificationID: SHA-384 of the lower-cased nonce
  // followed by the lower-cased device verification id, as ASCII.
  const auto expected = sha384(signed_nonce + lower(*device_id));
  const auto signed_hash = base64_decode(*t.device_verification);
  if (expected.empty() || !signed_hash || !constant_time_equal(expected, *signed_hash))
    return device_verification::mismatch;
  return device_verification::verified;
}

app_transaction_record make_record(const app_transaction_upload& u, const app& a,
                                   const jws_verification& v, std::string_view peer_ip,
                                   unix_ms now) {
  app_transaction_record r;
  r.app_id = a.id;
  r.signed_app_transaction = u.signed_app_transaction;
  r.app_transaction_key = "sha256:" + sha256_hex(u.signed_app_transaction);
  r.echo = u.common.echo(peer_ip);
  r.created_at = r.updated_at = now;
  r.terms.transfers = a.transfers;
  if (v.reason != fraud_reason::none) {
    // A refused JWS is kept as its proof and the reason, not as what it claims.
    reject(r, v.reason, v.detail);
    return r;
  }
  auto t = app_transaction_of(v, "signed_app_transaction");
  if (!t) {
    reject(r, fraud_reason::malformed_receipt, t.err().message());
    return r;
  }
  if (!v.xcode && t->app_transaction_id)
    r.app_transaction_key = *t->app_transaction_id;
  r.transaction = std::move(*t);
  r.said_at = r.transaction.receipt_creation_date;
  r.env = r.transaction.env;
  r.device = check_device(r.transaction, u.device_verification_nonce, u.device_verification_id);
  if (r.transaction.bundle_id != a.bundle_id) {
    reject(r, fraud_reason::bundle_id_mismatch,
           "signed for bundle " + r.transaction.bundle_id.substr(0, 200) + ", not the app's");
    return r;
  }
  if (r.device == device_verification::mismatch) {
    reject(r, fraud_reason::device_hash_mismatch,
           "the app transaction's device verification is not this device's");
    return r;
  }
  if (r.env == environment::xcode) {
    // As StoreKit 2 transactions (transaction_record.hpp): Xcode signs with a
    // key of its own that Apple's servers do not know.
    if (a.accept_storekit_test_receipts) {
      r.state = validation_state::validated;
      r.store_detail = "Xcode StoreKit test app transaction: verified locally";
    } else {
      reject(r, fraud_reason::untrusted_certificate,
             "Xcode StoreKit test transactions are not accepted for this app "
             "(receiptctl app update APP --accept-storekit-test-receipts)");
    }
    return r;
  }
  if (!r.transaction.app_transaction_id) {
    // Get App Transaction Info is asked by an id of the customer's; an app
    // transaction signed before Apple added appTransactionId names none.
    r.state = validation_state::validated;
    r.store_detail = "no appTransactionId to confirm: verified locally";
  }
  return r;
}

std::string apply_server_answer(app_transaction_record& r, const store_verdict& v,
                                std::string_view signed_info, const trust_anchors& anchors) {
  if (v.outcome != store_outcome::confirmed) {
    model::apply_store_verdict(r, v);
    return {};
  }
  auto unusable = [&](std::string why) {
    auto pending = unreachable_verdict("App Store Server API answer unusable: " + why);
    model::apply_store_verdict(r, pending);
    return pending.detail;
  };
  auto checked = verify_app_transaction_jws(signed_info, anchors);
  if (checked.internal_error)
    return unusable("verification failed internally: " + checked.detail);
  if (checked.reason != fraud_reason::none)
    return unusable("signedAppTransactionInfo " + std::string(to_string(checked.reason)) + ": "
                    + checked.detail);
  auto t = app_transaction_of(checked, "signedAppTransactionInfo");
  if (!t)
    return unusable("signedAppTransactionInfo: " + t.err().message());
  const char* differs = t->app_transaction_id != r.transaction.app_transaction_id ? "appTransactionId"
    : t->bundle_id != r.transaction.bundle_id                                      ? "bundleId"
                                                                                   : nullptr;
  if (differs) {
    store_verdict rejected;
    rejected.outcome = store_outcome::rejected;
    rejected.detail
      = std::string("the App Store's app transaction has another ") + differs + " than the upload";
    model::apply_store_verdict(r, rejected);
    return {};
  }
  store_verdict confirmed = v;
  confirmed.env = t->env;
  model::apply_store_verdict(r, confirmed);
  if (not_older(t->receipt_creation_date, r.said_at)) {
    // The device's own binding stays: the server's answer is for no device.
    t->device_verification = r.transaction.device_verification;
    t->device_verification_nonce = r.transaction.device_verification_nonce;
    r.transaction = std::move(*t);
    r.said_at = r.transaction.receipt_creation_date;
  }
  return {};
}

namespace {

// As a transaction's (records.cpp): the app transaction binds the user a
// genuine upload named; another user is a transfer the app's policy allows or
// refuses.
std::optional<bool> transfer_check(const app_transaction_record& existing,
                                   const app_transaction_record& incoming) {
  const bool proven = existing.state == validation_state::validated || !existing.is_fraud();
  const auto& bound = existing.echo.user_identifier;
  const auto& named = incoming.echo.user_identifier;
  if (!proven || !bound || bound->empty() || !named || named->empty() || *named == *bound)
    return false;
  if (!incoming.terms.transfers.allows(static_cast<int>(existing.previous_users.size())))
    return std::nullopt;
  return true;
}

} // namespace

app_transaction_record merge_reupload(const app_transaction_record& existing,
                                      const app_transaction_record& incoming) {
  const bool incoming_local_fail = rejected_locally(incoming.state, incoming.fraud);
  if (incoming_local_fail && !rejected_locally(existing.state, existing.fraud))
    return existing;
  if (existing.state == validation_state::validated
      && incoming.fraud == fraud_reason::store_rejected)
    return existing;
  auto transfer = transfer_check(existing, incoming);
  if (!transfer) {
    auto out = existing;
    out.terms.refused = bound_to_other_user();
    return out;
  }
  const bool keep_verdict = existing.state == validation_state::validated
    && incoming.state == validation_state::pending;
  app_transaction_record out = keep_verdict ? existing : incoming;
  out.id = existing.id;
  out.app_id = existing.app_id;
  out.created_at = existing.created_at;
  out.updated_at = incoming.updated_at;
  out.echo = incoming.echo;
  if (!out.echo.user_identifier)
    out.echo.user_identifier = existing.echo.user_identifier;
  if (!out.echo.metadata)
    out.echo.metadata = existing.echo.metadata;
  out.previous_users = existing.previous_users;
  if (*transfer)
    out.previous_users.push_back(*existing.echo.user_identifier);
  out.terms = incoming.terms;
  // This upload's device check is the one the answer reports.
  out.device = incoming.device;
  return out;
}

void trim_rejected_proof(app_transaction_record& r) {
  if (!rejected_locally(r.state, r.fraud) || r.signed_app_transaction.size() <= max_rejected_proof_bytes)
    return;
  if (!r.proof_size)
    r.proof_size = static_cast<std::int64_t>(r.signed_app_transaction.size());
  r.signed_app_transaction.resize(max_rejected_proof_bytes);
  r.signed_app_transaction.shrink_to_fit();
}

bool needs_job(const app_transaction_record& r) {
  return r.state == validation_state::pending;
}

} // namespace receiptd::model::store_a

#include "store_a.hpp"

#include <memory>
#include <mutex>
#include <unordered_map>

#include "apple_body.hpp"
#include "model/encoding.hpp"
#include "model/store_a/receipt.hpp"
#include "state.hpp"

namespace receiptd::emulator {

namespace {

using model::store_a::decoded_receipt;

reply status_only(int status) {
  return json_reply(200, boost::json::object{{"status", status}});
}

// Decoding a PKCS#7 receipt costs far more than answering; a benchmark sends
// the same few receipts thousands of times. Keyed by SHA-256 of the bytes;
// nullptr records "does not decode".
class decode_cache {
public:
  std::shared_ptr<const decoded_receipt> get(const std::string& hash, std::string_view bytes) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = entries_.find(hash); it != entries_.end())
        return it->second;
    }
    auto decoded = model::store_a::decode_receipt(bytes);
    std::shared_ptr<const decoded_receipt> value;
    if (decoded.ok())
      value = std::make_shared<const decoded_receipt>(std::move(decoded).value());
    std::lock_guard lock(mutex_);
    if (entries_.size() >= 1024)
      entries_.clear();
    entries_.emplace(hash, value);
    return value;
  }

private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const decoded_receipt>> entries_;
};

decode_cache& cache() {
  static decode_cache instance;
  return instance;
}

// A registered answer (PROTOCOL.md Store A, step 3).
reply registered_reply(const apple_answer& answer, const decoded_receipt* receipt,
                       std::string_view receipt_data, bool exclude_old) {
  if (answer.body)
    return json_reply(200, *answer.body);
  if (answer.status == 0 && receipt) {
    auto env = answer.environment ? std::string_view(*answer.environment)
                                  : apple_environment(receipt->env);
    return json_reply(200, apple_success_body(*receipt, env, receipt_data, exclude_old));
  }
  boost::json::object body{{"status", answer.status}};
  if (answer.environment)
    body["environment"] = *answer.environment;
  else if (answer.status == 0)
    body["environment"] = "Production";
  if (answer.is_retryable) // Apple's spelling; receiptd accepts is_retryable too
    body["is-retryable"] = *answer.is_retryable;
  return json_reply(200, body);
}

} // namespace

reply verify_receipt(const emulator_state& state, bool sandbox_path, std::string_view body) {
  // 1. Apple: 21002 "The data in the receipt-data property was malformed or missing."
  auto request = parse_object(body);
  if (!request)
    return status_only(21002);
  auto receipt_data = get_string(*request, "receipt-data");
  if (!receipt_data)
    return status_only(21002);
  auto bytes = model::base64_decode(*receipt_data);
  if (!bytes || bytes->empty())
    return status_only(21002);
  const auto hash = model::sha256_hex(*bytes);
  auto receipt = cache().get(hash, *bytes);
  const bool exclude_old = get_bool(*request, "exclude-old-transactions").value_or(false);

  // 2. Apple: 21004 "The shared secret you provided does not match the shared
  //    secret on file for your account."
  if (receipt) {
    if (auto secret = state.shared_secret(receipt->bundle_id)) {
      if (get_string(*request, "password").value_or("") != *secret)
        return status_only(21004);
    }
  }

  // 3. A registered answer wins over everything the receipt says.
  auto answer = state.receipt_answer(hash);
  if (answer && !answer->belongs_to)
    return registered_reply(*answer, receipt.get(), *receipt_data, exclude_old);

  // 4. Undecodable.
  if (!receipt)
    return status_only(21002);

  // 5. 21007: a sandbox receipt sent to production; 21008: the reverse.
  auto env = receipt->env;
  if (answer && answer->belongs_to)
    env = *answer->belongs_to == "Sandbox" ? model::environment::sandbox
                                           : model::environment::production;
  const bool sandbox_receipt = env == model::environment::sandbox;
  if (sandbox_receipt && !sandbox_path)
    return status_only(21007);
  if (!sandbox_receipt && sandbox_path)
    return status_only(21008);

  // 6. Valid.
  return json_reply(
    200, apple_success_body(*receipt, apple_environment(env), *receipt_data, exclude_old));
}

} // namespace receiptd::emulator

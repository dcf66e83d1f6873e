#include "state.hpp"

#include <algorithm>
#include <chrono>

#include "model/encoding.hpp"

namespace receiptd::emulator {

namespace {
std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}
std::size_t index(store_id s) {
  return s == store_id::store_a ? 0 : 1;
}
} // namespace

std::string_view to_string(store_id x) {
  return x == store_id::store_a ? "store_a" : "store_b";
}

std::optional<store_id> parse_store_id(std::string_view text) {
  if (text == "store_a")
    return store_id::store_a;
  if (text == "store_b")
    return store_id::store_b;
  return std::nullopt;
}

std::string_view to_string(store_mode x) {
  switch (x) {
    case store_mode::up:
      return "up";
    case store_mode::down:
      return "down";
    case store_mode::error:
      return "error";
    case store_mode::html:
      return "html";
    case store_mode::slow:
      return "slow";
  }
  return "up";
}

std::optional<store_mode> parse_store_mode(std::string_view text) {
  for (auto m :
       {store_mode::up, store_mode::down, store_mode::error, store_mode::html, store_mode::slow})
    if (to_string(m) == text)
      return m;
  return std::nullopt;
}

emulator_state::emulator_state() : jws_pki_(test_support::make_jws_pki("receiptd emulator")) {}

emulator_state::emulator_state(test_support::test_pki jws_pki) : jws_pki_(std::move(jws_pki)) {}

mode_setting emulator_state::mode(store_id store) const {
  std::shared_lock lock(mutex_);
  return modes_[index(store)];
}

void emulator_state::set_mode(store_id store, const mode_setting& setting) {
  std::unique_lock lock(mutex_);
  modes_[index(store)] = setting;
}

void emulator_state::reset() {
  {
    std::unique_lock lock(mutex_);
    modes_ = {};
    receipts_.clear();
    shared_secrets_.clear();
    server_api_keys_.clear();
    transactions_.clear();
    transactions_registered_ = 0;
    app_transactions_.clear();
    history_ = {};
    store_a_unregistered_.clear();
    service_accounts_.clear();
    token_lifetime_ = default_token_lifetime;
    tokens_.clear();
    purchases_.clear();
    unregistered_.clear();
    acknowledge_failures_ = {};
    orders_.clear();
    orders_failures_ = {};
    voided_.clear();
    voided_order_ids_ = 0;
    refund_answers_.clear();
    refund_failures_ = {};
  }
  for (auto& c : calls_)
    c = 0;
  std::lock_guard lock(log_mutex_);
  log_.clear();
}

// ---- Store A

void emulator_state::register_receipt(const std::string& sha256_hex, apple_answer answer) {
  std::unique_lock lock(mutex_);
  receipts_[sha256_hex] = std::move(answer);
}

std::optional<apple_answer> emulator_state::receipt_answer(const std::string& sha256_hex) const {
  std::shared_lock lock(mutex_);
  auto it = receipts_.find(sha256_hex);
  if (it == receipts_.end())
    return std::nullopt;
  return it->second;
}

void emulator_state::set_shared_secret(const std::string& bundle_id, const std::string& password) {
  std::unique_lock lock(mutex_);
  shared_secrets_[bundle_id] = password;
}

std::optional<std::string> emulator_state::shared_secret(const std::string& bundle_id) const {
  std::shared_lock lock(mutex_);
  auto it = shared_secrets_.find(bundle_id);
  if (it == shared_secrets_.end())
    return std::nullopt;
  return it->second;
}

// ---- Store A, App Store Server API

void emulator_state::add_server_api_key(server_api_credential credential) {
  std::unique_lock lock(mutex_);
  auto key_id = credential.key_id;
  server_api_keys_[key_id] = std::move(credential);
}

std::optional<server_api_credential>
emulator_state::server_api_key(const std::string& key_id) const {
  std::shared_lock lock(mutex_);
  auto it = server_api_keys_.find(key_id);
  if (it == server_api_keys_.end())
    return std::nullopt;
  return it->second;
}

void emulator_state::register_transaction(apple_transaction transaction) {
  std::unique_lock lock(mutex_);
  auto id = transaction.fields.transaction_id;
  transaction.registered = ++transactions_registered_;
  transactions_[id] = std::move(transaction);
}

std::optional<apple_transaction>
emulator_state::transaction(const std::string& transaction_id) const {
  std::shared_lock lock(mutex_);
  auto it = transactions_.find(transaction_id);
  if (it == transactions_.end())
    return std::nullopt;
  return it->second;
}

void emulator_state::register_app_transaction(apple_app_transaction t) {
  std::unique_lock lock(mutex_);
  auto id = t.fields.app_transaction_id.value_or("");
  app_transactions_[id] = std::move(t);
}

std::optional<apple_app_transaction>
emulator_state::app_transaction(const std::string& any_id) const {
  std::shared_lock lock(mutex_);
  auto it = app_transactions_.find(any_id);
  if (it == app_transactions_.end()) {
    auto t = transactions_.find(any_id);
    if (t == transactions_.end() || !t->second.fields.app_transaction_id)
      return std::nullopt;
    it = app_transactions_.find(*t->second.fields.app_transaction_id);
    if (it == app_transactions_.end())
      return std::nullopt;
  }
  return it->second;
}

std::vector<apple_transaction>
emulator_state::transactions_of(const std::string& original_transaction_id) const {
  std::shared_lock lock(mutex_);
  std::vector<apple_transaction> out;
  for (const auto& [id, t] : transactions_)
    if (t.fields.original_transaction_id == original_transaction_id)
      out.push_back(t);
  return out;
}

std::vector<apple_transaction> emulator_state::history_of(const std::string& bundle_id,
                                                          const std::string& customer) const {
  std::shared_lock lock(mutex_);
  std::vector<apple_transaction> out;
  for (const auto& [id, t] : transactions_)
    if (t.fields.bundle_id == bundle_id && t.customer == customer)
      out.push_back(t);
  std::sort(out.begin(), out.end(),
            [](const apple_transaction& a, const apple_transaction& b) {
              return a.registered < b.registered;
            });
  return out;
}

void emulator_state::set_history(history_setting setting) {
  std::unique_lock lock(mutex_);
  history_ = setting;
}

history_setting emulator_state::history() const {
  std::shared_lock lock(mutex_);
  return history_;
}

// ---- Store B

void emulator_state::add_service_account(const std::string& client_email,
                                         std::shared_ptr<EVP_PKEY> key) {
  std::unique_lock lock(mutex_);
  service_accounts_[client_email] = std::move(key);
}

std::shared_ptr<EVP_PKEY>
emulator_state::service_account_key(const std::string& client_email) const {
  std::shared_lock lock(mutex_);
  auto it = service_accounts_.find(client_email);
  return it == service_accounts_.end() ? nullptr : it->second;
}

void emulator_state::set_token_lifetime(std::int64_t seconds) {
  std::unique_lock lock(mutex_);
  token_lifetime_ = seconds;
}

emulator_state::issued_token emulator_state::issue_token() {
  // Google access tokens start with "ya29." followed by an opaque string.
  issued_token issued{"ya29." + model::base64url_encode(model::random_bytes(48)), 0};
  const auto now = now_ms();
  std::unique_lock lock(mutex_);
  issued.expires_in = token_lifetime_;
  if (tokens_.size() >= 10000) // a benchmark may fetch many: drop the dead ones
    std::erase_if(tokens_, [now](const auto& t) { return t.second <= now; });
  tokens_[issued.access_token] = now + token_lifetime_ * 1000;
  return issued;
}

bool emulator_state::token_is_live(const std::string& access_token) const {
  std::shared_lock lock(mutex_);
  auto it = tokens_.find(access_token);
  return it != tokens_.end() && it->second > now_ms();
}

void emulator_state::revoke_tokens() {
  std::unique_lock lock(mutex_);
  tokens_.clear();
}

void emulator_state::register_purchase(play_purchase purchase) {
  std::unique_lock lock(mutex_);
  auto token = purchase.token;
  purchases_[token] = std::move(purchase);
}

std::optional<play_purchase> emulator_state::purchase(const std::string& token) const {
  std::shared_lock lock(mutex_);
  auto it = purchases_.find(token);
  if (it == purchases_.end())
    return std::nullopt;
  return it->second;
}

void emulator_state::set_acknowledge_failures(acknowledge_failure_setting failures) {
  std::unique_lock lock(mutex_);
  acknowledge_failures_ = failures;
}

std::optional<int> emulator_state::take_acknowledge_failure() {
  std::unique_lock lock(mutex_);
  if (acknowledge_failures_.count <= 0)
    return std::nullopt;
  --acknowledge_failures_.count;
  return acknowledge_failures_.status;
}

void emulator_state::add_order(play_order order) {
  std::unique_lock lock(mutex_);
  auto key = std::pair{order.package_name, order.order_id};
  orders_[key] = std::move(order);
}

std::optional<play_order> emulator_state::order(const std::string& package_name,
                                                const std::string& order_id) const {
  std::shared_lock lock(mutex_);
  auto it = orders_.find(std::pair{package_name, order_id});
  if (it == orders_.end())
    return std::nullopt;
  return it->second;
}

void emulator_state::set_orders_failures(acknowledge_failure_setting failures) {
  std::unique_lock lock(mutex_);
  orders_failures_ = failures;
}

std::optional<int> emulator_state::take_orders_failure() {
  std::unique_lock lock(mutex_);
  if (orders_failures_.count <= 0)
    return std::nullopt;
  --orders_failures_.count;
  return orders_failures_.status;
}

void emulator_state::add_voided(play_voided voided) {
  std::unique_lock lock(mutex_);
  auto token = voided.token;
  voided_[token] = std::move(voided);
}

std::vector<play_voided> emulator_state::voided(const std::string& package_name) const {
  std::shared_lock lock(mutex_);
  std::vector<play_voided> out;
  for (const auto& [token, v] : voided_)
    if (v.package_name == package_name)
      out.push_back(v);
  return out;
}

std::string emulator_state::next_voided_order_id() {
  std::unique_lock lock(mutex_);
  return "GPA.voided-" + std::to_string(++voided_order_ids_);
}

void emulator_state::accept_unregistered_transactions(
  const std::string& bundle_id, std::optional<store_a_unregistered_policy> policy) {
  std::unique_lock lock(mutex_);
  if (policy)
    store_a_unregistered_[bundle_id] = std::move(*policy);
  else
    store_a_unregistered_.erase(bundle_id);
}

std::optional<emulator_state::store_a_unregistered_policy>
emulator_state::unregistered_transactions(const std::string& bundle_id) const {
  std::shared_lock lock(mutex_);
  auto it = store_a_unregistered_.find(bundle_id);
  if (it == store_a_unregistered_.end())
    return std::nullopt;
  return it->second;
}

void emulator_state::accept_unregistered(const std::string& package_name,
                                         std::optional<unregistered_policy> policy) {
  std::unique_lock lock(mutex_);
  if (policy)
    unregistered_[package_name] = std::move(*policy);
  else
    unregistered_.erase(package_name);
}

std::optional<emulator_state::unregistered_policy>
emulator_state::unregistered(const std::string& package_name) const {
  std::shared_lock lock(mutex_);
  auto it = unregistered_.find(package_name);
  if (it == unregistered_.end())
    return std::nullopt;
  return it->second;
}

// ---- Counters and request log

void emulator_state::count(call_kind kind) {
  calls_[static_cast<std::size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
}

boost::json::object emulator_state::calls_json() const {
  auto n = [this](call_kind k) {
    return calls_[static_cast<std::size_t>(k)].load(std::memory_order_relaxed);
  };
  return {
    {"store_a",
     {{"production", n(call_kind::store_a_production)},
      {"sandbox", n(call_kind::store_a_sandbox)},
      {"server_api_production", n(call_kind::store_a_server_api_production)},
      {"server_api_sandbox", n(call_kind::store_a_server_api_sandbox)},
      {"server_api_unauthorized", n(call_kind::store_a_server_api_unauthorized)},
      {"subscription_statuses_production", n(call_kind::store_a_subscription_statuses_production)},
      {"subscription_statuses_sandbox", n(call_kind::store_a_subscription_statuses_sandbox)},
      {"history_production", n(call_kind::store_a_history_production)},
      {"history_sandbox", n(call_kind::store_a_history_sandbox)},
      {"consumption", n(call_kind::store_a_consumption)},
      {"app_transaction_production", n(call_kind::store_a_app_transaction_production)},
      {"app_transaction_sandbox", n(call_kind::store_a_app_transaction_sandbox)}}},
    {"store_b",
     {{"token", n(call_kind::store_b_token)},
      {"products", n(call_kind::store_b_products)},
      {"subscriptionsv2", n(call_kind::store_b_subscriptionsv2)},
      {"acknowledge", n(call_kind::store_b_acknowledge)},
      {"voidedpurchases", n(call_kind::store_b_voidedpurchases)},
      {"productsv2", n(call_kind::store_b_productsv2)},
      {"orders", n(call_kind::store_b_orders)},
      {"reviewrefund", n(call_kind::store_b_reviewrefund)}}},
  };
}

void emulator_state::record_refund_answer(refund_answer_record r) {
  std::unique_lock lock(mutex_);
  refund_answers_.push_back(std::move(r));
}

boost::json::array emulator_state::refund_answers_json() const {
  std::shared_lock lock(mutex_);
  boost::json::array out;
  for (const auto& r : refund_answers_)
    out.push_back(boost::json::object{{"store", r.store},
                                      {"key", r.key},
                                      {"environment", r.environment},
                                      {"body", r.body}});
  return out;
}

void emulator_state::set_refund_failures(refund_failure_setting s) {
  std::unique_lock lock(mutex_);
  refund_failures_ = std::move(s);
}

std::optional<refund_failure_setting> emulator_state::take_refund_failure() {
  std::unique_lock lock(mutex_);
  if (refund_failures_.count <= 0)
    return std::nullopt;
  --refund_failures_.count;
  return refund_failures_;
}

void emulator_state::log_request(logged_request request) {
  if (request.body.size() > logged_body_limit)
    request.body.resize(logged_body_limit);
  std::lock_guard lock(log_mutex_);
  if (log_.size() >= request_log_size)
    log_.pop_front();
  request.seq = ++logged_;
  log_.push_back(std::move(request));
}

boost::json::array emulator_state::requests_json() const {
  std::lock_guard lock(log_mutex_);
  boost::json::array out;
  out.reserve(log_.size());
  for (const auto& r : log_)
    out.push_back(boost::json::object{{"seq", r.seq},
                                      {"store", to_string(r.store)},
                                      {"method", r.method},
                                      {"path", r.path},
                                      {"authorization", r.authorization},
                                      {"body", r.body}});
  return out;
}

} // namespace receiptd::emulator

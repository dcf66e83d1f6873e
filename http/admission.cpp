#include "http/admission.hpp"

#include <algorithm>
#include <cmath>

#include "model/access_token.hpp"
#include "model/encoding.hpp"

namespace receiptd::http {

body_budget::body_budget(std::size_t max_bytes, std::size_t max_unverified_bytes)
  : max_(max_bytes), max_unverified_(max_unverified_bytes) {}

bool body_budget::take(std::size_t n, bool unverified) {
  std::lock_guard lock(mutex_);
  if (n > max_ - held_ || (unverified && n > max_unverified_ - unverified_))
    return false;
  held_ += n;
  if (unverified)
    unverified_ += n;
  return true;
}

void body_budget::give_back(std::size_t n, bool unverified) {
  std::lock_guard lock(mutex_);
  held_ -= n;
  if (unverified)
    unverified_ -= n;
}

void body_budget::verified(std::size_t n) {
  std::lock_guard lock(mutex_);
  unverified_ -= n;
}

std::size_t body_budget::held() const {
  std::lock_guard lock(mutex_);
  return held_;
}

std::size_t body_budget::held_unverified() const {
  std::lock_guard lock(mutex_);
  return unverified_;
}

body_ticket::body_ticket(body_budget& budget, std::size_t n, bool unverified)
  : budget_(&budget), bytes_(n), unverified_(unverified) {}

std::shared_ptr<body_ticket> body_ticket::take(body_budget& budget, std::size_t n,
                                               bool unverified) {
  if (!budget.take(n, unverified))
    return nullptr;
  return std::make_shared<body_ticket>(budget, n, unverified);
}

body_ticket::~body_ticket() {
  release();
}

bool body_ticket::grow_to(std::size_t n) {
  std::lock_guard lock(mutex_);
  if (!budget_ || n <= bytes_)
    return true;
  if (!budget_->take(n - bytes_, unverified_))
    return false;
  bytes_ = n;
  return true;
}

void body_ticket::verified() {
  std::lock_guard lock(mutex_);
  if (!budget_ || !unverified_)
    return;
  budget_->verified(bytes_);
  unverified_ = false;
}

void body_ticket::release() {
  std::lock_guard lock(mutex_);
  if (!budget_)
    return;
  budget_->give_back(bytes_, unverified_);
  budget_ = nullptr;
}

std::size_t body_ticket::bytes() const {
  std::lock_guard lock(mutex_);
  return budget_ ? bytes_ : 0;
}

std::string credential_key(route target, std::string_view secret, std::string_view app_id) {
  const auto& r = info(target);
  if (r.operational)
    return {};
  if (r.bearer)
    return "t:" + model::access_token_hash(secret);
  if (r.token_in_query)
    return "b:" + std::string(app_id) + ":" + model::sha256_hex(secret);
  return "a:" + std::string(app_id);
}

credential_view::credential_view(const model::time_source& clock, std::size_t max_refused)
  : clock_(clock), max_refused_(max_refused) {}

credential_view::state credential_view::look(const std::string& key) const {
  std::lock_guard lock(mutex_);
  if (good_.count(key))
    return {state::good, std::nullopt};
  if (auto it = refused_.find(key); it != refused_.end() && clock_.steady_now() < it->second.until)
    return {state::refused, it->second.why};
  return {};
}

void credential_view::good(const std::string& key) {
  std::lock_guard lock(mutex_);
  refused_.erase(key);
  good_.insert(key);
}

void credential_view::forget(const std::string& key) {
  std::lock_guard lock(mutex_);
  good_.erase(key);
}

void credential_view::refuse(const std::string& key, model::error why,
                             std::chrono::milliseconds for_how_long) {
  std::lock_guard lock(mutex_);
  good_.erase(key);
  auto now = clock_.steady_now();
  auto seq = ++refusals_;
  refused_.insert_or_assign(key, refusal{std::move(why), now + for_how_long, seq});
  refused_order_.emplace_back(key, seq);
  // The oldest places go while the view is over its bound or they have expired; a
  // place whose key was refused again since no longer decides anything.
  while (!refused_order_.empty()) {
    const auto& [oldest, at] = refused_order_.front();
    auto it = refused_.find(oldest);
    bool current = it != refused_.end() && it->second.seq == at;
    if (current && refused_.size() <= max_refused_ && it->second.until > now)
      break;
    if (current)
      refused_.erase(it);
    refused_order_.pop_front();
  }
  // One key refused again and again behind an older one still current: its older
  // places are kept no longer than it takes them to outnumber the entries.
  if (refused_order_.size() > 2 * refused_.size() + 64) {
    std::erase_if(refused_order_, [&](const auto& place) {
      auto it = refused_.find(place.first);
      return it == refused_.end() || it->second.seq != place.second;
    });
  }
}

client_rates::client_rates(double per_second, double burst, const model::time_source& clock)
  : clock_(clock), buckets_(per_second, burst) {}

model::token_bucket::duration client_rates::take(std::string_view peer_ip, std::size_t body_bytes) {
  if (buckets_.unlimited())
    return {};
  auto key = model::client_network(peer_ip);
  std::lock_guard lock(mutex_);
  return buckets_.take(key, model::upload_cost(body_bytes), clock_.steady_now());
}

model::error rate_limited(model::token_bucket::duration wait, std::string_view whose) {
  auto seconds = std::max<long long>(
    1, static_cast<long long>(std::ceil(std::chrono::duration<double>(wait).count())));
  model::error e(model::errc::rate_limited,
                 "too many uploads from this " + std::string(whose) + "; retry in "
                   + std::to_string(seconds) + " s");
  return e.retry_after(static_cast<int>(seconds));
}

std::size_t credential_view::good_count() const {
  std::lock_guard lock(mutex_);
  return good_.size();
}

std::size_t credential_view::refused_count() const {
  std::lock_guard lock(mutex_);
  return refused_.size();
}

} // namespace receiptd::http

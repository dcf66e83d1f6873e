#include "actors/customer_answers.hpp"

#include <functional>

#include "model/purchases/customer.hpp"

namespace receiptd::actors {

std::size_t answer_cache::key_hash::operator()(const key& k) const {
  std::hash<std::string> h;
  return h(k.app_id) ^ (h(k.user) * 31) ^ (h(k.environment) * 131);
}

void answer_cache::catch_up(std::uint64_t changes) {
  if (changes == changes_)
    return;
  kept_.clear();
  bytes_ = 0;
  changes_ = changes;
}

std::optional<std::string> answer_cache::find(const key& k, const rules_ptr& rules,
                                              std::uint64_t changes, model::unix_ms now) {
  catch_up(changes);
  auto it = kept_.find(k);
  if (it == kept_.end())
    return std::nullopt;
  const auto& a = it->second;
  // The clock may have been set back (tests): the answer is for its time on.
  if (a.rules != rules || now < a.asked_at || (a.same_until && now >= *a.same_until))
    return std::nullopt;
  return model::purchases::answer_at(a.head, now);
}

void answer_cache::keep(key k, rules_ptr rules, std::uint64_t changes_asked,
                        std::uint64_t changes, const customer_answer& a) {
  catch_up(changes);
  if (changes_asked != changes || a.head.empty() || a.reply.status != 200)
    return;
  const auto size = a.head.size() + k.app_id.size() + k.user.size() + k.environment.size();
  if (size > max_bytes_)
    return;
  if (auto old = kept_.find(k); old != kept_.end()) {
    bytes_ -= old->second.head.size() + k.app_id.size() + k.user.size() + k.environment.size();
    kept_.erase(old);
  }
  if (bytes_ + size > max_bytes_) {
    kept_.clear();
    bytes_ = 0;
  }
  bytes_ += size;
  kept_.insert_or_assign(std::move(k), kept{std::move(rules), a.head, a.asked_at, a.same_until});
}

std::string asked_environment(const std::vector<std::pair<std::string, std::string>>& query) {
  for (const auto& [name, value] : query)
    if (name == "environment")
      return value;
  return {};
}

} // namespace receiptd::actors

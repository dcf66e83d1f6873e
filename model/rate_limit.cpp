#include "model/rate_limit.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace receiptd::model {

token_bucket::token_bucket(double per_second, double burst)
  : per_second_(per_second), burst_(std::max(burst, 1.0)), tokens_(burst_) {}

double token_bucket::tokens_at(time_point now) const {
  if (!started_ || now <= at_)
    return tokens_;
  const double elapsed = std::chrono::duration<double>(now - at_).count();
  return std::min(burst_, tokens_ + elapsed * per_second_);
}

double token_bucket::capped(double cost) const {
  return std::min(std::max(cost, 0.0), burst_);
}

bool token_bucket::take(time_point now, double cost) {
  if (unlimited())
    return true;
  cost = capped(cost);
  tokens_ = tokens_at(now);
  if (!started_ || now > at_)
    at_ = now;
  started_ = true;
  if (tokens_ < cost)
    return false;
  tokens_ -= cost;
  return true;
}

token_bucket::duration token_bucket::wait(time_point now, double cost) const {
  if (unlimited())
    return duration::zero();
  const double missing = capped(cost) - tokens_at(now);
  if (missing <= 0)
    return duration::zero();
  const double seconds = missing / per_second_;
  if (!(seconds < std::chrono::duration<double>(max_wait).count()))
    return max_wait; // also what an infinite quotient (a denormal rate) gets
  // To the microsecond: a float a hair above a whole number must not add one.
  return std::chrono::round<std::chrono::microseconds>(std::chrono::duration<double>(seconds));
}

bool token_bucket::full(time_point now) const {
  return tokens_at(now) >= burst_;
}

keyed_buckets::keyed_buckets(double per_second, double burst, std::size_t max_keys)
  : per_second_(per_second),
    burst_(burst),
    max_keys_(std::max<std::size_t>(max_keys, 1)),
    overflow_(per_second, burst) {}

token_bucket& keyed_buckets::bucket(const std::string& key, time_point now) {
  if (auto it = buckets_.find(key); it != buckets_.end())
    return it->second;
  if (buckets_.size() >= max_keys_)
    std::erase_if(buckets_, [&](const auto& entry) { return entry.second.full(now); });
  if (buckets_.size() >= max_keys_)
    return overflow_;
  return buckets_.try_emplace(key, per_second_, burst_).first->second;
}

keyed_buckets::duration keyed_buckets::take(const std::string& key, double cost, time_point now) {
  if (unlimited())
    return duration::zero();
  auto& b = bucket(key, now);
  if (b.take(now, cost))
    return duration::zero();
  return std::max(b.wait(now, cost), duration(std::chrono::microseconds(1)));
}

std::string client_network(std::string_view ip) {
  std::string text(ip);
  in6_addr v6{};
  if (text.find(':') == std::string::npos || inet_pton(AF_INET6, text.c_str(), &v6) != 1)
    return text;
  // An IPv4-mapped address (::ffff:a.b.c.d) is that IPv4 client.
  static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(v6.s6_addr, mapped, sizeof mapped) == 0) {
    char v4[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, v6.s6_addr + 12, v4, sizeof v4);
    return v4;
  }
  std::memset(v6.s6_addr + 8, 0, 8);
  char out[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, &v6, out, sizeof out);
  return std::string(out) + "/64";
}

double upload_cost(std::size_t body_bytes) {
  return 1.0 + static_cast<double>(body_bytes / (64 * 1024));
}

} // namespace receiptd::model

#pragma once
// A token bucket: at most `per_second` tokens a second on average, in bursts of
// at most `burst`. Pure: the caller passes the (steady) time, so tests drive it
// exactly. Used to pace revalidations against each store (store-*.retry-rate),
// so that a queue that piled up during an outage does not stampede the store when
// it recovers, and to hold each app and each client network to its share of
// uploads (limits.*, keyed_buckets below).

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace receiptd::model {

class token_bucket {
public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;

  // per_second 0: unlimited (every take succeeds). burst: at least 1. The bucket
  // starts full.
  token_bucket(double per_second, double burst);

  bool unlimited() const { return per_second_ <= 0; }
  double rate() const { return per_second_; }
  double burst() const { return burst_; }
  // Takes `cost` tokens if there are that many at `now` (true), else leaves the
  // bucket as it is (false). A cost above the burst is taken as the burst: it
  // waits for a full bucket instead of never passing.
  bool take(time_point now, double cost = 1);
  // How long from `now` until `cost` tokens are there (zero when they are), at
  // most max_wait.
  duration wait(time_point now, double cost = 1) const;
  // The longest wait said: a rate so low (the options take any positive one)
  // that the tokens take longer would not fit a duration or a Retry-After; a
  // client told this much is told again when it comes back.
  static constexpr std::chrono::seconds max_wait{1'000'000'000}; // about 31 years
  // Whether the bucket is full at `now`: it then holds nothing a new one would not.
  bool full(time_point now) const;

private:
  double tokens_at(time_point now) const;
  double capped(double cost) const;

  double per_second_;
  double burst_;
  double tokens_;
  time_point at_{}; // when tokens_ was last brought up to date
  bool started_ = false;
};

// One token bucket per key (an app, a client network), made on first use. The
// map is bounded: at `max_keys`, the buckets that are full again (their keys idle
// for burst / rate seconds) are dropped, which changes nothing for them; when
// every kept bucket is still in use, new keys share one overflow bucket rather
// than grow the map.
class keyed_buckets {
public:
  using time_point = token_bucket::time_point;
  using duration = token_bucket::duration;

  keyed_buckets(double per_second, double burst, std::size_t max_keys = 100000);

  bool unlimited() const { return per_second_ <= 0; }
  // Zero when `cost` was taken from the key's bucket, else how long until it could be.
  duration take(const std::string& key, double cost, time_point now);
  std::size_t size() const { return buckets_.size(); }

private:
  token_bucket& bucket(const std::string& key, time_point now);

  double per_second_;
  double burst_;
  std::size_t max_keys_;
  std::unordered_map<std::string, token_bucket> buckets_;
  token_bucket overflow_;
};

// The client an upload's limit is kept for, from its peer address: an IPv4
// address as it is, an IPv6 address by its /64 (RFC 4291 §2.5.4: one subscriber
// line or host gets a whole /64, and may use any address in it). Text that is not
// an address is its own key.
std::string client_network(std::string_view ip);

// What an upload of `body_bytes` costs against its limits: one, plus one per full
// 64 KiB of body. A 1 MB receipt (about 2,000 purchases to decode, store and
// answer) then counts as 16 small uploads, not as one.
double upload_cost(std::size_t body_bytes);

} // namespace receiptd::model

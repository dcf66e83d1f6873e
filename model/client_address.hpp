#pragma once
// The client's address behind reverse proxies. A request's peer is the last hop;
// when that hop is a proxy the operator trusts (http.trusted-proxies), the address
// it forwarded in `Forwarded` (RFC 7239) or `X-Forwarded-For` is taken instead.
// Anyone else's header is ignored: any client can send one.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"

namespace receiptd::model {

// An IPv4 or IPv6 network: "10.0.0.0/8", "2001:db8::/32", or one address
// ("127.0.0.1" is 127.0.0.1/32). An IPv4 network also holds the IPv4-mapped
// IPv6 form of its addresses (::ffff:10.1.2.3), as a dual-stack listener sees them.
struct ip_network {
  std::array<std::uint8_t, 16> bytes{}; // IPv4 in the first four
  bool v4 = false;
  int prefix = 0;

  // 422-style error (invalid_request) naming what is wrong.
  static result<ip_network> parse(std::string_view text);
  bool contains(std::string_view address) const;
};

class trusted_proxies {
public:
  trusted_proxies() = default;
  // Every entry must parse (ip_network::parse); the error names the first that does not.
  static result<trusted_proxies> parse(const std::vector<std::string>& networks);

  bool trusts(std::string_view address) const;
  bool empty() const { return networks_.empty(); }

  // The client's address, canonical (model::canonical_ip). `peer` when it is not
  // trusted or forwarded nothing usable; else the hops the proxies forwarded are
  // read from the nearest back (right to left: each proxy appends the address it
  // received the request from), skipping trusted proxies, and the first hop that is
  // not one is the client. `Forwarded` is read when present (its `for=` values),
  // else `X-Forwarded-For`. A hop that is not an address (RFC 7239 "unknown", an
  // obfuscated "_name", garbage) ends the walk: the last trusted hop before it is
  // the answer, since nothing beyond it can be believed. When every hop is
  // trusted, the farthest one is.
  std::string client_address(std::string_view peer, std::optional<std::string_view> forwarded,
                             std::optional<std::string_view> x_forwarded_for) const;

private:
  std::vector<ip_network> networks_;
};

// The node of one `for=` / X-Forwarded-For entry, as an address: quotes, an IPv6
// address's brackets and a port removed, canonical; nullopt when it is none.
std::optional<std::string> forwarded_node_address(std::string_view node);

// The `for=` values of a Forwarded header (RFC 7239 §4), in order; an element
// without one contributes an empty string (an unknown hop).
std::vector<std::string> forwarded_for_values(std::string_view header);

} // namespace receiptd::model

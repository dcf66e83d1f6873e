// The client's address behind reverse proxies (model/client_address.hpp): the
// operator's http.trusted-proxies list (ip_network::parse), the `Forwarded` and
// `X-Forwarded-For` headers any client can send, and the rate-limit key of the
// address chosen (model::client_network).
//
// Input: byte 0 bit 0: a Forwarded header is sent; bit 1: an X-Forwarded-For
// header is sent; bits 2-7 pick a hop the checks append. The rest: the trusted
// networks (one a line) "|@|" the peer's address "|@|" Forwarded "|@|"
// X-Forwarded-For.
//
// Properties: only a trusted peer's headers count; the answer is the peer or an
// address a header names, canonical; a client cannot move the answer by what it
// writes before the hops the trusted proxies appended (the header reaches us as
// "<what the client sent>, <hop appended by each proxy>"), even with quotes it
// leaves open; an untrusted address appended by a proxy is the answer.

#include <algorithm>

#include "model/client_address.hpp"
#include "model/identifiers.hpp"
#include "model/rate_limit.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace receiptd;

std::vector<std::string> lines(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty() && out.size() < 16) {
    auto nl = text.find('\n');
    out.emplace_back(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  return out;
}

// A canonical address names itself; nothing else passes for one.
void check_canonical(std::string_view text) {
  auto c = model::canonical_ip(text);
  if (!c)
    return;
  FUZZ_CHECK(text.find('\0') == std::string_view::npos);
  FUZZ_CHECK(model::canonical_ip(*c) == *c);
  auto key = model::client_network(*c);
  FUZZ_CHECK(!key.empty());
  // The rate-limit key of an IPv6 client is its /64: its own key again.
  if (key.ends_with("/64")) {
    auto prefix = key.substr(0, key.size() - 3);
    FUZZ_CHECK(model::client_network(prefix) == key);
  } else {
    FUZZ_CHECK(key == *c || c->starts_with("::ffff:"));
  }
}

// What a networks list says about its own addresses.
void check_network(const std::string& text, const model::ip_network& n) {
  auto slash = text.find('/');
  auto address = text.substr(0, slash);
  FUZZ_CHECK(n.prefix >= 0 && n.prefix <= (n.v4 ? 32 : 128));
  FUZZ_CHECK(n.contains(address)); // host bits are zero: the network holds its base
  if (n.v4) {
    auto v4 = model::canonical_ip(address);
    FUZZ_CHECK(v4 && n.contains("::ffff:" + *v4)); // the dual-stack view of it
  }
}

struct headers {
  std::optional<std::string> forwarded, x_forwarded_for;
};

std::string address_of(const model::trusted_proxies& t, std::string_view peer, const headers& h) {
  auto view = [](const std::optional<std::string>& s) -> std::optional<std::string_view> {
    if (s)
      return std::string_view(*s);
    return std::nullopt;
  };
  return t.client_address(peer, view(h.forwarded), view(h.x_forwarded_for));
}

// What a proxy appends for the client it saw: a Forwarded element or an
// X-Forwarded-For entry, after what the request carried.
headers appended(headers h, const std::string& address) {
  const bool v6 = address.find(':') != std::string::npos;
  if (h.forwarded)
    *h.forwarded += (h.forwarded->empty() ? "" : ", ") + std::string("for=")
      + (v6 ? "\"[" + address + "]\"" : address);
  else
    h.x_forwarded_for = (h.x_forwarded_for && !h.x_forwarded_for->empty()
                           ? *h.x_forwarded_for + ", "
                           : std::string())
      + address;
  return h;
}

const char* const outside_addresses[] = {"203.0.113.9", "2001:db8:cafe::17", "198.51.100.250",
                                         "::ffff:192.0.2.1"};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const auto flags = data[0];
  auto fields = fuzz::split_fields(fuzz::as_text(data + 1, size - 1), 4);
  auto networks = lines(fields[0]);
  std::string peer(fields[1]);
  headers h;
  if (flags & 1)
    h.forwarded = std::string(fields[2]);
  if (flags & 2)
    h.x_forwarded_for = std::string(fields[3]);

  // The list parses when each entry does; its error quotes the first that does not.
  std::vector<std::string> good;
  std::optional<std::string> first_bad;
  for (const auto& text : networks) {
    auto n = model::ip_network::parse(text);
    if (n) {
      check_network(text, *n);
      good.push_back(text);
    } else {
      FUZZ_CHECK(n.err().code() == model::errc::invalid_request);
      if (!first_bad)
        first_bad = text;
    }
  }
  auto listed = model::trusted_proxies::parse(networks);
  FUZZ_CHECK(listed.ok() == !first_bad);
  if (!listed)
    FUZZ_CHECK(listed.err().message().find("\"" + *first_bad + "\"") != std::string::npos);
  auto proxies = model::trusted_proxies::parse(good);
  FUZZ_CHECK(proxies.ok());
  const auto& t = *proxies;

  check_canonical(peer);
  auto hops = h.forwarded ? model::forwarded_for_values(*h.forwarded) : std::vector<std::string>{};
  for (const auto& hop : hops)
    if (auto a = model::forwarded_node_address(hop))
      check_canonical(*a);

  const auto peer_canonical = model::canonical_ip(peer);
  const auto answer = address_of(t, peer, h);
  if (t.empty() || !t.trusts(peer)) {
    // Anyone else's headers are the client's own words.
    FUZZ_CHECK(answer == peer_canonical.value_or(peer));
    return 0;
  }
  FUZZ_CHECK(peer_canonical);
  FUZZ_CHECK(model::canonical_ip(answer) == answer);
  check_canonical(answer);

  // A proxy we trust appended the address it saw: an outside one is the answer,
  // whatever the client wrote before it.
  const std::string outside = outside_addresses[(flags >> 2) % std::size(outside_addresses)];
  if (!t.trusts(outside)) {
    auto canonical_outside = *model::canonical_ip(outside);
    FUZZ_CHECK(address_of(t, peer, appended(h, outside)) == canonical_outside);
    // Behind two trusted proxies: the nearer one appends the farther one's address.
    if (!good.empty()) {
      auto proxy = model::canonical_ip(good.front().substr(0, good.front().find('/')));
      if (proxy && t.trusts(*proxy))
        FUZZ_CHECK(address_of(t, peer, appended(appended(h, outside), *proxy))
                   == canonical_outside);
    }
  }
  return 0;
}

#include "model/client_address.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "model/identifiers.hpp"

namespace receiptd::model {

namespace {

// An address as 16 bytes (IPv4 in the first four) and its family.
struct parsed_address {
  std::array<std::uint8_t, 16> bytes{};
  bool v4 = false;
};

std::optional<parsed_address> parse_address(std::string_view text) {
  // inet_pton reads a C string: nothing after a NUL would be looked at.
  if (text.empty() || text.size() > 64 || text.find('\0') != std::string_view::npos)
    return std::nullopt;
  std::string s(text);
  parsed_address a;
  if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) {
    a.v4 = true;
    return a;
  }
  if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1)
    return a;
  return std::nullopt;
}

// ::ffff:a.b.c.d → a.b.c.d (RFC 4291 §2.5.5.2).
parsed_address unmapped(parsed_address a) {
  static constexpr std::uint8_t mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (a.v4 || !std::equal(mapped_prefix, mapped_prefix + 12, a.bytes.begin()))
    return a;
  parsed_address v4;
  v4.v4 = true;
  std::copy(a.bytes.begin() + 12, a.bytes.end(), v4.bytes.begin());
  return v4;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x))
             == std::tolower(static_cast<unsigned char>(y));
         });
}

// Splits on `sep` outside double quotes (RFC 7239 values may be quoted strings).
std::vector<std::string_view> split_unquoted(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  bool quoted = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && quoted) {
      ++i;
      continue;
    }
    if (s[i] == '"')
      quoted = !quoted;
    else if (s[i] == sep && !quoted) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(s.substr(start));
  return parts;
}

// The same read from the right end, where the proxies appended their elements:
// what a client wrote first (an unclosed quote, a stray backslash) cannot join
// them to its own. Within a quoted string read backwards, a '"' after an odd
// number of backslashes is a quoted-pair (RFC 7230 §3.2.6), else where the
// string opens.
std::vector<std::string_view> split_unquoted_from_right(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  bool quoted = false;
  std::size_t end = s.size();
  for (std::size_t i = s.size(); i-- > 0;) {
    if (s[i] == '"') {
      std::size_t slashes = 0;
      while (quoted && slashes < i && s[i - 1 - slashes] == '\\')
        ++slashes;
      if (slashes % 2 == 0)
        quoted = !quoted;
      else
        i -= slashes;
    } else if (s[i] == sep && !quoted) {
      parts.push_back(s.substr(i + 1, end - i - 1));
      end = i;
    }
  }
  parts.push_back(s.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

// X-Forwarded-For's entries: addresses separated by commas, nothing quoted
// (no specification; every proxy writes it so), so a quote a client sends is
// only a character of its own entry.
std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> parts;
  for (;;) {
    auto comma = s.find(',');
    parts.push_back(s.substr(0, comma));
    if (comma == std::string_view::npos)
      return parts;
    s.remove_prefix(comma + 1);
  }
}

} // namespace

result<ip_network> ip_network::parse(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return error(errc::invalid_request, "\"" + std::string(text) + "\" is not " + why);
  };
  auto slash = text.find('/');
  auto address = parse_address(text.substr(0, slash));
  if (!address)
    return bad("an IPv4 or IPv6 address or network (CIDR, e.g. 10.0.0.0/8)");
  ip_network n;
  n.bytes = address->bytes;
  n.v4 = address->v4;
  const int bits = n.v4 ? 32 : 128;
  n.prefix = bits;
  if (slash != std::string_view::npos) {
    auto digits = text.substr(slash + 1);
    int prefix = -1;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || prefix < 0
        || prefix > bits)
      return bad("a network: the prefix length must be 0.." + std::to_string(bits));
    n.prefix = prefix;
  }
  // Host bits must be zero ("10.1.0.0/8" is almost certainly a typo).
  for (int bit = n.prefix; bit < bits; ++bit)
    if (n.bytes[static_cast<std::size_t>(bit / 8)] & (0x80 >> (bit % 8)))
      return bad("a network: it has bits set beyond its prefix length");
  return n;
}

bool ip_network::contains(std::string_view text) const {
  auto parsed = parse_address(text);
  if (!parsed)
    return false;
  auto a = v4 ? unmapped(*parsed) : *parsed;
  if (a.v4 != v4)
    return false;
  for (int bit = 0; bit < prefix; ++bit) {
    auto i = static_cast<std::size_t>(bit / 8);
    auto mask = static_cast<std::uint8_t>(0x80 >> (bit % 8));
    if ((a.bytes[i] & mask) != (bytes[i] & mask))
      return false;
  }
  return true;
}

result<trusted_proxies> trusted_proxies::parse(const std::vector<std::string>& networks) {
  trusted_proxies t;
  for (const auto& text : networks) {
    auto n = ip_network::parse(text);
    if (!n)
      return n.err();
    t.networks_.push_back(*n);
  }
  return t;
}

bool trusted_proxies::trusts(std::string_view address) const {
  return std::any_of(networks_.begin(), networks_.end(),
                     [&](const ip_network& n) { return n.contains(address); });
}

std::optional<std::string> forwarded_node_address(std::string_view node) {
  node = trim(node);
  if (node.size() >= 2 && node.front() == '"' && node.back() == '"')
    node = node.substr(1, node.size() - 2);
  if (!node.empty() && node.front() == '[') {
    // "[2001:db8::1]" or "[2001:db8::1]:4711" (RFC 7239 §6).
    auto close = node.find(']');
    if (close == std::string_view::npos)
      return std::nullopt;
    auto rest = node.substr(close + 1);
    if (!rest.empty() && rest.front() != ':')
      return std::nullopt;
    node = node.substr(1, close - 1);
  } else if (std::count(node.begin(), node.end(), ':') == 1) {
    node = node.substr(0, node.find(':')); // "192.0.2.43:47011"
  }
  return canonical_ip(node);
}

std::vector<std::string> forwarded_for_values(std::string_view header) {
  std::vector<std::string> hops;
  for (auto element : split_unquoted_from_right(header, ',')) {
    if (trim(element).empty())
      continue;
    std::string value;
    for (auto pair : split_unquoted(element, ';')) {
      auto eq = pair.find('=');
      if (eq != std::string_view::npos && iequals(trim(pair.substr(0, eq)), "for"))
        value = std::string(trim(pair.substr(eq + 1)));
    }
    hops.push_back(std::move(value));
  }
  return hops;
}

std::string trusted_proxies::client_address(std::string_view peer,
                                            std::optional<std::string_view> forwarded,
                                            std::optional<std::string_view> x_forwarded_for) const {
  auto answer = canonical_ip(peer).value_or(std::string(peer));
  if (networks_.empty() || !trusts(peer))
    return answer;
  std::vector<std::string> hops;
  if (forwarded)
    hops = forwarded_for_values(*forwarded);
  else if (x_forwarded_for)
    for (auto hop : split_commas(*x_forwarded_for))
      if (!trim(hop).empty())
        hops.emplace_back(trim(hop));
  for (auto hop = hops.rbegin(); hop != hops.rend(); ++hop) {
    auto address = forwarded_node_address(*hop);
    if (!address)
      return answer; // not an address: nothing farther can be believed
    answer = *address;
    if (!trusts(*address))
      return answer;
  }
  return answer;
}

} // namespace receiptd::model

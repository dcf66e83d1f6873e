#include "model/url_policy.hpp"

#include <arpa/inet.h>

#include <algorithm>

#include <string>

namespace receiptd::model {

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size())
    return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i])
      return false;
  }
  return true;
}

namespace {

// The host of an http(s) URL without userinfo, port or brackets.
std::string_view host_of(std::string_view rest) {
  auto end = rest.find_first_of("/?#");
  auto authority = rest.substr(0, end);
  if (auto at = authority.rfind('@'); at != std::string_view::npos)
    authority = authority.substr(at + 1);
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    return close == std::string_view::npos ? std::string_view{} : authority.substr(1, close - 1);
  }
  return authority.substr(0, authority.find(':'));
}

} // namespace

bool is_https_url(std::string_view url) {
  return starts_with_nocase(url, "https://") && !host_of(url.substr(8)).empty();
}

bool is_loopback_http_url(std::string_view url) {
  if (!starts_with_nocase(url, "http://"))
    return false;
  return is_loopback_host(host_of(url.substr(7)));
}

bool is_loopback_host(std::string_view name) {
  std::string host(name);
  if (host == "localhost")
    return true;
  unsigned char v4[4];
  if (inet_pton(AF_INET, host.c_str(), v4) == 1)
    return v4[0] == 127;
  unsigned char v6[16];
  if (inet_pton(AF_INET6, host.c_str(), v6) == 1) {
    static const unsigned char loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return std::equal(v6, v6 + 16, loopback);
  }
  return false;
}

std::optional<std::string_view> url_scheme(std::string_view url) {
  auto is_letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (url.empty() || !is_letter(url.front()))
    return std::nullopt;
  for (std::size_t i = 1; i < url.size(); ++i) {
    char c = url[i];
    if (c == ':')
      return url.substr(i + 1).starts_with("//") ? std::optional(url.substr(0, i)) : std::nullopt;
    if (!is_letter(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.')
      return std::nullopt;
  }
  return std::nullopt;
}

namespace {

// Whether an authority is only a host and a port: a DNS name or IPv4 address, or an
// IPv6 address in brackets, then ":digits" or nothing.
bool plain_host_and_port(std::string_view authority) {
  auto host = authority, port = std::string_view();
  if (host.starts_with('[')) {
    auto close = host.find(']');
    if (close != std::string_view::npos) {
      port = host.substr(close + 1);
      host = host.substr(1, close - 1);
    }
  } else if (auto colon = host.find(':'); colon != std::string_view::npos) {
    port = host.substr(colon);
    host = host.substr(0, colon);
  }
  auto all_of = [](std::string_view text, std::string_view extra) {
    for (char c : text)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
            || extra.find(c) != std::string_view::npos))
        return false;
    return true;
  };
  return !host.empty() && all_of(host, authority.starts_with('[') ? ":." : ".-")
    && (port.empty()
        || (port.size() > 1 && port[0] == ':'
            && port.substr(1).find_first_not_of("0123456789") == std::string_view::npos));
}

} // namespace

std::string url_origin(std::string_view url) {
  auto scheme = url_scheme(url);
  if (!scheme)
    return "…";
  const auto scheme_end = scheme->size();
  auto rest = url.substr(scheme_end + 3);
  auto authority = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = authority.rfind('@'); at != std::string_view::npos)
    authority = authority.substr(at + 1);
  // Only a host and a port: a URL that does not read as one (a password with
  // an unencoded '/' leaves "user:password" where the host should be) is not shown.
  auto prefix = std::string(url.substr(0, scheme_end + 3));
  return plain_host_and_port(authority) ? prefix + std::string(authority) : prefix + "…";
}

std::optional<origin_and_target> split_request_target(std::string_view url) {
  auto scheme = url_scheme(url);
  if (!scheme)
    return std::nullopt;
  const auto authority_at = scheme->size() + 3;
  const auto path_at = url.find('/', authority_at);
  if (path_at == std::string_view::npos)
    return std::nullopt;
  const auto origin = url.substr(0, path_at), target = url.substr(path_at);
  // Only a host and a port before the path: no user info, query or fragment there.
  if (!plain_host_and_port(url.substr(authority_at, path_at - authority_at)))
    return std::nullopt;
  auto hex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  constexpr std::string_view allowed = "-._~!$&'()*+,;=:@/?";
  for (std::size_t i = 0; i < target.size(); ++i) {
    const char c = target[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
      continue;
    if (c == '%' && i + 2 < target.size() && hex(target[i + 1]) && hex(target[i + 2]))
      continue;
    if (c == '%' || allowed.find(c) == std::string_view::npos)
      return std::nullopt; // '#', a space, a byte above 0x7e, a stray '%': curl's to encode or cut
  }
  // Dot segments ("/./", "/../", a trailing "/." or "/..") curl would remove.
  const auto path = target.substr(0, target.find('?'));
  for (auto at = path.find("/."); at != std::string_view::npos; at = path.find("/.", at + 1)) {
    auto rest = path.substr(at + 2);
    if (rest.empty() || rest[0] == '/' || (rest[0] == '.' && (rest.size() == 1 || rest[1] == '/')))
      return std::nullopt;
  }
  return origin_and_target{origin, target};
}

bool store_url_allowed(std::string_view url, bool allow_http) {
  if (is_https_url(url) || is_loopback_http_url(url))
    return true;
  return allow_http && starts_with_nocase(url, "http://");
}

std::optional<http_version> parse_http_version(std::string_view text) {
  if (text == "auto")
    return http_version::automatic;
  if (text == "1.1")
    return http_version::http1_1;
  return std::nullopt;
}

} // namespace receiptd::model

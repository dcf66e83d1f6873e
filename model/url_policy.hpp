#pragma once
// Which store URLs receiptd may call: the stores' answers decide
// whether a purchase is genuine, so they must come over HTTPS. Plain http is
// allowed to a loopback host (a local emulator or proxy: nothing crosses a
// network) or anywhere when the operator says so (outbound.allow-http).

#include <optional>
#include <string>
#include <string_view>

namespace receiptd::model {

// Whether `s` starts with `prefix`, ASCII letters of `s` compared without case
// (`prefix` in lower case): URL schemes.
bool starts_with_nocase(std::string_view s, std::string_view prefix);
bool is_https_url(std::string_view url);
// The scheme a URL starts with, before its "://" (RFC 3986 §3.1: a letter, then
// letters, digits, '+', '-' or '.'); nullopt when it does not start with one.
// What is before a "://" elsewhere in the text is not a scheme: in "u:secret@h/?x=a://"
// it is a password.
std::optional<std::string_view> url_scheme(std::string_view url);
// http:// to 127.0.0.0/8, [::1] or localhost.
bool is_loopback_http_url(std::string_view url);
// 127.0.0.0/8, ::1 or localhost (an address to listen on, without brackets).
bool is_loopback_host(std::string_view host);
bool store_url_allowed(std::string_view url, bool allow_http);

// What of an outbound URL (a store's, a service account's token_uri, a webhook
// endpoint's) may be written to spans, logs and metrics: its scheme, host and
// port, "https://hooks.example.com:8443". The path and query may carry a secret
// (?key=…, /hooks/<token>), and so may user:password@. "…" when `url` does not
// start with a scheme (url_scheme).
std::string url_origin(std::string_view url);

// A URL as an origin and the request target curl may send as given
// (CURLOPT_REQUEST_TARGET), so that it parses and re-encodes only the short
// origin, not a purchase token twice per call: "https://host:443" and
// "/path?query". Only where sending the target as given is what curl would send:
// no user info, no fragment, a host curl takes as written (url_origin's plain
// host), a path that starts with '/' and has no dot segment, and nothing in the
// path and query that curl would encode (RFC 3986's unreserved and sub-delims,
// ':', '@', '/', '?', and '%' followed by two hex digits). Otherwise nullopt.
struct origin_and_target {
  std::string_view origin;
  std::string_view target;
};
std::optional<origin_and_target> split_request_target(std::string_view url);

// The HTTP version of a store call (outbound.store-http-version). `automatic`:
// HTTP/2 over TLS when the server offers it (ALPN; the stores do), calls to one
// host multiplexed on its connections; HTTP/1.1 on plain http. `http1_1`:
// HTTP/1.1 keep-alive always (the fallback, e.g. behind a proxy that breaks
// HTTP/2). No h2c (HTTP/2 on plain http): Debian 12's libcurl 7.88.1 fails every
// second call on such a connection (curl#10634, fixed in curl 8.0).
enum class http_version { automatic, http1_1 };

// "auto" or "1.1"; nullopt otherwise.
std::optional<http_version> parse_http_version(std::string_view text);

} // namespace receiptd::model

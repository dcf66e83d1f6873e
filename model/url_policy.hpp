#pragma once
// Which store URLs receiptd may call (issue 6 §10): the stores' answers decide
// whether a purchase is genuine, so they must come over HTTPS. Plain http is
// allowed to a loopback host (a local emulator or proxy: nothing crosses a
// network) or anywhere when the operator says so (outbound.allow-http).

#include <string_view>

namespace receiptd::model {

// Whether `s` starts with `prefix`, ASCII letters of `s` compared without case
// (`prefix` in lower case): URL schemes.
bool starts_with_nocase(std::string_view s, std::string_view prefix);
bool is_https_url(std::string_view url);
// http:// to 127.0.0.0/8, [::1] or localhost.
bool is_loopback_http_url(std::string_view url);
bool store_url_allowed(std::string_view url, bool allow_http);

} // namespace receiptd::model

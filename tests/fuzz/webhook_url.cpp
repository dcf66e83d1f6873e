// Webhook endpoints and outbound URLs: the endpoint URL policy
// (model::check_webhook_url, what `receiptctl webhook add` stores), the store URL
// policy (model/url_policy.hpp), the origin written to spans, logs and metrics
// instead of a URL (model::url_origin), an endpoint's event list
// (model::parse_events) and the Receiptd-Signature check a receiver runs
// (model::check_delivery_signature: what the README's verifier does with a header
// anyone can send).
//
// Input: byte 0 bit 0: webhooks.allow-http; the rest: a URL "|@|" an event list
// "|@|" a Receiptd-Signature header "|@|" a delivery body.
//
// Properties: an accepted endpoint URL is one the store URL policy allows too,
// carries no credentials or fragment, and its origin is its scheme and
// authority; an origin never shows anything of a URL past its host and port, nor
// anything before "://" that is not a scheme; event lists read back as written;
// only the HMAC of the secret passes a signature check, extra items in the
// header change nothing, and a signature is valid only within the tolerance.

#include <cctype>

#include "model/resource_json.hpp"
#include "model/url_policy.hpp"
#include "model/webhooks.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace receiptd;

constexpr std::string_view secret = "whsec_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
constexpr std::int64_t now_s = fuzz::fixed_now / 1000;

// RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
bool is_scheme(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s.front())))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.')
      return false;
  return true;
}

// What url_origin may show: "…", or a scheme and "://" then "…" or a host and port.
void check_origin(std::string_view url) {
  auto origin = model::url_origin(url);
  if (origin == "…")
    return;
  auto sep = origin.find("://");
  FUZZ_CHECK(sep != std::string::npos);
  FUZZ_CHECK(is_scheme(std::string_view(origin).substr(0, sep)));
  auto rest = std::string_view(origin).substr(sep + 3);
  if (rest == "…")
    return;
  FUZZ_CHECK(!rest.empty());
  for (char c : rest)
    FUZZ_CHECK(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':'
               || c == '[' || c == ']');
  // The host and port as the URL has them.
  FUZZ_CHECK(url.starts_with(origin) || url.find("@" + std::string(rest)) != std::string_view::npos);
}

void check_endpoint(std::string_view url, bool allow_http) {
  auto checked = model::check_webhook_url(url, allow_http);
  if (!checked) {
    FUZZ_CHECK(checked.errors().size() == 1);
    const auto& e = checked.errors().front();
    FUZZ_CHECK(e.field == "url" && (e.code == "invalid_url" || e.code == "https_required"));
    fuzz::parses_as_json(model::error_body(checked.errors()));
    if (e.code == "https_required")
      FUZZ_CHECK(!allow_http && model::check_webhook_url(url, true).ok());
    return;
  }
  FUZZ_CHECK(*checked == url && url.size() <= 2048);
  FUZZ_CHECK(model::check_webhook_url(url, true).ok());
  FUZZ_CHECK(url.find('#') == std::string_view::npos);
  FUZZ_CHECK(model::store_url_allowed(url, allow_http));
  if (!allow_http)
    FUZZ_CHECK(model::is_https_url(url) || model::is_loopback_http_url(url));
  // No credentials: what is shown is the URL up to its path.
  auto scheme_end = url.find("://") + 3;
  auto authority = url.substr(0, url.find_first_of("/?", scheme_end));
  FUZZ_CHECK(authority.find('@') == std::string_view::npos);
  auto origin = model::url_origin(url);
  FUZZ_CHECK(origin == authority || origin == std::string(url.substr(0, scheme_end)) + "…");
}

void check_events(std::string_view text) {
  auto events = model::parse_events(text);
  if (!events) {
    FUZZ_CHECK(events.errors().front().field == "events"
               && events.errors().front().code == "unknown_event");
    return;
  }
  for (auto t : *events)
    FUZZ_CHECK(model::parse_event_type(model::to_string(t)) == t);
  auto back = model::parse_events(model::events_text(*events));
  FUZZ_CHECK(back.ok() && *back == *events);
}

bool has_t_item(std::string_view header) {
  while (true) {
    auto comma = header.find(',');
    auto item = header.substr(0, comma);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    if (item.starts_with("t="))
      return true;
    if (comma == std::string_view::npos)
      return false;
    header.remove_prefix(comma + 1);
  }
}

void check_signature(std::string_view header, std::string_view body) {
  using sc = model::signature_check;
  // What anyone sends: valid only for the secret's HMAC of this body.
  auto verdict = model::check_delivery_signature(secret, body, header, now_s);
  if (verdict == sc::valid) {
    FUZZ_CHECK(model::check_delivery_signature(secret, std::string(body) + " ", header, now_s)
               == sc::mismatch);
    FUZZ_CHECK(model::check_delivery_signature(secret.substr(1), body, header, now_s)
               == sc::mismatch);
  }
  // A delivery's own header, with anything after it.
  auto headers = model::delivery_headers(std::string(secret), std::string(body), "evt_fuzz", now_s);
  constexpr std::string_view prefix = "Receiptd-Signature: ";
  auto signature = headers.at(2).substr(prefix.size());
  FUZZ_CHECK(model::check_delivery_signature(secret, body, signature, now_s) == sc::valid);
  FUZZ_CHECK(model::check_delivery_signature(secret, body, signature,
                                             now_s + model::signature_tolerance_s)
             == sc::valid);
  FUZZ_CHECK(model::check_delivery_signature(secret, body, signature,
                                             now_s + model::signature_tolerance_s + 1)
             == sc::stale);
  auto padded = signature + "," + std::string(header);
  FUZZ_CHECK(model::check_delivery_signature(secret, body, padded, now_s)
             == (has_t_item(header) ? sc::malformed : sc::valid));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  auto fields = fuzz::split_fields(fuzz::as_text(data + 1, size - 1), 4);
  const bool allow_http = data[0] & 1;
  check_origin(fields[0]);
  check_endpoint(fields[0], allow_http);
  if (model::store_url_allowed(fields[0], false))
    FUZZ_CHECK(model::is_https_url(fields[0]) || model::is_loopback_http_url(fields[0]));
  check_events(fields[1]);
  check_signature(fields[2], fields[3]);
  return 0;
}

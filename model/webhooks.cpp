#include "model/webhooks.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <map>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "model/encoding.hpp"
#include "model/url_policy.hpp"

namespace receiptd::model {

namespace json = boost::json;

namespace {

struct event_name {
  event_type type;
  std::string_view name;
};
constexpr event_name event_names[] = {
  {event_type::receipt_created, "receipt.created"},
  {event_type::receipt_updated, "receipt.updated"},
  {event_type::purchase_order_created, "purchase_order.created"},
  {event_type::purchase_order_updated, "purchase_order.updated"},
  {event_type::transaction_created, "transaction.created"},
  {event_type::transaction_updated, "transaction.updated"},
  {event_type::in_app_purchase_created, "in_app_purchase.created"},
  {event_type::in_app_purchase_updated, "in_app_purchase.updated"},
  {event_type::customer_entitlements_changed, "customer.entitlements_changed"},
};

struct event_group {
  std::string_view name;
  std::initializer_list<event_type> types;
};
const event_group event_groups[] = {
  {"receipt", {event_type::receipt_created, event_type::receipt_updated}},
  {"purchase_order", {event_type::purchase_order_created, event_type::purchase_order_updated}},
  {"transaction", {event_type::transaction_created, event_type::transaction_updated}},
  {"in_app_purchase", {event_type::in_app_purchase_created, event_type::in_app_purchase_updated}},
  {"customer", {event_type::customer_entitlements_changed}},
  {"all",
   {event_type::receipt_created, event_type::receipt_updated, event_type::purchase_order_created,
    event_type::purchase_order_updated, event_type::transaction_created,
    event_type::transaction_updated, event_type::in_app_purchase_created,
    event_type::in_app_purchase_updated, event_type::customer_entitlements_changed}},
};

} // namespace

std::string_view to_string(event_type t) {
  for (const auto& e : event_names)
    if (e.type == t)
      return e.name;
  return "receipt.created";
}

std::optional<event_type> parse_event_type(std::string_view text) {
  for (const auto& e : event_names)
    if (e.name == text)
      return e.type;
  return std::nullopt;
}

event_type event_for(record_kind kind, bool created) {
  switch (kind) {
    case record_kind::store_a_receipt:
      return created ? event_type::receipt_created : event_type::receipt_updated;
    case record_kind::store_a_transaction:
    case record_kind::store_a_app_transaction: // writes no event (db::database::save_app_transaction)
      return created ? event_type::transaction_created : event_type::transaction_updated;
    case record_kind::store_b_purchase_order:
      break;
  }
  return created ? event_type::purchase_order_created : event_type::purchase_order_updated;
}

std::string make_event_id(unix_ms now) {
  char time_hex[16];
  std::snprintf(time_hex, sizeof time_hex, "%012llx",
                static_cast<unsigned long long>(std::max<unix_ms>(now, 0)) & 0xffffffffffffULL);
  return "evt_" + std::string(time_hex) + hex_encode(random_bytes(10));
}

// ---- record_event -------------------------------------------------------------

namespace {

const json::value* field(const json::object* o, std::string_view key) {
  if (!o)
    return nullptr;
  return o->if_contains(key);
}

bool is_set(const json::value* v) {
  return v && !v->is_null();
}

std::string_view text_of(const json::value* v) {
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

const json::object* object_of(const json::value* v) {
  return v && v->is_object() ? &v->get_object() : nullptr;
}

// A Timestamp's ms (model/timestamp.hpp); nullopt for null or any other shape.
std::optional<unix_ms> timestamp_ms(const json::value* v) {
  auto* ms = field(object_of(v), "ms");
  if (ms && ms->is_int64())
    return ms->get_int64();
  if (ms && ms->is_uint64())
    return static_cast<unix_ms>(ms->get_uint64());
  return std::nullopt;
}

// The purchases a resource holds: a receipt's in_app_purchases, a purchase
// order's in_app_purchase; a StoreKit 2 transaction is its own.
std::vector<const json::object*> purchases_of(const json::object* r) {
  std::vector<const json::object*> out;
  if (!r)
    return out;
  if (auto* list = field(r, "in_app_purchases"); list && list->is_array()) {
    for (const auto& p : list->get_array())
      if (p.is_object())
        out.push_back(&p.get_object());
  }
  if (auto* p = object_of(field(r, "in_app_purchase")))
    out.push_back(p);
  return out;
}

// The latest expiry the resource knows: a transaction's expires_date and
// subscription_expires_date, its purchases' expires_date (Store A) and
// expires_at (Store B).
std::optional<unix_ms> latest_expiry(const json::object* r) {
  std::optional<unix_ms> latest;
  auto take = [&](const json::object* o) {
    for (auto key : {"expires_date", "subscription_expires_date", "expires_at"})
      if (auto ms = timestamp_ms(field(o, key)); ms && (!latest || *ms > *latest))
        latest = ms;
  };
  take(r);
  for (auto* p : purchases_of(r))
    take(p);
  return latest;
}

// Refund marks by what they are about: a transaction's revocation_date (key
// ""), each in-app purchase's cancellation_date by its transaction_id, a Play
// purchase whose purchase_state is "refunded".
std::map<std::string, bool> refund_marks(const json::object* r) {
  std::map<std::string, bool> marks;
  if (!r)
    return marks;
  if (r->contains("revocation_date"))
    marks[""] = is_set(field(r, "revocation_date"));
  if (auto* list = field(r, "in_app_purchases"); list && list->is_array()) {
    std::size_t index = 0;
    for (const auto& p : list->get_array()) {
      auto* o = object_of(&p);
      auto id = text_of(field(o, "transaction_id"));
      auto key = id.empty() ? "#" + std::to_string(index) : "tx:" + std::string(id);
      marks[key] = marks[key] || is_set(field(o, "cancellation_date"));
      ++index;
    }
  }
  if (auto* p = object_of(field(r, "in_app_purchase")))
    marks["play"] = text_of(field(p, "purchase_state")) == "refunded";
  return marks;
}

// Apple's subscription_status of a transaction, or Play's subscription_state.
std::string subscription_status_of(const json::object* r) {
  if (auto s = text_of(field(r, "subscription_status")); !s.empty())
    return std::string(s);
  return std::string(text_of(field(object_of(field(r, "in_app_purchase")), "subscription_state")));
}

bool is_expired_status(std::string_view s) {
  return s == "expired" || s == "SUBSCRIPTION_STATE_EXPIRED";
}

bool acknowledged(const json::object* r) {
  if (text_of(field(r, "acknowledgement_state")) == "acknowledged")
    return true;
  auto* a = field(object_of(field(r, "in_app_purchase")), "acknowledged");
  return a && a->is_bool() && a->get_bool();
}

// The words of "changes" (see the header), in a fixed order. `before` null:
// the record is new, and the words say what it already is.
json::array change_words(const json::object* before, const json::object& after) {
  json::array words;
  auto add = [&](bool happened, std::string_view word) {
    if (happened)
      words.emplace_back(word);
  };
  auto state_before = text_of(field(before, "validation_state"));
  auto state_after = text_of(field(&after, "validation_state"));
  bool state_changed = state_before != state_after;
  add(state_changed && state_after == "validated", "validated");
  add(state_changed && state_after == "pending", "pending");
  add(state_changed && state_after == "failed", "failed");

  auto fraud = [](const json::object* r) {
    auto* f = field(r, "is_fraud");
    return f && f->is_bool() && f->get_bool();
  };
  add(fraud(&after) && !fraud(before), "fraud");

  auto marks_before = refund_marks(before);
  auto marks_after = refund_marks(&after);
  bool refunded = false, reversed = false;
  for (const auto& [key, set] : marks_after) {
    auto was = marks_before.find(key);
    bool set_before = was != marks_before.end() && was->second;
    refunded = refunded || (set && !set_before);
    reversed = reversed || (!set && set_before);
  }
  add(refunded, "refunded");
  add(reversed, "refund_reversed");

  auto expiry_before = latest_expiry(before);
  auto expiry_after = latest_expiry(&after);
  add(expiry_before && expiry_after && *expiry_after > *expiry_before, "renewed");

  auto status_before = subscription_status_of(before);
  auto status_after = subscription_status_of(&after);
  bool status_changed = status_before != status_after;
  add(status_changed && is_expired_status(status_after), "expired");
  add(status_changed && !is_expired_status(status_after), "subscription_status");

  add(acknowledged(&after) && !acknowledged(before), "acknowledged");
  return words;
}

} // namespace

std::optional<webhook_event> record_event(const std::optional<boost::json::object>& before,
                                          const boost::json::object& after, record_kind kind,
                                          const std::string& app_id, const std::string& record_id,
                                          unix_ms now) {
  json::value previous = nullptr, current = nullptr;
  if (before) {
    json::object old_values, new_values;
    auto differs = [&](std::string_view key, const json::value* was, const json::value* is) {
      if (key == "updated_at")
        return;
      json::value null_value = nullptr;
      const auto& a = was ? *was : null_value;
      const auto& b = is ? *is : null_value;
      if (a == b) // an absent key counts as null
        return;
      old_values[key] = a;
      new_values[key] = b;
    };
    for (const auto& kv : after)
      differs(kv.key(), before->if_contains(kv.key()), &kv.value());
    for (const auto& kv : *before)
      if (!after.contains(kv.key()))
        differs(kv.key(), &kv.value(), nullptr);
    if (new_values.empty())
      return std::nullopt;
    previous = std::move(old_values);
    current = std::move(new_values);
  }

  webhook_event e;
  e.id = make_event_id(now);
  e.app_id = app_id;
  e.type = event_for(kind, !before);
  e.subject = std::string(to_string(kind));
  e.record_id = record_id;
  e.created_at = now;
  json::object body;
  body.reserve(7);
  body["id"] = e.id;
  body["type"] = to_string(e.type);
  body["created_at"] = timestamp_json(now);
  body["data"] = after;
  body["previous_attributes"] = std::move(previous);
  body["new_attributes"] = std::move(current);
  body["changes"] = change_words(before ? &*before : nullptr, after);
  e.body = json::serialize(body);
  return e;
}

// ---- endpoints ----------------------------------------------------------------

bool wants(const webhook_endpoint& e, event_type t) {
  if (e.events.empty()) {
    auto records = record_events();
    return std::find(records.begin(), records.end(), t) != records.end();
  }
  return std::find(e.events.begin(), e.events.end(), t) != e.events.end();
}

std::string events_text(const std::vector<event_type>& events) {
  std::string out;
  for (auto t : events) {
    if (!out.empty())
      out += ',';
    out += to_string(t);
  }
  return out;
}

result<std::vector<event_type>> parse_events(std::string_view text) {
  std::vector<event_type> out;
  if (text.empty())
    return out;
  std::size_t start = 0;
  while (true) {
    auto comma = text.find(',', start);
    auto item = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (item.empty())
      return field_error{"events", "unknown_event",
                         "the event list has an empty item (names are separated by single commas)"};
    std::vector<event_type> named;
    if (auto t = parse_event_type(item))
      named.push_back(*t);
    for (const auto& g : event_groups)
      if (g.name == item)
        named.assign(g.types.begin(), g.types.end());
    if (named.empty()) {
      std::string known;
      for (const auto& e : event_names)
        known += (known.empty() ? "" : ", ") + std::string(e.name);
      for (const auto& g : event_groups)
        known += ", " + std::string(g.name);
      return field_error{"events", "unknown_event",
                         "unknown event \"" + std::string(item) + "\" (" + known + ")"};
    }
    for (auto t : named)
      if (std::find(out.begin(), out.end(), t) == out.end())
        out.push_back(t);
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  return out;
}

std::vector<event_type> record_events() {
  return {event_type::receipt_created,        event_type::receipt_updated,
          event_type::purchase_order_created, event_type::purchase_order_updated,
          event_type::transaction_created,    event_type::transaction_updated};
}

std::string make_webhook_secret() {
  return "whsec_" + hex_encode(random_bytes(32));
}

namespace {

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A DNS name or IPv4 address: labels of letters, digits, '-' and '_' (internal
// names use it), separated by single dots; a trailing dot is allowed.
bool valid_host_name(std::string_view host) {
  if (host.empty() || host.size() > 253 || host.front() == '.')
    return false;
  if (host.back() == '.')
    host.remove_suffix(1);
  std::size_t label = 0;
  for (char c : host) {
    if (c == '.') {
      if (label == 0)
        return false;
      label = 0;
    } else if (is_alnum(c) || c == '-' || c == '_') {
      if (++label > 63)
        return false;
    } else {
      return false;
    }
  }
  return label > 0;
}

bool valid_port(std::string_view port) {
  if (port.empty() || port.size() > 5)
    return false;
  long value = 0;
  for (char c : port) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + (c - '0');
  }
  return value >= 1 && value <= 65535;
}

} // namespace

result<std::string> check_webhook_url(std::string_view url, bool allow_http) {
  auto invalid = [&](const std::string& why) {
    return field_error{"url", "invalid_url", "not a usable webhook URL: " + why};
  };
  if (url.empty())
    return invalid("empty");
  if (url.size() > 2048)
    return invalid("longer than 2048 bytes");
  for (unsigned char c : url)
    if (c <= 0x20 || c >= 0x7f)
      return invalid("spaces, control characters and non-ASCII bytes must be percent-encoded");
  bool https = starts_with_nocase(url, "https://");
  if (!https && !starts_with_nocase(url, "http://"))
    return invalid("it must be an absolute http:// or https:// URL");
  if (url.find('#') != std::string_view::npos)
    return invalid("it must not have a fragment (#…)");
  auto rest = url.substr(https ? 8 : 7);
  auto authority = rest.substr(0, rest.find_first_of("/?"));
  if (authority.find('@') != std::string_view::npos)
    return invalid("it must not carry credentials (user:password@)");
  std::string_view port;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return invalid("an IPv6 host must be closed by ']'");
    std::string host(authority.substr(1, close - 1));
    unsigned char v6[16];
    if (inet_pton(AF_INET6, host.c_str(), v6) != 1)
      return invalid("\"" + host + "\" is not an IPv6 address");
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return invalid("junk after the IPv6 host");
      has_port = true;
      port = after.substr(1);
    }
  } else {
    auto colon = authority.find(':');
    auto host = authority.substr(0, colon);
    if (host.empty())
      return invalid("it has no host");
    if (!valid_host_name(host))
      return invalid("\"" + std::string(host) + "\" is not a host name");
    if (colon != std::string_view::npos) {
      has_port = true;
      port = authority.substr(colon + 1);
    }
  }
  if (has_port && !valid_port(port))
    return invalid("the port must be a number from 1 to 65535");
  if (!https && !allow_http && !is_loopback_http_url(url))
    return field_error{"url", "https_required",
                       "a webhook URL must be https (plain http only to a loopback host, or "
                       "with webhooks.allow-http)"};
  return std::string(url);
}

// ---- signatures -----------------------------------------------------------------

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // An empty key is a valid HMAC key; OpenSSL wants a non-null pointer for it.
  static const unsigned char empty = 0;
  const void* key_bytes = key.empty() ? static_cast<const void*>(&empty) : key.data();
  const auto* data_bytes
    = data.empty() ? &empty : reinterpret_cast<const unsigned char*>(data.data());
  HMAC(EVP_sha256(), key_bytes, static_cast<int>(key.size()), data_bytes, data.size(), digest,
       &length);
  return hex_encode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

std::vector<std::string> delivery_headers(const std::string& secret, const std::string& body,
                                          const std::string& event_id, std::int64_t unix_seconds) {
  auto t = std::to_string(unix_seconds);
  return {
    "Content-Type: application/json",
    "X-SHA256-Digest: " + hmac_sha256_hex(secret, body),
    "Receiptd-Signature: t=" + t + ",v1=" + hmac_sha256_hex(secret, t + "." + body),
    "Receiptd-Event-Id: " + event_id,
  };
}

signature_check check_delivery_signature(std::string_view secret, std::string_view body,
                                         std::string_view header, std::int64_t now_s,
                                         std::int64_t tolerance_s) {
  std::optional<std::string_view> t;
  std::vector<std::string_view> v1;
  while (!header.empty()) {
    auto comma = header.find(',');
    auto item = header.substr(0, comma);
    header.remove_prefix(comma == std::string_view::npos ? header.size() : comma + 1);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    if (item.starts_with("t=")) {
      if (t)
        return signature_check::malformed;
      t = item.substr(2);
    } else if (item.starts_with("v1=")) {
      v1.push_back(item.substr(3));
    }
  }
  // At most 18 digits: no overflow below.
  if (!t || t->empty() || t->size() > 18 || t->find_first_not_of("0123456789") != t->npos
      || v1.empty())
    return signature_check::malformed;
  std::string signed_text(*t);
  signed_text += '.';
  signed_text += body;
  auto want = hmac_sha256_hex(secret, signed_text);
  bool matches = false;
  for (auto candidate : v1)
    matches |= constant_time_equal(candidate, want);
  if (!matches)
    return signature_check::mismatch;
  auto sent = std::stoll(std::string(*t));
  if (sent < now_s - tolerance_s || sent > now_s + tolerance_s)
    return signature_check::stale;
  return signature_check::valid;
}

// ---- deliveries ---------------------------------------------------------------

std::string_view to_string(delivery_state s) {
  switch (s) {
    case delivery_state::delivered:
      return "delivered";
    case delivery_state::dead:
      return "dead";
    case delivery_state::pending:
      break;
  }
  return "pending";
}

std::optional<delivery_state> parse_delivery_state(std::string_view text) {
  if (text == "pending")
    return delivery_state::pending;
  if (text == "delivered")
    return delivery_state::delivered;
  if (text == "dead")
    return delivery_state::dead;
  return std::nullopt;
}

void settle_delivery(webhook_delivery& d, int status, const std::string& error, unix_ms now,
                     const retry_policy& policy, double unit_random) {
  ++d.attempts;
  if (status >= 200 && status < 300) {
    d.state = delivery_state::delivered;
    d.delivered_at = now;
    d.last_error.clear();
    return;
  }
  if (status == 0)
    d.last_error = error.empty() ? "no answer" : error;
  else
    d.last_error = "HTTP " + std::to_string(status) + (error.empty() ? "" : ": " + error);
  if (attempts_exhausted(policy, d.attempts)) {
    d.state = delivery_state::dead;
    return;
  }
  d.state = delivery_state::pending;
  // The first retry waits up to the initial backoff, as a revalidation job's
  // first does (actors/validator_steps.hpp): failures before this one.
  d.next_attempt_at = now + backoff_delay_ms(policy, d.attempts - 1, unit_random);
}

std::vector<int> claim_shares(const std::vector<int>& rooms, int limit) {
  std::vector<int> shares(rooms.size(), 0);
  for (bool gave = true; gave && limit > 0;) {
    gave = false;
    for (std::size_t i = 0; i < rooms.size() && limit > 0; ++i)
      if (shares[i] < rooms[i]) {
        ++shares[i];
        --limit;
        gave = true;
      }
  }
  return shares;
}

} // namespace receiptd::model

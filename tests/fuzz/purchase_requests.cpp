// The purchase layer's requests (actors/resource_requests.cpp and the model
// functions it calls, model/purchases/requests.hpp): a customer's path segment
// (percent-decoded user identifier), an entitlement name, ?environment=,
// ?limit=, ?cursor=, a grant's body, and the answers built from them.
//
// Input: byte 0 picks the route (bits 0-1: GET …/customers/{user},
// GET /server/customers/{user}/in_app_purchases, POST …/entitlements/{name}/grants,
// DELETE …/grants/{id}); the rest: the path's segments ('/' between them)
// "|@|" the query string "|@|" the body. Paths and queries reach receiptd as
// visible ASCII (http/request_framing.cpp refuses anything else): other bytes are
// still parsed, but held to no more than not crashing.
//
// Properties: a refusal is a 422 with field errors naming the parameter, in a
// JSON body; an accepted parameter is what reaches the database, so it is text
// PostgreSQL takes (valid UTF-8, no NUL) and within its bounds; a cursor reads
// back as itself; a grant runs from now to at most ten years on; every answer
// (the customer, the grant) is JSON a client can parse and names the customer as
// the path did.

#include <algorithm>

#include "model/encoding.hpp"
#include "model/purchases/customer.hpp"
#include "model/purchases/requests.hpp"
#include "model/resource_json.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace receiptd;
namespace mp = model::purchases;

constexpr model::unix_ms max_grant_ms = 10LL * 366 * 24 * 3600 * 1000;

bool visible_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// Text a PostgreSQL text column takes: UTF-8 (RFC 3629: no overlong forms, no
// surrogates, at most U+10FFFF) and no NUL.
bool database_text(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == 0)
      return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    // Continuation bytes after a lead byte: 1 (0xc2-0xdf), 2 (0xe0-0xef), 3 (0xf0-0xf4).
    std::size_t n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    if (n == 0 || c > 0xf4 || c < 0xc2 || i + n >= s.size())
      return false;
    std::uint32_t cp = c & (0x3f >> n);
    for (std::size_t k = 1; k <= n; ++k) {
      auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80)
        return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff))
        || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += n + 1;
  }
  return true;
}

// A refusal as the client reads it.
void check_refusal(const model::error& e, std::initializer_list<std::string_view> fields) {
  FUZZ_CHECK(e.code() == model::errc::invalid_request);
  FUZZ_CHECK(!e.fields().empty());
  for (const auto& f : e.fields()) {
    FUZZ_CHECK(std::find(fields.begin(), fields.end(), f.field) != fields.end());
    FUZZ_CHECK(!f.code.empty() && !f.message.empty());
  }
  auto body = fuzz::parses_as_json(model::error_body(e.fields()));
  FUZZ_CHECK(body.as_object().at("errors").as_array().size() == e.fields().size());
}

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  for (;;) {
    auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos || out.size() == 3)
      return out;
    path.remove_prefix(slash + 1);
  }
}

// The query's first value of `key`, as the server keeps it (http/server.cpp:
// names cut at 256 bytes, values at 2,048; Pistache does not percent-decode).
std::optional<std::string> query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    auto eq = pair.find('=');
    auto name = pair.substr(0, eq).substr(0, 256);
    if (name == key)
      return std::string(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1))
        .substr(0, 2048);
  }
  return std::nullopt;
}

std::optional<std::string_view> view(const std::optional<std::string>& s) {
  if (s)
    return std::string_view(*s);
  return std::nullopt;
}

// The user identifier as the client meant it; the path that names it again.
std::optional<std::string> user_of(std::string_view raw, bool strict) {
  auto user = mp::user_identifier_param(raw);
  if (!user) {
    check_refusal(user.err(), {"user_identifier"});
    return std::nullopt;
  }
  FUZZ_CHECK(!user->empty() && user->size() <= mp::max_user_identifier_bytes);
  FUZZ_CHECK(std::none_of(user->begin(), user->end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  }));
  if (strict)
    FUZZ_CHECK(database_text(*user));
  // Percent-encoded whole, it names the same customer.
  std::string encoded;
  for (unsigned char c : *user)
    encoded += "%" + model::hex_encode(std::string(1, static_cast<char>(c)));
  FUZZ_CHECK(mp::user_identifier_param(encoded).ok() && *mp::user_identifier_param(encoded) == *user);
  return std::move(user).value();
}

// What every listing answers with: the customer, named as the path named it.
void check_customer_answer(const std::string& user, model::environment env,
                           const std::vector<mp::grant>& grants, bool strict) {
  auto answer = mp::customer_json(user, env, {}, grants, *mp::no_entitlements(), fuzz::fixed_now);
  if (!strict)
    return;
  auto parsed = fuzz::parses_as_json(boost::json::serialize(answer));
  const auto& customer = parsed.as_object().at("customer").as_object();
  FUZZ_CHECK(customer.at("user_identifier").as_string() == user);
  FUZZ_CHECK(customer.at("entitlements").as_object().size() <= grants.size());
}

void customer(std::string_view raw_user, std::string_view query, bool strict) {
  auto user = user_of(raw_user, strict);
  auto env = mp::environment_param(view(query_value(query, "environment")));
  if (!env)
    check_refusal(env.err(), {"environment"});
  if (user && env)
    check_customer_answer(*user, *env, {}, strict);
}

void purchases_page(std::string_view raw_user, std::string_view query, bool strict) {
  auto user = user_of(raw_user, strict);
  auto limit = mp::limit_param(view(query_value(query, "limit")));
  auto cursor = mp::cursor_param(view(query_value(query, "cursor")));
  if (!limit) {
    check_refusal(limit.err(), {"limit"});
  } else {
    FUZZ_CHECK(*limit >= 1 && *limit <= mp::max_page_size);
  }
  if (!cursor) {
    check_refusal(cursor.err(), {"cursor"});
  } else if (*cursor) {
    const auto& c = **cursor;
    FUZZ_CHECK(c.created_at >= 0 && !c.id.empty() && c.id.size() <= 64);
    if (strict)
      FUZZ_CHECK(database_text(c.id));
    // next_cursor as a listing writes it reads back as the same place.
    auto again = mp::cursor_param(mp::cursor_text(c));
    FUZZ_CHECK(again.ok() && *again && (*again)->created_at == c.created_at
               && (*again)->id == c.id);
  }
}

void grant(std::string_view raw_user, std::string_view name, std::string_view body,
           bool strict) {
  auto user = user_of(raw_user, strict);
  auto entitlement = mp::entitlement_param(name);
  if (!entitlement)
    check_refusal(entitlement.err(), {"entitlement"});
  else
    FUZZ_CHECK(!entitlement->empty() && entitlement->size() <= 64 && visible_ascii(*entitlement));
  auto request = mp::parse_grant_request(body, fuzz::fixed_now);
  if (!request) {
    check_refusal(request.err(), {"", "expires_at", "duration", "environment"});
    return;
  }
  FUZZ_CHECK(request->starts_at == fuzz::fixed_now);
  FUZZ_CHECK(request->expires_at > fuzz::fixed_now
             && request->expires_at - fuzz::fixed_now <= max_grant_ms);
  if (!user || !entitlement)
    return;
  mp::grant g;
  g.id = "00000000-0000-4000-8000-000000000003";
  g.app_id = "00000000-0000-4000-8000-000000000001";
  g.user_identifier = *user;
  g.env = request->env;
  g.entitlement = *entitlement;
  g.starts_at = request->starts_at;
  g.expires_at = request->expires_at;
  g.created_at = fuzz::fixed_now;
  FUZZ_CHECK(g.active_at(fuzz::fixed_now));
  if (strict) {
    auto answer = fuzz::parses_as_json(boost::json::serialize(mp::grant_json(g)));
    FUZZ_CHECK(answer.as_object().at("user_identifier").as_string() == *user);
  }
  // The customer's answer then shows the entitlement, active, as granted.
  check_customer_answer(*user, g.env, {g}, strict);
}

void remove_grant(std::string_view raw_user, std::string_view name, std::string_view query,
                  bool strict) {
  (void)user_of(raw_user, strict);
  if (auto entitlement = mp::entitlement_param(name); !entitlement)
    check_refusal(entitlement.err(), {"entitlement"});
  if (auto env = mp::environment_param(view(query_value(query, "environment"))); !env)
    check_refusal(env.err(), {"environment"});
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  auto fields = fuzz::split_fields(fuzz::as_text(data + 1, size - 1), 3);
  const bool strict = visible_ascii(fields[0]) && visible_ascii(fields[1]);
  auto path = segments(fields[0]);
  path.resize(3);
  switch (data[0] & 3) {
    case 0:
      customer(path[0], fields[1], strict);
      break;
    case 1:
      purchases_page(path[0], fields[1], strict);
      break;
    case 2:
      grant(path[0], path[1], fields[2], strict);
      break;
    default:
      remove_grant(path[0], path[1], fields[1], strict);
      break;
  }
  return 0;
}

#include "model/database_url.hpp"

#include "model/url_policy.hpp"

namespace receiptd::model {

namespace {

constexpr std::string_view sqlite_prefix = "sqlite3://";
constexpr std::string_view postgresql_prefix = "postgresql://";
constexpr std::string_view postgres_prefix = "postgres://";

// libpq's isspace() in conninfo_parse (the C locale).
bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// libpq's keywords are lower-case words ("sslmode", "target_session_attrs").
bool keyword(std::string_view key) {
  if (key.empty())
    return false;
  for (char c : key)
    if (!((c >= 'a' && c <= 'z') || c == '_'))
      return false;
  return true;
}

bool secret_key(std::string_view key) {
  return key == "password" || key == "sslpassword";
}

model::error refused(std::string why) {
  return model::error(errc::invalid_request, std::move(why));
}

std::optional<std::vector<connection_parameter>> parse_libpq(std::string_view text) {
  std::vector<connection_parameter> out;
  std::size_t at = 0;
  while (true) {
    while (at < text.size() && blank(text[at]))
      ++at;
    if (at == text.size())
      return out;
    auto key_begin = at;
    while (at < text.size() && text[at] != '=' && !blank(text[at]))
      ++at;
    auto key = text.substr(key_begin, at - key_begin);
    while (at < text.size() && blank(text[at]))
      ++at;
    if (at == text.size() || text[at] != '=' || key.empty())
      return std::nullopt;
    ++at;
    while (at < text.size() && blank(text[at]))
      ++at;
    connection_parameter p;
    p.key = key;
    p.value_begin = at;
    if (at < text.size() && text[at] == '\'') {
      p.quote = '\'';
      ++at;
      for (;;) {
        if (at == text.size())
          return std::nullopt; // unterminated
        char c = text[at++];
        if (c == '\'')
          break;
        if (c == '\\' && at < text.size())
          c = text[at++];
        p.value += c;
      }
    } else {
      while (at < text.size() && !blank(text[at])) {
        char c = text[at++];
        if (c == '\\' && at < text.size())
          c = text[at++];
        p.value += c;
      }
    }
    p.value_end = at;
    out.push_back(std::move(p));
  }
}

std::optional<std::vector<connection_parameter>> parse_sqlite(std::string_view text) {
  std::vector<connection_parameter> out;
  std::size_t at = 0;
  while (true) {
    while (at < text.size() && text[at] == ' ')
      ++at;
    if (at == text.size())
      return out;
    auto eq = text.find('=', at);
    if (eq == std::string_view::npos || eq == at
        || text.substr(at, eq - at).find(' ') != std::string_view::npos)
      return std::nullopt;
    connection_parameter p;
    p.key = text.substr(at, eq - at);
    p.value_begin = eq + 1;
    at = eq + 1;
    if (at < text.size() && text[at] == '"')
      p.quote = text[at++];
    bool closed = p.quote == 0;
    while (at < text.size()) {
      char c = text[at];
      if (p.quote == 0 && c == ' ')
        break;
      ++at;
      if (p.quote != 0 && c == p.quote) { // a bare value's NUL is a character, not its end
        closed = true;
        break;
      }
      p.value += c;
    }
    if (!closed)
      return std::nullopt;
    p.value_end = at;
    out.push_back(std::move(p));
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

// A URI component percent-decoded as libpq's conninfo_uri_decode does ('+' is a
// plus sign; %00 is refused).
result<std::string> percent_decoded(std::string_view text, const char* what) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    int hi = i + 2 < text.size() ? hex_digit(text[i + 1]) : -1;
    int lo = i + 2 < text.size() ? hex_digit(text[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      return refused(std::string("the PostgreSQL URI's ") + what
                     + " has a % not followed by two hex digits (write %25 for %)");
    if (hi == 0 && lo == 0)
      return refused(std::string("the PostgreSQL URI's ") + what + " holds %00");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// postgresql://[user[:password]@][host[:port][,…]][/dbname][?key=value[&…]]
// after its scheme, as libpq's conninfo_uri_parse_options reads it.
result<std::string> uri_to_keywords(std::string_view rest) {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](std::string key, std::string value) {
    out.emplace_back(std::move(key), std::move(value));
  };
  // The user part ends at the first '@' before any '/'.
  auto user_end = rest.find_first_of("@/");
  if (user_end != std::string_view::npos && rest[user_end] == '@') {
    auto credentials = rest.substr(0, user_end);
    auto colon = credentials.find(':');
    auto user = percent_decoded(credentials.substr(0, colon), "user");
    if (!user)
      return user.err();
    std::string password;
    bool has_password = colon != std::string_view::npos;
    if (has_password) {
      auto decoded = percent_decoded(credentials.substr(colon + 1), "password");
      if (!decoded)
        return decoded.err();
      password = std::move(decoded).value();
    }
    rest.remove_prefix(user_end + 1);
    if (!user->empty())
      add("user", std::move(user).value());
    if (has_password && !password.empty())
      add("password", std::move(password));
  }
  // Hosts and ports: "h1:p1,[::1]:p2,…"; libpq keeps them as comma lists.
  std::string hosts, ports;
  for (bool first = true;; first = false) {
    std::string_view host;
    if (!rest.empty() && rest.front() == '[') {
      auto close = rest.find(']');
      if (close == std::string_view::npos)
        return refused("the PostgreSQL URI's IPv6 host has no closing ]");
      host = rest.substr(1, close - 1);
      if (host.empty())
        return refused("the PostgreSQL URI's IPv6 host is empty");
      rest.remove_prefix(close + 1);
      if (!rest.empty() && std::string_view(":/?,").find(rest.front()) == std::string_view::npos)
        return refused("the PostgreSQL URI has text after its IPv6 host's ]");
    } else {
      auto end = rest.find_first_of(":/?,");
      host = rest.substr(0, end);
      rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    }
    auto decoded_host = percent_decoded(host, "host");
    if (!decoded_host)
      return decoded_host.err();
    std::string port;
    if (!rest.empty() && rest.front() == ':') {
      rest.remove_prefix(1);
      auto end = rest.find_first_of("/?,");
      auto decoded = percent_decoded(rest.substr(0, end), "port");
      if (!decoded)
        return decoded.err();
      port = std::move(decoded).value();
      rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    }
    if (!first) {
      hosts += ',';
      ports += ',';
    }
    hosts += *decoded_host;
    ports += port;
    if (rest.empty() || rest.front() != ',')
      break;
    rest.remove_prefix(1);
  }
  if (hosts.find_first_not_of(',') != std::string::npos)
    add("host", hosts);
  if (ports.find_first_not_of(',') != std::string::npos)
    add("port", ports);
  std::string_view query;
  if (!rest.empty() && rest.front() == '/') {
    rest.remove_prefix(1);
    auto q = rest.find('?');
    auto dbname = percent_decoded(rest.substr(0, q), "database name");
    if (!dbname)
      return dbname.err();
    if (!dbname->empty())
      add("dbname", std::move(dbname).value());
    rest.remove_prefix(q == std::string_view::npos ? rest.size() : q);
  }
  if (!rest.empty() && rest.front() == '?')
    query = rest.substr(1);
  else if (!rest.empty())
    return refused("the PostgreSQL URI has unexpected text after its host");
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    if (pair.empty())
      continue;
    auto eq = pair.find('=');
    if (eq == std::string_view::npos || pair.find('=', eq + 1) != std::string_view::npos)
      return refused("a query parameter of the PostgreSQL URI is not one key=value");
    auto key = percent_decoded(pair.substr(0, eq), "query");
    auto value = percent_decoded(pair.substr(eq + 1), "query");
    if (!key)
      return key.err();
    if (!value)
      return value.err();
    if (!keyword(*key))
      return refused("a query parameter of the PostgreSQL URI is not a libpq keyword "
                     "(sslmode, connect_timeout, application_name, …)");
    if (*key == "ssl" && *value == "true") // libpq's JDBC-compatible spelling
      add("sslmode", "require");
    else
      add(std::move(key).value(), std::move(value).value());
  }
  std::string text(postgresql_prefix);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i)
      text += ' ';
    text += out[i].first + '=' + libpq_quoted(out[i].second);
  }
  return text;
}

// The parameters of `params` (parsed from it) with the secret values replaced.
std::string masked(std::string_view params, const std::vector<connection_parameter>& parsed) {
  std::string out(params);
  for (auto p = parsed.rbegin(); p != parsed.rend(); ++p) {
    if (!secret_key(p->key))
      continue;
    // libpq lets a parameter follow a quoted value with no blank between
    // ("password='x'host=h"): the bare *** then needs one.
    const bool joined = p->value_end < params.size() && !blank(params[p->value_end]);
    out.replace(p->value_begin, p->value_end - p->value_begin, joined ? "*** " : "***");
  }
  return out;
}

} // namespace

std::optional<std::vector<connection_parameter>> parse_connection_parameters(std::string_view text,
                                                                             bool libpq) {
  return libpq ? parse_libpq(text) : parse_sqlite(text);
}

std::string libpq_quoted(std::string_view value) {
  bool bare = !value.empty();
  for (char c : value)
    if (blank(c) || c == '\'' || c == '\\')
      bare = false;
  if (bare)
    return std::string(value);
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "'";
}

bool is_postgresql_uri(std::string_view url) {
  if (url.starts_with(postgres_prefix))
    return true;
  if (!url.starts_with(postgresql_prefix))
    return false;
  // The keyword form starts with a keyword and '=' ("host=…"); a URI with a
  // user, a host or a '/' ("receiptd:…@", "localhost", "/dbname"). Empty is both.
  auto rest = url.substr(postgresql_prefix.size());
  std::size_t at = 0;
  while (at < rest.size() && blank(rest[at]))
    ++at;
  auto word_begin = at;
  while (at < rest.size() && ((rest[at] >= 'a' && rest[at] <= 'z') || rest[at] == '_'))
    ++at;
  bool word = at > word_begin;
  while (at < rest.size() && blank(rest[at]))
    ++at;
  if (at == rest.size() && !word)
    return false;
  return !(word && at < rest.size() && rest[at] == '=');
}

result<std::string> keyword_database_url(std::string_view url) {
  if (is_postgresql_uri(url)) {
    auto prefix = url.starts_with(postgres_prefix) ? postgres_prefix : postgresql_prefix;
    return uri_to_keywords(url.substr(prefix.size()));
  }
  if (url.starts_with(postgresql_prefix) && !parse_libpq(url.substr(postgresql_prefix.size())))
    return refused("the parameters after postgresql:// are not key=value pairs as libpq reads "
                   "them (a value with spaces or quotes goes in '…', with \\' and \\\\ inside)");
  return std::string(url);
}

std::string redacted_database_url(std::string_view url) {
  auto scheme = url_scheme(url);
  auto hidden = scheme ? std::string(*scheme) + "://…" : std::string("…");
  if (url.starts_with(sqlite_prefix))
    return std::string(url); // a file and options: nothing secret
  if (!url.starts_with(postgresql_prefix) && !url.starts_with(postgres_prefix))
    return hidden;
  auto keywords = keyword_database_url(url);
  if (!keywords)
    return hidden;
  std::string_view params(*keywords);
  params.remove_prefix(postgresql_prefix.size());
  auto parsed = parse_libpq(params);
  if (!parsed)
    return hidden;
  return std::string(postgresql_prefix) + masked(params, *parsed);
}

} // namespace receiptd::model

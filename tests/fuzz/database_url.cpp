// db.url (model/database_url.hpp): PostgreSQL URIs turned into libpq's keyword
// form, the keyword form as libpq and SOCI's SQLite backend read it, and the URL
// as it may be printed. The operator writes it, but it holds a password: the
// properties are that nothing of a password reaches an error or a printed URL,
// and that what receiptd hands libpq reads back as what was meant.
//
// Input: byte 0 bit 0: parse_connection_parameters reads the rest as libpq
// (else as SOCI's SQLite backend), bits 1-2: the config file's folder its
// relative paths resolve against (model/config_paths.hpp); the rest: a db.url.
//
// Every password of the URL then has its text changed (its letters g-z, which
// no percent escape, key or separator is made of, for others) and what is
// printed (redacted_database_url, an error's message) must not change.

#include <cctype>

#include "model/config_paths.hpp"
#include "model/database_url.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace receiptd;

constexpr std::string_view keyword_prefix = "postgresql://";

bool secret_key(std::string_view key) {
  return key == "password" || key == "sslpassword";
}

char other_letter(char c) {
  if (c >= 'g' && c <= 'z')
    return c == 'z' ? 'g' : static_cast<char>(c + 1);
  if (c >= 'G' && c <= 'Z')
    return c == 'Z' ? 'G' : static_cast<char>(c + 1);
  return c;
}

void change_letters(std::string& s, std::size_t begin, std::size_t end) {
  for (auto i = begin; i < end && i < s.size(); ++i)
    s[i] = other_letter(s[i]);
}

// The URL with the text of every password it holds changed: a URI's
// user:password@ and query password=…, or the keyword form's password= values.
std::string with_other_passwords(std::string url) {
  std::size_t rest = 0;
  if (url.starts_with("postgresql://"))
    rest = 13;
  else if (url.starts_with("postgres://"))
    rest = 11;
  else
    return url;
  if (model::is_postgresql_uri(url)) {
    auto user_end = url.find_first_of("@/", rest);
    auto hosts = rest;
    if (user_end != std::string::npos && url[user_end] == '@') {
      auto colon = url.find(':', rest);
      if (colon < user_end)
        change_letters(url, colon + 1, user_end);
      hosts = user_end + 1;
    }
    // The query starts at the first '?' after the user part, unless an IPv6
    // host's brackets hold one.
    auto query = url.find('?', hosts);
    if (url.find('[', hosts) < query)
      query = std::string::npos;
    for (auto q = query; q != std::string::npos;) {
      auto end = url.find('&', q + 1);
      auto pair = std::string_view(url).substr(q + 1, end == std::string::npos ? end : end - q - 1);
      auto eq = pair.find('=');
      if (eq != std::string_view::npos && secret_key(pair.substr(0, eq)))
        change_letters(url, q + 2 + eq, q + 1 + pair.size());
      q = end;
    }
  } else if (auto params = model::parse_connection_parameters(
               std::string_view(url).substr(rest), true)) {
    for (const auto& p : *params)
      if (secret_key(p.key))
        change_letters(url, rest + p.value_begin, rest + p.value_end);
  }
  return url;
}

// RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
bool is_scheme(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s.front())))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.')
      return false;
  return true;
}

void check_parameters(std::string_view text, bool libpq) {
  auto parsed = model::parse_connection_parameters(text, libpq);
  if (!parsed)
    return;
  std::string again;
  for (const auto& p : *parsed) {
    FUZZ_CHECK(!p.key.empty() && p.key.find('=') == std::string_view::npos);
    FUZZ_CHECK(p.value_begin <= p.value_end && p.value_end <= text.size());
    FUZZ_CHECK(p.key.data() >= text.data() && p.key.data() + p.key.size() <= text.data() + text.size());
    if (libpq)
      again += (again.empty() ? "" : " ") + std::string(p.key) + "=" + model::libpq_quoted(p.value);
  }
  if (!libpq)
    return;
  // Written back as receiptd writes libpq's form, it reads the same.
  auto back = model::parse_connection_parameters(again, true);
  FUZZ_CHECK(back && back->size() == parsed->size());
  for (std::size_t i = 0; i < parsed->size(); ++i) {
    FUZZ_CHECK((*back)[i].key == (*parsed)[i].key);
    FUZZ_CHECK((*back)[i].value == (*parsed)[i].value);
  }
}

// Relative file paths among the parameters resolve against the config file's
// folder (model/config_paths.hpp), after a URI took the keyword form: the
// parameters stay the same ones, in order, and only the file paths change.
void check_resolved(std::string_view url, const std::string& base) {
  const bool sqlite = url.starts_with("sqlite3://");
  if (!sqlite && !url.starts_with(keyword_prefix)) {
    FUZZ_CHECK(model::resolve_database_url(base, url) == url);
    return;
  }
  auto params_at = url.find("://") + 3;
  auto before = model::parse_connection_parameters(url.substr(params_at), !sqlite);
  auto resolved = model::resolve_database_url(base, url);
  if (!before) {
    FUZZ_CHECK(resolved == url);
    return;
  }
  FUZZ_CHECK(resolved.starts_with(url.substr(0, params_at)));
  auto after
    = model::parse_connection_parameters(std::string_view(resolved).substr(params_at), !sqlite);
  FUZZ_CHECK(after && after->size() == before->size());
  for (std::size_t i = 0; i < before->size(); ++i) {
    const auto& b = (*before)[i];
    const auto& a = (*after)[i];
    FUZZ_CHECK(a.key == b.key);
    if (a.value != b.value)
      FUZZ_CHECK(a.value == model::resolve_config_path(base, b.value) && !secret_key(a.key));
  }
  if (auto file = model::sqlite_database_file(url))
    FUZZ_CHECK(sqlite && !file->empty());
}

void check_url(std::string_view url, const std::string& base) {
  auto keywords = model::keyword_database_url(url);
  auto printed = model::redacted_database_url(url);
  const bool postgres = url.starts_with("postgresql://") || url.starts_with("postgres://");
  if (!keywords) {
    FUZZ_CHECK(keywords.err().code() == model::errc::invalid_request);
    FUZZ_CHECK(!keywords.err().message().empty());
    FUZZ_CHECK(postgres);
    check_resolved(url, base);
  } else if (postgres) {
    check_resolved(*keywords, base);
    // What SOCI hands libpq: the keyword form, as libpq reads it.
    FUZZ_CHECK(keywords->starts_with(keyword_prefix));
    auto params = std::string_view(*keywords).substr(keyword_prefix.size());
    FUZZ_CHECK(!model::is_postgresql_uri(*keywords));
    auto parsed = model::parse_connection_parameters(params, true);
    FUZZ_CHECK(parsed);
    // It is its own keyword form.
    auto again = model::keyword_database_url(*keywords);
    FUZZ_CHECK(again && *again == *keywords);
    // Printed: the same parameters, every secret one ***.
    FUZZ_CHECK(printed.starts_with(keyword_prefix));
    auto shown = model::parse_connection_parameters(
      std::string_view(printed).substr(keyword_prefix.size()), true);
    FUZZ_CHECK(shown && shown->size() == parsed->size());
    for (std::size_t i = 0; i < parsed->size(); ++i) {
      FUZZ_CHECK((*shown)[i].key == (*parsed)[i].key);
      FUZZ_CHECK((*shown)[i].value == (secret_key((*parsed)[i].key) ? "***" : (*parsed)[i].value));
    }
  } else {
    FUZZ_CHECK(*keywords == url);
    check_resolved(url, base);
  }
  if (url.starts_with("sqlite3://")) {
    FUZZ_CHECK(printed == url);
  } else if (!postgres) {
    // Another scheme: nothing but the scheme is printed.
    FUZZ_CHECK(printed == "…"
               || (printed.ends_with("://…") && is_scheme(printed.substr(0, printed.size() - 6))));
  }

  // A password's text never shows: not in an error, not where the URL is printed.
  auto other = with_other_passwords(std::string(url));
  if (other == url)
    return;
  auto other_keywords = model::keyword_database_url(other);
  FUZZ_CHECK(other_keywords.ok() == keywords.ok());
  if (!keywords)
    FUZZ_CHECK(other_keywords.err().message() == keywords.err().message());
  FUZZ_CHECK(model::redacted_database_url(other) == printed);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  auto text = fuzz::as_text(data + 1, size - 1);
  check_parameters(text, data[0] & 1);
  static const std::string bases[] = {"/etc/receiptd", "config", "", "/srv/my conf/it's"};
  check_url(text, bases[(data[0] >> 1) & 3]);
  // libpq reads back what libpq_quoted writes.
  auto quoted = "k=" + model::libpq_quoted(text);
  auto p = model::parse_connection_parameters(quoted, true);
  FUZZ_CHECK(p && p->size() == 1 && (*p)[0].value == text);
  return 0;
}

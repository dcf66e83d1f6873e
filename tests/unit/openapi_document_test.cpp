// The OpenAPI document embedded into the binary (docs/openapi.yaml, served at
// GET /openapi.yaml) against the C++ tables it describes: every route of
// http/routes.cpp with its method, every Mbaasy alias as an alias of its route,
// every code of the error table, every webhook event. The document's own
// consistency (references, schemas) is tests/openapi/check_document.py's part,
// and the answers themselves are held against it by check_responses.py.

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "http/openapi_document.hpp"
#include "http/routes.hpp"
#include "model/error_codes.hpp"
#include "model/version.hpp"
#include "model/webhooks.hpp"

using namespace receiptd;

namespace {

struct path_entry {
  std::set<std::string> methods;
  std::string ref;      // a path item that is a $ref (an alias)
  std::string alias_of; // its x-alias-of
};

std::size_t indent_of(const std::string& line) {
  return line.find_first_not_of(' ');
}

std::string unquoted(std::string s) {
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front())
    return s.substr(1, s.size() - 2);
  return s;
}

// The document's lines, without comments-only and blank lines.
std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    auto i = indent_of(line);
    if (i == std::string::npos || line[i] == '#')
      continue;
    out.push_back(line);
  }
  return out;
}

// The keys at `indent` directly under the top-level key `section` (e.g. "paths").
std::vector<std::pair<std::string, std::vector<std::string>>>
children(const std::vector<std::string>& lines, const std::string& section, std::size_t indent) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  bool inside = false;
  for (const auto& line : lines) {
    auto i = indent_of(line);
    if (i == 0) {
      inside = line == section + ":";
      continue;
    }
    if (!inside)
      continue;
    if (i == indent && line.back() == ':')
      out.push_back({line.substr(i, line.size() - i - 1), {}});
    else if (i > indent && !out.empty())
      out.back().second.push_back(line);
  }
  return out;
}

std::map<std::string, path_entry> paths_of(const std::vector<std::string>& lines) {
  std::map<std::string, path_entry> out;
  for (auto& [path, body] : children(lines, "paths", 2)) {
    path_entry e;
    for (const auto& line : body) {
      if (indent_of(line) != 4)
        continue;
      auto text = line.substr(4);
      auto colon = text.find(':');
      auto key = text.substr(0, colon);
      auto value = colon + 2 <= text.size() ? unquoted(text.substr(colon + 2)) : std::string();
      if (key == "get" || key == "post" || key == "put" || key == "delete" || key == "patch")
        e.methods.insert(key);
      else if (key == "$ref")
        e.ref = value;
      else if (key == "x-alias-of")
        e.alias_of = value;
    }
    out[path] = e;
  }
  return out;
}

// The list under components.schemas.ErrorCode.enum.
std::set<std::string> error_codes_of(const std::vector<std::string>& lines) {
  std::set<std::string> out;
  bool in_schema = false, in_enum = false;
  for (const auto& line : lines) {
    auto i = indent_of(line);
    if (i == 4) {
      in_schema = line == "    ErrorCode:";
      in_enum = false;
    } else if (in_schema && i == 6) {
      in_enum = line == "      enum:";
    } else if (in_enum && i == 8 && line.compare(8, 2, "- ") == 0) {
      out.insert(line.substr(10));
    }
  }
  return out;
}

// "/a/{id}" → "/a/{}": routes name their parameter by meaning, the table does not.
std::string shape(std::string path) {
  std::string out;
  bool in_param = false;
  for (char c : path) {
    if (c == '{')
      in_param = true;
    if (!in_param || c == '{' || c == '}')
      out += c;
    if (c == '}')
      in_param = false;
  }
  return out;
}

// A JSON pointer to a path item, "#/paths/~1a~1%7Bid%7D", back to "/a/{id}".
std::string path_of_ref(std::string ref) {
  const std::string prefix = "#/paths/";
  if (ref.rfind(prefix, 0) != 0)
    return {};
  ref = ref.substr(prefix.size());
  std::string out;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (ref.compare(i, 2, "~1") == 0) {
      out += '/';
      ++i;
    } else if (ref.compare(i, 2, "~0") == 0) {
      out += '~';
      ++i;
    } else if (ref.compare(i, 3, "%7B") == 0 || ref.compare(i, 3, "%7b") == 0) {
      out += '{';
      i += 2;
    } else if (ref.compare(i, 3, "%7D") == 0 || ref.compare(i, 3, "%7d") == 0) {
      out += '}';
      i += 2;
    } else {
      out += ref[i];
    }
  }
  return out;
}

// The document's path whose shape is `wanted`, or "".
std::string find_path(const std::map<std::string, path_entry>& paths, const std::string& wanted) {
  for (const auto& [path, entry] : paths)
    if (shape(path) == shape(wanted))
      return path;
  return {};
}

std::string template_of(std::string_view prefix, bool takes_id) {
  return std::string(prefix) + (takes_id ? "/{}" : "");
}

} // namespace

TEST_CASE("the embedded OpenAPI document is docs/openapi.yaml, OpenAPI 3.1", "[openapi]") {
  auto doc = http::openapi_document();
  REQUIRE(doc.rfind("openapi: 3.1.", 0) == 0);
  std::ifstream file(std::string(RECEIPTD_SOURCE_DIR) + "/docs/openapi.yaml", std::ios::binary);
  std::string source((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK(doc == source); // the build embeds it again whenever it changes
}

TEST_CASE("every route, with its method, is a path of the OpenAPI document", "[openapi]") {
  auto paths = paths_of(lines_of(http::openapi_document()));
  REQUIRE(paths.size() >= http::routes().size());
  std::set<std::string> described;
  for (const auto& r : http::routes()) {
    auto wanted = template_of(r.path, r.takes_id);
    INFO("route " << r.name << ": " << wanted);
    auto path = find_path(paths, wanted);
    REQUIRE(!path.empty());
    const auto& entry = paths.at(path);
    CHECK(entry.ref.empty()); // the neutral path holds the operations
    CHECK(entry.methods.count(r.deletes ? "delete" : r.puts ? "put" : r.post ? "post" : "get") == 1);
    described.insert(path);

    if (r.alias.empty())
      continue;
    auto alias = find_path(paths, template_of(r.alias, r.takes_id));
    INFO("its Mbaasy alias " << template_of(r.alias, r.takes_id));
    REQUIRE(!alias.empty());
    const auto& a = paths.at(alias);
    CHECK(path_of_ref(a.ref) == path); // the same operations, by reference
    CHECK(a.alias_of == path);
    CHECK(a.methods.empty());
    described.insert(alias);
  }
  // No path the service does not answer.
  for (const auto& [path, entry] : paths) {
    INFO("documented path " << path);
    CHECK(described.count(path) == 1);
  }
}

TEST_CASE("every code of the error table is in the OpenAPI document's ErrorCode", "[openapi]") {
  auto codes = error_codes_of(lines_of(http::openapi_document()));
  REQUIRE(!codes.empty());
  for (int i = 0; i <= static_cast<int>(model::errc::internal_error); ++i) {
    auto name = std::string(model::name_of(static_cast<model::errc>(i)));
    INFO("error code " << name);
    CHECK(codes.count(name) == 1);
  }
}

TEST_CASE("every webhook event is in the OpenAPI document's webhooks", "[openapi]") {
  std::set<std::string> names;
  for (auto& [name, body] : children(lines_of(http::openapi_document()), "webhooks", 2))
    names.insert(name);
  constexpr auto last = model::event_type::customer_entitlements_changed;
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    auto name = std::string(model::to_string(static_cast<model::event_type>(i)));
    INFO("event " << name);
    CHECK(names.count(name) == 1);
  }
  CHECK(names.size() == static_cast<std::size_t>(last) + 1);
}

TEST_CASE("the OpenAPI document's info.version is receiptd's version", "[openapi][version]") {
  // One number everywhere: CMake's project version, as --version, /healthz and
  // receiptd_build_info say it.
  auto doc = std::string(http::openapi_document());
  auto at = doc.find("\ninfo:\n");
  REQUIRE(at != std::string::npos);
  auto version = doc.find("\n  version: ", at);
  REQUIRE(version != std::string::npos);
  auto line = doc.substr(version + 12, doc.find('\n', version + 1) - version - 12);
  CHECK(line == "\"" + std::string(model::version) + "\"");
  CHECK(std::string(model::version).find('.') != std::string::npos);
}

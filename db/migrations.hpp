#pragma once
// The numbered schema migrations of db/migrations/, embedded into the binary at build
// time (db/embed_migrations.cmake), so receiptd needs no source tree at run time.

#include <span>
#include <string_view>

namespace receiptd::db {

struct migration {
  int version;           // NNN of NNN_name.sql
  std::string_view name; // the file name
  std::string_view sql;  // the file's text: statements separated by ';'
};

// Every migration, by ascending version.
std::span<const migration> embedded_migrations();

} // namespace receiptd::db

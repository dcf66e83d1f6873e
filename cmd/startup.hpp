#pragma once
// Start-up steps shared by receiptd and receiptctl: fail fast, say what is wrong.

#include <functional>
#include <memory>
#include <string>

#include "db/database.hpp"

namespace receiptd::cmd {

// Opens the database (creating the directory of a SQLite file) and applies
// pending migrations. On failure prints why to stderr ("program: why") and
// returns null. Unless `may_create`, a SQLite file that does not exist is such a
// failure: a command that only reads never leaves an empty database behind.
std::unique_ptr<db::database> open_database(const std::string& url, const char* program,
                                            bool may_create = true);
// The same, saying why through `fail` (receiptd: its log).
std::unique_ptr<db::database> open_database(const std::string& url,
                                            const std::function<void(const std::string&)>& fail);

// Raises the open-file limit to its hard maximum: every connection is a descriptor.
void raise_file_limit();

model::unix_ms now_ms();

} // namespace receiptd::cmd

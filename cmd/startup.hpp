#pragma once
// Start-up steps shared by receiptd and receiptctl: fail fast, say what is wrong.

#include <memory>
#include <string>

#include "db/database.hpp"

namespace receiptd::cmd {

// Opens the database (creating the directory of a SQLite file) and applies
// pending migrations. On failure prints why to stderr and returns null.
std::unique_ptr<db::database> open_database(const std::string& url, const char* program);

// Raises the open-file limit to its hard maximum: every connection is a descriptor.
void raise_file_limit();

model::unix_ms now_ms();

} // namespace receiptd::cmd

#pragma once
// Database errors without the data. SOCI's soci_error::what() adds
// the statement and every bound value ("… with :token=\"…\""), and PostgreSQL's
// DETAIL line repeats a failing row ("Failing row contains (…)", "Key (…)=(…)"):
// receipts, purchase tokens, IP addresses, a service account's private key. What
// leaves db/ in an error value, and so reaches a log or the trace file, is only
// the primary message, with quoted values replaced.

#include <exception>
#include <string>

namespace receiptd::db {

// The message of a database exception, safe to log.
std::string safe_message(const std::exception& e);
// A primary error message with its DETAIL/HINT/CONTEXT lines dropped and every
// quoted text that is not a lowercase SQL identifier replaced by "…".
std::string redacted_message(const std::string& message);
// A database URL safe to print: its passwords replaced by *** (a URI's too),
// parameters that do not parse not printed (model::redacted_database_url).
std::string redacted_url(const std::string& url);

} // namespace receiptd::db

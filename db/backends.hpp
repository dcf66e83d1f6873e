#pragma once
// SOCI's PostgreSQL and SQLite backends are linked statically and registered by
// name once per process (thread-safe), so that soci::session finds them without
// dlopen. Call before opening any session.

namespace receiptd::db {

void register_backends();

} // namespace receiptd::db

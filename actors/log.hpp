#pragma once
// Operator-facing log lines on stderr: "2026-11-21T23:59:59.123Z WARN message".
// Used for what an operator must see (store credentials refused, database
// errors, start and stop), not for per-request chatter (that is what spans are for).

#include <string_view>

namespace receiptd::actors {

enum class log_level { info, warn, error };

void log(log_level level, std::string_view message);

inline void log_info(std::string_view m) { log(log_level::info, m); }
inline void log_warn(std::string_view m) { log(log_level::warn, m); }
inline void log_error(std::string_view m) { log(log_level::error, m); }

} // namespace receiptd::actors

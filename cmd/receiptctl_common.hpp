#pragma once
// What receiptctl's commands share: their messages, their output (text, or JSON
// with --json) and finding the app a command names.

#include <boost/json/value.hpp>

#include <optional>
#include <string>

#include "cmd/receiptctl_options.hpp"
#include "db/database.hpp"

namespace receiptd::cmd {

// "receiptctl: <message>" on stderr; returns the exit status (2: the command line
// was wrong, 1: anything else).
int fail(const std::string& message, int code = 1);

// `v` as one line of JSON with --json, else `human` as it is.
void print(const ctl_options& a, const boost::json::value& v, const std::string& human);

// The app with this id or name; none, with `problem` saying why.
std::optional<model::app> find_app(db::database& db, const std::string& key, std::string& problem);

} // namespace receiptd::cmd

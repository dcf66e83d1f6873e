#pragma once
// receiptd's command line and config file (CAF INI, DESIGN.md §6): every option
// with its default and a one-line description, type-checked and range-checked so
// that a bad value stops the start with a message naming the option.

#include <caf/actor_system_config.hpp>

#include <iosfwd>
#include <string>

#include "config/settings.hpp"

namespace receiptd::config {

class receiptd_config : public caf::actor_system_config {
public:
  receiptd_config();

  // Reads --config-file=PATH (default: config/receiptd.ini when it exists) and
  // the command line, which wins. Returns an error message, or "" on success.
  // --help prints every option to `help_out` and sets help_printed.
  std::string load(int argc, char** argv, std::ostream& help_out);

  bool help_printed = false;
  const settings& values() const { return s_; }
  // Every option CAF knows, receiptd's own among them (for --help and tests).
  const caf::config_option_set& options() const { return custom_options_; }

private:
  std::string check_file(const std::string& path);
  std::string check_ranges();
  void print_help(std::ostream& out) const;

  settings s_;
  // CAF reads durations as caf::timespan; copied into s_ after parsing.
  caf::timespan drain_timeout_, header_timeout_, body_timeout_, keepalive_timeout_, token_cache_ttl_, store_deadline_, connect_timeout_,
    store_a_timeout_, store_b_timeout_, refresh_margin_, retry_initial_, retry_max_,
    poll_interval_, lease_;
};

} // namespace receiptd::config

#pragma once
// receiptd's command line and config file (CAF INI, DESIGN.md §6). Every option
// is declared once (config/options.cpp): its settings field (which holds the
// default, config/settings.hpp), name, one-line description and bounds; it is
// type-checked and bound-checked so that a bad value stops the start with a
// message naming the option.

#include <caf/actor_system_config.hpp>

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "model/result.hpp"

namespace receiptd::config {

// Read when no --config-file is given and it exists (relative to the working directory).
inline constexpr const char* default_config_file = "config/receiptd.ini";

class receiptd_config : public caf::actor_system_config {
public:
  receiptd_config();

  // Reads --config-file=PATH (default: config/receiptd.ini when it exists) and
  // the command line, which wins; an error names the option and what it needs.
  // --help prints every option to `help_out` (--version: the version) and sets
  // help_printed.
  // Relative paths in options that name files (model/config_paths.hpp) resolve
  // against the config file's folder when the file or the default sets them
  // (config/ of the working directory when no file is read), and are left
  // relative to the working directory when the command line sets them.
  model::status load(int argc, char** argv, std::ostream& help_out);

  // What only the service needs of the configuration, since only it listens
  // (receiptctl reads the same file): an error names the option.
  model::status check_serving() const;

  bool help_printed = false;
  const settings& values() const { return s_; }
  // Every option CAF knows, receiptd's own among them (for --help and tests).
  const caf::config_option_set& options() const { return custom_options_; }

private:
  class section;

  // The file's options are all known and well typed; the answer is their names.
  model::result<std::set<std::string>> check_file(const std::string& path);
  model::status check_bounds() const;
  model::status check_relations() const;
  void print_help(std::ostream& out) const;

  settings s_;
  // Durations are declared on the settings' own milliseconds fields; CAF reads
  // them as caf::timespan into these slots, copied back after parsing.
  struct duration_slot {
    std::unique_ptr<caf::timespan> parsed;
    milliseconds* field;
  };
  std::vector<duration_slot> durations_;
  // The bounds declared with each option, checked after parsing.
  struct bound {
    std::string option;
    std::function<bool()> holds;
    std::string rule;
  };
  std::vector<bound> bounds_;
  // The options that name files, and how to resolve their relative paths.
  struct path_option {
    std::string option;
    std::function<void(const std::filesystem::path& base)> resolve;
  };
  std::vector<path_option> paths_;
  void resolve_paths(const std::string& file, const std::set<std::string>& from_file,
                     const std::set<std::string>& from_command_line);
};

} // namespace receiptd::config

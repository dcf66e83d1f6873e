#pragma once
// receiptd's configuration loaded from command-line arguments, as main() loads it.

#include <sstream>
#include <string>
#include <vector>

#include "config/options.hpp"

namespace receiptd::test {

struct loaded_config {
  std::string problem; // empty when the configuration was accepted
  config::settings values;
};

inline loaded_config load_config(std::vector<std::string> args) {
  args.insert(args.begin(), "receiptd");
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  config::receiptd_config cfg;
  std::ostringstream help;
  auto loaded = cfg.load(static_cast<int>(argv.size()), argv.data(), help);
  if (loaded && !cfg.help_printed)
    loaded = cfg.check_serving();
  return {loaded ? std::string() : loaded.err().message(), cfg.values()};
}

} // namespace receiptd::test

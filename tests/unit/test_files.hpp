#pragma once
// Reads files of tests/data for the unit tests.

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace receiptd::test {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline std::string data_file(const std::string& relative) {
  return read_file(std::string(RECEIPTD_TEST_DATA) + "/" + relative);
}

} // namespace receiptd::test

#pragma once
// A blocking HTTP client for the functional tests (libcurl easy).

#include <map>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

namespace receiptd::test {

struct http_response {
  long status = 0; // 0: no answer (connection refused, …)
  std::string body;
  std::map<std::string, std::string> headers; // lower-case names
  std::string error;

  boost::json::value json() const; // throws when the body is not JSON
  std::string header(const std::string& lower_name) const;
};

http_response http_call(const std::string& method, const std::string& url,
                        const std::string& body = {}, const std::vector<std::string>& headers = {});

} // namespace receiptd::test

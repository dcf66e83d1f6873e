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

// How a call is made beyond its request: from which local address (empty: the
// system's choice; any of 127.0.0.0/8 on loopback), and the CA that signs an
// https server's certificate (empty: the system's).
struct call_options {
  std::string source_ip;
  std::string ca_file;
};

// HEAD is sent as HEAD (no body is read).
http_response http_call(const std::string& method, const std::string& url,
                        const std::string& body = {}, const std::vector<std::string>& headers = {},
                        const call_options& options = {});

// The OpenAPI check (tests/openapi/check_responses.py): when the environment names
// a file in RECEIPTD_OPENAPI_RECORD (CTest does, one per database), every exchange
// http_call has with a receiptd listening on a port given here is appended to it as
// one JSON line (method, path as requested, status, content type, headers, body, and
// the request body when the service accepted it for judgement), and so is every
// webhook body the emulator's receiver hands the tests. The file is emptied when the
// process starts.
void record_exchanges_with(unsigned short port);
void record_webhook_body(const std::string& body);

} // namespace receiptd::test

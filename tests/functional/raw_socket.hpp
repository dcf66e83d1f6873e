#pragma once
// Plain TCP to receiptd, for what an HTTP library hides: bytes sent before or
// without a whole request, pipelined requests, and when the server closes.

#include <chrono>
#include <string>
#include <vector>

namespace receiptd::test {

// A connected socket to 127.0.0.1:port (TCP_NODELAY); closed by its destructor.
class raw_connection {
public:
  explicit raw_connection(unsigned short port);
  ~raw_connection();
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  int fd() const { return fd_; }
  void send_all(const std::string& bytes);

  // What arrives within `timeout`: until the peer closes, nothing more comes, or a
  // response with a JSON body has arrived.
  std::string read_for(std::chrono::milliseconds timeout);

  struct response {
    int status = 0;
    std::string head; // status line and headers
    std::string body;
    bool has_header(const std::string& name_and_value) const; // case-insensitive
  };
  // The next `n` responses (Content-Length framed), or fewer if the peer closes or
  // `timeout` passes first.
  std::vector<response> read_responses(std::size_t n, std::chrono::milliseconds timeout);

  // True when the server closes its side within `timeout` (nothing else arrives).
  bool closed_within(std::chrono::milliseconds timeout);

private:
  bool fill(std::chrono::steady_clock::time_point deadline); // false: closed or timed out
  int fd_ = -1;
  std::string buffer_;
};

} // namespace receiptd::test

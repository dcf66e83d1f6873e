#include "raw_socket.hpp"

#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace receiptd::test {

using clock_type = std::chrono::steady_clock;

raw_connection::raw_connection(unsigned short port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd_ >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

raw_connection::~raw_connection() {
  if (fd_ >= 0)
    ::close(fd_);
}

void raw_connection::send_all(const std::string& text) {
  std::size_t off = 0;
  while (off < text.size()) {
    auto n = ::send(fd_, text.data() + off, text.size() - off, MSG_NOSIGNAL);
    REQUIRE(n > 0);
    off += static_cast<std::size_t>(n);
  }
}

bool raw_connection::fill(clock_type::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(std::max<long>(left.count(), 0))) <= 0)
    return false;
  char buf[16384];
  auto n = ::recv(fd_, buf, sizeof buf, 0);
  if (n <= 0)
    return false;
  buffer_.append(buf, static_cast<std::size_t>(n));
  return true;
}

std::string raw_connection::read_for(std::chrono::milliseconds timeout) {
  auto deadline = clock_type::now() + timeout;
  while (!(buffer_.find("\r\n\r\n") != std::string::npos && buffer_.find('}') != std::string::npos))
    if (!fill(deadline))
      break;
  return std::exchange(buffer_, {});
}

bool raw_connection::response::has_header(const std::string& name_and_value) const {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  return lower(head).find("\r\n" + lower(name_and_value) + "\r\n") != std::string::npos;
}

std::vector<raw_connection::response>
raw_connection::read_responses(std::size_t n, std::chrono::milliseconds timeout) {
  std::vector<response> out;
  auto deadline = clock_type::now() + timeout;
  while (out.size() < n) {
    auto end = buffer_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (!fill(deadline))
        break;
      continue;
    }
    response r;
    r.head = buffer_.substr(0, end + 2);
    r.status = std::stoi(r.head.substr(9, 3));
    std::size_t length = 0;
    auto lower = r.head;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (auto cl = lower.find("\r\ncontent-length:"); cl != std::string::npos)
      length = std::stoul(lower.substr(cl + 17));
    if (buffer_.size() < end + 4 + length) {
      if (!fill(deadline))
        break;
      continue;
    }
    r.body = buffer_.substr(end + 4, length);
    buffer_.erase(0, end + 4 + length);
    out.push_back(std::move(r));
  }
  return out;
}

bool raw_connection::closed_within(std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0)
    return false;
  char c;
  return ::recv(fd_, &c, 1, MSG_PEEK) == 0;
}

} // namespace receiptd::test

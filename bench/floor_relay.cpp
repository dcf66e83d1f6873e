// receiptd-floor-relay: the least a service can do per upload on this machine, to
// measure the floor that receiptd's CPU per upload is held against (bench/floor,
// bench/README.md "The floor of this box").
//
//   receiptd-floor-relay --port=P --store-port=S --store-path=/... [--no-verify]
//
// One thread, one epoll loop, no framework, no database. Per request on a
// keep-alive client connection (Content-Length bodies only): an RSA-2048
// SHA1withRSA signature check from a prepared context (as receiptd checks a Play
// signature, model/store_b/licence_key.cpp), one GET to the store on a kept-alive
// connection of its own, and a 200 answer of the size of receiptd's. What it leaves
// out (parsing the JSON, the token, the database's round trip and commit, tracing)
// only adds to a real service's cost: its figures are a lower bound.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct connection {
  int fd = -1;
  bool client = false; // a client's, or one of ours to the store
  std::string in;
  int waiting_client = -1; // a store connection: the client its answer goes to
};

struct relay {
  int epoll_fd = -1;
  sockaddr_in store{};
  std::string store_request;
  std::string answer;
  std::vector<std::unique_ptr<connection>> by_fd = std::vector<std::unique_ptr<connection>>(65536);
  std::deque<int> idle_store;
  bool verify = true;
  EVP_PKEY* key = nullptr;
  EVP_MD_CTX* prepared = nullptr;
  std::string signed_data = std::string(700, 'x'); // a purchase_data's size
  std::vector<unsigned char> signature;

  void watch(int fd, bool client) {
    auto c = std::make_unique<connection>();
    c->fd = fd;
    c->client = client;
    by_fd[static_cast<std::size_t>(fd)] = std::move(c);
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &e);
  }

  void drop(int fd) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    by_fd[static_cast<std::size_t>(fd)].reset();
  }

  // The length of the first whole message in `s` (head and Content-Length body), or 0.
  static std::size_t message_length(const std::string& s) {
    auto head = s.find("\r\n\r\n");
    if (head == std::string::npos)
      return 0;
    std::size_t body = 0;
    for (std::string_view name : {"Content-Length:", "content-length:"})
      if (auto at = s.find(name); at != std::string::npos && at < head)
        body = std::strtoul(s.c_str() + at + name.size(), nullptr, 10);
    return head + 4 + body <= s.size() ? head + 4 + body : 0;
  }

  int store_connection() {
    if (!idle_store.empty()) {
      int fd = idle_store.front();
      idle_store.pop_front();
      return fd;
    }
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&store), sizeof store) != 0) {
      std::perror("floor-relay: connect to the store");
      std::exit(1);
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    watch(fd, false);
    return fd;
  }

  bool check_signature() {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_MD_CTX_copy_ex(ctx, prepared);
    bool ok = EVP_DigestVerifyUpdate(ctx, signed_data.data(), signed_data.size()) == 1
              && EVP_DigestVerifyFinal(ctx, signature.data(), signature.size()) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
  }

  void on_message(connection& c) {
    if (c.client) {
      if (verify && !check_signature()) {
        std::fprintf(stderr, "floor-relay: the signature did not verify\n");
        std::exit(1);
      }
      int s = store_connection();
      by_fd[static_cast<std::size_t>(s)]->waiting_client = c.fd;
      ::send(s, store_request.data(), store_request.size(), MSG_NOSIGNAL);
      return;
    }
    int client = c.waiting_client;
    c.waiting_client = -1;
    idle_store.push_back(c.fd);
    if (client >= 0 && by_fd[static_cast<std::size_t>(client)])
      ::send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
  }

  void on_readable(int fd) {
    auto* c = by_fd[static_cast<std::size_t>(fd)].get();
    if (!c)
      return;
    char buffer[65536];
    for (;;) {
      auto n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
        std::erase(idle_store, fd);
        return drop(fd);
      }
      if (n < 0)
        break;
      c->in.append(buffer, static_cast<std::size_t>(n));
    }
    while (auto length = message_length(c->in)) {
      c->in.erase(0, length);
      on_message(*c);
    }
  }

  void prepare_signature() {
    EVP_PKEY_CTX* kc = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nullptr);
    EVP_PKEY_keygen_init(kc);
    EVP_PKEY_CTX_set_rsa_keygen_bits(kc, 2048);
    EVP_PKEY_keygen(kc, &key);
    EVP_PKEY_CTX_free(kc);
    EVP_MD_CTX* sign = EVP_MD_CTX_new();
    std::size_t n = 0;
    EVP_DigestSignInit(sign, nullptr, EVP_sha1(), nullptr, key);
    auto data = reinterpret_cast<const unsigned char*>(signed_data.data());
    EVP_DigestSign(sign, nullptr, &n, data, signed_data.size());
    signature.resize(n);
    EVP_DigestSign(sign, signature.data(), &n, data, signed_data.size());
    EVP_MD_CTX_free(sign);
    prepared = EVP_MD_CTX_new();
    EVP_DigestVerifyInit(prepared, nullptr, EVP_sha1(), nullptr, key);
  }
};

std::string option(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--" + name + "=", 0) == 0)
      return argv[i] + name.size() + 3;
  return fallback;
}

} // namespace

int main(int argc, char** argv) {
  relay r;
  auto port = std::atoi(option(argc, argv, "port", "0").c_str());
  auto store_port = std::atoi(option(argc, argv, "store-port", "0").c_str());
  auto store_path = option(argc, argv, "store-path", "/");
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--no-verify")
      r.verify = false;
  r.store.sin_family = AF_INET;
  r.store.sin_port = htons(static_cast<std::uint16_t>(store_port));
  r.store.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  r.store_request = "GET " + store_path
                    + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer floor\r\n"
                      "Accept: application/json\r\n\r\n";
  std::string body = "{\"id\":\"" + std::string(36, '0') + "\",\"resource\":\"" + std::string(1000, 'r')
                     + "\"}"; // receiptd's 200 for a Play order is ~1.1 KB
  r.answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
             + std::to_string(body.size()) + "\r\n\r\n" + body;
  r.prepare_signature();

  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0
      || ::listen(listener, 4096) != 0) {
    std::perror("floor-relay: listen");
    return 1;
  }
  fcntl(listener, F_SETFL, O_NONBLOCK);
  r.epoll_fd = epoll_create1(0);
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.fd = listener;
  epoll_ctl(r.epoll_fd, EPOLL_CTL_ADD, listener, &e);
  socklen_t length = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  std::printf("%d\n", ntohs(address.sin_port));
  std::fflush(stdout);

  std::vector<epoll_event> events(512);
  for (;;) {
    int n = epoll_wait(r.epoll_fd, events.data(), static_cast<int>(events.size()), -1);
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd != listener) {
        r.on_readable(fd);
        continue;
      }
      for (int c; (c = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK)) >= 0;) {
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        r.watch(c, true);
      }
    }
  }
}

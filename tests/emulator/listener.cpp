#include "listener.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include <pistache/endpoint.h>

#include "http_util.hpp"

namespace receiptd::emulator {

namespace Http = Pistache::Http;

store_listener::store_listener(listener_options options)
  : options_(std::move(options)), port_(options_.port) {}

store_listener::~store_listener() {
  close();
}

void store_listener::set_handler(std::shared_ptr<Http::Handler> handler) {
  handler_ = std::move(handler);
}

void store_listener::open() {
  std::lock_guard switching(switch_mutex_);
  if (endpoint_)
    return;
  auto endpoint = std::make_unique<Http::Endpoint>(
    Pistache::Address(options_.host, Pistache::Port(port_.load())));
  // ReuseAddr: reopening after "down" must get the same port back even while
  // the old connections sit in TIME_WAIT. Backlog: a benchmark opens thousands
  // of connections at once. Pistache's default request limit (4 KiB) is far
  // below a receipt.
  endpoint->init(Http::Endpoint::options()
                   .threads(options_.threads)
                   .flags(Pistache::Tcp::Options::ReuseAddr)
                   .backlog(4096)
                   .maxRequestSize(options_.max_request_size));
  endpoint->setHandler(handler_);
  std::unique_lock gate(gate_);
  // Bumped before serving: no request of the new endpoint can see an old value.
  ++generation_;
  endpoint->serveThreaded(); // binds; throws when the port is taken
  port_ = static_cast<std::uint16_t>(endpoint->getPort());
  endpoint_ = std::move(endpoint);
}

void store_listener::close() {
  std::lock_guard switching(switch_mutex_);
  std::unique_ptr<Http::Endpoint> endpoint;
  {
    // Waits for a send in progress on the delay thread; later ones see the new
    // generation and drop their writer.
    std::unique_lock gate(gate_);
    if (!endpoint_)
      return;
    ++generation_;
    endpoint = std::move(endpoint_);
  }
  endpoint->shutdown();
  endpoint.reset(); // joins the reactor and accept threads, closes the listening socket
  close_connections();
}

bool store_listener::is_open() const {
  std::shared_lock gate(gate_);
  return endpoint_ != nullptr;
}

bool store_listener::send_if_current(std::uint64_t generation, Http::ResponseWriter& writer,
                                     const reply& r) {
  std::shared_lock gate(gate_);
  if (!endpoint_ || generation != generation_)
    return false;
  send_reply(writer, r);
  return true;
}

// Pistache 0.0.5 leaves accepted sockets open when an endpoint is destroyed, so
// a client holding a keep-alive connection would hang instead of seeing the
// store go away. Once the endpoint's threads are joined nothing else owns
// sockets on this port: find them by local port and close them.
void store_listener::close_connections() const {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir)
    return;
  std::vector<int> fds;
  while (auto* entry = ::readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && fd != ::dirfd(dir))
      fds.push_back(static_cast<int>(fd));
  }
  ::closedir(dir);
  for (int fd : fds) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
      continue;
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0)
      continue;
    std::uint16_t local_port = 0;
    if (local.ss_family == AF_INET)
      local_port = ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
    else if (local.ss_family == AF_INET6)
      local_port = ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
    else
      continue;
    int listening = 0;
    socklen_t opt_len = sizeof(listening);
    if (local_port != port_
        || ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &opt_len) != 0 || listening)
      continue;
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }
}

} // namespace receiptd::emulator

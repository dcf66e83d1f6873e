#include "http/outbound_client.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "http/turn_hook.hpp"

namespace receiptd::http {

namespace {

long curl_http_version(http_version v) {
  return v == http_version::http1_1 ? CURL_HTTP_VERSION_1_1
                                    : CURL_HTTP_VERSION_2TLS; // curl's default
}

struct transfer {
  outbound_request request;
  outbound_client::callback done;
  outbound_response response;
  curl_slist* headers = nullptr;
  char error[CURL_ERROR_SIZE] = {0};
  std::size_t max_bytes = 0;
  bool truncated = false;
  std::size_t sent = 0; // request body bytes handed to curl (shared bodies)
};

// A body in pieces (outbound_request::shared_body), read by curl as it sends.
std::size_t read_body(char* out, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  const auto& req = t->request;
  std::string_view parts[] = {req.body, *req.shared_body, req.body_tail};
  std::size_t room = size * n, copied = 0, skip = t->sent;
  for (auto part : parts) {
    if (skip >= part.size()) {
      skip -= part.size();
      continue;
    }
    auto len = std::min(part.size() - skip, room - copied);
    std::memcpy(out + copied, part.data() + skip, len);
    copied += len;
    skip = 0;
    if (copied == room)
      break;
  }
  t->sent += copied;
  return copied;
}

// curl rewinds a body to send it again (a reused connection that turned out dead).
int seek_body(void* user, curl_off_t offset, int origin) {
  auto* t = static_cast<transfer*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<std::size_t>(offset) > t->request.body_size())
    return CURL_SEEKFUNC_CANTSEEK;
  t->sent = static_cast<std::size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  auto len = size * n;
  if (t->response.body.size() + len > t->max_bytes) {
    t->truncated = true;
    return 0; // aborts the transfer: CURLE_WRITE_ERROR
  }
  t->response.body.append(data, len);
  return len;
}

// The client whose loop runs on this thread, if any.
thread_local const void* running_loop = nullptr;

// curl_global_init is not thread-safe: run it once, before any handle exists.
void init_curl_once() {
  static std::once_flag flag;
  std::call_once(flag, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

} // namespace

// The loop is event driven (curl_multi_socket_action + epoll): each wake-up
// touches only the sockets that are ready, so its cost does not grow with the
// number of open store connections (curl_multi_poll/perform scan all of them on
// every wake-up: with 2,000 in flight that scan was the service's top CPU item).
struct outbound_client::impl {
  using steady = std::chrono::steady_clock;

  options opts;
  CURLM* multi = nullptr;
  int epoll_fd = -1;
  int wake_fd = -1; // eventfd: submit() and the destructor wake the loop
  std::mutex mtx;
  std::deque<std::unique_ptr<transfer>> queued; // guarded by mtx
  std::atomic<bool> stopping{false};
  // The multi handle and everything below, held by the loop for a round and by a
  // submitter that starts its call itself (submit: curl handles are used by one
  // thread at a time, not by one thread only).
  std::mutex curl_mutex;
  std::unordered_map<CURL*, std::unique_ptr<transfer>> running;
  std::vector<CURL*> idle_handles;
  std::optional<steady::time_point> timer; // curl's timeout
  steady::time_point loop_wakes_by;        // the latest the loop looks again (its epoll_wait)
  // The sockets registered with epoll, and whether curl is
  // waiting on each. A store connection's socket stays registered between the
  // calls it carries: curl lets go of it when a call ends and asks for it again,
  // mostly with the same events, when the next call reuses the connection, and
  // that costs no epoll_ctl. Only sockets curl opened and closes through the
  // callbacks below are kept so (a socket closed behind our back, such as the
  // resolver's, could come back as another socket under the same number).
  struct watched_socket {
    std::uint32_t events = 0;
    bool wanted = false; // curl waits on it; otherwise it is idle between calls
    bool owned = false;  // opened by open_socket, closed by close_socket
  };
  std::unordered_map<curl_socket_t, watched_socket> sockets;
  std::thread loop;
  // Whether curl would send plain-http calls through a proxy without a tunnel
  // (its environment: http_proxy, all_proxy, ALL_PROXY). Such a proxy needs the
  // whole URL in the request line, so those calls keep curl's own target.
  const bool plain_http_proxied = proxy_in_environment();

  static bool proxy_in_environment() {
    for (const char* name : {"http_proxy", "all_proxy", "ALL_PROXY"})
      if (const char* v = std::getenv(name); v && *v)
        return true;
    return false;
  }

  // The URL curl is given (CURLOPT_URL). Where it may, curl gets only the origin and
  // sends the rest as the request target (model::split_request_target): curl 7.88
  // parses, re-encodes and reassembles a URL a character at a time, about half of
  // what a call cost it with a purchase token in the path.
  void set_url(CURL* h, const std::string& url) {
    char origin[256]; // curl copies both strings
    auto split = model::split_request_target(url);
    if (!split || split->origin.size() >= sizeof origin
        || (plain_http_proxied && !model::is_https_url(url))) {
      curl_easy_setopt(h, CURLOPT_URL, url.c_str());
      return;
    }
    std::memcpy(origin, split->origin.data(), split->origin.size());
    origin[split->origin.size()] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, origin);
    curl_easy_setopt(h, CURLOPT_REQUEST_TARGET, split->target.data()); // the URL's end
  }

  explicit impl(options o) : opts(std::move(o)) {
    init_curl_once();
    multi = curl_multi_init();
    if (opts.max_connections_per_host > 0)
      curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                        static_cast<long>(opts.max_connections_per_host));
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(opts.max_open_connections));
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd < 0 || wake_fd < 0)
      throw std::runtime_error("outbound client: cannot create epoll/eventfd");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev);
    loop = std::thread([this] { run(); });
  }

  ~impl() {
    stopping = true;
    wake();
    loop.join();
    for (auto* h : idle_handles)
      curl_easy_cleanup(h);
    curl_multi_cleanup(multi);
    close(wake_fd);
    close(epoll_fd);
  }

  void wake() {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
  }

  // curl says which events it wants on a socket (CURLMOPT_SOCKETFUNCTION).
  static int on_socket(CURL*, curl_socket_t s, int what, void* self_ptr, void*) {
    auto* self = static_cast<impl*>(self_ptr);
    auto it = self->sockets.find(s);
    if (what == CURL_POLL_REMOVE) {
      if (it != self->sockets.end() && it->second.owned)
        it->second.wanted = false; // stays registered until it is closed or stirs
      else
        self->unwatch(s);
      return 0;
    }
    std::uint32_t events
      = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    if (it == self->sockets.end())
      it = self->sockets.emplace(s, watched_socket{}).first;
    else if (it->second.events == events) {
      it->second.wanted = true;
      return 0;
    }
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = s;
    bool known = it->second.events != 0;
    if (epoll_ctl(self->epoll_fd, known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) != 0)
      epoll_ctl(self->epoll_fd, known ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s, &ev);
    it->second.events = events;
    it->second.wanted = true;
    return 0;
  }

  void unwatch(curl_socket_t s) {
    sockets.erase(s);
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, s, nullptr); // may already be closed: fine
  }

  // The sockets of store connections (CURLOPT_OPENSOCKETFUNCTION and
  // CURLOPT_CLOSESOCKETFUNCTION): curl closes them through close_socket, so that an
  // idle one can stay registered with epoll (on_socket).
  static curl_socket_t open_socket(void* self_ptr, curlsocktype, curl_sockaddr* address) {
    auto* self = static_cast<impl*>(self_ptr);
    curl_socket_t s
      = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (s != CURL_SOCKET_BAD)
      self->sockets[s] = watched_socket{0, false, true};
    return s;
  }

  static int close_socket(void* self_ptr, curl_socket_t s) {
    auto* self = static_cast<impl*>(self_ptr);
    self->sockets.erase(s); // closing it takes it out of the epoll set
    return ::close(s);
  }

  // curl's single timeout (CURLMOPT_TIMERFUNCTION): -1 none, 0 at once.
  static int on_timer(CURLM*, long timeout_ms, void* self_ptr) {
    auto* self = static_cast<impl*>(self_ptr);
    if (timeout_ms < 0)
      self->timer.reset();
    else
      self->timer = steady::now() + std::chrono::milliseconds(timeout_ms);
    return 0;
  }

  void collect_done() {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left))
      if (msg->msg == CURLMSG_DONE)
        finish(msg->easy_handle, msg->data.result);
  }

  void fire_timer_if_due() {
    if (timer && *timer <= steady::now()) {
      timer.reset(); // curl sets the next one from inside socket_action
      int still = 0;
      curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &still);
    }
  }

  CURL* take_handle() {
    if (!idle_handles.empty()) {
      auto* h = idle_handles.back();
      idle_handles.pop_back();
      return h; // reset when its last call finished; it keeps its DNS cache
    }
    return curl_easy_init();
  }

  void start(std::unique_ptr<transfer> t) {
    CURL* h = take_handle();
    auto& req = t->request;
    t->max_bytes = opts.max_response_bytes;
    set_url(h, req.url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opts.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, t->error);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); // whatever curl decodes
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, curl_http_version(req.version));
    // Where HTTP/2 may be negotiated, a call to a host whose connection is being
    // set up waits for it and becomes one more stream on it, instead of opening a
    // connection of its own. (On plain http it would only wait to learn that the
    // connection cannot be shared.)
    const bool may_be_http2 = req.version != http_version::http1_1 && model::is_https_url(req.url);
    if (req.version == http_version::automatic && model::is_https_url(req.url))
      curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
    // Each call in flight holds curl's receive buffer (16 KB by default) and, once it
    // has sent a body through read_body, its send buffer (64 KB): with a thousand
    // calls in flight against a slow store that was the service's largest memory
    // item. Store answers are mostly a few KB; a larger one takes more reads.
    // Not where HTTP/2 may be negotiated: curl 7.88's HTTP/2 receive path writes past
    // a receive buffer smaller than its default when an answer's headers and body
    // arrive together (valgrind: writes past a 4 KB buffer on verifyReceipt answers,
    // then a corrupted heap), so those calls keep curl's 16 KB.
    if (!may_be_http2)
      curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 4096L);
    curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 16384L); // curl's smallest
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, this);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, this);
    if (!opts.ca_file.empty())
      curl_easy_setopt(h, CURLOPT_CAINFO, opts.ca_file.c_str());
    if (req.method == "POST" || req.method == "PUT") {
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      // A PUT with a body (Send Consumption Information): POST's body handling
      // under another method name.
      if (req.method == "PUT")
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body_size()));
      if (req.shared_body) {
        curl_easy_setopt(h, CURLOPT_READFUNCTION, read_body);
        curl_easy_setopt(h, CURLOPT_READDATA, t.get());
        curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, seek_body);
        curl_easy_setopt(h, CURLOPT_SEEKDATA, t.get());
      } else {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
      }
    }
    for (const auto& line : req.headers)
      t->headers = curl_slist_append(t->headers, line.c_str());
    // An empty Expect keeps curl from waiting for "100 Continue" on bodies.
    t->headers = curl_slist_append(t->headers, "Expect:");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, t->headers);
    curl_multi_add_handle(multi, h);
    running.emplace(h, std::move(t));
  }

  void finish(CURL* h, CURLcode code) {
    auto it = running.find(h);
    if (it == running.end())
      return;
    auto t = std::move(it->second);
    running.erase(it);
    curl_multi_remove_handle(multi, h);
    if (code == CURLE_OK) {
      long status = 0;
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
      t->response.status = static_cast<int>(status);
      char* ct = nullptr;
      if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        t->response.content_type = ct;
      // The last response's Retry-After (429, 503), when it had one.
      struct curl_header* retry_after = nullptr;
      if (curl_easy_header(h, "Retry-After", 0, CURLH_HEADER, -1, &retry_after) == CURLHE_OK
          && retry_after)
        t->response.retry_after = std::string(retry_after->value).substr(0, 64);
    } else {
      t->response.status = 0;
      t->response.body.clear();
      t->response.error = t->truncated ? "response larger than the limit"
        : t->error[0]                  ? t->error
                                       : curl_easy_strerror(code);
    }
    curl_slist_free_all(t->headers);
    // The handle keeps pointers into the transfer (its error buffer, body, headers,
    // write and read data) until it is reset; the transfer goes now, so the handle is
    // reset now, not when it is next taken. A handle whose call failed is not used
    // again: curl may still hold state of its broken stream or connection.
    if (code == CURLE_OK) {
      curl_easy_reset(h);
      idle_handles.push_back(h);
    } else {
      curl_easy_cleanup(h);
    }
    // The request (and a body it shares with its owner) is let go of before the
    // owner hears of the answer: it may then take its data back without a copy.
    t->request = outbound_request{};
    t->done(std::move(t->response));
  }

  void handle(const epoll_event& event) {
    int fd = event.data.fd;
    if (fd == wake_fd) {
      std::uint64_t count = 0;
      [[maybe_unused]] auto r = ::read(wake_fd, &count, sizeof count);
      return;
    }
    if (auto it = sockets.find(fd); it != sockets.end() && !it->second.wanted) {
      // An idle connection stirred (the store closed it): curl finds it dead
      // when it next tries to reuse it. Until then it is not watched.
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
      it->second.events = 0;
      return;
    }
    int flags = 0;
    if (event.events & EPOLLIN)
      flags |= CURL_CSELECT_IN;
    if (event.events & EPOLLOUT)
      flags |= CURL_CSELECT_OUT;
    if (event.events & (EPOLLERR | EPOLLHUP))
      flags |= CURL_CSELECT_ERR;
    int still = 0;
    curl_multi_socket_action(multi, fd, flags, &still);
  }

  bool calls_queued() {
    std::lock_guard<std::mutex> guard(mtx);
    return !queued.empty();
  }

  // Starts the calls queued so far, then `t` (curl_multi_add_handle arms a 0 ms
  // timer: fire_timer_if_due sends them), and hands on the calls that ended. The
  // caller holds curl_mutex.
  void start_calls(std::unique_ptr<transfer> t = nullptr) {
    std::deque<std::unique_ptr<transfer>> batch;
    {
      std::lock_guard<std::mutex> guard(mtx);
      batch.swap(queued);
    }
    for (auto& q : batch)
      start(std::move(q));
    if (t)
      start(std::move(t));
    fire_timer_if_due();
    collect_done();
  }

  // A call submitted while the loop waits is started by the submitting thread
  // itself: its request is on the wire at once, and the loop wakes only for the
  // answer (no eventfd write and read, no wake-up of this thread per call). The
  // loop is woken only when curl now wants to be called back before the loop
  // would look again. Returns `t` back when the loop holds curl: it is queued then.
  std::unique_ptr<transfer> try_start_here(std::unique_ptr<transfer> t) {
    std::unique_lock<std::mutex> guard(curl_mutex, std::try_to_lock);
    if (!guard || stopping)
      return t;
    start_calls(std::move(t));
    bool sooner = timer && *timer < loop_wakes_by;
    guard.unlock();
    if (sooner && running_loop != this) // the loop itself looks at the timer before it waits
      wake();
    return nullptr;
  }

  // Each round is one turn (options::turns): the sockets that were ready, the
  // calls submitted since the last round, curl's timer and the finished calls,
  // whose callbacks hand the answers to actors. When the turn ends (curl let go
  // of), this thread may run those actors itself, and they may start calls at
  // once (try_start_here).
  void run() {
    pthread_setname_np(pthread_self(), "outbound"); // top -H, bench/load --threads
    running_loop = this;
    std::vector<epoll_event> events(256);
    int ready = 0;
    while (!stopping) {
      {
        turn t(opts.turns);
        std::lock_guard<std::mutex> guard(curl_mutex);
        for (int i = 0; i < ready; ++i)
          handle(events[i]);
        start_calls();
      }
      // After the turn: the actors it ran may have started or queued calls.
      int wait_ms = 1000;
      {
        std::lock_guard<std::mutex> guard(curl_mutex);
        if (calls_queued())
          wait_ms = 0;
        else if (timer) {
          auto left = std::chrono::ceil<std::chrono::milliseconds>(*timer - steady::now()).count();
          wait_ms = static_cast<int>(std::clamp<long long>(left, 0, 1000));
        }
        loop_wakes_by = steady::now() + std::chrono::milliseconds(wait_ms);
      }
      ready = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), wait_ms);
      if (ready < 0)
        ready = 0;
    }
    // Shutting down: whatever is queued or running fails.
    std::lock_guard<std::mutex> curl_guard(curl_mutex);
    std::deque<std::unique_ptr<transfer>> batch;
    {
      std::lock_guard<std::mutex> guard(mtx);
      batch.swap(queued);
    }
    for (auto& t : batch) {
      outbound_response r;
      r.error = "shutting down";
      t->request = outbound_request{};
      t->done(std::move(r));
    }
    std::vector<CURL*> handles;
    for (auto& [h, t] : running)
      handles.push_back(h);
    for (auto* h : handles)
      finish(h, CURLE_ABORTED_BY_CALLBACK);
  }
};

outbound_client::outbound_client(options opts) : impl_(std::make_unique<impl>(std::move(opts))) {}

outbound_client::~outbound_client() = default;

void outbound_client::submit(outbound_request req, callback done) {
  auto t = std::make_unique<transfer>();
  t->request = std::move(req);
  t->done = std::move(done);
  t = impl_->try_start_here(std::move(t));
  if (!t)
    return;
  bool was_empty = false;
  {
    std::lock_guard<std::mutex> guard(impl_->mtx);
    was_empty = impl_->queued.empty();
    impl_->queued.push_back(std::move(t));
  }
  // Otherwise a wake-up is already pending for this batch; the loop's own thread
  // (actors it runs at the end of a round) needs none: it looks before it waits.
  if (was_empty && running_loop != impl_.get())
    impl_->wake();
}

} // namespace receiptd::http

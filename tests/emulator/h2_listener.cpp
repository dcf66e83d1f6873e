#include "h2_listener.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <queue>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "store_handler.hpp"

namespace receiptd::emulator {

namespace {

using steady = std::chrono::steady_clock;

constexpr std::uint64_t listen_key = 0; // epoll keys; connections count from 2
constexpr std::uint64_t wake_key = 1;

// One request and, once answered, its answer (read by nghttp2 as it sends).
struct stream {
  store_request request;
  std::size_t bytes = 0; // headers and body received
  reply response;
  std::size_t sent = 0; // body bytes handed to nghttp2
};

struct connection {
  int fd = -1;
  std::uint64_t key = 0;
  SSL* ssl = nullptr;
  bool handshaking = true; // until the TLS handshake is done (then the session starts)
  nghttp2_session* session = nullptr;
  std::string out; // framed bytes not yet written
  bool watching_out = false;
  std::unordered_map<std::int32_t, stream> streams;
  ~connection() {
    if (session)
      nghttp2_session_del(session);
    if (ssl)
      SSL_free(ssl);
    if (fd >= 0)
      ::close(fd);
  }
};

// A slow-mode answer, due later.
struct delayed {
  steady::time_point due;
  std::uint64_t sequence; // FIFO among equal due times
  std::uint64_t connection;
  std::int32_t stream_id;
  reply response;
  bool operator>(const delayed& o) const {
    return due != o.due ? due > o.due : sequence > o.sequence;
  }
};

void split_target(std::string_view target, store_request& r) {
  auto q = target.find('?');
  r.path = std::string(target.substr(0, q));
  if (q == std::string_view::npos)
    return;
  auto query = target.substr(q + 1);
  r.query = parse_form(query); // the first of a repeated parameter, as Pistache keeps it
  // Every orderIds of orders.batchGet (a repeated parameter).
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    constexpr std::string_view key = "orderIds=";
    if (pair.starts_with(key))
      if (auto id = percent_decode(pair.substr(key.size()), true))
        r.order_ids.push_back(std::move(*id));
  }
}

const char* content_type(content_kind k) {
  return k == content_kind::html ? "text/html; charset=UTF-8" : "application/json; charset=UTF-8";
}

void check(bool ok, const char* what) {
  if (!ok)
    throw std::runtime_error(std::string("tls identity: ") + what);
}

// ALPN: "h2" or nothing (the handshake then fails: no_application_protocol).
int select_h2(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
              unsigned int inlen, void*) {
  static const unsigned char h2[] = {2, 'h', '2'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, h2, sizeof h2, in, inlen) != OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

} // namespace

tls_identity::tls_identity() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  check(key && cert, "key");
  X509_set_version(cert.get(), X509_VERSION_3);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), static_cast<long>(::time(nullptr)));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("receiptd-emulator"), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, cert.get(), cert.get(), nullptr, nullptr, 0);
  X509_EXTENSION* san
    = X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  check(san && X509_add_ext(cert.get(), san, -1) == 1, "subjectAltName");
  X509_EXTENSION_free(san);
  check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "signature");
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  check(bio && PEM_write_bio_X509(bio.get(), cert.get()) == 1, "PEM");
  char* data = nullptr;
  auto len = BIO_get_mem_data(bio.get(), &data);
  pem_.assign(data, static_cast<std::size_t>(len));
  ctx_ = SSL_CTX_new(TLS_server_method());
  check(ctx_ && SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION) == 1
          && SSL_CTX_use_certificate(ctx_, cert.get()) == 1
          && SSL_CTX_use_PrivateKey(ctx_, key.get()) == 1,
        "context");
  SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_alpn_select_cb(ctx_, select_h2, nullptr);
}

tls_identity::~tls_identity() {
  SSL_CTX_free(ctx_);
}

struct h2_listener::loop {
  store_id store;
  emulator_state* state;
  h2_options options;
  std::atomic<std::uint64_t>* accepted;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  std::atomic<bool> stopping{false};
  std::uint64_t next_key = 2;
  std::uint64_t sequence = 0;
  std::unordered_map<std::uint64_t, std::unique_ptr<connection>> connections;
  std::priority_queue<delayed, std::vector<delayed>, std::greater<>> timers;
  nghttp2_session_callbacks* callbacks = nullptr;
  std::thread thread;

  loop(store_id s, emulator_state& st, h2_options o, std::atomic<std::uint64_t>& counter)
    : store(s), state(&st), options(std::move(o)), accepted(&counter) {}

  ~loop() {
    stopping = true;
    if (thread.joinable()) {
      std::uint64_t one = 1;
      [[maybe_unused]] auto w = ::write(wake_fd, &one, sizeof one);
      thread.join();
    }
    connections.clear();
    if (callbacks)
      nghttp2_session_callbacks_del(callbacks);
    for (int fd : {listen_fd, epoll_fd, wake_fd})
      if (fd >= 0)
        ::close(fd);
  }

  // Binds `port` (0: any); returns the port bound.
  std::uint16_t start(std::uint16_t port) {
    listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (::inet_pton(AF_INET, options.host.c_str(), &addr.sin_addr) != 1)
      throw std::runtime_error("h2: not an IPv4 address: " + options.host);
    if (::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0
        || ::listen(listen_fd, 4096) != 0)
      throw std::runtime_error(std::string("h2: cannot listen: ") + std::strerror(errno));
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
    epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    watch(listen_fd, listen_key, EPOLLIN, EPOLL_CTL_ADD);
    watch(wake_fd, wake_key, EPOLLIN, EPOLL_CTL_ADD);
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
    thread = std::thread([this] { run(); });
    return ntohs(addr.sin_port);
  }

  void watch(int fd, std::uint64_t key, std::uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = key;
    ::epoll_ctl(epoll_fd, op, fd, &ev);
  }

  // ---- nghttp2 callbacks (user_data: the connection) ------------------------
  struct call {
    loop* self;
    connection* conn;
  };

  static stream* find(void* user, std::int32_t id) {
    auto* c = static_cast<call*>(user)->conn;
    auto it = c->streams.find(id);
    return it == c->streams.end() ? nullptr : &it->second;
  }

  static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
      static_cast<call*>(user)->conn->streams.try_emplace(frame->hd.stream_id);
    return 0;
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t namelen, const std::uint8_t* value, std::size_t valuelen,
                       std::uint8_t, void* user) {
    auto* s = find(user, frame->hd.stream_id);
    if (!s)
      return 0;
    std::string_view n(reinterpret_cast<const char*>(name), namelen);
    std::string_view v(reinterpret_cast<const char*>(value), valuelen);
    s->bytes += namelen + valuelen;
    if (n == ":method")
      s->request.method = std::string(v);
    else if (n == ":path")
      split_target(v, s->request);
    else if (n == "authorization")
      s->request.authorization = std::string(v);
    return 0;
  }

  static int on_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* data,
                     std::size_t len, void* user) {
    auto* s = find(user, id);
    if (!s)
      return 0;
    s->bytes += len;
    if (s->bytes <= static_cast<call*>(user)->self->options.max_request_size)
      s->request.body.append(reinterpret_cast<const char*>(data), len);
    return 0;
  }

  static int on_frame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    bool request_end = (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA)
      && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM);
    if (request_end && find(user, frame->hd.stream_id)) {
      auto* c = static_cast<call*>(user);
      c->self->dispatch(*c->conn, frame->hd.stream_id);
    }
    return 0;
  }

  static int on_stream_close(nghttp2_session*, std::int32_t id, std::uint32_t, void* user) {
    static_cast<call*>(user)->conn->streams.erase(id);
    return 0;
  }

  static ssize_t read_body(nghttp2_session*, std::int32_t id, std::uint8_t* buf, std::size_t length,
                           std::uint32_t* flags, nghttp2_data_source*, void* user) {
    auto* s = find(user, id);
    if (!s) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      return 0;
    }
    const auto& body = s->response.body;
    auto n = std::min(length, body.size() - s->sent);
    std::memcpy(buf, body.data() + s->sent, n);
    s->sent += n;
    if (s->sent == body.size())
      *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  // ---- requests and answers --------------------------------------------------
  void dispatch(connection& c, std::int32_t id) {
    auto& s = c.streams.at(id);
    if (s.bytes > options.max_request_size) {
      respond(c, id, json_reply(413, boost::json::object{{"error", "request too large"}}));
      return;
    }
    auto h = handle_store_request(store, *state, s.request);
    if (h.delay) {
      timers.push({steady::now() + *h.delay, sequence++, c.key, id, std::move(h.response)});
      return;
    }
    respond(c, id, std::move(h.response));
  }

  void respond(connection& c, std::int32_t id, reply r) {
    auto it = c.streams.find(id);
    if (it == c.streams.end())
      return; // the client reset the stream meanwhile
    auto& s = it->second;
    s.response = std::move(r);
    const std::string status = std::to_string(s.response.status);
    const std::string length = std::to_string(s.response.body.size());
    const std::string retry = s.response.retry_after.value_or("");
    std::vector<nghttp2_nv> headers;
    auto add = [&](std::string_view name, std::string_view value) {
      headers.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
                         reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())),
                         name.size(), value.size(), NGHTTP2_NV_FLAG_NONE});
    };
    add(":status", status);
    if (s.response.kind != content_kind::none)
      add("content-type", content_type(s.response.kind));
    add("content-length", length);
    if (!retry.empty())
      add("retry-after", retry);
    nghttp2_data_provider body{};
    body.read_callback = read_body;
    // nghttp2 copies the headers; the body is read from the stream as it is sent.
    nghttp2_submit_response(c.session, id, headers.data(), headers.size(),
                            s.response.body.empty() ? nullptr : &body);
  }

  // ---- connections -----------------------------------------------------------
  void accept_all() {
    for (;;) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0)
        return;
      ++*accepted;
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto c = std::make_unique<connection>();
      c->fd = fd;
      c->key = next_key++;
      watch(fd, c->key, EPOLLIN, EPOLL_CTL_ADD);
      auto key = c->key;
      auto& conn = *connections.emplace(key, std::move(c)).first->second;
      conn.ssl = SSL_new(options.tls->context());
      bool alive = conn.ssl && SSL_set_fd(conn.ssl, fd) == 1;
      if (alive) {
        SSL_set_accept_state(conn.ssl);
        alive = handshake(conn);
      }
      if (!alive)
        connections.erase(key);
    }
  }

  // The HTTP/2 session, once the connection carries it: the server's SETTINGS go first.
  bool start_session(connection& c) {
    call u{this, &c};
    if (nghttp2_session_server_new(&c.session, callbacks, &u) != 0)
      return false;
    nghttp2_settings_entry settings[]
      = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, options.max_concurrent_streams}};
    nghttp2_submit_settings(c.session, NGHTTP2_FLAG_NONE, settings, 1);
    return flush(c);
  }

  // Drives the TLS handshake; false when it failed (no "h2" agreed included).
  bool handshake(connection& c) {
    int r = SSL_do_handshake(c.ssl);
    if (r != 1) {
      int e = SSL_get_error(c.ssl, r);
      ERR_clear_error();
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
        return false;
      set_out(c, e == SSL_ERROR_WANT_WRITE);
      return true;
    }
    c.handshaking = false;
    const unsigned char* alpn = nullptr;
    unsigned int alpn_len = 0;
    SSL_get0_alpn_selected(c.ssl, &alpn, &alpn_len);
    if (std::string_view(reinterpret_cast<const char*>(alpn), alpn_len) != "h2")
      return false;
    return start_session(c);
  }

  void set_out(connection& c, bool want_out) {
    if (want_out != c.watching_out) {
      watch(c.fd, c.key, EPOLLIN | (want_out ? EPOLLOUT : 0u), EPOLL_CTL_MOD);
      c.watching_out = want_out;
    }
  }

  // Bytes in and out through TLS: > 0 bytes moved, 0 nothing now (would
  // block), -1 closed or broken.
  static long receive(connection& c, char* buf, std::size_t len) {
    int n = SSL_read(c.ssl, buf, static_cast<int>(len));
    if (n > 0)
      return n;
    int e = SSL_get_error(c.ssl, n);
    ERR_clear_error();
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
  }
  static long transmit(connection& c, const char* data, std::size_t len) {
    int n = SSL_write(c.ssl, data, static_cast<int>(std::min<std::size_t>(len, 1 << 20)));
    if (n > 0)
      return n;
    int e = SSL_get_error(c.ssl, n);
    ERR_clear_error();
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
  }

  // Frames what nghttp2 has to send and writes what the socket takes; false when
  // the connection is finished (closed by either side, or broken).
  bool flush(connection& c) {
    call u{this, &c};
    nghttp2_session_set_user_data(c.session, &u);
    for (;;) {
      const std::uint8_t* data = nullptr;
      auto n = nghttp2_session_mem_send(c.session, &data);
      if (n < 0)
        return false;
      if (n == 0)
        break;
      c.out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
    std::size_t written = 0;
    while (written < c.out.size()) {
      auto n = transmit(c, c.out.data() + written, c.out.size() - written);
      if (n < 0)
        return false;
      if (n == 0)
        break;
      written += static_cast<std::size_t>(n);
    }
    c.out.erase(0, written);
    set_out(c, !c.out.empty());
    return !c.out.empty() || nghttp2_session_want_read(c.session)
      || nghttp2_session_want_write(c.session);
  }

  bool on_readable(connection& c) {
    call u{this, &c};
    nghttp2_session_set_user_data(c.session, &u);
    char buf[16384];
    for (;;) {
      auto n = receive(c, buf, sizeof buf);
      if (n < 0)
        return false;
      if (n == 0)
        return true;
      if (nghttp2_session_mem_recv(c.session, reinterpret_cast<std::uint8_t*>(buf),
                                   static_cast<std::size_t>(n))
          < 0)
        return false;
    }
  }

  void fire_due_timers() {
    auto now = steady::now();
    std::vector<std::uint64_t> touched;
    while (!timers.empty() && timers.top().due <= now) {
      auto d = std::move(const_cast<delayed&>(timers.top()));
      timers.pop();
      auto it = connections.find(d.connection);
      if (it == connections.end())
        continue; // the client went away meanwhile
      respond(*it->second, d.stream_id, std::move(d.response));
      touched.push_back(d.connection);
    }
    for (auto key : touched)
      if (auto it = connections.find(key); it != connections.end() && !flush(*it->second))
        connections.erase(it);
  }

  int wait_ms() const {
    if (timers.empty())
      return -1;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(timers.top().due - steady::now());
    return static_cast<int>(std::clamp<long long>(left.count(), 0, 60000));
  }

  void run() {
    std::vector<epoll_event> events(256);
    while (!stopping) {
      int n = ::epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), wait_ms());
      for (int i = 0; i < n; ++i) {
        auto key = events[i].data.u64;
        if (key == listen_key) {
          accept_all();
          continue;
        }
        if (key == wake_key)
          continue; // stopping
        auto it = connections.find(key);
        if (it == connections.end())
          continue;
        auto& c = *it->second;
        bool alive = (events[i].events & (EPOLLERR | EPOLLHUP)) == 0;
        if (alive && c.handshaking)
          alive = handshake(c);
        else if (alive) {
          // TLS may want to read to write: read on any event.
          alive = on_readable(c);
          if (alive)
            alive = flush(c);
        }
        if (!alive)
          connections.erase(it);
      }
      fire_due_timers();
    }
  }
};

h2_listener::h2_listener(store_id store, emulator_state& state, h2_options options)
  : store_(store), state_(&state), options_(std::move(options)), port_(options_.port) {}

h2_listener::~h2_listener() {
  close();
}

void h2_listener::open() {
  std::lock_guard switching(switch_mutex_);
  if (loop_)
    return;
  auto l = std::make_unique<loop>(store_, *state_, options_, accepted_);
  port_ = l->start(port_); // the same port again after "down"
  loop_ = std::move(l);
  open_ = true;
}

void h2_listener::close() {
  std::lock_guard switching(switch_mutex_);
  open_ = false;
  loop_.reset(); // joins the thread, closes the listening socket and every connection
}

bool h2_listener::is_open() const {
  return open_;
}

} // namespace receiptd::emulator

// receiptd-loadgen: the HTTP load generator of bench/load (see bench/README.md).
//
//   receiptd-loadgen sign --key=PKCS8_B64_FILE --package=P --product=X --count=N
//                         --prefix=S --out=FILE [--threads=2] [--fraud-every=0]
//     Writes N Store B upload bodies, one per line, each with its own purchase
//     token, signed SHA1withRSA over the exact purchase_data string. With
//     --fraud-every=K, every K-th body (index % K == K-1) is made to be fraud (402):
//     alternately another package name (package_name_mismatch) and a signature over
//     other bytes (invalid_signature); its purchase token holds "-fraud-".
//
//   receiptd-loadgen run --port=P --token=BEARER --bodies=FILE|--get=PATH [--host=127.0.0.1]
//                        [--path=/client/store_b/purchase_orders] [--connections=C]
//                        [--duration=SECONDS] [--rate=R] [--skip=K] [--count=N] [--label=TEXT]
//                        [--repeat] [--source=ADDR]
//     Sends each body at most once (--repeat: the bodies again and again, in order,
//     each a re-upload after its first) over C keep-alive connections (from ADDR,
//     e.g. 127.0.0.2: another client network for receiptd's limits), for DURATION
//     seconds, then waits for the answers in flight (up to 15 s). rate=0: closed
//     loop (each connection sends its next request when the answer arrives);
//     rate>0: open loop at R requests/s, latency counted from the scheduled send
//     time (queueing for a free connection included: no coordinated omission).
//     Prints figures and one "RESULT key=value …" line for scripts.
//     --get=PATH_AND_QUERY: instead of --bodies, sends that GET each time (up to
//     --count, or what the rate and duration need; 1,000,000 in a closed loop).
//     --record=FILE: one line per request sent, "INDEX TOKEN STATUS ID AT_MS" (tab
//     separated; INDEX the body's line number from 0, TOKEN its purchaseToken,
//     STATUS the HTTP status, 0 when the connection failed with the request out, -1
//     when unanswered at the end; ID the answer's first "id" or "-"; AT_MS the unix
//     time in ms of the outcome).
//     Connections that fail are reopened (every 50 ms while refused), so a run
//     outlives restarts of the service; SIGTERM/SIGINT stop sending and drain.
//
//   receiptd-loadgen flood --port=P [--host=127.0.0.1] [--path=/metrics] [--connections=16]
//                          [--token=BEARER] [--label=TEXT]
//     GETs PATH in a loop on C keep-alive connections, each request sent as soon as
//     the previous answer is in, until SIGTERM/SIGINT (a scrape flood: no pacing,
//     as an attacker's), one blocking thread per connection (a flood needs no pacing,
//     so no event loop). Prints "RESULT label=… answered=N statuses=…" at the end.
//
// run: one thread, epoll, non-blocking sockets: it needs a fraction of one core at
// 10k requests/s, which matters on a 2-core machine shared with the service.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

std::map<std::string, std::string> parse_args(int argc, char** argv, int from) {
  std::map<std::string, std::string> out;
  for (int i = from; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      std::cerr << "unexpected argument " << a << "\n";
      std::exit(2);
    }
    auto eq = a.find('=');
    if (eq == std::string::npos)
      out[a.substr(2)] = "1";
    else
      out[a.substr(2, eq - 2)] = a.substr(eq + 1);
  }
  return out;
}

std::string arg(const std::map<std::string, std::string>& m, const std::string& k,
                const std::string& def = "") {
  auto it = m.find(k);
  if (it != m.end())
    return it->second;
  if (def.empty()) {
    std::cerr << "missing --" << k << "\n";
    std::exit(2);
  }
  return def;
}

// ---- sign -------------------------------------------------------------------

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string unbase64(std::string text) {
  text.erase(std::remove_if(text.begin(), text.end(),
                            [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
             text.end());
  std::string out(text.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0)
    return {};
  while (!text.empty() && text.back() == '=') { // EVP_DecodeBlock keeps the padding bytes
    text.pop_back();
    --n;
  }
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// purchase_data as the Play Billing client writes it (key order, no spaces), with a
// realistic ~150-character purchase token.
std::string purchase_data(const std::string& package, const std::string& product,
                          const std::string& prefix, std::size_t i, bool fraud) {
  char idx[32];
  std::snprintf(idx, sizeof idx, "%09zu", i);
  std::string token = prefix + "-" + idx + (fraud ? "-fraud-" : "") + ".AO-J1Oz";
  static const char fill[] = "bEnChMaRkToKeNpAdDiNgXyZ0123456789abcdefghijklmnopqrstuvwxyz_";
  for (std::size_t k = 0; token.size() < 150; ++k)
    token.push_back(fill[(i * 7 + k * 13) % (sizeof fill - 1)]);
  char order[40];
  std::snprintf(order, sizeof order, "GPA.3300-%04zu-%04zu-%05zu", (i / 1000000000) % 10000,
                (i / 100000) % 10000, i % 100000);
  return std::string("{\"orderId\":\"") + order + "\",\"packageName\":\"" + package
    + "\",\"productId\":\"" + product
    + "\",\"purchaseTime\":1700000000000,\"purchaseState\":0,\"purchaseToken\":\"" + token
    + "\",\"quantity\":1,\"acknowledged\":false}";
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

int sign_main(const std::map<std::string, std::string>& a) {
  std::ifstream kf(arg(a, "key"));
  std::stringstream ks;
  ks << kf.rdbuf();
  auto der = unbase64(ks.str());
  auto p = reinterpret_cast<const unsigned char*>(der.data());
  EVP_PKEY* key = d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(der.size()));
  if (!key) {
    std::cerr << "cannot read the private key\n";
    return 1;
  }
  auto package = arg(a, "package"), product = arg(a, "product"), prefix = arg(a, "prefix");
  std::size_t count = std::stoull(arg(a, "count"));
  unsigned threads = static_cast<unsigned>(std::stoul(arg(a, "threads", "2")));
  std::size_t fraud_every = std::stoull(arg(a, "fraud-every", "0"));
  std::vector<std::string> lines(count);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      EVP_MD_CTX* ctx = EVP_MD_CTX_new();
      for (std::size_t i = t; i < count; i += threads) {
        bool fraud = fraud_every > 0 && i % fraud_every == fraud_every - 1;
        bool other_package = fraud && (i / fraud_every) % 2 == 0;
        auto data
          = purchase_data(other_package ? package + ".other" : package, product, prefix, i, fraud);
        // A bad signature: a valid one, but over other bytes.
        auto signed_bytes = fraud && !other_package ? data + " " : data;
        std::size_t len = 0;
        EVP_DigestSignInit(ctx, nullptr, EVP_sha1(), nullptr, key);
        EVP_DigestSign(ctx, nullptr, &len,
                       reinterpret_cast<const unsigned char*>(signed_bytes.data()),
                       signed_bytes.size());
        std::string sig(len, '\0');
        EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                       reinterpret_cast<const unsigned char*>(signed_bytes.data()),
                       signed_bytes.size());
        sig.resize(len);
        lines[i] = "{\"purchase_data\":\"" + json_escape(data) + "\",\"purchase_signature\":\""
          + base64(sig) + "\"}";
        EVP_MD_CTX_reset(ctx);
      }
      EVP_MD_CTX_free(ctx);
    });
  for (auto& th : pool)
    th.join();
  auto out_path = arg(a, "out");
  std::ofstream out(out_path + ".tmp", std::ios::binary);
  for (auto& l : lines)
    out << l << '\n';
  out.close();
  if (!out || std::rename((out_path + ".tmp").c_str(), out_path.c_str()) != 0) {
    std::cerr << "cannot write " << out_path << "\n";
    return 1;
  }
  EVP_PKEY_free(key);
  return 0;
}

// ---- run --------------------------------------------------------------------

struct conn {
  int fd = -1;
  bool connected = false;
  bool busy = false; // a request is out
  std::string out;   // request bytes not yet written
  std::size_t out_off = 0;
  std::string in;                 // response bytes read so far
  clock_type::time_point sent_at; // scheduled (open loop) or actual (closed loop) send time
  std::size_t request = 0;        // index of the request out
};

struct stats {
  std::vector<std::uint32_t> latency_us; // answered requests
  std::map<int, std::uint64_t> status;
  std::map<int, std::string> sample_body; // first body per non-2xx status
  std::uint64_t answered_in_window = 0;
  std::uint64_t io_errors = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t connect_failures = 0;        // connects refused or failed (the service away)
  std::uint64_t unavailable_retry_after = 0; // 503 answers with a Retry-After header
};

volatile std::sig_atomic_t stop_requested = 0;

// The purchaseToken of a body (inside the purchase_data string, so its quotes are escaped).
std::string token_of(const std::string& body) {
  static const std::string key = "purchaseToken\\\":\\\"";
  auto at = body.find(key);
  if (at == std::string::npos)
    return "-";
  at += key.size();
  auto end = body.find('\\', at);
  return end == std::string::npos ? "-" : body.substr(at, end - at);
}

// The first "id" of an answer: the record's (a 402 names it in its stored record).
std::string id_of(const std::string& body) {
  static const std::string key = "\"id\":\"";
  auto at = body.find(key);
  if (at == std::string::npos)
    return "-";
  at += key.size();
  auto end = body.find('"', at);
  return end == std::string::npos ? "-" : body.substr(at, end - at);
}

bool parse_response(std::string& in, int& status, std::string& body, bool& close_after,
                    bool& retry_after) {
  auto end = in.find("\r\n\r\n");
  if (end == std::string::npos)
    return false;
  if (in.size() < 12)
    return false;
  status = std::atoi(in.c_str() + 9);
  std::size_t content_length = 0;
  close_after = false;
  retry_after = false;
  std::size_t pos = in.find("\r\n");
  while (pos < end) {
    auto next = in.find("\r\n", pos + 2);
    std::string line = in.substr(pos + 2, next - pos - 2);
    std::string lower = line;
    for (auto& c : lower)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.rfind("content-length:", 0) == 0)
      content_length = std::strtoull(line.c_str() + 15, nullptr, 10);
    else if (lower.rfind("connection:", 0) == 0 && lower.find("close") != std::string::npos)
      close_after = true;
    else if (lower.rfind("retry-after:", 0) == 0)
      retry_after = true;
    pos = next;
  }
  if (in.size() < end + 4 + content_length)
    return false;
  body = in.substr(end + 4, content_length);
  in.erase(0, end + 4 + content_length);
  return true;
}

int run_main(const std::map<std::string, std::string>& a) {
  auto host = arg(a, "host", "127.0.0.1");
  int port = std::stoi(arg(a, "port"));
  auto token = arg(a, "token");
  auto path = arg(a, "path", "/client/store_b/purchase_orders");
  std::size_t connections = std::stoul(arg(a, "connections", "256"));
  double duration = std::stod(arg(a, "duration", "30"));
  double rate = std::stod(arg(a, "rate", "0"));
  std::size_t skip = std::stoull(arg(a, "skip", "0"));
  std::size_t limit = std::stoull(arg(a, "count", "0")); // 0: every body left
  if (limit == 0 && rate > 0) // open loop: no more than the schedule can send
    limit = static_cast<std::size_t>(rate * duration) + 16;
  auto label = arg(a, "label", "load");
  bool repeat = arg(a, "repeat", "0") == "1";
  auto record_path = arg(a, "record", "-");
  std::FILE* record = nullptr;
  if (record_path != "-") {
    record = std::fopen(record_path.c_str(), "w");
    if (!record) {
      std::cerr << "cannot write " << record_path << "\n";
      return 1;
    }
  }
  std::signal(SIGTERM, [](int) { stop_requested = 1; });
  std::signal(SIGINT, [](int) { stop_requested = 1; });

  // Bodies, each sent at most once; or, with --get, the same GET each time.
  std::vector<std::string> requests;
  std::vector<std::string> tokens; // with --record
  std::string get_request;         // with --get: every request
  std::size_t total = 0;           // requests to send at most
  if (auto get = arg(a, "get", "-"); get != "-") {
    total = limit ? limit : 1'000'000; // closed loop: until the duration ends
    get_request = "GET " + get + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port)
      + "\r\nAuthorization: Bearer " + token + "\r\n\r\n";
    if (record)
      tokens.assign(total, "-");
  } else {
    std::ifstream in(arg(a, "bodies"));
    std::string line;
    std::size_t n = 0;
    std::string head = "POST " + path + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port)
      + "\r\nAuthorization: Bearer " + token
      + "\r\nContent-Type: application/json\r\nConnection: keep-alive"
        "\r\nContent-Length: ";
    while (std::getline(in, line)) {
      if (n++ < skip)
        continue;
      if (limit && requests.size() >= limit)
        break;
      if (record)
        tokens.push_back(token_of(line));
      requests.push_back(head + std::to_string(line.size()) + "\r\n\r\n" + line);
    }
  }
  if (get_request.empty())
    total = requests.size();
  if (total == 0) {
    std::cerr << "no bodies left (skip " << skip << ")\n";
    return 1;
  }
  // How many requests may go out: each body once (or without end), or the GETs asked.
  const std::size_t sendable = repeat && get_request.empty() ? SIZE_MAX : total;

  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);

  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  auto source_text = arg(a, "source", "-");
  sockaddr_in source{};
  source.sin_family = AF_INET;
  bool bind_source
    = source_text != "-" && inet_pton(AF_INET, source_text.c_str(), &source.sin_addr) == 1;

  int ep = epoll_create1(0);
  std::vector<conn> conns(connections);
  std::vector<std::size_t> idle; // connected, no request out
  stats st;
  st.latency_us.reserve(std::min<std::size_t>(total, 1'000'000));
  std::size_t next_request = 0;
  std::size_t in_flight = 0;
  std::size_t connecting = 0;

  auto open_conn = [&](std::size_t i) {
    auto& c = conns[i];
    c = conn{};
    c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (bind_source)
      bind(c.fd, reinterpret_cast<sockaddr*>(&source), sizeof source);
    int r = connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (r != 0 && errno != EINPROGRESS) {
      ++st.connect_failures;
      close(c.fd);
      c.fd = -1;
      return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP;
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
    ++connecting;
  };

  auto want_write = [&](std::size_t i, bool on) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0u);
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_MOD, conns[i].fd, &ev);
  };

  auto flush = [&](std::size_t i) -> bool {
    auto& c = conns[i];
    while (c.out_off < c.out.size()) {
      auto n = ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN) {
          want_write(i, true);
          return true;
        }
        return false;
      }
      c.out_off += static_cast<std::size_t>(n);
    }
    c.out.clear();
    c.out_off = 0;
    want_write(i, false);
    return true;
  };

  auto start = clock_type::now();
  auto window_end = start;
  bool sending = true;

  auto record_line = [&](std::size_t request, int status, const std::string& id) {
    if (record)
      std::fprintf(record, "%zu\t%s\t%d\t%s\t%lld\n", skip + request % tokens.size(),
                   tokens[request % tokens.size()].c_str(), status, id.c_str(),
                   static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count()));
  };

  auto send_on = [&](std::size_t i, clock_type::time_point stamp) {
    auto& c = conns[i];
    c.request = next_request;
    c.out = !get_request.empty() ? get_request
      : repeat                    ? requests[next_request % requests.size()]
                                  : std::move(requests[next_request]);
    ++next_request;
    c.out_off = 0;
    c.busy = true;
    c.sent_at = stamp;
    ++in_flight;
    return flush(i);
  };

  std::vector<clock_type::time_point> backlog; // open loop: scheduled, no connection free yet
  std::size_t backlog_head = 0;
  std::uint64_t scheduled = 0;

  auto fail_conn = [&](std::size_t i) {
    auto& c = conns[i];
    if (c.busy) {
      ++st.io_errors;
      --in_flight;
      record_line(c.request, 0, "-");
    }
    const bool was_connected = c.connected;
    if (!was_connected)
      ++st.connect_failures;
    epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
    close(c.fd);
    if (!was_connected)
      --connecting;
    c.fd = -1;
    c.busy = false;
    c.connected = false;
    ++st.reconnects;
    // An idle connection that fails must leave the idle list: once reconnected it is
    // listed again, and listed twice it would get two requests out at once (pipelined,
    // each answer then counted for the other).
    idle.erase(std::remove(idle.begin(), idle.end(), i), idle.end());
    if (sending && was_connected) // a refused connect is tried again by the revive loop
      open_conn(i);
  };

  auto dispatch_idle = [&](std::size_t i) {
    // A free connection: closed loop sends at once; open loop takes the backlog.
    if (!sending || next_request >= sendable)
      return;
    if (rate <= 0) {
      if (!send_on(i, clock_type::now()))
        fail_conn(i);
    } else if (backlog_head < backlog.size()) {
      if (!send_on(i, backlog[backlog_head++]))
        fail_conn(i);
    } else {
      idle.push_back(i);
    }
  };

  // Connect everything first; the clock starts when all are up.
  for (std::size_t i = 0; i < connections; ++i)
    open_conn(i);
  std::vector<epoll_event> events(1024);
  auto connect_deadline = clock_type::now() + std::chrono::seconds(20);
  std::vector<std::size_t> ready;
  while (connecting > 0 && clock_type::now() < connect_deadline) {
    int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 100);
    for (int k = 0; k < n; ++k) {
      auto i = static_cast<std::size_t>(events[k].data.u64);
      auto& c = conns[i];
      if (c.connected || c.fd < 0)
        continue;
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0 || (events[k].events & (EPOLLERR | EPOLLHUP))) {
        fail_conn(i);
        continue;
      }
      c.connected = true;
      --connecting;
      want_write(i, false);
      ready.push_back(i);
    }
  }
  if (connecting > 0)
    std::cerr << label << ": " << connecting << " connections still connecting after 20 s\n";

  start = clock_type::now();
  window_end = start + std::chrono::microseconds(static_cast<std::int64_t>(duration * 1e6));
  for (auto i : ready)
    dispatch_idle(i);

  auto drain_deadline = window_end + std::chrono::seconds(15);
  auto next_revive = clock_type::now();
  std::string body;
  char buf[65536];
  for (;;) {
    auto now = clock_type::now();
    if (stop_requested && sending) {
      window_end = std::min(window_end, now);
      drain_deadline = now + std::chrono::seconds(15);
    }
    // Connections whose connect was refused (the service away) are tried again.
    if (sending && now >= next_revive) {
      next_revive = now + std::chrono::milliseconds(50);
      for (std::size_t i = 0; i < conns.size(); ++i)
        if (conns[i].fd < 0)
          open_conn(i);
    }
    if (sending
        && (now >= window_end || (next_request >= sendable && backlog_head >= backlog.size()))) {
      sending = false;
      window_end = std::min(window_end, now);
    }
    if (!sending && in_flight == 0)
      break;
    if (now >= drain_deadline)
      break;
    // Open loop: schedule what is due.
    if (sending && rate > 0) {
      auto due
        = static_cast<std::uint64_t>(std::chrono::duration<double>(now - start).count() * rate) + 1;
      while (scheduled < due && next_request + (backlog.size() - backlog_head) < sendable) {
        auto at
          = start + std::chrono::nanoseconds(static_cast<std::int64_t>(scheduled * 1e9 / rate));
        ++scheduled;
        if (!idle.empty()) {
          auto i = idle.back();
          idle.pop_back();
          if (!send_on(i, at))
            fail_conn(i);
        } else {
          backlog.push_back(at);
        }
      }
    }
    // Sleep until the next scheduled send (open loop) with nanosecond precision:
    // a millisecond timeout would either spin (rounded down) or send late (rounded up).
    std::int64_t timeout_ns = 100'000'000;
    if (sending && rate > 0) {
      auto next_at
        = start + std::chrono::nanoseconds(static_cast<std::int64_t>(scheduled * 1e9 / rate));
      timeout_ns = std::clamp<std::int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(next_at - now).count(), 0, timeout_ns);
    }
    timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000),
                static_cast<long>(timeout_ns % 1'000'000'000)};
    int n = epoll_pwait2(ep, events.data(), static_cast<int>(events.size()), &ts, nullptr);
    for (int k = 0; k < n; ++k) {
      auto i = static_cast<std::size_t>(events[k].data.u64);
      auto& c = conns[i];
      if (c.fd < 0)
        continue;
      if (!c.connected) { // a reconnect finishing
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0 || (events[k].events & (EPOLLERR | EPOLLHUP))) {
          fail_conn(i);
          continue;
        }
        c.connected = true;
        --connecting;
        want_write(i, false);
        dispatch_idle(i);
        continue;
      }
      if ((events[k].events & EPOLLOUT) && !c.out.empty() && !flush(i)) {
        fail_conn(i);
        continue;
      }
      if (!(events[k].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
        continue;
      bool closed = false;
      for (;;) {
        auto r = ::recv(c.fd, buf, sizeof buf, 0);
        if (r > 0) {
          c.in.append(buf, static_cast<std::size_t>(r));
          continue;
        }
        if (r == 0 || errno != EAGAIN)
          closed = true;
        break;
      }
      int status = 0;
      bool close_after = false;
      bool retry_after = false;
      bool answered = false;
      if (c.busy && parse_response(c.in, status, body, close_after, retry_after)) {
        auto done = clock_type::now();
        st.latency_us.push_back(static_cast<std::uint32_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(done - c.sent_at).count()));
        ++st.status[status];
        if (status == 503 && retry_after)
          ++st.unavailable_retry_after;
        if ((status < 200 || status > 299) && !st.sample_body.count(status))
          st.sample_body[status] = body.substr(0, 300);
        if (done <= window_end)
          ++st.answered_in_window;
        record_line(c.request, status, id_of(body));
        c.busy = false;
        --in_flight;
        answered = true;
      }
      if (closed || close_after) {
        fail_conn(i);
        continue;
      }
      if (answered)
        dispatch_idle(i);
    }
  }
  auto elapsed
    = std::chrono::duration<double>(std::min(clock_type::now(), window_end) - start).count();

  std::uint64_t unanswered = in_flight + (backlog.size() - backlog_head);
  if (record) {
    for (auto& c : conns)
      if (c.fd >= 0 && c.busy)
        record_line(c.request, -1, "-");
    std::fclose(record);
  }
  auto& lat = st.latency_us;
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double q) -> double {
    if (lat.empty())
      return 0;
    auto idx = static_cast<std::size_t>(q * static_cast<double>(lat.size() - 1) + 0.5);
    return lat[idx] / 1000.0;
  };
  std::uint64_t ok2xx = 0;
  std::ostringstream statuses;
  for (auto& [code, count] : st.status) {
    if (code >= 200 && code <= 299)
      ok2xx += count;
    statuses << (statuses.tellp() > 0 ? "," : "") << code << ":" << count;
  }
  double throughput = elapsed > 0 ? static_cast<double>(st.answered_in_window) / elapsed : 0;
  std::printf("%s: %zu connections, %.1f s, %s\n", label.c_str(), connections, elapsed,
              rate > 0
                ? ("open loop at " + std::to_string(static_cast<long>(rate)) + " req/s").c_str()
                : "closed loop");
  std::printf("  answered %zu (in window %llu), %.0f/s; 2xx %llu; statuses %s\n", lat.size(),
              static_cast<unsigned long long>(st.answered_in_window), throughput,
              static_cast<unsigned long long>(ok2xx), statuses.str().c_str());
  std::printf("  latency ms: p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n", pct(0.5),
              pct(0.9), pct(0.99), pct(0.999), lat.empty() ? 0.0 : lat.back() / 1000.0);
  if (st.io_errors || st.reconnects || unanswered || st.connect_failures)
    std::printf("  connection errors %llu, reconnects %llu, connects refused %llu, unanswered at "
                "the end %llu\n",
                static_cast<unsigned long long>(st.io_errors),
                static_cast<unsigned long long>(st.reconnects),
                static_cast<unsigned long long>(st.connect_failures),
                static_cast<unsigned long long>(unanswered));
  if (next_request >= sendable && !arg(a, "count", "0").compare("0") && rate <= 0)
    std::printf(
      "  NOTE: every pre-generated body was used: the load was limited by the body pool\n");
  for (auto& [code, b] : st.sample_body)
    std::printf("  sample %d body: %s\n", code, b.c_str());
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double self_cpu_us
    = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
  std::printf("  load generator CPU %.0f µs per answered request\n",
              lat.empty() ? 0.0 : self_cpu_us / static_cast<double>(lat.size()));
  std::printf("RESULT label=%s answered=%zu in_window=%llu ok2xx=%llu rps=%.1f p50_ms=%.2f "
              "p90_ms=%.2f p99_ms=%.2f max_ms=%.2f used=%zu errors=%llu unanswered=%llu "
              "statuses=%s elapsed_s=%.2f loadgen_cpu_us=%.0f connect_failures=%llu "
              "retry_after_503=%llu\n",
              label.c_str(), lat.size(), static_cast<unsigned long long>(st.answered_in_window),
              static_cast<unsigned long long>(ok2xx), throughput, pct(0.5), pct(0.9), pct(0.99),
              lat.empty() ? 0.0 : lat.back() / 1000.0, next_request,
              static_cast<unsigned long long>(st.io_errors),
              static_cast<unsigned long long>(unanswered), statuses.str().c_str(), elapsed,
              lat.empty() ? 0.0 : self_cpu_us / static_cast<double>(lat.size()),
              static_cast<unsigned long long>(st.connect_failures),
              static_cast<unsigned long long>(st.unavailable_retry_after));
  std::fflush(stdout);
  for (auto& c : conns)
    if (c.fd >= 0)
      close(c.fd);
  close(ep);
  return 0;
}

// ---- flood ------------------------------------------------------------------

int flood_main(const std::map<std::string, std::string>& a) {
  auto host = arg(a, "host", "127.0.0.1");
  int port = std::stoi(arg(a, "port"));
  auto path = arg(a, "path", "/metrics");
  std::size_t connections = std::stoul(arg(a, "connections", "16"));
  auto token = arg(a, "token", "-");
  auto label = arg(a, "label", "flood");
  std::signal(SIGTERM, [](int) { stop_requested = 1; });
  std::signal(SIGINT, [](int) { stop_requested = 1; });
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port)
    + (token == "-" ? std::string() : "\r\nAuthorization: Bearer " + token) + "\r\n\r\n";
  std::mutex mutex; // guards statuses
  std::map<int, std::uint64_t> statuses;
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < connections; ++c)
    threads.emplace_back([&] {
      std::map<int, std::uint64_t> mine;
      while (!stop_requested) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
        timeval tv{1, 0}; // so that a stop is seen within a second
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
          ::close(fd);
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          continue;
        }
        std::string in;
        char buf[65536];
        bool open = true;
        while (open && !stop_requested) {
          if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL)
              != static_cast<ssize_t>(request.size()))
            break;
          int status = 0;
          std::string body;
          bool close_after = false, retry_after = false;
          while (!stop_requested && !parse_response(in, status, body, close_after, retry_after)) {
            auto n = ::recv(fd, buf, sizeof buf, 0);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
              open = false;
              break;
            }
            if (n > 0)
              in.append(buf, static_cast<std::size_t>(n));
          }
          if (status)
            ++mine[status];
          if (close_after)
            open = false;
        }
        ::close(fd);
      }
      std::lock_guard lock(mutex);
      for (auto [status, n] : mine)
        statuses[status] += n;
    });
  for (auto& t : threads)
    t.join();
  std::uint64_t answered = 0;
  std::string text;
  for (auto [status, n] : statuses) {
    answered += n;
    text += (text.empty() ? "" : ",") + std::to_string(status) + ":" + std::to_string(n);
  }
  std::cout << "RESULT label=" << label << " answered=" << answered
            << " statuses=" << (text.empty() ? "none" : text) << std::endl;
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: receiptd-loadgen sign|run|flood --option=value …\n";
    return 2;
  }
  std::string cmd = argv[1];
  auto a = parse_args(argc, argv, 2);
  if (cmd == "sign")
    return sign_main(a);
  if (cmd == "run")
    return run_main(a);
  if (cmd == "flood")
    return flood_main(a);
  std::cerr << "unknown command " << cmd << "\n";
  return 2;
}

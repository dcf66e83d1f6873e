// receiptd-emulator: both stores' server protocols on loopback for the
// functional tests, scripts/demo and the benchmarks (PROTOCOL.md).

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <curl/curl.h>

#include "control.hpp"
#include "delay.hpp"
#include "h2_listener.hpp"
#include "listener.hpp"
#include "state.hpp"
#include "store_handler.hpp"
#include "tests/support/crypto/test_jws.hpp"
#include "webhook_receiver.hpp"

namespace {

using namespace receiptd::emulator;

constexpr std::string_view usage
  = "usage: receiptd-emulator [--host=127.0.0.1] [--control-port=0] [--store-a-port=0]\n"
    "                         [--store-b-port=0] [--ready-file=PATH] [--threads=2]\n"
    "                         [--max-request-bytes=16777216]\n"
    "                         [--store-a-h2-port=0] [--store-b-h2-port=0]\n"
    "                         [--server-api-pki=FILE]\n"
    "Port 0 picks a free port. Prints {\"control\":P,\"store_a\":P,\"store_b\":P,\n"
    "\"store_a_h2\":P,\"store_b_h2\":P} once listening (also written to --ready-file).\n"
    "Each store speaks HTTP/1.1 on its port and HTTP/2 over TLS on its _h2 port\n"
    "(certificate: GET /control/tls/certificate). Stops on SIGINT/SIGTERM. See PROTOCOL.md.\n";

struct options {
  std::string host = "127.0.0.1";
  std::uint16_t control_port = 0;
  std::uint16_t store_a_port = 0;
  std::uint16_t store_b_port = 0;
  std::uint16_t store_a_h2_port = 0;
  std::uint16_t store_b_h2_port = 0;
  std::string ready_file;
  int threads = 2;
  std::size_t max_request_bytes = 16 * 1024 * 1024; // larger requests get 413
  std::string server_api_pki; // PEM file (leaf, its key, intermediate, root); empty: made here
};

std::optional<long> parse_number(const std::string& text, long min, long max) {
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || n < min || n > max)
    return std::nullopt;
  return n;
}

// --name=value or --name value; exits with a message on anything else.
options parse_options(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      std::exit(0);
    }
    std::string name = arg, value;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    }
    auto port = [&](std::uint16_t& out) {
      auto n = parse_number(value, 0, 65535);
      if (!n) {
        std::cerr << "receiptd-emulator: " << name << " must be a port (0-65535)\n";
        std::exit(2);
      }
      out = static_cast<std::uint16_t>(*n);
    };
    if (name == "--host" && !value.empty())
      o.host = value;
    else if (name == "--control-port")
      port(o.control_port);
    else if (name == "--store-a-port")
      port(o.store_a_port);
    else if (name == "--store-b-port")
      port(o.store_b_port);
    else if (name == "--store-a-h2-port")
      port(o.store_a_h2_port);
    else if (name == "--store-b-h2-port")
      port(o.store_b_h2_port);
    else if (name == "--ready-file" && !value.empty())
      o.ready_file = value;
    else if (name == "--server-api-pki" && !value.empty())
      o.server_api_pki = value;
    else if (name == "--threads") {
      auto n = parse_number(value, 1, 64);
      if (!n) {
        std::cerr << "receiptd-emulator: --threads must be 1-64\n";
        std::exit(2);
      }
      o.threads = static_cast<int>(*n);
    } else if (name == "--max-request-bytes") {
      auto n = parse_number(value, 4096, 1L << 30);
      if (!n) {
        std::cerr << "receiptd-emulator: --max-request-bytes must be 4096-1073741824\n";
        std::exit(2);
      }
      o.max_request_bytes = static_cast<std::size_t>(*n);
    } else {
      std::cerr << "receiptd-emulator: unknown option " << arg << "\n" << usage;
      std::exit(2);
    }
  }
  return o;
}

// write + rename: a reader polling for the file never sees half a line.
bool write_ready_file(const std::string& path, const std::string& line) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << line << '\n';
    out.flush();
    if (!out)
      return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

// 2000 concurrent benchmark connections need more than the usual 1024 fds.
void raise_fd_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

} // namespace

int main(int argc, char** argv) {
  const auto opts = parse_options(argc, argv);
  curl_global_init(CURL_GLOBAL_DEFAULT); // before any thread: notifications are sent with curl

  // Before any thread starts: SIGINT/SIGTERM are taken by sigwait below only,
  // and a client closing early must not kill us with SIGPIPE.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  raise_fd_limit();

  // A benchmark signs its uploads once and keeps them: the emulator must then sign
  // with the same chain, given in a file (test_support::jws_pki_pem's format).
  std::unique_ptr<emulator_state> state_holder;
  if (opts.server_api_pki.empty()) {
    state_holder = std::make_unique<emulator_state>();
  } else {
    std::ifstream in(opts.server_api_pki, std::ios::binary);
    std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      state_holder = std::make_unique<emulator_state>(receiptd::test_support::load_jws_pki(pem));
    } catch (const std::exception& e) {
      std::cerr << "receiptd-emulator: --server-api-pki=" << opts.server_api_pki << ": "
                << e.what() << "\n";
      return 2;
    }
  }
  emulator_state& state = *state_holder;
  store_listener store_a({opts.host, opts.store_a_port, opts.threads, opts.max_request_bytes});
  store_listener store_b({opts.host, opts.store_b_port, opts.threads, opts.max_request_bytes});
  tls_identity tls;
  h2_listener store_a_h2(store_id::store_a, state,
                         {.host = opts.host,
                          .port = opts.store_a_h2_port,
                          .max_request_size = opts.max_request_bytes,
                          .tls = &tls});
  h2_listener store_b_h2(store_id::store_b, state,
                         {.host = opts.host,
                          .port = opts.store_b_h2_port,
                          .max_request_size = opts.max_request_bytes,
                          .tls = &tls});

  store_listener control({opts.host, opts.control_port, 1, opts.max_request_bytes});
  auto delays = std::make_unique<delay_queue>();
  control_context context;
  context.state = &state;
  context.listeners = {&store_a, &store_b};
  context.h2 = {&store_a_h2, &store_b_h2};
  context.tls_certificate_pem = tls.certificate_pem();
  store_a.set_handler(
    Pistache::Http::make_handler<store_handler>(store_id::store_a, state, *delays, store_a));
  store_b.set_handler(
    Pistache::Http::make_handler<store_handler>(store_id::store_b, state, *delays, store_b));
  // The webhook receiver shares the control port (PROTOCOL.md "Webhook receiver").
  webhook_receiver webhooks(control);
  control.set_handler(Pistache::Http::make_handler<control_port_handler>(context, webhooks));

  try {
    store_a.open();
    store_b.open();
    store_a_h2.open();
    store_b_h2.open();
    control.open();
  } catch (const std::exception& e) {
    std::cerr << "receiptd-emulator: cannot listen on " << opts.host << ": " << e.what() << "\n";
    return 1;
  }

  const std::string ready = "{\"control\":" + std::to_string(control.port()) + ",\"store_a\":"
    + std::to_string(store_a.port()) + ",\"store_b\":" + std::to_string(store_b.port())
    + ",\"store_a_h2\":" + std::to_string(store_a_h2.port())
    + ",\"store_b_h2\":" + std::to_string(store_b_h2.port()) + "}";
  if (!opts.ready_file.empty() && !write_ready_file(opts.ready_file, ready)) {
    std::cerr << "receiptd-emulator: cannot write " << opts.ready_file << "\n";
    return 1;
  }
  std::cout << ready << std::endl;

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);

  // Stop accepting and join the reactors first (they schedule into the delay
  // queue), then drop the pending slow responses, then the control listener.
  store_a.close();
  store_b.close();
  store_a_h2.close();
  store_b_h2.close();
  delays.reset();
  control.close();
  return 0;
}

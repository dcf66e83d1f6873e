#include "http/server.hpp"

#include <pistache/endpoint.h>
#include <pistache/http.h>
#include <pistache/peer.h>
#include <pistache/transport.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "http/request_framing.hpp"
#include "http/request_rules.hpp"
#include "model/client_address.hpp"

namespace receiptd::http {

namespace ph = Pistache::Http;
using steady_clock = std::chrono::steady_clock;

namespace {
struct connection_state;
}

struct server::shared_state {
  config::http_settings settings;
  model::trusted_proxies proxies; // settings.trusted_proxies, parsed
  dispatch_fn dispatch;
  turn_hook* turns = nullptr; // each reactor's handling of a client's input is a turn
  // The body budget and the credentials known: the caller's, or the server's own
  // (unbounded, knowing none) when it gave none.
  const admission* gate = nullptr;
  std::unique_ptr<body_budget> own_budget;
  std::unique_ptr<credential_view> own_credentials;
  std::unique_ptr<client_rates> own_clients;
  std::unique_ptr<admission> own_gate;
  std::atomic<bool> draining{false};
  std::atomic<std::size_t> in_flight{0};
  std::atomic<std::size_t> connections{0};
  // Every connection, for the timeout sweep (sweep_connections), which runs on a
  // thread of its own from start() to stop().
  std::mutex open_mutex;
  std::vector<std::weak_ptr<connection_state>> open;
  std::jthread sweeper;
};

namespace {

class api_handler;

// The header fields Pistache's parser gets (request_framer's filter). It parses
// the ones in its registry into typed forms, and those parsers throw on a
// malformed value (Date, Cache-Control, Accept, Host, Content-Type, …; Cookie
// and Set-Cookie apart), which Pistache answers 500 with the exception's text.
// Of those, receiptd reads Authorization only (Content-Length is the framer's own);
// the others never reach the parser. Fields outside the registry stay raw
// (X-Request-Id).
bool parser_reads(std::string_view name) {
  auto is = [&](std::string_view other) {
    return name.size() == other.size()
      && std::equal(name.begin(), name.end(), other.begin(),
                    [](char a, char b) { return (a | 0x20) == (b | 0x20); });
  };
  if (is("authorization"))
    return true;
  if (is("cookie") || is("set-cookie"))
    return false;
  return !Pistache::Http::Header::Registry::instance().isRegistered(std::string(name));
}

// One client connection. Its requests reach Pistache one at a time, in order:
// while one is being answered, what the client sends next (a pipelined request)
// waits in `held` and is parsed once that answer has been written. Answers thus
// leave in request order (RFC 9112 §9.3.2), and Pistache's parser, which drops
// whatever follows a complete request in the same read, never sees two at once.
// The connection stays open after an answer unless the request said otherwise
// (request_framer::keep_alive) or the service is draining.
//
// Answers are written to the socket by the thread that has them (answer()), not
// handed to the reactor: Pistache 0.0.5 queues every write to its reactor thread
// (an eventfd write and read, a wake-up, three epoll_ctl and a second epoll_wait
// per response). Only what the socket does not take at once goes through Pistache.
struct connection_state {
  connection_state() = default;
  connection_state(const connection_state&) = delete;
  connection_state& operator=(const connection_state&) = delete;
  ~connection_state() {
    if (fd >= 0)
      ::close(fd);
  }

  // Taken by the reactor thread (input) and by whichever thread answers; recursive:
  // an answer written at once lets the next pipelined request be parsed on the spot.
  std::recursive_mutex mutex;
  api_handler* http = nullptr;                   // the transport's handler, which parses
  Pistache::Tcp::Transport* transport = nullptr; // writes what the socket did not take
  std::weak_ptr<Pistache::Tcp::Peer> peer;
  // Our own descriptor of the socket (dup): Pistache closes its own when it drops
  // the peer, and the kernel may give that number to the next client at once; an
  // answer written here can only ever reach this connection.
  int fd = -1;
  request_framer framer; // made with the service's body limit (api_handler::onConnection)
  // The body of the request being received (framed by Content-Length), handed to
  // the parser whole once it is in: Pistache's parser would hold it about three
  // times over (its buffer grows by doubling, and the body is copied out of it).
  std::string body;
  ticket_ptr ticket;             // that request's share of the body budget
  std::uint64_t request_seq = 0; // requests whose header block was seen
  bool receiving = false;        // the body of request `request_seq` is arriving
  bool rated = false;            // its client's upload rate has been judged (judge)
  std::string held;              // received while busy
  ticket_ptr held_ticket;        // `held`'s share of the budget (as unverified)
  std::string unsent;            // what the socket did not take of the answer (flush_unsent)
  connection_option option = connection_option::none; // of the answer being written
  bool busy = false;                                  // a request is being answered
  bool feeding = false;                               // feed() is running
  bool closing = false;                               // the answer being written is the last one
  bool refused = false;                               // nothing more is read from it
  bool gone = false; // Pistache dropped the peer (after a disconnection)
  // Its clock (sweep_connections): when the request now on it began (the connection
  // opened, or the previous answer was written), or, while one is answered, when it
  // was handed on.
  steady_clock::time_point since = steady_clock::now();
  bool awaited = false;    // bytes of the next request have arrived since `since`
  bool kept_alive = false; // an answer has been written on it
  bool replied = false;    // the answer being written has begun (answer())
  bool timed_out = false;  // closed by the sweep
};
using connection_ptr = std::shared_ptr<connection_state>;

constexpr const char* connection_key = "receiptd.connection";

// A resource route's query parameters handed on (environment, cursor, limit):
// more are ignored.
constexpr std::size_t max_query_parameters = 8;

connection_ptr connection_of(const Pistache::Tcp::Peer& peer) {
  return std::static_pointer_cast<connection_state>(peer.tryGetData(connection_key));
}

// Called once an answer has been written (or could not be): the next request on
// the connection may be parsed, or the connection ends.
void answered(const connection_ptr& c);

// Hands what the socket did not take of an answer to Pistache's reactor, which
// writes it as the socket drains. Called without the connection's lock, by each
// entry point once it has let go of it (connection_reply::send, early_gate::onInput,
// the write's own continuation): Pistache runs a promise's continuation holding the
// promise's mutex, and the continuation takes the connection's lock, so the
// continuation must never be attached while the connection's lock is held.
void flush_unsent(const connection_ptr& c) {
  std::string rest;
  std::shared_ptr<Pistache::Tcp::Peer> peer;
  {
    std::lock_guard lock(c->mutex);
    if (c->unsent.empty())
      return;
    rest = std::exchange(c->unsent, {});
    peer = c->peer.lock();
    if (c->gone || !peer)
      return answered(c);
  }
  auto size = rest.size();
  c->transport->asyncWrite(peer->fd(), Pistache::RawBuffer(std::move(rest), size))
    .then(
      [c](ssize_t) {
        answered(c);
        flush_unsent(c);
      },
      [c](std::exception_ptr&) {
        answered(c);
        flush_unsent(c);
      });
}

// Writes the answer to the request being answered on `c`, from any thread. What
// the socket does not take at once waits in `unsent` for flush_unsent().
void answer(const connection_ptr& c, const reply& r, const std::string& trace_id,
            bool head = false) {
  std::lock_guard lock(c->mutex);
  if (c->timed_out)
    return answered(c); // it had its 408 (sweep), and the connection is shut down
  auto peer = c->peer.lock();
  if (c->gone || !peer) {
    // Pistache drops a peer at the end of its input: a client that ended its side
    // once its request was out (shutdown(SHUT_WR), as `nc -N` does) is still
    // waiting for the answer. It goes out on our own descriptor, once, with
    // Connection: close; the socket closes with the last reference to `c`. (A
    // client that is really gone makes the send fail, which is harmless.)
    if (c->busy) {
      auto text = response_text(r, trace_id, connection_option::close, head);
      (void)::send(c->fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    return answered(c);
  }
  c->replied = true;
  auto text = response_text(r, trace_id, c->option, head);
  auto n = ::send(c->fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n == static_cast<ssize_t>(text.size()))
    return answered(c);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    return answered(c); // the client is gone; Pistache notices on its side
  // The socket's buffer is full (a large answer, a slow reader).
  c->unsent = text.substr(n > 0 ? static_cast<std::size_t>(n) : 0);
}

// Answers exactly once. Dropped unanswered (a bug), it still answers: 500.
class connection_reply final : public reply_sink {
public:
  connection_reply(connection_ptr connection, std::string trace_id,
                   std::shared_ptr<server::shared_state> state, bool head, ticket_ptr ticket)
    : connection_(std::move(connection)),
      trace_id_(std::move(trace_id)),
      state_(std::move(state)),
      head_(head),
      ticket_(std::move(ticket)) {
    ++state_->in_flight;
  }

  ~connection_reply() override {
    if (!sent_)
      send(error_reply({model::errc::internal_error, "the upload could not be processed"}));
  }

  bool send(reply r) override {
    if (sent_.exchange(true))
      return false;
    // The body is no longer held for this request: its share goes back before the
    // client can see the answer (and send more on the strength of it).
    if (ticket_)
      ticket_->release();
    answer(connection_, r, trace_id_, head_);
    flush_unsent(connection_);
    --state_->in_flight;
    return true;
  }

  bool sent() const override { return sent_; }

private:
  connection_ptr connection_;
  std::string trace_id_;
  std::shared_ptr<server::shared_state> state_;
  bool head_;         // a HEAD request: the answer without its body
  ticket_ptr ticket_; // null when the request held no body
  std::atomic<bool> sent_{false};
};

// Counts an open connection for as long as Pistache keeps its peer: the slot lives
// in the peer's data, so it goes whichever way Pistache drops the peer (its
// timeouts remove peers without telling the handler).
struct connection_slot {
  std::shared_ptr<server::shared_state> state;
  explicit connection_slot(std::shared_ptr<server::shared_state> s) : state(std::move(s)) {
    ++state->connections;
  }
  ~connection_slot() { --state->connections; }
  connection_slot(const connection_slot&) = delete;
  connection_slot& operator=(const connection_slot&) = delete;
};

constexpr const char* slot_key = "receiptd.connection-slot";

// Pistache 0.0.5 calls a handler's onRequest only once the whole body has been
// read (Http::Handler::onInput, private, feeds its parser and answers only a
// complete request), and a derived handler can neither call that function nor
// build a ResponseWriter. What 0.0.5 does let us do: stand in front of the HTTP
// handler as the transport's handler (Tcp::Transport::init is public), hand it
// what arrives one request at a time (connection_state, request_framer) through
// Tcp::Handler's public interface, and look at its parser (Handler::getParser,
// public). Once the request line and headers are in and the body is not, the
// request is judged (api_handler::judge): one bound to be refused — unknown path,
// missing or malformed Authorization, a Content-Length over http.max-body-bytes,
// shutting down, an upload beyond its client's rate, a credential known to be
// refused — is answered there, the
// connection is closed for writing, and the rest of its body is read and dropped,
// never buffered; any other takes its share of the body budget first (503 when it
// does not fit), and one whose credential is not known yet has it checked while
// its body arrives (401 or 404 as soon as the check refuses it).
class early_gate final : public Pistache::Tcp::Handler {
public:
  early_gate(api_handler* http, std::shared_ptr<server::shared_state> state)
    : http_(http), state_(std::move(state)) {}

  std::shared_ptr<Pistache::Tcp::Handler> clone() const override {
    return std::make_shared<early_gate>(http_, state_);
  }

  void onInput(const char* buffer, size_t len,
               const std::shared_ptr<Pistache::Tcp::Peer>& peer) override;

  void onConnection(const std::shared_ptr<Pistache::Tcp::Peer>& peer) override;

  void onDisconnection(const std::shared_ptr<Pistache::Tcp::Peer>& peer) override;

private:
  Pistache::Tcp::Handler& http();

  api_handler* http_; // owned by the same transport (Http::TransportImpl keeps it)
  std::shared_ptr<server::shared_state> state_;
};

// What a request whose credential was refused while its body arrived is answered
// (from the thread that learnt it): the error, and the end of the connection. The
// rest of the body is dropped as it comes. Nothing happens when that request is
// no longer the one arriving.
void refuse_arriving(const connection_ptr& c, std::uint64_t seq, const model::error& why,
                     const std::string& trace_id) {
  std::lock_guard lock(c->mutex);
  if (c->request_seq != seq || !c->receiving || c->refused || c->gone)
    return;
  c->refused = true;
  c->receiving = false;
  c->ticket.reset();
  c->body = std::string();
  // Our own descriptor: Pistache's may be closed and reused by now.
  auto text = response_text(error_reply(why), trace_id, connection_option::close);
  (void)::send(c->fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::shutdown(c->fd, SHUT_WR);
}

class api_handler : public ph::Handler {
public:
  HTTP_PROTOTYPE(api_handler)

  explicit api_handler(std::shared_ptr<server::shared_state> state) : state_(std::move(state)) {}

  // Called by Pistache's parser (through feed(), the connection's lock held) with
  // one whole request. Pistache's ResponseWriter is not used: answer() writes.
  void onRequest(const ph::Request& req, ph::ResponseWriter writer) override {
    auto connection = connection_of(*writer.peer());
    keep_or_close(req, *connection);
    auto ticket = std::move(connection->ticket);
    connection->receiving = false;
    auto trace_id = trace_id_of(req);
    auto m = match(req.method(), req.resource());
    const bool head = req.method() == ph::Method::Head;
    auto own
      = own_answer(req, m, req.body().size(), state_->settings.max_body_bytes, state_->draining);
    if (auto* r = std::get_if<reply>(&own))
      return answer(connection, *r, trace_id, head);
    if (!connection->rated && is_upload(*m.target)) // an upload without a body: judged here
      if (auto wait = state_->gate->clients.take(client_ip_of(req, state_->proxies), 0);
          wait.count() > 0)
        return answer(connection, error_reply(rate_limited(wait, "client network")), trace_id);
    inbound_request in(*m.target); // own_answer refuses what matches no route
    in.record_id = std::move(m.id);
    in.params = std::move(m.params);
    if (info(*m.target).resource)
      for (auto it = req.query().parameters_begin(); it != req.query().parameters_end(); ++it)
        if (in.query.size() < max_query_parameters)
          in.query.emplace_back(it->first.substr(0, 256), it->second.substr(0, 2048));
    in.token = std::move(std::get<std::string>(own));
    if (info(*m.target).token_in_query) // a Pub/Sub push may carry an OIDC token too
      if (auto bearer = bearer_token(req, max_push_bearer_bytes))
        in.push_bearer = std::move(bearer).value();
    // The body is moved, not copied: the request is the parser's own (not const)
    // and is reset as soon as onRequest returns (Pistache 0.0.5 Handler::onInput).
    in.body = std::move(const_cast<std::string&>(req.body()));
    in.peer_ip = client_ip_of(req, state_->proxies);
    in.trace_id = trace_id;
    in.body_share = ticket;
    auto sink = std::make_shared<connection_reply>(std::move(connection), std::move(trace_id),
                                                   state_, head, std::move(ticket));
    state_->dispatch(std::move(in), std::move(sink));
  }

  // Overrides Http::Handler's (private there, which a derived class may override
  // but not call): it does the one thing that one does, giving the peer its parser
  // (Pistache 0.0.5 src/common/http.cc; the transport's timeout check reads it for
  // every peer), then counts the connection and closes it beyond
  // http.max-connections.
  void onConnection(const std::shared_ptr<Pistache::Tcp::Peer>& peer) override {
    peer->putData(ParserData, std::make_shared<ph::RequestParser>(getMaxRequestSize()));
    if (!gate_installed_) {
      // The first connection of this transport (one per reactor thread) puts the
      // gate in front; the transport calls the gate from then on.
      gate_installed_ = true;
      transport()->init(std::make_shared<early_gate>(this, state_));
    }
    auto connection = std::make_shared<connection_state>();
    connection->framer = request_framer(state_->settings.max_body_bytes, parser_reads);
    connection->http = this;
    connection->transport = transport();
    connection->peer = peer;
    connection->fd = ::fcntl(peer->fd(), F_DUPFD_CLOEXEC, 0);
    peer->putData(connection_key, connection);
    peer->putData(slot_key, std::make_shared<connection_slot>(state_));
    if (state_->connections > state_->settings.max_connections || connection->fd < 0) {
      // Refused at once (or out of descriptors): no request is read from it. Closed
      // both ways, the peer is removed by the transport as soon as it is registered
      // (end of stream).
      connection->refused = true;
      write_raw(*peer,
                error_reply(
                  {model::errc::too_many_connections, "too many open connections; retry shortly"}),
                "");
      ::shutdown(peer->fd(), SHUT_RDWR);
    }
    // Timed from here on (sweep_connections), once it is set up: the sweep reads it
    // under its lock only, which nothing above took.
    std::lock_guard lock(state_->open_mutex);
    state_->open.push_back(std::move(connection));
  }

  // Hands what arrived to Pistache's parser one checked request at a time
  // (request_framer); stops at a request being answered and keeps the rest for
  // later. A request is judged once its header block is in (judge); the body of
  // one framed by Content-Length is kept here and handed on whole. What cannot be
  // framed is refused and ends the connection. The connection's lock is held.
  void feed(connection_state& c, std::string_view in,
            const std::shared_ptr<Pistache::Tcp::Peer>& peer) {
    c.feeding = true;
    while (!in.empty() && !c.refused) {
      if (c.busy) {
        hold(c, in);
        break;
      }
      auto piece = c.framer.next(in);
      if (const auto& why = c.framer.refusal()) {
        refuse(c, peer, *why);
        break;
      }
      auto rest = in.size() - piece.consumed; // of what arrived, after this piece
      if (piece.head_done)
        c.rated = false;
      if (piece.body) {
        c.body.append(piece.parse);
        if (piece.ends_request)
          parse(c, std::exchange(c.body, std::string()), peer);
      } else if (!piece.parse.empty()) {
        // A header block (the request ends with it when it has no body, or the
        // body follows), or a chunked request, decoded whole.
        if (piece.ends_request && !piece.head_done && !grown(c, peer, piece.parse.size()))
          break;
        parse(c, piece.parse, peer);
      }
      if (piece.head_done && !piece.ends_request) {
        ++c.request_seq;
        c.receiving = true;
        judge(c, peer, rest);
      } else if (c.receiving && !c.framer.content_length()
                 && !grown(c, peer, c.framer.decoded_bytes())) {
        break;
      }
      in.remove_prefix(piece.consumed);
    }
    c.feeding = false;
  }

  // Bytes that arrive while a request is being answered: at most one more whole
  // request's worth, held under the body budget (as unverified: nothing is known
  // of them yet). A client pipelining beyond either gets the current answer last.
  void hold(connection_state& c, std::string_view in) {
    auto n = c.held.size() + in.size();
    bool fits = n <= state_->settings.max_body_bytes + request_framer::max_head_bytes;
    if (fits && c.held_ticket)
      fits = c.held_ticket->grow_to(n);
    else if (fits)
      fits = (c.held_ticket = body_ticket::take(state_->gate->budget, n, true)) != nullptr;
    if (!fits) {
      c.held = std::string();
      c.held_ticket.reset();
      c.refused = true;
      c.closing = true;
      return;
    }
    c.held.append(in);
  }

private:
  // RFC 9112 §9.3: the connection persists unless the request (or HTTP/1.0's
  // default) says close, or the service is draining. (Pistache 0.0.5's own writer
  // answers "Connection: Close" to every request that names no connection option.)
  void keep_or_close(const ph::Request& req, connection_state& c) {
    bool keep = c.framer.keep_alive() && !state_->draining;
    c.busy = true;
    c.replied = false;
    c.since = steady_clock::now(); // the header timeout runs while it is answered
    c.closing = !keep;
    c.option = !keep                         ? connection_option::close
      : req.version() == ph::Version::Http10 ? connection_option::keep_alive
                                             : connection_option::none;
  }

  // Http::Handler's parser, through Tcp::Handler's public interface: onRequest
  // runs inside it when `bytes` complete a request.
  void parse(connection_state&, std::string_view bytes,
             const std::shared_ptr<Pistache::Tcp::Peer>& peer) {
    static_cast<Pistache::Tcp::Handler&>(*this).onInput(bytes.data(), bytes.size(), peer);
  }

  // A chunked body's share of the budget, grown to what has been decoded (or to the
  // whole decoded request): false, the request answered 503, when it does not fit.
  bool grown(connection_state& c, const std::shared_ptr<Pistache::Tcp::Peer>& peer,
             std::size_t bytes) {
    if (!c.ticket || c.ticket->grow_to(bytes))
      return true;
    end_with(c, peer, bodies_at_limit(), "");
    return false;
  }

  static reply bodies_at_limit() {
    return error_reply(
      {model::errc::overloaded, "too many request bodies are held at once; retry shortly"});
  }

  // The request whose header block has just arrived, with its body still to come
  // (`arrived`: bytes of it already here, or more): refused now if it is to be
  // refused at all, else given its share of the body budget — as unverified unless
  // its credential is known to be good — and, when its credential is not known and
  // its body is not all here, that credential is checked while the body arrives.
  void judge(connection_state& c, const std::shared_ptr<Pistache::Tcp::Peer>& peer,
             std::size_t arrived) {
    auto announced = c.framer.content_length();
    auto bytes = static_cast<std::size_t>(announced.value_or(0));
    const auto& gate = *state_->gate;
    // A body framed by Content-Length: the parser has the header block and waits
    // for the body. A chunked one: its block is parsed apart (the parser gets the
    // request once the body is decoded).
    std::optional<ph::RequestParser> apart;
    const ph::Request* req = nullptr;
    if (announced) {
      auto parser = getParser(peer);
      if (parser && parser->step()->id() == ph::Private::BodyStep::Id)
        req = &parser->request;
    } else {
      auto head = c.framer.head();
      apart.emplace(head.size());
      try {
        if (apart->feed(head.data(), head.size()) && apart->parse() == ph::Private::State::Done)
          req = &apart->request;
      } catch (const std::exception&) {
        // The parser answers the whole request as it does (never with a body).
      }
    }
    // Made only for an answer given here (a client's own id, or a new one).
    auto trace_id = [req] { return req ? trace_id_of(*req) : std::string(); };
    credential_check check;
    if (req) {
      auto m = match(req->method(), req->resource());
      auto own = own_answer(*req, m, bytes, state_->settings.max_body_bytes, state_->draining);
      if (auto* r = std::get_if<reply>(&own); r && r->status >= 400)
        return end_with(c, peer, *r, trace_id());
      if (is_upload(*m.target)) {
        // A client beyond its rate: refused before it has sent its body.
        c.rated = true;
        auto client = client_ip_of(*req, state_->proxies, peer_ip_of(*peer));
        if (auto wait = gate.clients.take(client, bytes); wait.count() > 0)
          return end_with(c, peer, error_reply(rate_limited(wait, "client network")), trace_id());
      }
      if (auto* secret = std::get_if<std::string>(&own)) {
        check.target = *m.target;
        check.key = credential_key(*m.target, *secret, m.id);
        check.secret = std::move(*secret);
        check.app_id = std::move(m.id);
      }
    }
    auto known = check.key.empty() ? credential_view::state{} : gate.credentials.look(check.key);
    if (known.kind == credential_view::state::refused)
      return end_with(c, peer, error_reply(*known.why), trace_id());
    bool unverified = known.kind != credential_view::state::good;
    c.ticket = body_ticket::take(gate.budget, bytes, unverified);
    // A body all here is judged whole, with its request; a refused one's
    // credential is still checked, so that its client, if it is good, finds it
    // known when it tries again.
    bool asks
      = unverified && !check.key.empty() && (!c.ticket || !announced || arrived < *announced);
    if (asks) {
      check.verdict = [connection = std::weak_ptr(connection_of(*peer)), seq = c.request_seq,
                       share = std::weak_ptr(c.ticket),
                       trace_id = trace_id()](std::optional<model::error> refusal) {
        if (!refusal) {
          if (auto t = share.lock())
            t->verified();
        } else if (auto c = connection.lock()) {
          refuse_arriving(c, seq, *refusal, trace_id);
        }
      };
      gate.check(std::move(check));
    }
    if (!c.ticket)
      return end_with(c, peer, bodies_at_limit(), trace_id());
    c.body.reserve(bytes); // held once, in one piece
  }

  // A stream that is not HTTP/1.1 (request_framer::refusal): nothing of it reaches
  // the parser, and nothing after it is read as a request.
  void refuse(connection_state& c, const std::shared_ptr<Pistache::Tcp::Peer>& peer,
              const model::error& why) {
    auto r = error_reply(why);
    if (auto m = match(ph::Method::Get, c.framer.target()); m.target)
      r.allow = allowed_methods(info(*m.target)); // a method no route has
    end_with(c, peer, r, "");
  }

  // No more answers on this connection: the client sees the end after this one,
  // and what it still sends is dropped (the body timeout ends a client that
  // keeps sending).
  static void end_with(connection_state& c, const std::shared_ptr<Pistache::Tcp::Peer>& peer,
                       const reply& r, const std::string& trace_id) {
    c.refused = true;
    c.receiving = false;
    c.ticket.reset();
    c.body = std::string();
    write_raw(*peer, r, trace_id);
    ::shutdown(peer->fd(), SHUT_WR);
  }

  std::shared_ptr<server::shared_state> state_;
  bool gate_installed_ = false; // per transport: each has its own clone
};

void answered(const connection_ptr& c) {
  std::lock_guard lock(c->mutex);
  c->busy = false;
  // The next request's clock starts now (keepalive-timeout until its first byte).
  c->since = steady_clock::now();
  c->kept_alive = true;
  c->awaited = !c->held.empty();
  auto peer = c->peer.lock();
  if (c->gone || !peer)
    return;
  if (c->closing) {
    // The last answer is out: the client sees the end of the stream after it.
    c->held = std::string();
    c->held_ticket.reset();
    if (!c->refused)
      ::shutdown(c->fd, SHUT_WR);
    c->refused = true;
    return;
  }
  if (c->feeding || c->held.empty())
    return; // a feed() further up this thread's stack goes on by itself
  auto next = std::exchange(c->held, std::string());
  c->held_ticket.reset(); // the requests in it take their own shares
  c->http->feed(*c, next, peer);
}

Pistache::Tcp::Handler& early_gate::http() {
  return *http_;
}

void early_gate::onInput(const char* buffer, size_t len,
                         const std::shared_ptr<Pistache::Tcp::Peer>& peer) {
  // Ends after every lock below is let go of: the actor work the input caused
  // may run on this thread then, and answer on this connection or another.
  turn t(state_->turns);
  auto c = connection_of(*peer);
  if (!c)
    return http().onInput(buffer, len, peer);
  {
    std::lock_guard lock(c->mutex);
    if (c->refused)
      return; // answered already: the rest is not read into any buffer
    if (c->busy)
      return http_->hold(*c, {buffer, len});
    c->awaited = true;
    http_->feed(*c, {buffer, len}, peer);
  }
  flush_unsent(c);
}

void early_gate::onConnection(const std::shared_ptr<Pistache::Tcp::Peer>& peer) {
  http().onConnection(peer);
}

void early_gate::onDisconnection(const std::shared_ptr<Pistache::Tcp::Peer>& peer) {
  if (auto c = connection_of(*peer)) {
    std::lock_guard lock(c->mutex);
    c->gone = true; // its fd is closed next and may be reused at once
    // A body that will never be whole, and what was pipelined behind an answer,
    // are dropped with their shares of the budget.
    if (c->receiving) {
      c->receiving = false;
      c->ticket.reset();
      c->body = std::string();
    }
    c->held = std::string();
    c->held_ticket.reset();
  }
  http().onDisconnection(peer);
}

// ---- timeouts --------------------------------------------------------------------
//
// receiptd times its connections itself, and Pistache's own timers are off
// (server::start). Pistache 0.0.5 runs its timers at the start of a reactor round,
// before the events that round collected: a peer they drop (an idle one past its
// keep-alive) may still have a write event in that round, which Pistache then takes
// for a broken state and throws on ("could not find write data"), ending the
// process. It happened when an answer came after Pistache's own 408 (queued, not yet
// written) while thousands of other connections timed out at once. Here a connection
// out of time is answered 408 on our own descriptor (unless an answer has begun) and
// shut down both ways; Pistache then reads the end of the stream and drops the peer
// the ordinary way (onDisconnection), never with a write of its own in flight.

// Ends a connection that ran out of time; `why` is its 408's message, or null when
// it gets none (an answer has begun, it was refused already, or it was idle).
void time_out(connection_state& c, const char* why) {
  c.timed_out = true;
  c.refused = true;
  c.receiving = false;
  c.ticket.reset();
  c.body = std::string();
  c.held = std::string();
  c.held_ticket.reset();
  if (why) {
    auto text = response_text(error_reply({model::errc::request_timeout, why}), "",
                              connection_option::close);
    (void)::send(c.fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  }
  ::shutdown(c.fd, SHUT_RDWR);
}

// One connection's deadlines ([http] in config/receiptd.ini), each from its clock
// (connection_state::since): the request line and headers within header-timeout, the
// whole request within body-timeout, the answer within header-timeout of the request
// being handed on (which is why that exceeds the store deadline), and the next
// request's first byte within keepalive-timeout of the previous answer.
void sweep(connection_state& c, steady_clock::time_point now, const config::http_settings& s) {
  std::lock_guard lock(c.mutex);
  if (c.gone || c.timed_out || c.fd < 0)
    return;
  auto age = now - c.since;
  if (c.busy) {
    if (age > s.header_timeout)
      time_out(c, c.replied ? nullptr : "no answer within http.header-timeout");
  } else if (c.refused) {
    if (age > s.body_timeout) // what a refused client still sends is dropped this long
      time_out(c, nullptr);
  } else if (c.receiving) {
    if (age > s.body_timeout)
      time_out(c, "the request did not arrive within http.body-timeout");
  } else if (c.awaited) {
    if (age > s.header_timeout)
      time_out(c, "the request line and headers did not arrive within http.header-timeout");
  } else if (!c.kept_alive) {
    // Opened and never sent a byte: closed without an answer, as an idle kept-alive
    // one is. A 408 there would race the request a pooling client may be sending at
    // that moment and be read as that request's answer.
    if (age > s.header_timeout)
      time_out(c, nullptr);
  } else if (age > s.keepalive_timeout) {
    time_out(c, nullptr);
  }
}

// Four times a second, every open connection's deadlines, on a thread of its own
// (from server::start to server::stop).
void sweep_connections(std::stop_token stop, server::shared_state& st) {
  std::mutex m;
  std::condition_variable_any wake;
  std::unique_lock lock(m);
  while (!stop.stop_requested()) {
    wake.wait_for(lock, stop, std::chrono::milliseconds(250), [] { return false; });
    std::vector<connection_ptr> live;
    {
      std::lock_guard guard(st.open_mutex);
      std::erase_if(st.open, [](const std::weak_ptr<connection_state>& w) { return w.expired(); });
      live.reserve(st.open.size());
      for (const auto& w : st.open)
        if (auto c = w.lock())
          live.push_back(std::move(c));
    }
    auto now = steady_clock::now();
    for (const auto& c : live)
      sweep(*c, now, st.settings);
  }
}

} // namespace

struct server::endpoint_holder {
  std::unique_ptr<Pistache::Http::Endpoint> endpoint;
};

server::server(config::http_settings settings, dispatch_fn dispatch, turn_hook* turns,
               const admission* gate)
  : state_(std::make_shared<shared_state>()), endpoint_(std::make_unique<endpoint_holder>()) {
  state_->proxies = model::trusted_proxies::parse(settings.trusted_proxies)
                      .value(); // checked with the configuration
  state_->settings = std::move(settings);
  state_->dispatch = std::move(dispatch);
  state_->turns = turns;
  if (!gate) {
    auto unbounded = std::numeric_limits<std::size_t>::max();
    state_->own_budget = std::make_unique<body_budget>(unbounded, unbounded);
    state_->own_credentials = std::make_unique<credential_view>(model::system_time());
    state_->own_clients = std::make_unique<client_rates>(0, 1, model::system_time());
    state_->own_gate
      = std::make_unique<admission>(admission{*state_->own_budget, *state_->own_credentials,
                                              *state_->own_clients, [](credential_check) {}});
    gate = state_->own_gate.get();
  }
  state_->gate = gate;
}

server::~server() {
  stop();
}

namespace {

// Pistache's accept loop spins when accept() fails for want of a file descriptor
// (EMFILE: the listening socket stays readable), and the database and the stores
// need descriptors too: the connection cap stays below the open-file limit.
std::size_t connection_cap(std::size_t configured) {
  constexpr std::size_t reserve = 256;
  constexpr std::size_t per_connection = 2; // Pistache's descriptor and ours (connection_state)
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY
      || configured * per_connection + reserve <= lim.rlim_cur)
    return configured;
  return lim.rlim_cur > 2 * reserve
    ? (static_cast<std::size_t>(lim.rlim_cur) - reserve) / per_connection
    : 1;
}

} // namespace

std::uint16_t server::start() {
  state_->settings.max_connections = connection_cap(state_->settings.max_connections);
  const auto& s = state_->settings;
  Pistache::Address addr(s.address, Pistache::Port(s.port));
  endpoint_->endpoint = std::make_unique<Pistache::Http::Endpoint>(addr);
  // Pistache buffers whole requests and answers 413 itself (plain text) past its
  // own limit: the body limit plus room for the request line and headers. A body
  // announced larger (Content-Length) is refused with the JSON shape as soon as the
  // headers are in (early_gate), before any of it is buffered.
  //
  // Timeouts are the sweep's (sweep_connections), not Pistache's: each is measured
  // from the connection, or from the end of the previous answer on it, not from the
  // last byte received, so a client that trickles its headers is closed (408)
  // header-timeout after it connected, however steadily it sends. While a request
  // is being answered the header timeout keeps running, so it must exceed the store
  // deadline (config/options.cpp checks).
  constexpr auto never = std::chrono::hours(24 * 365 * 10);
  constexpr int backlog = 4096;
  auto opts = Pistache::Http::Endpoint::options()
                .threads(static_cast<int>(s.threads))
                .flags(Pistache::Tcp::Options::ReuseAddr)
                .backlog(backlog)
                .maxRequestSize(s.max_body_bytes + 64 * 1024)
                .maxResponseSize(8 * 1024 * 1024)
                .headerTimeout(never)
                .bodyTimeout(never)
                .keepaliveTimeout(never);
  endpoint_->endpoint->init(opts);
  // Endpoint::init (0.0.5) does not pass the backlog on to its listener, which then
  // listens with 128: a burst of new connections beyond that had its SYNs dropped
  // and waited for the client's retransmission (1 s, then 3 s, …). The listener's
  // init only stores its arguments, so it is called again with all of them.
  endpoint_->endpoint->initArgs(
    s.threads, Pistache::Flags<Pistache::Tcp::Options>(Pistache::Tcp::Options::ReuseAddr),
    std::string(), backlog);
  endpoint_->endpoint->setHandler(Pistache::Http::make_handler<api_handler>(state_));
  endpoint_->endpoint->serveThreaded();
  // By reference: stop() joins it before the server lets go of its state.
  state_->sweeper
    = std::jthread([&st = *state_](std::stop_token stop) { sweep_connections(stop, st); });
  return static_cast<std::uint16_t>(endpoint_->endpoint->getPort());
}

void server::begin_draining() {
  state_->draining = true;
}

std::size_t server::max_connections() const {
  return state_->settings.max_connections;
}

std::size_t server::in_flight() const {
  return state_->in_flight;
}

void server::stop() {
  if (state_->sweeper.joinable()) {
    state_->sweeper.request_stop();
    state_->sweeper.join();
  }
  if (endpoint_ && endpoint_->endpoint) {
    endpoint_->endpoint->shutdown();
    endpoint_->endpoint.reset();
  }
}

} // namespace receiptd::http

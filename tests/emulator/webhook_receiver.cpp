#include "webhook_receiver.hpp"

#include <cctype>
#include <chrono>
#include <sstream>

#include <boost/json/array.hpp>

#include "control.hpp"
#include "delay.hpp"
#include "field_reader.hpp"
#include "http_util.hpp"
#include "listener.hpp"

namespace receiptd::emulator {

namespace Http = Pistache::Http;

namespace {

// Per endpoint; older deliveries are dropped first.
constexpr std::size_t max_deliveries = 1000;
// Requests held without an answer, per endpoint; the oldest is let go beyond this.
constexpr std::size_t max_hanging = 1000;

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// An endpoint's name: one path segment of letters, digits, '.', '_' and '-'.
bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 100)
    return false;
  for (unsigned char c : name)
    if (!std::isalnum(c) && c != '.' && c != '_' && c != '-')
      return false;
  return true;
}

std::string lower(std::string text) {
  for (auto& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Every request header, by lower-case name: Pistache keeps well-known ones
// (Content-Type, Content-Length, Host, User-Agent, …) as typed objects and the
// others raw.
boost::json::object headers_json(const Http::Request& request) {
  boost::json::object out;
  const auto& headers = request.headers();
  for (const auto& h : headers.list()) {
    std::ostringstream value;
    h->write(value);
    out[lower(h->name())] = value.str();
  }
  for (const auto& [name, raw] : headers.rawList())
    out[lower(name)] = raw.value();
  return out;
}

reply ok(boost::json::object extra = {}) {
  extra.emplace("ok", true);
  return json_reply(200, extra);
}

reply bad_request(std::string message) {
  return json_reply(400, boost::json::object{{"error", std::move(message)}});
}

reply not_allowed() {
  return json_reply(405, boost::json::object{{"error", "method not allowed"}});
}

// What an endpoint says with its status: receiptd records the status only.
reply answer_for(int status) {
  if (status >= 200 && status < 300)
    return json_reply(status, boost::json::object{{"received", true}});
  return json_reply(status, boost::json::object{{"error", "emulated webhook failure"}});
}

boost::json::object mode_json(const webhook_mode& m) {
  boost::json::object o{{"status", m.status}, {"delay_ms", m.delay_ms}, {"hang", m.hang}};
  o["times"] = m.times ? boost::json::value(*m.times) : boost::json::value(nullptr);
  return o;
}

} // namespace

webhook_receiver::webhook_receiver(store_listener& via)
  : via_(via), delays_(std::make_unique<delay_queue>()) {}

webhook_receiver::~webhook_receiver() = default;

bool webhook_receiver::serve(const Http::Request& request, Http::ResponseWriter& writer) {
  auto s = split_path(request.resource());
  const auto method = request.method();
  if (s.size() == 2 && s[0] == "webhooks") {
    std::string name(s[1]);
    if (!valid_name(name))
      send_reply(writer,
                 bad_request("a webhook endpoint's name is letters, digits, '.', '_', '-'"));
    else if (method != Http::Method::Post)
      send_reply(writer, not_allowed());
    else
      receive(name, request, writer);
    return true;
  }
  if (s.size() < 3 || s[0] != "control" || s[1] != "webhooks")
    return false;
  std::string name(s[2]);
  if (!valid_name(name) || s.size() > 4 || (s.size() == 4 && s[3] != "mode")) {
    send_reply(writer, json_reply(404, boost::json::object{{"error", "no such control endpoint"}}));
    return true;
  }

  if (s.size() == 4) { // .../mode
    if (method == Http::Method::Get) {
      std::lock_guard lock(mutex_);
      send_reply(writer, json_reply(200, mode_json(endpoints_[name].mode)));
      return true;
    }
    if (method != Http::Method::Post && method != Http::Method::Put) {
      send_reply(writer, not_allowed());
      return true;
    }
    auto o = parse_object(request.body());
    if (!o) {
      send_reply(writer, bad_request("body is not a JSON object"));
      return true;
    }
    field_reader f(*o);
    webhook_mode m;
    m.status = static_cast<int>(f.integer("status", 100, 599).value_or(200));
    m.delay_ms = static_cast<int>(f.integer("delay_ms", 0, 600000).value_or(0));
    m.hang = f.boolean("hang").value_or(false);
    if (auto times = f.integer("times", 1, 1000000))
      m.times = static_cast<int>(*times);
    if (!f.error().empty()) {
      send_reply(writer, bad_request(f.error()));
      return true;
    }
    {
      std::lock_guard lock(mutex_);
      endpoints_[name].mode = m;
    }
    send_reply(writer, ok({{"name", name}, {"mode", mode_json(m)}}));
    return true;
  }

  if (method == Http::Method::Get) {
    send_reply(writer, json_reply(200, endpoint_json(name)));
  } else if (method == Http::Method::Delete) {
    std::lock_guard lock(mutex_);
    endpoints_.erase(name);
    send_reply(writer, ok({{"name", name}}));
  } else {
    send_reply(writer, not_allowed());
  }
  return true;
}

void webhook_receiver::receive(const std::string& name, const Http::Request& request,
                               Http::ResponseWriter& writer) {
  delivery d;
  d.method = "POST";
  d.path = request.resource();
  d.headers = headers_json(request);
  // Exact unless it is not UTF-8 (receiptd sends JSON): the control answer is JSON.
  d.body = sanitize_utf8(request.body());
  d.at_ms = now_ms();
  webhook_mode m;
  {
    std::lock_guard lock(mutex_);
    auto& e = endpoints_[name];
    m = e.mode;
    if (e.mode.times && --*e.mode.times <= 0)
      e.mode = webhook_mode{};
    if (!m.hang)
      d.status_answered = m.status;
    e.deliveries.push_back(std::move(d));
    if (e.deliveries.size() > max_deliveries)
      e.deliveries.pop_front();
    if (m.hang) {
      e.hanging.push_back(std::move(writer));
      if (e.hanging.size() > max_hanging)
        e.hanging.pop_front();
      return;
    }
  }
  auto r = answer_for(m.status);
  if (m.delay_ms == 0) {
    send_reply(writer, r);
    return;
  }
  // Not on the reactor thread: the control port stays responsive while late.
  delays_->schedule(delay_queue::clock::now() + std::chrono::milliseconds(m.delay_ms), via_,
                    via_.generation(), std::move(writer), std::move(r));
}

boost::json::object webhook_receiver::endpoint_json(const std::string& name) {
  std::lock_guard lock(mutex_);
  boost::json::array list;
  webhook_mode mode;
  if (auto it = endpoints_.find(name); it != endpoints_.end()) {
    mode = it->second.mode;
    for (const auto& d : it->second.deliveries) {
      boost::json::object o{{"method", d.method},
                            {"path", d.path},
                            {"headers", d.headers},
                            {"body", d.body},
                            {"at_ms", d.at_ms}};
      o["status_answered"]
        = d.status_answered ? boost::json::value(*d.status_answered) : boost::json::value(nullptr);
      list.push_back(std::move(o));
    }
  }
  return {{"deliveries", std::move(list)}, {"mode", mode_json(mode)}};
}

void webhook_receiver::reset() {
  std::lock_guard lock(mutex_);
  endpoints_.clear();
}

void control_port_handler::onRequest(const Http::Request& request, Http::ResponseWriter writer) {
  try {
    if (receiver_->serve(request, writer))
      return;
  } catch (const std::exception& e) {
    send_reply(writer, json_reply(500, boost::json::object{{"error", e.what()}}));
    return;
  }
  if (request.method() == Http::Method::Post && request.resource() == "/control/reset")
    receiver_->reset();
  control_handler(*context_).onRequest(request, std::move(writer));
}

} // namespace receiptd::emulator

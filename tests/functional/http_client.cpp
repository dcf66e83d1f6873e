#include "http_client.hpp"

#include <curl/curl.h>

#include <fcntl.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>

namespace receiptd::test {

namespace {

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  std::string line(data, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    auto name = line.substr(0, colon);
    for (auto& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto value = line.substr(colon + 1);
    auto b = value.find_first_not_of(" \t");
    auto e = value.find_last_not_of(" \t\r\n");
    (*headers)[name] = b == std::string::npos ? "" : value.substr(b, e - b + 1);
  }
  return size * n;
}

// What the OpenAPI check reads (http_client.hpp): one JSON object per line.
class exchange_recorder {
public:
  static exchange_recorder& instance() {
    static exchange_recorder r;
    return r;
  }

  void watch(unsigned short port) {
    std::lock_guard lock(mutex_);
    ports_.insert(port);
  }

  bool watching(unsigned short port) {
    std::lock_guard lock(mutex_);
    return ports_.count(port) != 0;
  }

  void append(const boost::json::object& line) {
    if (fd_ < 0)
      return;
    auto text = boost::json::serialize(line) + "\n";
    std::lock_guard lock(mutex_);
    for (std::size_t done = 0; done < text.size();) {
      auto n = ::write(fd_, text.data() + done, text.size() - done);
      if (n <= 0)
        throw std::runtime_error("cannot write RECEIPTD_OPENAPI_RECORD " + file_);
      done += static_cast<std::size_t>(n);
    }
  }

private:
  // Emptied as the process starts (`started` below), so a run that records nothing
  // leaves an empty file, never the last run's answers. Close-on-exec: receiptd and
  // the emulator do not inherit it.
  exchange_recorder() {
    const char* file = std::getenv("RECEIPTD_OPENAPI_RECORD");
    if (file == nullptr || *file == '\0')
      return;
    file_ = file;
    fd_ = ::open(file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw std::runtime_error("cannot write RECEIPTD_OPENAPI_RECORD " + file_);
  }

  std::mutex mutex_;
  std::set<unsigned short> ports_;
  std::string file_;
  int fd_ = -1;
};

[[maybe_unused]] const bool started = (exchange_recorder::instance(), true);

// "http://host:port/path?query" → port (0 when none) and "/path?query".
std::pair<unsigned short, std::string> port_and_target(const std::string& url) {
  auto scheme = url.find("://");
  if (scheme == std::string::npos)
    return {0, {}};
  auto host = scheme + 3;
  auto slash = url.find('/', host);
  auto authority = url.substr(host, slash == std::string::npos ? std::string::npos : slash - host);
  auto target = slash == std::string::npos ? std::string("/") : url.substr(slash);
  auto colon = authority.rfind(':');
  if (colon == std::string::npos || authority.find(']', colon) != std::string::npos)
    return {0, target};
  unsigned port = 0;
  for (char c : authority.substr(colon + 1))
    port
      = c >= '0' && c <= '9' && port < 65536 ? port * 10 + static_cast<unsigned>(c - '0') : 65536;
  return {port < 65536 ? static_cast<unsigned short>(port) : 0, target};
}

// Request bodies up to this size go into the record (the check validates those the
// service judged against the request schema); larger ones (receipts at the limit)
// would only bloat it.
constexpr std::size_t max_recorded_request_bytes = 256 * 1024;

void record(const std::string& method, const std::string& url, const std::string& request_body,
            const http_response& r) {
  if (r.status == 0)
    return; // no answer: nothing to hold against the document
  auto [port, target] = port_and_target(url);
  auto& recorder = exchange_recorder::instance();
  if (port == 0 || !recorder.watching(port))
    return; // the emulator, a webhook receiver: not receiptd's API
  boost::json::object headers;
  for (const auto& [name, value] : r.headers)
    headers[name] = value;
  boost::json::object line{{"kind", "http"},
                           {"method", method},
                           {"path", target},
                           {"status", r.status},
                           {"content_type", r.header("content-type")},
                           {"headers", std::move(headers)},
                           {"body", r.body}};
  if (request_body.size() <= max_recorded_request_bytes)
    line["request_body"] = request_body;
  recorder.append(line);
}

} // namespace

void record_exchanges_with(unsigned short port) {
  exchange_recorder::instance().watch(port);
}

void record_webhook_body(const std::string& body) {
  exchange_recorder::instance().append(boost::json::object{{"kind", "webhook"}, {"body", body}});
}

boost::json::value http_response::json() const {
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec);
  if (ec)
    throw std::runtime_error("not JSON (HTTP " + std::to_string(status) + "): " + body);
  return v;
}

std::string http_response::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

http_response http_call(const std::string& method, const std::string& url, const std::string& body,
                        const std::vector<std::string>& headers, const call_options& options) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  http_response r;
  CURL* h = curl_easy_init();
  curl_slist* list = nullptr;
  for (const auto& line : headers)
    list = curl_slist_append(list, line.c_str());
  list = curl_slist_append(list, "Expect:");
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
  if (method == "HEAD")
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  auto source = "host!" + options.source_ip; // an address, never an interface name
  if (!options.source_ip.empty())
    curl_easy_setopt(h, CURLOPT_INTERFACE, source.c_str());
  if (!options.ca_file.empty())
    curl_easy_setopt(h, CURLOPT_CAINFO, options.ca_file.c_str());
  if (method == "POST" || method == "PUT") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &r.headers);
  auto code = curl_easy_perform(h);
  if (code == CURLE_OK)
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  else
    r.error = curl_easy_strerror(code);
  curl_slist_free_all(list);
  curl_easy_cleanup(h);
  record(method, url, body, r);
  return r;
}

} // namespace receiptd::test

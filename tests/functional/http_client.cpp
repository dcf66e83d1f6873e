#include "http_client.hpp"

#include <curl/curl.h>

#include <boost/json/parse.hpp>
#include <mutex>
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

} // namespace

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
                        const std::vector<std::string>& headers) {
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
  return r;
}

} // namespace receiptd::test

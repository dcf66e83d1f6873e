#include "http/outbound_client.hpp"

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <curl/curl.h>

namespace receiptd::http {

namespace {

struct transfer {
  outbound_request request;
  outbound_client::callback done;
  outbound_response response;
  curl_slist* headers = nullptr;
  char error[CURL_ERROR_SIZE] = {0};
  std::size_t max_bytes = 0;
  bool truncated = false;
};

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

// curl_global_init is not thread-safe: run it once, before any handle exists.
void init_curl_once() {
  static std::once_flag flag;
  std::call_once(flag, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

} // namespace

struct outbound_client::impl {
  options opts;
  CURLM* multi = nullptr;
  std::mutex mtx;
  std::deque<std::unique_ptr<transfer>> queued; // guarded by mtx
  std::atomic<bool> stopping{false};
  std::unordered_map<CURL*, std::unique_ptr<transfer>> running; // loop thread only
  std::vector<CURL*> idle_handles;                              // loop thread only
  std::thread loop;

  explicit impl(options o) : opts(std::move(o)) {
    init_curl_once();
    multi = curl_multi_init();
    if (opts.max_connections_per_host > 0)
      curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                        static_cast<long>(opts.max_connections_per_host));
    loop = std::thread([this] { run(); });
  }

  ~impl() {
    stopping = true;
    curl_multi_wakeup(multi);
    loop.join();
    for (auto* h : idle_handles)
      curl_easy_cleanup(h);
    curl_multi_cleanup(multi);
  }

  CURL* take_handle() {
    if (!idle_handles.empty()) {
      auto* h = idle_handles.back();
      idle_handles.pop_back();
      curl_easy_reset(h); // keeps the handle's connection and DNS caches
      return h;
    }
    return curl_easy_init();
  }

  void start(std::unique_ptr<transfer> t) {
    CURL* h = take_handle();
    auto& req = t->request;
    t->max_bytes = opts.max_response_bytes;
    curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(opts.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, t->error);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); // whatever curl decodes
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    if (!opts.ca_file.empty())
      curl_easy_setopt(h, CURLOPT_CAINFO, opts.ca_file.c_str());
    if (req.method == "POST") {
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(req.body.size()));
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
    } else {
      t->response.status = 0;
      t->response.body.clear();
      t->response.error = t->truncated ? "response larger than the limit"
                          : t->error[0] ? t->error
                                        : curl_easy_strerror(code);
    }
    curl_slist_free_all(t->headers);
    idle_handles.push_back(h);
    t->done(std::move(t->response));
  }

  void run() {
    while (!stopping) {
      std::deque<std::unique_ptr<transfer>> batch;
      {
        std::lock_guard<std::mutex> guard(mtx);
        batch.swap(queued);
      }
      for (auto& t : batch)
        start(std::move(t));
      int still = 0;
      curl_multi_perform(multi, &still);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &left))
        if (msg->msg == CURLMSG_DONE)
          finish(msg->easy_handle, msg->data.result);
      curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
    // Shutting down: whatever is queued or running fails.
    std::deque<std::unique_ptr<transfer>> batch;
    {
      std::lock_guard<std::mutex> guard(mtx);
      batch.swap(queued);
    }
    for (auto& t : batch) {
      outbound_response r;
      r.error = "shutting down";
      t->done(std::move(r));
    }
    std::vector<CURL*> handles;
    for (auto& [h, t] : running)
      handles.push_back(h);
    for (auto* h : handles)
      finish(h, CURLE_ABORTED_BY_CALLBACK);
  }
};

outbound_client::outbound_client(options opts)
  : impl_(std::make_unique<impl>(std::move(opts))) {}

outbound_client::~outbound_client() = default;

void outbound_client::submit(outbound_request req, callback done) {
  auto t = std::make_unique<transfer>();
  t->request = std::move(req);
  t->done = std::move(done);
  {
    std::lock_guard<std::mutex> guard(impl_->mtx);
    impl_->queued.push_back(std::move(t));
  }
  curl_multi_wakeup(impl_->multi);
}

} // namespace receiptd::http

// The stores' HTTP/2 listeners (PROTOCOL.md "HTTP/2"): the real emulator binary,
// reached by libcurl over TLS as receiptd reaches the stores.

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "test_client.hpp"

using namespace emulator_test;
namespace json = boost::json;

namespace {

struct h2_call {
  std::string method = "GET";
  std::string url;
  std::string body;
  std::vector<std::string> headers;
};

struct h2_answer {
  CURLcode code = CURLE_OK;
  long status = 0;
  long version = 0; // CURL_HTTP_VERSION_*
  std::string body;
  std::string content_type;
  double seconds = 0;
};

std::size_t collect(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// All `calls` at once through one curl multi handle, as receiptd's outbound client
// makes them: HTTP/2 negotiated by ALPN (unless `version` says otherwise), the
// calls waiting for the first connection and multiplexed on it.
std::vector<h2_answer> call_all(const std::vector<h2_call>& calls, const std::string& ca_file,
                                long version = CURL_HTTP_VERSION_2TLS) {
  CURLM* multi = curl_multi_init();
  std::vector<CURL*> handles;
  std::vector<curl_slist*> lists;
  std::vector<h2_answer> answers(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CURL* h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, calls[i].url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, version);
    curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
    if (!ca_file.empty())
      curl_easy_setopt(h, CURLOPT_CAINFO, ca_file.c_str());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &answers[i].body);
    if (calls[i].method == "POST") {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, calls[i].body.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(calls[i].body.size()));
    }
    curl_slist* list = nullptr;
    for (const auto& line : calls[i].headers)
      list = curl_slist_append(list, line.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
    lists.push_back(list);
    curl_multi_add_handle(multi, h);
    handles.push_back(h);
  }
  int running = 0;
  do {
    curl_multi_perform(multi, &running);
    curl_multi_poll(multi, nullptr, 0, 100, nullptr);
  } while (running > 0);
  int left = 0;
  while (CURLMsg* m = curl_multi_info_read(multi, &left))
    for (std::size_t i = 0; i < handles.size(); ++i)
      if (m->easy_handle == handles[i])
        answers[i].code = m->data.result;
  for (std::size_t i = 0; i < handles.size(); ++i) {
    curl_easy_getinfo(handles[i], CURLINFO_RESPONSE_CODE, &answers[i].status);
    curl_easy_getinfo(handles[i], CURLINFO_HTTP_VERSION, &answers[i].version);
    curl_easy_getinfo(handles[i], CURLINFO_TOTAL_TIME, &answers[i].seconds);
    char* ct = nullptr;
    if (curl_easy_getinfo(handles[i], CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
      answers[i].content_type = ct;
    curl_multi_remove_handle(multi, handles[i]);
    curl_easy_cleanup(handles[i]);
    curl_slist_free_all(lists[i]);
  }
  curl_multi_cleanup(multi);
  return answers;
}

h2_answer call_one(const h2_call& c, const std::string& ca_file,
                   long version = CURL_HTTP_VERSION_2TLS) {
  return call_all({c}, ca_file, version).at(0);
}

} // namespace

TEST_CASE("h2: both stores over TLS with HTTP/2, as over HTTP/1.1, multiplexed, with the modes") {
  emulator_process emulator;
  http_client control;
  const auto pem = control.get(emulator.control_url("/control/tls/certificate")).body;
  REQUIRE(pem.rfind("-----BEGIN CERTIFICATE-----", 0) == 0);
  const std::string ca_file = std::tmpnam(nullptr);
  std::ofstream(ca_file) << pem;
  auto stores = [&] { return control.get(emulator.control_url("/control/stores")).json(); };
  auto connections
    = [&] { return stores().at("store_b").at("h2_connections").to_number<std::uint64_t>(); };
  const std::string unknown
    = "/androidpublisher/v3/applications/com.example.h2/purchases/products/p/tokens/t";

  SECTION("the same answers as the HTTP/1.1 listeners, over HTTP/2") {
    auto h1 = control.get(emulator.store_b_url(unknown), {"Authorization: Bearer ya29.nope"});
    auto h2 = call_one(
      {"GET", emulator.store_b_h2_url(unknown), "", {"Authorization: Bearer ya29.nope"}}, ca_file);
    REQUIRE(h2.code == CURLE_OK);
    CHECK(h2.version == CURL_HTTP_VERSION_2_0);
    CHECK(h2.status == 401);
    CHECK(h2.status == h1.status);
    CHECK(h2.body == h1.body);
    CHECK(h2.content_type == "application/json; charset=UTF-8");
    // A POST with a body (verifyReceipt reads it: not base64 → 21002).
    auto receipt = call_one(
      {"POST", emulator.store_a_h2_url("/verifyReceipt"), R"({"receipt-data":"%%"})"}, ca_file);
    CHECK(receipt.version == CURL_HTTP_VERSION_2_0);
    CHECK(receipt.status == 200);
    CHECK(json::parse(receipt.body).at("status").as_int64() == 21002);
    auto calls = control.get(emulator.control_url("/control/calls")).json();
    CHECK(calls.at("store_b").at("products").to_number<int>() == 2);
    CHECK(calls.at("store_a").at("production").to_number<int>() == 1);
  }

  SECTION("calls made at once share one connection") {
    auto before = connections();
    std::vector<h2_call> calls(40, h2_call{"GET", emulator.store_b_h2_url(unknown), "", {}});
    auto answers = call_all(calls, ca_file);
    for (const auto& a : answers) {
      CHECK(a.code == CURLE_OK);
      CHECK(a.status == 401);
      CHECK(a.version == CURL_HTTP_VERSION_2_0);
    }
    CHECK(connections() == before + 1);
  }

  SECTION("only h2 is offered, and only to a client that trusts the certificate") {
    auto h1 = call_one({"GET", emulator.store_b_h2_url(unknown)}, ca_file, CURL_HTTP_VERSION_1_1);
    CHECK(h1.code != CURLE_OK);
    CHECK(h1.status == 0);
    auto untrusted = call_one({"GET", emulator.store_b_h2_url(unknown)}, "");
    CHECK(untrusted.code == CURLE_PEER_FAILED_VERIFICATION);
  }

  SECTION("slow and down apply to the HTTP/2 listener too") {
    REQUIRE(control
              .put(emulator.control_url("/control/stores/store_b/mode"),
                   R"({"mode":"slow","delay_ms":300})")
              .status
            == 200);
    auto slow
      = call_all(std::vector<h2_call>(3, {"GET", emulator.store_b_h2_url(unknown)}), ca_file);
    for (const auto& a : slow) {
      CHECK(a.status == 401);
      CHECK(a.seconds >= 0.3);
      CHECK(a.seconds < 3);
    }
    const auto port = stores().at("store_b").at("h2_port").to_number<int>();
    REQUIRE(
      control.put(emulator.control_url("/control/stores/store_b/mode"), R"({"mode":"down"})").status
      == 200);
    CHECK(call_one({"GET", emulator.store_b_h2_url(unknown)}, ca_file).code
          == CURLE_COULDNT_CONNECT);
    CHECK(stores().at("store_b").at("listening") == false);
    REQUIRE(
      control.put(emulator.control_url("/control/stores/store_b/mode"), R"({"mode":"up"})").status
      == 200);
    CHECK(stores().at("store_b").at("h2_port").to_number<int>() == port);
    auto back = call_one({"GET", emulator.store_b_h2_url(unknown)}, ca_file);
    CHECK(back.status == 401);
    CHECK(back.seconds < 3);
  }
  std::remove(ca_file.c_str());
}

// The emulator's webhook receiver (PROTOCOL.md "Webhook receiver") through the
// real binary: what it records, and each way it can be told to answer.

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <boost/json/serialize.hpp>
#include <curl/curl.h>

#include "test_client.hpp"

using namespace emulator_test;
namespace json = boost::json;

namespace {

json::array deliveries(http_client& client, emulator_process& emulator, const std::string& name) {
  auto r = client.get(emulator.control_url("/control/webhooks/" + name));
  REQUIRE(r.status == 200);
  return r.json().at("deliveries").as_array();
}

void set_mode(http_client& client, emulator_process& emulator, const std::string& name,
              const json::object& mode) {
  auto r = client.post(emulator.control_url("/control/webhooks/" + name + "/mode"),
                       json::serialize(mode));
  INFO(r.body);
  REQUIRE(r.status == 200);
}

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

size_t discard(char*, size_t size, size_t n, void*) {
  return size * n;
}

// A POST that gives up after `timeout_ms` (http_client waits 20 s).
CURLcode post_with_timeout(const std::string& url, const std::string& body, long timeout_ms) {
  CURL* curl = curl_easy_init();
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
  auto code = curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  return code;
}

} // namespace

TEST_CASE("webhook receiver: records each delivery exactly, answers 200 by default") {
  emulator_process emulator;
  http_client client;
  CHECK(deliveries(client, emulator, "shop").empty());

  // Bytes a JSON re-serialization would change: spacing, escapes, non-ASCII.
  const std::string body = "{\"id\": \"evt_1\",  \"data\":{\"name\":\"caf\xc3\xa9 \\u00e9\"}}\n";
  const std::vector<std::string> headers = {
    "Content-Type: application/json",
    "X-SHA256-Digest: 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    "Receiptd-Signature: t=1700000000,v1=abc",
    "Receiptd-Event-Id: evt_1",
  };
  auto before = now_ms();
  auto r = client.post(emulator.control_url("/webhooks/shop"), body, headers);
  auto after = now_ms();
  CHECK(r.status == 200);
  CHECK(r.json().at("received") == true);
  CHECK(client.post(emulator.control_url("/webhooks/shop"), "second").status == 200);

  auto list = deliveries(client, emulator, "shop");
  REQUIRE(list.size() == 2);
  const auto& d = list.at(0).as_object();
  CHECK(d.at("method") == "POST");
  CHECK(d.at("path") == "/webhooks/shop");
  CHECK(d.at("body").as_string() == body);
  CHECK(d.at("status_answered") == 200);
  CHECK(d.at("at_ms").as_int64() >= before);
  CHECK(d.at("at_ms").as_int64() <= after);
  const auto& h = d.at("headers").as_object();
  CHECK(h.at("content-type") == "application/json");
  CHECK(h.at("x-sha256-digest")
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(h.at("receiptd-signature") == "t=1700000000,v1=abc");
  CHECK(h.at("receiptd-event-id") == "evt_1");
  CHECK(h.at("content-length").as_string() == std::to_string(body.size()));
  CHECK(list.at(1).at("body") == "second");

  // Endpoints are separate.
  CHECK(deliveries(client, emulator, "other").empty());
  // Only POST delivers; the rest of the control API is still there.
  CHECK(client.get(emulator.control_url("/webhooks/shop")).status == 405);
  CHECK(deliveries(client, emulator, "shop").size() == 2);
  CHECK(client.get(emulator.control_url("/control/calls")).status == 200);
}

TEST_CASE("webhook receiver: a status for N requests, then 200 again") {
  emulator_process emulator;
  http_client client;
  auto url = emulator.control_url("/webhooks/flaky");
  set_mode(client, emulator, "flaky", {{"status", 500}, {"times", 2}});
  CHECK(client.post(url, "1").status == 500);
  CHECK(client.post(url, "2").status == 500);
  CHECK(client.post(url, "3").status == 200);
  CHECK(client.post(url, "4").status == 200);

  set_mode(client, emulator, "flaky", {{"status", 503}}); // until told otherwise
  CHECK(client.post(url, "5").status == 503);
  CHECK(client.post(url, "6").status == 503);
  auto mode = client.get(emulator.control_url("/control/webhooks/flaky/mode")).json();
  CHECK(mode.at("status") == 503);
  CHECK(mode.at("times").is_null());

  std::vector<std::int64_t> answered;
  for (const auto& d : deliveries(client, emulator, "flaky"))
    answered.push_back(d.at("status_answered").as_int64());
  CHECK(answered == std::vector<std::int64_t>{500, 500, 200, 200, 503, 503});
}

TEST_CASE("webhook receiver: late answers and no answer at all") {
  emulator_process emulator;
  http_client client;
  set_mode(client, emulator, "slow", {{"status", 201}, {"delay_ms", 300}, {"times", 1}});
  auto late = client.post(emulator.control_url("/webhooks/slow"), "late");
  CHECK(late.status == 201);
  CHECK(late.seconds >= 0.29);
  CHECK(client.post(emulator.control_url("/webhooks/slow"), "on time").status == 200);

  set_mode(client, emulator, "stuck", {{"hang", true}, {"times", 1}});
  CHECK(post_with_timeout(emulator.control_url("/webhooks/stuck"), "held", 500)
        == CURLE_OPERATION_TIMEDOUT);
  // The control port still answers while a request hangs, and the next one is answered.
  CHECK(client.post(emulator.control_url("/webhooks/stuck"), "answered").status == 200);
  auto list = deliveries(client, emulator, "stuck");
  REQUIRE(list.size() == 2);
  CHECK(list.at(0).at("body") == "held");
  CHECK(list.at(0).at("status_answered").is_null());
  CHECK(list.at(1).at("status_answered") == 200);
}

TEST_CASE("webhook receiver: clearing, reset and bad requests") {
  emulator_process emulator;
  http_client client;
  set_mode(client, emulator, "gone", {{"status", 500}});
  CHECK(client.post(emulator.control_url("/webhooks/gone"), "x").status == 500);
  CHECK(client.post(emulator.control_url("/webhooks/kept"), "y").status == 200);

  auto cleared = client.request("DELETE", emulator.control_url("/control/webhooks/gone"));
  CHECK(cleared.status == 200);
  CHECK(deliveries(client, emulator, "gone").empty());
  CHECK(client.post(emulator.control_url("/webhooks/gone"), "x").status == 200); // mode too
  CHECK(deliveries(client, emulator, "kept").size() == 1);

  CHECK(client.post(emulator.control_url("/control/reset"), "").status == 200);
  CHECK(deliveries(client, emulator, "kept").empty());
  CHECK(deliveries(client, emulator, "gone").empty());

  auto mode_url = emulator.control_url("/control/webhooks/gone/mode");
  CHECK(client.post(mode_url, "{not json").status == 400);
  CHECK(client.post(mode_url, R"({"status":42})").status == 400);
  CHECK(client.post(mode_url, R"({"hang":"yes"})").status == 400);
  CHECK(client.post(mode_url, R"({"times":0})").status == 400);
  CHECK(client.post(mode_url, R"({"delay_ms":-1})").status == 400);
  CHECK(client.post(emulator.control_url("/webhooks/gone"), "x").status == 200); // unchanged
  CHECK(client.post(emulator.control_url("/webhooks/b%20d"), "x").status == 400);
  CHECK(client.get(emulator.control_url("/control/webhooks/gone/other")).status == 404);
  CHECK(client.post(emulator.control_url("/control/webhooks/gone"), "{}").status == 405);
}

// An internal failure while a Store A receipt is checked is ours, not the
// receipt's: the upload is answered 500 with the error shape and
// nothing is stored — never a fraud verdict. The failure is injected through
// verify_options' test seam, which the validator passes on from its settings.

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <fstream>
#include <new>
#include <sstream>

#include "actors/app_context.hpp"
#include "fixture.hpp"
#include "model/encoding.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

std::shared_ptr<const model::store_a::trust_anchors> apple_root() {
  std::string path = RECEIPTD_SOURCE_DIR;
  path += "/config/trust/apple-root-ca.pem";
  std::ifstream in(path);
  std::ostringstream pem;
  pem << in.rdbuf();
  auto anchors = model::store_a::load_trust_anchors({{pem.str()}, {}, {}});
  REQUIRE(anchors);
  return *anchors;
}

struct store_a_bench : actor_fixture {
  std::shared_ptr<persistence_log> log = std::make_shared<persistence_log>();
  std::shared_ptr<recording_sink> sink = std::make_shared<recording_sink>();

  void upload(void (*fault)()) {
    auto d = std::make_shared<validator_deps>();
    d->persistence = keep(sys->spawn(fake_persistence, log));
    d->trust = apple_root();
    d->settings.store_deadline = std::chrono::seconds(5);
    d->settings.retry = {1000, 60000, 2.0, 5};
    d->settings.store_a_verify.fault_for_tests = fault;
    model::app a;
    a.id = "app-1";
    a.bundle_id = "com.example";
    inbound in{http::inbound_request(http::route::store_a_upload), nullptr};
    in.request.body = R"({"receipt":")" + model::base64_encode("not a receipt") + R"("})";
    in.request.peer_ip = "10.0.0.1";
    in.request.trace_id = "t1";
    in.reply = sink;
    sys->spawn(validate_upload, std::move(in), make_app_context(a), validator_deps_ptr(d));
    run();
  }
};

} // namespace

TEST_CASE("an internal verification failure is a 500, never a fraud verdict",
          "[actors][validator][hostile]") {
  store_a_bench b;
  b.upload([] { throw std::bad_alloc(); });
  REQUIRE(b.sink->replies.size() == 1);
  CHECK(b.sink->replies[0].status == 500); // it was once 402 malformed_receipt, stored
  auto body = boost::json::parse(b.sink->replies[0].body);
  CHECK(body.at("errors").at(0).at("code") == "internal_error");
  CHECK_FALSE(body.as_object().contains("receipt")); // no record was made
}

TEST_CASE("without the fault the same upload is the usual 402", "[actors][validator][hostile]") {
  store_a_bench b;
  b.upload(nullptr);
  REQUIRE(b.sink->replies.size() == 1);
  CHECK(b.sink->replies[0].status == 402);
  auto body = boost::json::parse(b.sink->replies[0].body);
  CHECK(body.at("errors").at(0).at("code") == "malformed_receipt");
}

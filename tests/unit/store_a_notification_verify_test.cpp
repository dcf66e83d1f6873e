// A notification checked end to end (model/store_a/notification_verify.hpp):
// the public Apple notifications verify, nested JWS included, for
// their own bundle id only; anything tampered with, foreign or test-signed is
// unauthorized; a verified payload that is not a notification is bad_request.

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "model/store_a/notification_verify.hpp"
#include "tests/support/crypto/test_jws.hpp"
#include "tests/unit/store_a_fixtures.hpp"

using namespace store_a_fixtures;
using namespace receiptd::model;
namespace json = boost::json;
namespace ts = receiptd::test_support;

namespace {

const sa::trust_anchors& apple_root_g3() {
  static const auto anchors = load({{trust_pem("apple-root-ca-g3.pem")}, {}, {}});
  return *anchors;
}

std::string vector_jws(const std::string& name) {
  return read_file(data_path("apple-jws-notification/" + name + "/jws.txt"));
}

std::string bundle_of(const std::string& name) {
  auto payload
    = json::parse(read_file(data_path("apple-jws-notification/" + name + "/payload.json")));
  return std::string(payload.at("data").at("bundleId").as_string());
}

} // namespace

TEST_CASE("Apple's notifications verify end to end for their own app", "[notification]") {
  for (const char* name : {"session-pro-refund-sandbox-2025", "session-pro-did-renew-sandbox-2025",
                           "dmzlingyin-aitubo-did-change-renewal-status-production-2025",
                           "aporat-test-sandbox-2022"}) {
    INFO(name);
    auto jws = vector_jws(name);
    auto bundle = bundle_of(name);
    auto v = sa::verify_notification(jws, apple_root_g3(), bundle);
    INFO((v ? std::string() : v.err().message()));
    REQUIRE(v);
    CHECK(v->n.bundle_id == bundle);
    CHECK(v->transaction.has_value() == !v->n.signed_transaction_info.empty());
    CHECK(v->renewal.has_value() == !v->n.signed_renewal_info.empty());
    if (v->transaction)
      CHECK(v->transaction->bundle_id == bundle);

    auto foreign = sa::verify_notification(jws, apple_root_g3(), "com.example.other");
    REQUIRE_FALSE(foreign);
    CHECK(foreign.err().code() == errc::unauthorized);
  }
}

TEST_CASE("a tampered, foreign-signed or test-signed notification is unauthorized",
          "[notification]") {
  auto name = "session-pro-refund-sandbox-2025";
  auto jws = vector_jws(name);
  auto bundle = bundle_of(name);
  // One character of the payload changed: the signature no longer covers it.
  auto dot = jws.find('.');
  auto tampered = jws;
  tampered[dot + 10] = tampered[dot + 10] == 'A' ? 'B' : 'A';
  auto r = sa::verify_notification(tampered, apple_root_g3(), bundle);
  REQUIRE_FALSE(r);
  CHECK(r.err().code() == errc::unauthorized);

  // A well-formed notification signed by a chain that is not Apple's.
  auto rogue = ts::make_jws_pki("rogue");
  json::object payload{{"notificationType", "REFUND"},
                       {"notificationUUID", "0b5b2a59-32b1-4a2b-8d5f-4b8c3a6f0e11"},
                       {"data", json::object{{"bundleId", bundle}, {"environment", "Sandbox"}}},
                       {"version", "2.0"},
                       {"signedDate", 1760592122788}};
  auto forged = ts::make_storekit_jws(json::serialize(payload), rogue);
  r = sa::verify_notification(forged, apple_root_g3(), bundle);
  REQUIRE_FALSE(r);
  CHECK(r.err().code() == errc::unauthorized);

  // The same chain trusted: it verifies; with a payload that is no notification
  // it is bad_request, and a nested transaction signed by another chain is
  // unauthorized.
  auto trusted = load({{rogue.root.pem()}, {}, {}});
  CHECK(sa::verify_notification(forged, *trusted, bundle));
  auto not_a_notification = ts::make_storekit_jws(R"({"signedDate":1760592122788})", rogue);
  r = sa::verify_notification(not_a_notification, *trusted, bundle);
  REQUIRE_FALSE(r);
  CHECK(r.err().code() == errc::bad_request);
  auto other = ts::make_jws_pki("other");
  ts::transaction_fields t;
  t.bundle_id = bundle;
  payload["data"].as_object()["signedTransactionInfo"]
    = ts::make_storekit_jws(ts::transaction_payload_json(t), other);
  r = sa::verify_notification(ts::make_storekit_jws(json::serialize(payload), rogue), *trusted,
                              bundle);
  REQUIRE_FALSE(r);
  CHECK(r.err().code() == errc::unauthorized);
}

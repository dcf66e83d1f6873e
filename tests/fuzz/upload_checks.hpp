#pragma once
// Properties of every upload endpoint (SPEC §4, DESIGN.md §2): a refused body
// gets the error shape, an accepted one becomes a resource that echoes what the
// client sent.

#include <boost/json.hpp>

#include "model/resource_json.hpp"
#include "model/store_a/app_transaction.hpp"
#include "model/upload_request.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace receiptd::fuzz {

inline constexpr std::string_view peer_ip = "198.51.100.7";

// The 422 body: every error has a code and a message, and the body is JSON.
inline void check_refusal(const model::field_errors& errors) {
  FUZZ_CHECK(!errors.empty());
  for (const auto& e : errors)
    FUZZ_CHECK(!e.code.empty() && !e.message.empty());
  auto body = parses_as_json(model::error_body(errors));
  FUZZ_CHECK(body.as_object().at("errors").as_array().size() == errors.size());
}

// The resource echoes user_identifier, metadata and ip_address as parsed.
inline void check_echo(const model::upload_common& sent, const boost::json::object& resource) {
  namespace json = boost::json;
  const auto& user = resource.at("user_identifier");
  if (sent.user_identifier)
    FUZZ_CHECK(user.is_string() && user.as_string() == *sent.user_identifier);
  else
    FUZZ_CHECK(user.is_null());
  const auto& metadata = resource.at("metadata");
  if (sent.metadata) {
    FUZZ_CHECK(metadata == parses_as_json(*sent.metadata));
  } else {
    FUZZ_CHECK(metadata.is_null());
  }
  const auto& ip = resource.at("ip_address");
  using kind = model::ip_choice::kind;
  switch (sent.ip.k) {
    case kind::omitted:
      FUZZ_CHECK(ip.is_string() && ip.as_string() == peer_ip);
      break;
    case kind::null:
      FUZZ_CHECK(ip.is_null());
      break;
    case kind::address:
      FUZZ_CHECK(ip.is_string() && ip.as_string() == sent.ip.address);
      break;
  }
}

inline boost::json::object resource_of(const model::receipt_record& r) {
  return model::receipt_json(r);
}
inline boost::json::object resource_of(const model::purchase_order_record& r) {
  return model::purchase_order_json(r);
}
inline boost::json::object resource_of(const model::transaction_record& r) {
  return model::transaction_json(r);
}
inline boost::json::object resource_of(const model::store_a::app_transaction_record& r) {
  return model::app_transaction_json(r);
}

// The body sent to the client for this record, and the resource as JSON.
template <class Record>
boost::json::object check_answer(const Record& record, model::fraud_reason own_verdict) {
  auto answer = model::answer_for(record, own_verdict);
  FUZZ_CHECK(answer.status >= 200 && answer.status < 500);
  parses_as_json(answer.body);
  auto text = boost::json::serialize(resource_of(record));
  return parses_as_json(text).as_object();
}

inline model::app fuzz_app() {
  model::app a;
  a.id = "00000000-0000-4000-8000-000000000001";
  a.name = "fuzz";
  a.bundle_id = "com.example.receiptd";
  a.package_name = "com.example.receiptd";
  return a;
}

} // namespace receiptd::fuzz

#include "store_a_notifications.hpp"

#include <curl/curl.h>

#include <boost/json/serialize.hpp>

#include <chrono>

#include "field_reader.hpp"
#include "model/encoding.hpp"
#include "renewal_info.hpp"
#include "state.hpp"
#include "tests/support/crypto/test_jws.hpp"

namespace receiptd::emulator {

namespace {

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

constexpr std::int64_t max_ms = 253402300799999; // 9999-12-31

std::string fresh_uuid() {
  auto h = model::hex_encode(model::random_bytes(16));
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-4" + h.substr(13, 3) + "-a" + h.substr(17, 3)
    + "-" + h.substr(20);
}

// The signedTransactionInfo payload from the request's "transaction" object.
std::optional<std::string> transaction_payload(const boost::json::object& o,
                                               const std::string& bundle,
                                               const std::string& environment,
                                               std::int64_t signed_date, field_reader& top) {
  field_reader f(o);
  test_support::transaction_fields x;
  auto id = f.text("transaction_id", true);
  auto product = f.text("product_id", true);
  auto original = f.text("original_transaction_id");
  auto type = f.text("type");
  auto purchase = f.integer("purchase_date_ms", 0, max_ms);
  auto expires = f.integer("expires_date_ms", 0, max_ms);
  x.revocation_date = f.integer("revocation_date_ms", 0, max_ms);
  if (auto reason = f.integer("revocation_reason", 0, 9))
    x.revocation_reason = static_cast<int>(*reason);
  if (!f.error().empty()) {
    top.fail("transaction", f.error());
    return std::nullopt;
  }
  x.transaction_id = *id;
  x.original_transaction_id = original.value_or(*id);
  x.bundle_id = bundle;
  x.product_id = *product;
  x.type = type.value_or("Auto-Renewable Subscription");
  x.purchase_date = purchase.value_or(signed_date);
  x.original_purchase_date = x.purchase_date;
  if (expires)
    x.expires_date = *expires;
  else if (x.type == "Auto-Renewable Subscription")
    x.expires_date = x.purchase_date + 30LL * 86400 * 1000;
  x.environment = environment;
  x.signed_date = signed_date;
  return test_support::transaction_payload_json(x);
}

// The signedRenewalInfo payload from the request's "renewal" object.
std::optional<std::string> renewal_payload(const boost::json::object& o,
                                           const std::string& environment, std::int64_t signed_date,
                                           field_reader& top) {
  field_reader f(o);
  auto original = f.text("original_transaction_id", true);
  auto product = f.text("product_id");
  auto auto_product = f.text("auto_renew_product_id");
  auto status = f.integer("auto_renew_status", 0, 1);
  if (!f.error().empty()) {
    top.fail("renewal", f.error());
    return std::nullopt;
  }
  renewal_fields r;
  r.original_transaction_id = *original;
  r.product_id = product;
  r.auto_renew_product_id = auto_product;
  r.auto_renew_status = static_cast<int>(status.value_or(1));
  r.signed_date = signed_date;
  r.environment = environment;
  return renewal_payload_json(r);
}

std::size_t collect(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// POSTs the body as Apple does; the answer's status and body (status 0: none).
std::pair<long, std::string> send(const std::string& url, const std::string& body) {
  std::string answer;
  long status = 0;
  CURL* h = curl_easy_init();
  if (!h)
    return {0, "curl_easy_init failed"};
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  if (curl_easy_perform(h) == CURLE_OK)
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return {status, answer};
}

} // namespace

reply store_a_notification(const emulator_state& state, const boost::json::object& request) {
  field_reader f(request);
  auto type = f.text("notification_type", true);
  auto subtype = f.text("subtype");
  auto bundle = f.text("bundle_id", true);
  auto environment = f.text("environment");
  if (environment && *environment != "Production" && *environment != "Sandbox")
    f.fail("environment", "must be Production or Sandbox");
  auto uuid = f.text("notification_uuid");
  auto signed_date = f.integer("signed_date_ms", 0, max_ms);
  auto status = f.integer("status", 1, 5);
  auto send_to = f.text("send_to");
  if (send_to && send_to->rfind("http://", 0) != 0 && send_to->rfind("https://", 0) != 0)
    f.fail("send_to", "must be an http(s) URL");
  if (!f.error().empty())
    return json_reply(400, boost::json::object{{"error", f.error()}});

  auto env = environment.value_or("Sandbox");
  auto at = signed_date.value_or(now_ms());
  boost::json::object data{{"appAppleId", 1234567890},
                           {"bundleId", *bundle},
                           {"bundleVersion", "1"},
                           {"environment", env}};
  const auto& pki = state.jws_pki();
  if (auto* t = request.if_contains("transaction"); t && t->is_object()) {
    auto payload = transaction_payload(t->get_object(), *bundle, env, at, f);
    if (payload)
      data["signedTransactionInfo"] = test_support::make_storekit_jws(*payload, pki);
  }
  if (auto* r = request.if_contains("renewal"); r && r->is_object()) {
    auto payload = renewal_payload(r->get_object(), env, at, f);
    if (payload)
      data["signedRenewalInfo"] = test_support::make_storekit_jws(*payload, pki);
  }
  if (!f.error().empty())
    return json_reply(400, boost::json::object{{"error", f.error()}});
  if (status)
    data["status"] = *status;
  boost::json::object payload{{"notificationType", *type}};
  if (subtype)
    payload["subtype"] = *subtype;
  payload["notificationUUID"] = uuid.value_or(fresh_uuid());
  payload["data"] = std::move(data);
  payload["version"] = "2.0";
  payload["signedDate"] = at;
  auto jws = test_support::make_storekit_jws(boost::json::serialize(payload), pki);

  boost::json::object out{{"ok", true}, {"signed_payload", jws}};
  if (send_to) {
    auto [code, body]
      = send(*send_to, boost::json::serialize(boost::json::object{{"signedPayload", jws}}));
    out["status"] = code;
    out["body"] = body;
  }
  return json_reply(200, out);
}

} // namespace receiptd::emulator

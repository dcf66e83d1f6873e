#include "control.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include <openssl/evp.h>

#include "field_reader.hpp"
#include "http_util.hpp"
#include "h2_listener.hpp"
#include "jwt.hpp"
#include "store_a_notifications.hpp"
#include "listener.hpp"
#include "model/encoding.hpp"
#include "store_a.hpp"

namespace receiptd::emulator {

namespace Http = Pistache::Http;

namespace {

reply ok(boost::json::object extra = {}) {
  extra.emplace("ok", true);
  return json_reply(200, extra);
}

reply bad_request(std::string message) {
  return json_reply(400, boost::json::object{{"error", message}});
}

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// An order id in Google's "GPA.3312-3456-7890-12345" form.
std::string generated_order_id() {
  auto bytes = model::random_bytes(16);
  std::string digits;
  for (unsigned char b : bytes)
    digits.push_back(static_cast<char>('0' + b % 10));
  return "GPA.33" + digits.substr(0, 2) + "-" + digits.substr(2, 4) + "-" + digits.substr(6, 4)
    + "-" + digits.substr(10, 5);
}

class control {
public:
  explicit control(control_context& context) : c_(context), state_(*context.state) {}

  reply dispatch(Http::Method method, std::string_view path, std::string_view body) {
    auto s = split_path(path);
    if (s.size() < 2 || s[0] != "control")
      return not_found();
    const bool get = method == Http::Method::Get;
    const bool post = method == Http::Method::Post;
    const bool put = method == Http::Method::Put;
    std::string route; // the path below /control, e.g. "/store_b/purchases"
    for (std::size_t i = 1; i < s.size(); ++i)
      route.append("/").append(s[i]);

    if (route == "/calls")
      return get ? json_reply(200, state_.calls_json()) : not_allowed();
    if (route == "/requests")
      return get ? json_reply(200, state_.requests_json()) : not_allowed();
    if (route == "/refund_answers")
      return get ? json_reply(200, state_.refund_answers_json()) : not_allowed();
    if (route == "/stores")
      return get ? stores() : not_allowed();
    if (route == "/tls/certificate") // PEM: what a client of the _h2 ports trusts
      return get ? reply{200, content_kind::none, c_.tls_certificate_pem, std::nullopt}
                 : not_allowed();
    if (route == "/reset")
      return post ? reset() : not_allowed();
    if (route == "/store_a/server_api/pki")
      return get ? server_api_pki() : not_allowed();
    if (route == "/store_b/revoke_tokens") {
      if (!post)
        return not_allowed();
      state_.revoke_tokens();
      return ok();
    }

    // GET /control/store_b/purchases/{token}: a registered purchase's state.
    if (s.size() == 4 && s[1] == "store_b" && s[2] == "purchases") {
      if (!get)
        return not_allowed();
      auto token = percent_decode(s[3], false);
      return token ? purchase_state(*token) : bad_request("token is not percent-encoded");
    }

    std::optional<store_id> store;
    if (s.size() == 4 && s[1] == "stores" && s[3] == "mode" && (store = parse_store_id(s[2]))) {
      if (get)
        return json_reply(200, mode_json(*store));
      if (!put && !post)
        return not_allowed();
      auto o = parse_object(body);
      return o ? set_mode(*store, *o) : bad_request("body is not a JSON object");
    }

    // The endpoints that take a JSON object. PUT is accepted where the protocol
    // says PUT; POST everywhere, for clients that only post.
    struct json_route {
      std::string_view path;
      bool put_allowed;
      reply (control::*handle)(const boost::json::object&);
    };
    static constexpr json_route json_routes[] = {
      {"/store_a/receipts", false, &control::register_receipt},
      {"/store_a/shared_secrets", false, &control::shared_secret},
      {"/store_a/server_api/keys", false, &control::server_api_key},
      {"/store_a/transactions", false, &control::register_transaction},
      {"/store_a/app_transactions", false, &control::register_app_transaction},
      {"/store_a/notifications", false, &control::notification},
      {"/store_a/history", true, &control::history},
      {"/store_a/accept_unregistered", true, &control::accept_unregistered_transactions},
      {"/store_b/service_accounts", false, &control::service_account},
      {"/store_b/token_lifetime", true, &control::token_lifetime},
      {"/store_b/purchases", false, &control::register_purchase},
      {"/store_b/accept_unregistered", true, &control::accept_unregistered},
      {"/store_b/acknowledge_failures", true, &control::acknowledge_failures},
      {"/refund_failures", true, &control::refund_failures},
      {"/store_b/voided", false, &control::register_voided},
      {"/store_b/orders", false, &control::register_order},
      {"/store_b/orders_failures", true, &control::orders_failures},
    };
    for (const auto& r : json_routes) {
      if (route != r.path)
        continue;
      if (!post && !(put && r.put_allowed))
        return not_allowed();
      auto o = parse_object(body);
      if (!o)
        return bad_request("body is not a JSON object");
      return (this->*r.handle)(*o);
    }
    return not_found();
  }

private:
  static reply not_found() {
    return json_reply(404, boost::json::object{{"error", "no such control endpoint"}});
  }
  static reply not_allowed() {
    return json_reply(405, boost::json::object{{"error", "method not allowed"}});
  }

  store_listener& listener(store_id s) { return *c_.listeners[static_cast<std::size_t>(s)]; }
  h2_listener* h2(store_id s) { return c_.h2[static_cast<std::size_t>(s)]; }

  // A store's listeners (HTTP/1.1 and HTTP/2) go down and come back together.
  void open_listeners(store_id s) {
    listener(s).open();
    if (auto* h = h2(s))
      h->open();
  }
  void close_listeners(store_id s) {
    listener(s).close();
    if (auto* h = h2(s))
      h->close();
  }

  boost::json::object mode_json(store_id s) {
    auto m = state_.mode(s);
    boost::json::object o{{"mode", to_string(m.mode)},  {"delay_ms", m.delay_ms},
                          {"status", m.status},         {"fraction", m.fraction},
                          {"port", listener(s).port()}, {"listening", listener(s).is_open()}};
    if (auto* h = h2(s)) {
      o["h2_port"] = h->port();
      o["h2_connections"] = h->connections_accepted();
    }
    return o;
  }

  reply stores() {
    return json_reply(200,
                      boost::json::object{{"store_a", mode_json(store_id::store_a)},
                                          {"store_b", mode_json(store_id::store_b)}});
  }

  // Opens or closes the listener to match the mode; "down" really closes it.
  void apply(store_id s, const mode_setting& setting) {
    state_.set_mode(s, setting);
    if (setting.mode == store_mode::down) {
      close_listeners(s);
      return;
    }
    try {
      open_listeners(s);
    } catch (const std::exception&) {
      state_.set_mode(s, {store_mode::down, setting.delay_ms, setting.status, setting.fraction});
      throw;
    }
  }

  reply set_mode(store_id s, const boost::json::object& o) {
    field_reader f(o);
    auto name = f.text("mode", true);
    auto delay = f.integer("delay_ms", 0, 600000);
    auto status = f.integer("status", 100, 599);
    auto fraction = f.number("fraction", 0.0, 1.0);
    std::optional<store_mode> mode = name ? parse_store_mode(*name) : std::nullopt;
    if (name && !mode)
      f.fail("mode", "must be one of up, down, error, html, slow");
    if (!f.error().empty())
      return bad_request(f.error());
    mode_setting setting{*mode, static_cast<int>(delay.value_or(300)),
                         static_cast<int>(status.value_or(503)), fraction.value_or(1.0)};
    std::lock_guard lock(c_.switching);
    try {
      apply(s, setting);
    } catch (const std::exception& e) {
      return json_reply(
        500,
        boost::json::object{{"error", std::string("cannot reopen the listener: ") + e.what()}});
    }
    return ok({{"store", to_string(s)}, {"mode", to_string(setting.mode)}});
  }

  reply reset() {
    std::lock_guard lock(c_.switching);
    state_.reset();
    try {
      for (auto s : {store_id::store_a, store_id::store_b})
        open_listeners(s);
    } catch (const std::exception& e) {
      return json_reply(
        500, boost::json::object{{"error", std::string("cannot reopen a listener: ") + e.what()}});
    }
    return ok();
  }

  reply register_receipt(const boost::json::object& o) {
    field_reader f(o);
    auto data = f.text("receipt_data");
    auto hash = f.text("receipt_sha256");
    apple_answer answer;
    answer.status = static_cast<int>(f.integer("status", 0, 99999).value_or(0));
    answer.environment = f.text("environment");
    answer.is_retryable = f.boolean("is_retryable");
    answer.body = f.any("body");
    answer.belongs_to = f.text("belongs_to");
    if (answer.belongs_to && *answer.belongs_to != "Sandbox" && *answer.belongs_to != "Production")
      f.fail("belongs_to", "must be Sandbox or Production");
    if (!data && !hash)
      f.fail("receipt_data", "or receipt_sha256 is required");
    std::string key;
    if (data) {
      auto bytes = model::base64_decode(*data);
      if (!bytes || bytes->empty())
        f.fail("receipt_data", "is not base64");
      else
        key = model::sha256_hex(*bytes);
    } else if (hash) {
      key = *hash;
      for (auto& ch : key)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (key.size() != 64 || key.find_first_not_of("0123456789abcdef") != std::string::npos)
        f.fail("receipt_sha256", "must be 64 hex digits");
    }
    if (!f.error().empty())
      return bad_request(f.error());
    state_.register_receipt(key, std::move(answer));
    return ok({{"receipt_sha256", key}});
  }

  reply shared_secret(const boost::json::object& o) {
    field_reader f(o);
    auto bundle = f.text("bundle_id", true);
    auto password = f.text("password", true);
    if (!f.error().empty())
      return bad_request(f.error());
    state_.set_shared_secret(*bundle, *password);
    return ok();
  }

  // The root receiptd's tests add to store-a.trust-roots (and the two below it).
  reply server_api_pki() {
    const auto& pki = state_.jws_pki();
    return ok({{"root_pem", pki.root.pem()},
               {"intermediate_pem", pki.intermediate.pem()},
               {"leaf_pem", pki.leaf.pem()}});
  }

  // {"issuer_id","key_id","bundle_id","public_key_pem"} (or "private_key_pem",
  // e.g. the .p8 file's text: only the public half is kept). EC P-256 only.
  reply server_api_key(const boost::json::object& o) {
    field_reader f(o);
    server_api_credential c;
    auto issuer = f.text("issuer_id", true);
    auto key_id = f.text("key_id", true);
    auto bundle = f.text("bundle_id", true);
    auto pem = f.text("public_key_pem");
    if (!pem)
      pem = f.text("private_key_pem");
    if (!pem)
      f.fail("public_key_pem", "(or private_key_pem) is required");
    if (!f.error().empty())
      return bad_request(f.error());
    c.public_key = load_public_key(*pem);
    if (!c.public_key)
      return bad_request("public_key_pem is not a PEM public key, certificate or private key");
    if (!is_ec_p256(c.public_key.get()))
      return bad_request("the key must be EC P-256 (App Store Connect keys are; JWTs are ES256)");
    c.issuer_id = *issuer;
    c.key_id = *key_id;
    c.bundle_id = *bundle;
    state_.add_server_api_key(std::move(c));
    return ok({{"key_id", *key_id}});
  }

  // A transaction the Server API knows; answers the JWS the device would upload.
  // Signs (and, with send_to, sends) an App Store Server Notification V2.
  reply notification(const boost::json::object& o) { return store_a_notification(state_, o); }

  reply register_transaction(const boost::json::object& o) {
    field_reader f(o);
    apple_transaction t;
    auto& x = t.fields;
    auto id = f.text("transaction_id", true);
    auto bundle = f.text("bundle_id", true);
    auto product = f.text("product_id", true);
    auto environment = f.text("environment");
    if (environment && *environment != "Production" && *environment != "Sandbox")
      f.fail("environment", "must be Production or Sandbox");
    auto known_in = f.text("known_in");
    if (known_in && *known_in != "own" && *known_in != "both" && *known_in != "none")
      f.fail("known_in", "must be own, both or none");
    auto original = f.text("original_transaction_id");
    auto type = f.text("type");
    constexpr std::int64_t max_ms = 253402300799999; // 9999-12-31
    auto purchase = f.integer("purchase_date_ms", 0, max_ms);
    auto original_purchase = f.integer("original_purchase_date_ms", 0, max_ms);
    auto expires = f.integer("expires_date_ms", 0, max_ms);
    x.revocation_date = f.integer("revocation_date_ms", 0, max_ms);
    if (auto reason = f.integer("revocation_reason", 0, 9))
      x.revocation_reason = static_cast<int>(*reason);
    x.app_account_token = f.text("app_account_token");
    x.web_order_line_item_id = f.text("web_order_line_item_id");
    x.app_transaction_id = f.text("app_transaction_id"); // Get App Transaction Info finds it
    auto quantity = f.integer("quantity", 1, 1000000);
    // storefront, price, currency: absent → USA / 9990 / USD; null → left out
    // of the payload (as in 2023 payloads).
    auto storefront = f.text("storefront");
    auto price = f.integer("price", 0, std::numeric_limits<std::int64_t>::max());
    auto currency = f.text("currency");
    if (auto status = f.integer("http_status", 100, 599))
      t.http_status = static_cast<int>(*status);
    t.body = f.any("body");
    t.retry_after = f.text("retry_after");
    t.signed_transaction_info = f.text("signed_transaction_info");
    t.customer = f.text("customer").value_or("");
    // Members a later JWSTransactionDecodedPayload has (offerType,
    // revocationType, commitmentInfo, …), signed as given after the others.
    if (auto extra = f.any("payload_extra")) {
      if (extra->is_object())
        x.extra = extra->get_object();
      else
        f.fail("payload_extra", "must be an object");
    }
    // Get All Subscription Statuses (PROTOCOL.md): Apple's status 1–5, the
    // group, the renewal info, and that endpoint's own overrides.
    if (auto status = f.integer("subscription_status", 1, 5))
      t.subscription_status = static_cast<int>(*status);
    auto group = f.text("subscription_group_id");
    if (group && group->empty())
      f.fail("subscription_group_id", "must not be empty");
    if (auto renew = f.integer("auto_renew_status", 0, 1))
      t.auto_renew_status = static_cast<int>(*renew);
    t.auto_renew_product_id = f.text("auto_renew_product_id");
    if (auto status = f.integer("statuses_http_status", 100, 599))
      t.statuses_http_status = static_cast<int>(*status);
    t.statuses_body = f.any("statuses_body");
    if (id && id->empty())
      f.fail("transaction_id", "must not be empty");
    if (!f.error().empty())
      return bad_request(f.error());

    auto is_null = [&o](std::string_view key) {
      auto* v = o.if_contains(key);
      return v && v->is_null();
    };
    x.transaction_id = *id;
    x.original_transaction_id = original.value_or(*id);
    x.bundle_id = *bundle;
    x.product_id = *product;
    x.environment = environment.value_or("Sandbox");
    x.type = type.value_or("Auto-Renewable Subscription");
    x.purchase_date = purchase.value_or(now_ms());
    x.original_purchase_date = original_purchase.value_or(x.purchase_date);
    if (expires)
      x.expires_date = *expires;
    else if (x.type == "Auto-Renewable Subscription") // Apple always dates a subscription
      x.expires_date = x.purchase_date + 30LL * 86400 * 1000;
    x.quantity = static_cast<int>(quantity.value_or(1));
    using opt_text = std::optional<std::string>;
    x.storefront = is_null("storefront") ? opt_text() : opt_text(storefront.value_or("USA"));
    x.price = is_null("price") ? std::optional<std::int64_t>() : price.value_or(9990);
    x.currency = is_null("currency") ? opt_text() : opt_text(currency.value_or("USD"));
    t.known_in = known_in.value_or("own");
    if (group)
      t.subscription_group_id = *group;

    auto device_jws = signed_transaction(state_, t, x.environment);
    state_.register_transaction(std::move(t));
    return ok({{"signed_transaction", device_jws}});
  }

  // An app transaction Get App Transaction Info knows; answers the JWS the
  // device would upload (its deviceVerification made for the registered nonce
  // and device verification id).
  reply register_app_transaction(const boost::json::object& o) {
    field_reader f(o);
    apple_app_transaction t;
    auto& x = t.fields;
    auto id = f.text("app_transaction_id", true);
    auto bundle = f.text("bundle_id", true);
    auto environment = f.text("environment");
    if (environment && *environment != "Production" && *environment != "Sandbox")
      f.fail("environment", "must be Production or Sandbox");
    auto known_in = f.text("known_in");
    if (known_in && *known_in != "own" && *known_in != "both" && *known_in != "none")
      f.fail("known_in", "must be own, both or none");
    constexpr std::int64_t max_ms = 253402300799999; // 9999-12-31
    auto original_purchase = f.integer("original_purchase_date_ms", 0, max_ms);
    x.preorder_date = f.integer("preorder_date_ms", 0, max_ms);
    auto original_version = f.text("original_application_version");
    auto version = f.text("application_version");
    auto nonce = f.text("device_verification_nonce");
    auto device_id = f.text("device_verification_id");
    if (auto status = f.integer("http_status", 100, 599))
      t.http_status = static_cast<int>(*status);
    t.body = f.any("body");
    t.retry_after = f.text("retry_after");
    t.signed_app_transaction_info = f.text("signed_app_transaction_info");
    if (auto extra = f.any("payload_extra")) {
      if (extra->is_object())
        x.extra = extra->get_object();
      else
        f.fail("payload_extra", "must be an object");
    }
    if (id && id->empty())
      f.fail("app_transaction_id", "must not be empty");
    if (!f.error().empty())
      return bad_request(f.error());
    x.app_transaction_id = *id;
    x.bundle_id = *bundle;
    x.receipt_type = environment.value_or("Sandbox");
    if (x.receipt_type == "Sandbox") // Apple gives sandbox app transactions no app id
      x.app_apple_id.reset();
    if (original_purchase)
      x.original_purchase_date = *original_purchase;
    if (original_version)
      x.original_application_version = *original_version;
    if (version)
      x.application_version = *version;
    if (nonce)
      x.device_verification_nonce = *nonce;
    if (device_id)
      x.device_verification_id = *device_id;
    t.known_in = known_in.value_or("own");
    auto device_jws = signed_app_transaction(state_, t, x.receipt_type, true);
    boost::json::object answer{{"signed_app_transaction", device_jws},
                               {"device_verification_nonce", x.device_verification_nonce},
                               {"device_verification_id", x.device_verification_id}};
    state_.register_app_transaction(std::move(t));
    return ok(std::move(answer));
  }

  // Get Transaction History's page size and an injected failing page.
  reply history(const boost::json::object& o) {
    field_reader f(o);
    history_setting h;
    if (auto size = f.integer("page_size", 1, 1000))
      h.page_size = static_cast<int>(*size);
    if (auto page = f.integer("fail_page", 0, 1000000))
      h.fail_page = static_cast<int>(*page);
    if (auto status = f.integer("fail_status", 100, 599))
      h.fail_status = static_cast<int>(*status);
    if (!f.error().empty())
      return bad_request(f.error());
    state_.set_history(h);
    return ok();
  }

  // Takes {"client_email","public_key_pem"} or a service-account JSON file as
  // is ({"client_email","private_key",…}): only the public half is kept.
  reply service_account(const boost::json::object& o) {
    field_reader f(o);
    auto email = f.text("client_email", true);
    auto pem = f.text("public_key_pem");
    if (!pem)
      pem = f.text("private_key");
    if (!pem)
      f.fail("public_key_pem", "(or private_key) is required");
    if (!f.error().empty())
      return bad_request(f.error());
    auto key = load_public_key(*pem);
    if (!key)
      return bad_request("public_key_pem is not a PEM public key, certificate or private key");
    if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA)
      return bad_request("the key must be RSA (the token endpoint takes RS256 only)");
    state_.add_service_account(*email, std::move(key));
    return ok();
  }

  reply token_lifetime(const boost::json::object& o) {
    field_reader f(o);
    auto seconds = f.integer("seconds", 0, 366LL * 86400, true);
    if (!f.error().empty())
      return bad_request(f.error());
    state_.set_token_lifetime(*seconds);
    return ok();
  }

  reply register_purchase(const boost::json::object& o) {
    field_reader f(o);
    play_purchase p;
    auto package = f.text("package_name", true);
    auto product = f.text("product_id", true);
    auto token = f.text("token", true);
    auto kind = f.text("kind");
    if (kind && *kind != "product" && *kind != "subscription")
      f.fail("kind", "must be product or subscription");
    p.test = f.boolean("test").value_or(false);
    p.purchase_state = static_cast<int>(f.integer("purchase_state", 0, 10).value_or(0));
    p.consumption_state = static_cast<int>(f.integer("consumption_state", 0, 10).value_or(0));
    p.acknowledged = f.boolean("acknowledged").value_or(true);
    p.auto_renewing = f.boolean("auto_renewing").value_or(true);
    constexpr std::int64_t max_ms = 253402300799999; // 9999-12-31
    auto purchase_time = f.integer("purchase_time_ms", 0, max_ms);
    auto expiry = f.integer("expiry_ms", 0, max_ms);
    auto order = f.text("order_id");
    auto region = f.text("region_code");
    p.subscription_state = f.text("subscription_state");
    if (auto q = f.integer("quantity", 1, 1000000))
      p.quantity = static_cast<int>(*q);
    if (auto q = f.integer("refundable_quantity", 0, 1000000))
      p.refundable_quantity = static_cast<int>(*q);
    if (auto line = f.any("line_item")) {
      if (!line->is_object())
        f.fail("line_item", "must be an object");
      else
        p.line_item = line->get_object();
    }
    p.productsv2 = f.boolean("productsv2").value_or(true);
    p.products = f.boolean("products").value_or(true);
    if (auto items = f.any("product_line_items")) {
      if (!items->is_array())
        f.fail("product_line_items", "must be an array");
      else
        p.product_line_items = items->get_array();
    }
    p.offer_id = f.text("offer_id");
    p.purchase_option_id = f.text("purchase_option_id");
    if (auto status = f.integer("http_status", 100, 599))
      p.http_status = static_cast<int>(*status);
    p.body = f.any("body");
    p.retry_after = f.text("retry_after");
    if (!f.error().empty())
      return bad_request(f.error());
    p.package_name = *package;
    p.product_id = *product;
    p.token = *token;
    p.kind = kind.value_or("product");
    p.purchase_time_ms = purchase_time.value_or(now_ms());
    p.expiry_ms = expiry.value_or(p.purchase_time_ms + 30LL * 86400 * 1000);
    p.order_id = order.value_or(generated_order_id());
    p.region_code = region.value_or("US");
    auto echo_order = p.order_id;
    state_.register_purchase(std::move(p));
    return ok({{"order_id", echo_order}});
  }

  reply purchase_state(const std::string& token) {
    auto p = state_.purchase(token);
    if (!p)
      return json_reply(404,
                        boost::json::object{{"error", "no purchase registered with this token"}});
    return ok({{"package_name", p->package_name},
               {"product_id", p->product_id},
               {"kind", p->kind},
               {"acknowledged", p->acknowledged},
               {"acknowledge_calls", p->acknowledge_calls},
               {"purchase_state", p->purchase_state}});
  }

  // {"count":2,"status":503}: the next `count` acknowledge calls fail; 0 clears.
  reply acknowledge_failures(const boost::json::object& o) {
    field_reader f(o);
    auto count = f.integer("count", 0, 1000000, true);
    auto status = f.integer("status", 100, 599);
    if (!f.error().empty())
      return bad_request(f.error());
    acknowledge_failure_setting failures{static_cast<int>(*count),
                                         static_cast<int>(status.value_or(503))};
    state_.set_acknowledge_failures(failures);
    return ok({{"count", failures.count}, {"status", failures.status}});
  }

  // {"count":2,"status":503}: the next `count` orders calls fail; 0 clears.
  reply orders_failures(const boost::json::object& o) {
    field_reader f(o);
    auto count = f.integer("count", 0, 1000000, true);
    auto status = f.integer("status", 100, 599);
    if (!f.error().empty())
      return bad_request(f.error());
    acknowledge_failure_setting failures{static_cast<int>(*count),
                                         static_cast<int>(status.value_or(503))};
    state_.set_orders_failures(failures);
    return ok({{"count", failures.count}, {"status", failures.status}});
  }

  // "1.99" → Money {"currencyCode","units":"1","nanos":990000000}; nullopt when
  // it is not a non-negative decimal of at most 9 fraction digits.
  static std::optional<boost::json::object> money(const std::string& currency,
                                                  const std::string& text) {
    auto dot = text.find('.');
    auto whole = text.substr(0, dot);
    auto frac = dot == std::string::npos ? std::string() : text.substr(dot + 1);
    auto digits = [](const std::string& t) {
      return std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (whole.empty() || whole.size() > 15 || frac.size() > 9 || !digits(whole) || !digits(frac))
      return std::nullopt;
    frac.resize(9, '0');
    return boost::json::object{{"currencyCode", currency},
                               {"units", std::to_string(std::stoll(whole))},
                               {"nanos", std::stoi(frac)}};
  }

  // An order for orders.get / orders.batchGet: `body` verbatim, or one built
  // from decimal amounts (total, tax, each line item's, a full refund's, the
  // partial refunds').
  reply register_order(const boost::json::object& o) {
    field_reader f(o);
    auto package = f.text("package_name", true);
    auto id = f.text("order_id", true);
    auto body = f.any("body");
    auto token = f.text("purchase_token");
    auto currency = f.text("currency_code").value_or("USD");
    auto total = f.text("total");
    auto tax = f.text("tax").value_or("0");
    auto refunded = f.text("refunded");
    auto items = f.any("line_items");
    auto partial = f.any("partial_refunds");
    if (body && !body->is_object())
      f.fail("body", "must be an object");
    if (!body && !total)
      f.fail("total", "is required without body");
    if (!f.error().empty())
      return bad_request(f.error());
    play_order order{*package, *id, {}};
    if (body) {
      order.body = body->get_object();
    } else {
      auto m = [&](const std::string& text) { return money(currency, text); };
      auto total_m = m(*total), tax_m = m(tax);
      if (!total_m || !tax_m)
        return bad_request("total and tax must be decimals such as \"1.99\"");
      boost::json::object b{{"orderId", *id},
                            {"state", refunded ? "REFUNDED" : "PROCESSED"},
                            {"total", *total_m},
                            {"tax", *tax_m}};
      if (token)
        b["purchaseToken"] = *token;
      boost::json::array lines;
      if (items) {
        if (!items->is_array())
          return bad_request("line_items must be an array");
        for (const auto& item : items->get_array()) {
          if (!item.is_object())
            return bad_request("line_items must hold objects");
          field_reader li(item.get_object());
          auto product = li.text("product_id", true);
          auto line_total = li.text("total", true);
          auto line_tax = li.text("tax").value_or("0");
          if (!li.error().empty())
            return bad_request("line_items: " + li.error());
          auto lt = m(*line_total), lx = m(line_tax);
          if (!lt || !lx)
            return bad_request("line_items: total and tax must be decimals");
          lines.push_back(boost::json::object{
            {"productId", *product}, {"total", *lt}, {"tax", *lx}, {"listingPrice", *lt}});
        }
        b["lineItems"] = std::move(lines);
      }
      boost::json::object history;
      if (refunded) {
        auto r = m(*refunded);
        if (!r)
          return bad_request("refunded must be a decimal");
        history["refundEvent"] = boost::json::object{{"refundDetails", boost::json::object{{"total", *r}}}};
      }
      if (partial) {
        if (!partial->is_array())
          return bad_request("partial_refunds must be an array");
        boost::json::array events;
        for (const auto& p : partial->get_array()) {
          auto r = p.is_string() ? m(std::string(p.get_string())) : std::nullopt;
          if (!r)
            return bad_request("partial_refunds must hold decimals");
          events.push_back(boost::json::object{{"refundDetails", boost::json::object{{"total", *r}}}});
        }
        history["partialRefundEvents"] = std::move(events);
      }
      if (!history.empty())
        b["orderHistory"] = std::move(history);
      order.body = std::move(b);
    }
    state_.add_order(std::move(order));
    return ok();
  }

  // {"count":2,"status":503,"retry_after":"1"}: the next `count` refund
  // answers (either store) fail with that status; 0 clears.
  reply refund_failures(const boost::json::object& o) {
    field_reader f(o);
    auto count = f.integer("count", 0, 1000000, true);
    auto status = f.integer("status", 100, 599);
    auto retry_after = f.text("retry_after");
    if (!f.error().empty())
      return bad_request(f.error());
    refund_failure_setting failures{static_cast<int>(*count),
                                    static_cast<int>(status.value_or(503)), retry_after};
    state_.set_refund_failures(failures);
    return ok({{"count", failures.count}, {"status", failures.status}});
  }

  // A voided purchase for voidedpurchases.list; defaults come from the purchase
  // registered under the same token, when there is one.
  reply register_voided(const boost::json::object& o) {
    field_reader f(o);
    play_voided v;
    auto package = f.text("package_name", true);
    auto token = f.text("token", true);
    auto order = f.text("order_id");
    auto kind = f.text("kind");
    if (kind && *kind != "product" && *kind != "subscription")
      f.fail("kind", "must be product or subscription");
    constexpr std::int64_t max_ms = 253402300799999; // 9999-12-31
    auto voided_time = f.integer("voided_time_ms", 0, max_ms);
    auto purchase_time = f.integer("purchase_time_ms", 0, max_ms);
    // Play's voidedSource (0 user, 1 developer, 2 Google) and voidedReason
    // (0 other, 1 remorse, 2 not received, 3 defective, 4 accidental purchase,
    // 5 fraud, 6 friendly fraud, 7 chargeback).
    v.voided_source = static_cast<int>(f.integer("voided_source", 0, 2).value_or(0));
    v.voided_reason = static_cast<int>(f.integer("voided_reason", 0, 7).value_or(0));
    v.voided_quantity = f.integer("voided_quantity", 1, 1000000);
    if (!f.error().empty())
      return bad_request(f.error());
    auto registered = state_.purchase(*token);
    v.package_name = *package;
    v.token = *token;
    v.kind = kind.value_or(registered ? registered->kind : "product");
    v.voided_time_ms = voided_time.value_or(now_ms());
    v.purchase_time_ms
      = purchase_time.value_or(registered ? registered->purchase_time_ms
                                          : std::max<std::int64_t>(0, v.voided_time_ms - 86400000));
    if (order)
      v.order_id = *order;
    else
      v.order_id = registered ? registered->order_id : state_.next_voided_order_id();
    state_.add_voided(std::move(v));
    return ok();
  }

  // {"package_name","kind":"product"|"subscription","test":false,"product_id":"…",
  //  "enabled":true}: unregistered tokens of that package answer as valid purchases.
  reply accept_unregistered(const boost::json::object& o) {
    field_reader f(o);
    auto package = f.text("package_name", true);
    auto kind = f.text("kind");
    if (kind && *kind != "product" && *kind != "subscription")
      f.fail("kind", "must be product or subscription");
    auto test = f.boolean("test");
    auto product = f.text("product_id");
    auto enabled = f.boolean("enabled");
    if (!f.error().empty())
      return bad_request(f.error());
    if (!enabled.value_or(true)) {
      state_.accept_unregistered(*package, std::nullopt);
      return ok({{"package_name", *package}, {"enabled", false}});
    }
    emulator_state::unregistered_policy policy;
    policy.kind = kind.value_or("product");
    policy.test = test.value_or(false);
    if (product)
      policy.product_id = *product;
    state_.accept_unregistered(*package, policy);
    return ok({{"package_name", *package}, {"kind", policy.kind}, {"enabled", true}});
  }

  // {"bundle_id","product_id","type":"Consumable","enabled":true}: transaction ids
  // nobody registered, asked with a JWT of that bundle, answer as purchases.
  reply accept_unregistered_transactions(const boost::json::object& o) {
    field_reader f(o);
    auto bundle = f.text("bundle_id", true);
    auto product = f.text("product_id");
    auto type = f.text("type");
    auto enabled = f.boolean("enabled");
    if (!f.error().empty())
      return bad_request(f.error());
    if (!enabled.value_or(true)) {
      state_.accept_unregistered_transactions(*bundle, std::nullopt);
      return ok({{"bundle_id", *bundle}, {"enabled", false}});
    }
    if (!product || product->empty())
      return bad_request("product_id is required");
    emulator_state::store_a_unregistered_policy policy;
    policy.product_id = *product;
    if (type)
      policy.type = *type;
    state_.accept_unregistered_transactions(*bundle, policy);
    return ok({{"bundle_id", *bundle}, {"product_id", policy.product_id},
               {"type", policy.type}, {"enabled", true}});
  }

  control_context& c_;
  emulator_state& state_;
};

} // namespace

void control_handler::onRequest(const Http::Request& request, Http::ResponseWriter writer) {
  reply response;
  try {
    response = control(*context_).dispatch(request.method(), request.resource(), request.body());
  } catch (const std::exception& e) {
    response = json_reply(500, boost::json::object{{"error", e.what()}});
  }
  send_reply(writer, response);
}

} // namespace receiptd::emulator

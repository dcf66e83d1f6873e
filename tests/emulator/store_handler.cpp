#include "store_handler.hpp"

#include <chrono>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "delay.hpp"
#include "listener.hpp"
#include "store_a.hpp"
#include "store_b.hpp"

namespace receiptd::emulator {

namespace Http = Pistache::Http;

namespace {

// A request matched to one of the emulated endpoints.
struct route {
  std::optional<call_kind> kind; // nullopt: no such endpoint
  purchase_query purchase;       // Store B purchase endpoints (voidedpurchases, orders: the package)
  std::string order_id;          // orders.get (batchGet: none, the query names them)
  std::string transaction_id;    // App Store Server API; Play's order id (reviewrefund)
  bool post = false;
  bool sandbox = false; // Send Consumption Information's host
};

route route_store_a(std::string_view method, std::string_view path) {
  route r;
  r.post = method == "POST";
  if (path == "/verifyReceipt") {
    r.kind = call_kind::store_a_production;
    return r;
  }
  if (path == "/sandbox/verifyReceipt") {
    r.kind = call_kind::store_a_sandbox;
    return r;
  }
  // [sandbox/]inApps/v1/{transactions|subscriptions}/{transactionId}: receiptd's
  // store-a.server-api-sandbox-url is "http://127.0.0.1:P/sandbox".
  auto s = split_path(path);
  const bool sandbox = !s.empty() && s[0] == "sandbox";
  // [sandbox/]inApps/v1/transactions/appTransactions/{anyTransactionId}
  if (const std::size_t b = sandbox ? 1 : 0; method == "GET" && s.size() == b + 5
      && s[b] == "inApps" && s[b + 1] == "v1" && s[b + 2] == "transactions"
      && s[b + 3] == "appTransactions") {
    if (auto id = percent_decode(s[b + 4], false); id && !id->empty()) {
      r.kind = sandbox ? call_kind::store_a_app_transaction_sandbox
                       : call_kind::store_a_app_transaction_production;
      r.transaction_id = std::move(*id);
    }
    return r;
  }
  // PUT [sandbox/]inApps/v2/transactions/consumption/{transactionId}.
  if (method == "PUT" && s.size() == (sandbox ? 6u : 5u)) {
    const std::size_t b = sandbox ? 1 : 0;
    if (s[b] != "inApps" || s[b + 1] != "v2" || s[b + 2] != "transactions"
        || s[b + 3] != "consumption")
      return r;
    auto id = percent_decode(s[b + 4], false);
    if (!id || id->empty())
      return r;
    r.kind = call_kind::store_a_consumption;
    r.sandbox = sandbox;
    r.transaction_id = std::move(*id);
    return r;
  }
  if (method != "GET" || s.size() != (sandbox ? 5u : 4u))
    return r;
  const std::size_t base = sandbox ? 1 : 0;
  const bool statuses = s[base + 2] == "subscriptions";
  // [sandbox/]inApps/v2/history/{transactionId}: Get Transaction History v2.
  const bool history = s[base] == "inApps" && s[base + 1] == "v2" && s[base + 2] == "history";
  if (!history
      && (s[base] != "inApps" || s[base + 1] != "v1"
          || (s[base + 2] != "transactions" && !statuses)))
    return r;
  auto id = percent_decode(s[base + 3], false);
  if (!id || id->empty())
    return r;
  if (history)
    r.kind = sandbox ? call_kind::store_a_history_sandbox : call_kind::store_a_history_production;
  else if (statuses)
    r.kind = sandbox ? call_kind::store_a_subscription_statuses_sandbox
                     : call_kind::store_a_subscription_statuses_production;
  else
    r.kind
      = sandbox ? call_kind::store_a_server_api_sandbox : call_kind::store_a_server_api_production;
  r.transaction_id = std::move(*id);
  return r;
}

// Calls the endpoint counts itself, once their JWT is accepted (PROTOCOL.md,
// GET /control/calls): the store handler counts them only where no endpoint
// answers (the error and html modes).
bool counted_by_endpoint(call_kind kind) {
  return kind == call_kind::store_a_subscription_statuses_production
    || kind == call_kind::store_a_subscription_statuses_sandbox
    || kind == call_kind::store_a_app_transaction_production
    || kind == call_kind::store_a_app_transaction_sandbox
    || kind == call_kind::store_a_history_production
    || kind == call_kind::store_a_history_sandbox;
}

route route_store_b(std::string_view method, std::string_view path) {
  route r;
  r.post = method == "POST";
  if (path == "/token") {
    if (r.post)
      r.kind = call_kind::store_b_token;
    return r;
  }
  if (method != "GET" && !r.post)
    return r;
  // androidpublisher/v3/applications/{package}/purchases/ then
  //   GET  products/{productId}/tokens/{token}
  //   GET  subscriptionsv2/tokens/{token}
  //   GET  voidedpurchases
  //   POST products/{productId}/tokens/{token}:acknowledge
  //   POST subscriptions/{subscriptionId}/tokens/{token}:acknowledge
  auto raw = split_path(path);
  std::vector<std::string> s;
  for (auto segment : raw) {
    auto decoded = percent_decode(segment, false);
    if (!decoded)
      return r;
    s.push_back(std::move(*decoded));
  }
  // POST androidpublisher/v3/applications/{package}/orders/{orderId}:reviewrefund.
  constexpr std::string_view reviewrefund = ":reviewrefund";
  if (r.post && s.size() == 6 && s[0] == "androidpublisher" && s[1] == "v3"
      && s[2] == "applications" && s[4] == "orders" && s[5].size() > reviewrefund.size()
      && std::string_view(s[5]).ends_with(reviewrefund)) {
    r.kind = call_kind::store_b_reviewrefund;
    r.purchase.package_name = s[3];
    r.transaction_id = s[5].substr(0, s[5].size() - reviewrefund.size());
    return r;
  }
  if (s.size() < 5 || s[0] != "androidpublisher" || s[1] != "v3" || s[2] != "applications")
    return r;
  //   GET  orders/{orderId}, orders:batchGet
  if (!r.post && ((s.size() == 5 && s[4] == "orders:batchGet") || (s.size() == 6 && s[4] == "orders"))) {
    r.kind = call_kind::store_b_orders;
    r.purchase.package_name = s[3];
    if (s.size() == 6)
      r.order_id = s[5];
    return r;
  }
  if (s.size() < 6 || s[4] != "purchases")
    return r;
  if (!r.post && s.size() == 6 && s[5] == "voidedpurchases") {
    r.kind = call_kind::store_b_voidedpurchases;
    r.purchase.package_name = s[3];
    return r;
  }
  if (s.size() != 9 && s.size() != 8)
    return r;
  // The method's name is part of the last segment ("{token}:acknowledge").
  constexpr std::string_view acknowledge = ":acknowledge";
  auto& last = s.back();
  const bool acknowledging
    = last.size() > acknowledge.size() && std::string_view(last).ends_with(acknowledge);
  if (acknowledging != r.post)
    return r;
  if (acknowledging)
    last.resize(last.size() - acknowledge.size());
  if (s.size() == 9 && (s[5] == "products" || (acknowledging && s[5] == "subscriptions"))
      && s[7] == "tokens") {
    r.kind = acknowledging ? call_kind::store_b_acknowledge : call_kind::store_b_products;
    r.purchase = {s[5] == "subscriptions", s[3], s[6], s[8]};
  } else if (!acknowledging && s.size() == 8 && s[5] == "subscriptionsv2" && s[6] == "tokens") {
    r.kind = call_kind::store_b_subscriptionsv2;
    r.purchase = {true, s[3], "", s[7]};
  } else if (!acknowledging && s.size() == 8 && s[5] == "productsv2" && s[6] == "tokens") {
    r.kind = call_kind::store_b_productsv2;
    r.purchase = {false, s[3], "", s[7], true};
  }
  return r;
}

// Get All Subscription Statuses' `status` filter. Apple takes it repeated
// (?status=1&status=2), but Pistache 0.0.5 keeps only the first of a repeated
// parameter: that one's value is also read as a comma list (?status=1,2).
std::vector<std::string> status_filter(const store_request& request) {
  std::vector<std::string> out;
  const auto& params = request.query;
  auto it = params.find("status");
  if (it == params.end())
    return out;
  std::string_view rest = it->second;
  for (;;) {
    auto comma = rest.find(',');
    out.emplace_back(rest.substr(0, comma));
    if (comma == std::string_view::npos)
      return out;
    rest.remove_prefix(comma + 1);
  }
}

reply not_found(store_id store) {
  if (store == store_id::store_a)
    return json_reply(404, boost::json::object{{"error", "Not Found"}});
  return json_reply(404,
                    boost::json::object{{"error",
                                         {{"code", 404},
                                          {"message", "Not Found"},
                                          {"errors",
                                           boost::json::array{{{"message", "Not Found"},
                                                               {"domain", "global"},
                                                               {"reason", "notFound"}}}},
                                          {"status", "NOT_FOUND"}}}});
}

reply error_mode_reply(store_id store, int status) {
  if (store == store_id::store_b)
    return json_reply(status, google_error(status));
  return json_reply(
    status, boost::json::object{{"error", "emulated store outage"}, {"http_status", status}});
}

// What a load balancer or captive portal serves: 200 with a page, not JSON.
reply html_mode_reply() {
  return html_reply(
    200,
    "<!DOCTYPE html>\n<html><head><title>503 Service Temporarily Unavailable</title>"
    "</head>\n<body><h1>Service Temporarily Unavailable</h1>\n<p>The server is "
    "temporarily unable to service your request. Please try again later.</p>\n"
    "</body></html>\n");
}

reply answer(store_id store, emulator_state& state, const route& r, const store_request& request) {
  const auto& authorization = request.authorization;
  if (!r.kind)
    return not_found(store);
  switch (*r.kind) {
    case call_kind::store_a_production:
    case call_kind::store_a_sandbox:
      if (!r.post) // Apple 21000: "The request to the App Store was not made using the HTTP POST
                   // request method."
        return json_reply(200, boost::json::object{{"status", 21000}});
      return verify_receipt(state, *r.kind == call_kind::store_a_sandbox, request.body);
    case call_kind::store_a_server_api_production:
    case call_kind::store_a_server_api_sandbox:
      return transaction_info(state, *r.kind == call_kind::store_a_server_api_sandbox,
                              r.transaction_id, authorization);
    case call_kind::store_a_subscription_statuses_production:
    case call_kind::store_a_subscription_statuses_sandbox:
      return subscription_statuses(state,
                                   *r.kind == call_kind::store_a_subscription_statuses_sandbox,
                                   r.transaction_id, authorization, status_filter(request));
    case call_kind::store_a_app_transaction_production:
    case call_kind::store_a_app_transaction_sandbox:
      return app_transaction_info(state, *r.kind == call_kind::store_a_app_transaction_sandbox,
                                  r.transaction_id, authorization);
    case call_kind::store_a_history_production:
    case call_kind::store_a_history_sandbox:
      return transaction_history(state, *r.kind == call_kind::store_a_history_sandbox,
                                 r.transaction_id, authorization, request.query);
    case call_kind::store_b_token:
      return token_endpoint(state, request.body);
    case call_kind::store_b_products:
    case call_kind::store_b_subscriptionsv2:
    case call_kind::store_b_productsv2:
      return purchase_endpoint(state, r.purchase, authorization);
    case call_kind::store_b_orders:
      return orders_endpoint(state, r.purchase.package_name,
                             r.order_id.empty() ? request.order_ids : std::vector{r.order_id},
                             r.order_id.empty(), authorization);
    case call_kind::store_b_acknowledge:
      return acknowledge_endpoint(state, r.purchase, authorization, request.body);
    case call_kind::store_b_voidedpurchases:
      return voided_purchases_endpoint(state, r.purchase.package_name, request.query,
                                       authorization);
    case call_kind::store_a_consumption:
      return consumption(state, r.sandbox, r.transaction_id, authorization, request.body);
    case call_kind::store_b_reviewrefund:
      return review_refund_endpoint(state, r.purchase.package_name, r.transaction_id,
                                    authorization, request.body);
    case call_kind::store_a_server_api_unauthorized: // a counter, not an endpoint
    case call_kind::count_:
      break;
  }
  return not_found(store);
}

// In error and html mode, whether this request gets the failure (mode_setting::fraction).
bool fails_this_time(const mode_setting& m) {
  if (m.fraction >= 1.0)
    return true;
  thread_local std::mt19937_64 draws{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(draws) < m.fraction;
}

} // namespace

handled handle_store_request(store_id store, emulator_state& state, const store_request& request) {
  handled out;
  std::optional<mode_setting> mode;
  try {
    mode = state.mode(store);
    if ((mode->mode == store_mode::error || mode->mode == store_mode::html)
        && !fails_this_time(*mode))
      mode->mode = store_mode::up; // this one is answered as the store would
    state.log_request({store, request.method, sanitize_utf8(request.path),
                       sanitize_utf8(request.authorization), sanitize_utf8(request.body)});
    auto r = store == store_id::store_a ? route_store_a(request.method, request.path)
                                        : route_store_b(request.method, request.path);
    const bool endpoint_answers = mode->mode == store_mode::up || mode->mode == store_mode::slow;
    if (r.kind && mode->mode != store_mode::down
        && !(endpoint_answers && counted_by_endpoint(*r.kind)))
      state.count(*r.kind);
    switch (mode->mode) {
      case store_mode::error:
        out.response = error_mode_reply(store, mode->status);
        break;
      case store_mode::html:
        out.response = html_mode_reply();
        break;
      case store_mode::down:
        out.response = error_mode_reply(store, 503);
        break; // racing a close
      case store_mode::up:
      case store_mode::slow:
        out.response = answer(store, state, r, request);
        break;
    }
  } catch (const std::exception& e) {
    // Never let a bad request take the emulator down; say what broke.
    out.response
      = json_reply(500, boost::json::object{{"error", "emulator failure"}, {"detail", e.what()}});
  }
  if (mode && mode->mode == store_mode::slow)
    out.delay = std::chrono::milliseconds(mode->delay_ms);
  return out;
}

void store_handler::onRequest(const Http::Request& request, Http::ResponseWriter writer) {
  // Read first: a request that races a close must not be answered through the
  // delay queue by an endpoint that no longer exists.
  const auto generation = listener_->generation();
  store_request in{std::string(Http::methodString(request.method())),
                   request.resource(),
                   {},
                   header_value(request, "Authorization"),
                   request.body()};
  // The query's parameters, percent-decoded ('+' as a space); a parameter whose
  // escape is malformed is kept as sent.
  const auto& q = request.query();
  for (auto it = q.parameters_begin(); it != q.parameters_end(); ++it)
    in.query[it->first] = percent_decode(it->second, true).value_or(it->second);
  if (auto ids = in.query.find("orderIds"); ids != in.query.end()) {
    std::string_view rest = ids->second;
    for (;;) {
      auto comma = rest.find(',');
      in.order_ids.emplace_back(rest.substr(0, comma));
      if (comma == std::string_view::npos)
        break;
      rest.remove_prefix(comma + 1);
    }
  }
  auto h = handle_store_request(store_, *state_, in);
  if (h.delay) {
    delays_->schedule(delay_queue::clock::now() + *h.delay, *listener_, generation,
                      std::move(writer), std::move(h.response));
    return;
  }
  send_reply(writer, h.response);
}

} // namespace receiptd::emulator

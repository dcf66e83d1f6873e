// The observability files receiptd ships (packaging/grafana/receiptd.json,
// packaging/prometheus/receiptd.rules.yml) against what the real binary exports:
// every metric a dashboard query or an alert rule names is one receiptd's
// /metrics has, and the dashboard shows what an operator looks at first.
// (promtool checks the rules' syntax and firing: tests/prometheus.)
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>
#include <set>

#include "harness.hpp"
#include "process.hpp"

using namespace receiptd::test;
namespace json = boost::json;

namespace {

// Every series name /metrics shows, and every family it types (a histogram's
// _bucket, _sum and _count included).
std::set<std::string> exported(suite& s) {
  // One upload first, so that the counters made on first use exist.
  auto app = create_store_b_app(s, unique_package("exported"), test_licence_key());
  auto body = json::serialize(json::object{
    {"package_name", app.package_name}, {"purchase_token", unique("tok")}, {"product_id", "gold"}});
  s.service.post("/client/store_b/purchase_orders/legacy", body, app.token);
  auto r = http_call("GET", s.service.url("/metrics"));
  REQUIRE(r.status == 200);
  std::set<std::string> names;
  static const std::regex type_line(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+))");
  static const std::regex sample_line(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ])");
  std::istringstream lines(r.body);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, type_line)) {
      names.insert(m[1]);
      if (m[2] == "histogram")
        for (const char* suffix : {"_bucket", "_sum", "_count"})
          names.insert(m[1].str() + suffix);
    } else if (std::regex_search(line, m, sample_line)) {
      names.insert(m[1]);
    }
  }
  REQUIRE(names.count("receiptd_uploads_total"));
  return names;
}

// The metric names a PromQL expression uses (receiptd's and the process figures).
std::set<std::string> metrics_in(const std::string& expr) {
  static const std::regex metric(R"(\b((receiptd|process)_[a-z0-9_]+))");
  std::set<std::string> out;
  for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it)
    out.insert((*it)[1]);
  return out;
}

void collect_exprs(const json::value& v, std::vector<std::string>& out) {
  if (v.is_object()) {
    for (const auto& [key, child] : v.get_object()) {
      if ((key == "expr" || key == "definition") && child.is_string())
        out.emplace_back(child.get_string());
      else
        collect_exprs(child, out);
    }
  } else if (v.is_array()) {
    for (const auto& child : v.get_array())
      collect_exprs(child, out);
  }
}

} // namespace

TEST_CASE("every query of the Grafana dashboard names metrics receiptd exports",
          "[observability]") {
  auto& s = the_suite();
  auto names = exported(s);
  auto dashboard
    = json::parse(read_text(std::string(RECEIPTD_SOURCE_DIR) + "/packaging/grafana/receiptd.json"));
  std::set<std::string> used;
  int panels_with_queries = 0;
  for (const auto& panel : dashboard.at("panels").as_array()) {
    if (panel.at("type") == "row")
      continue;
    std::vector<std::string> exprs;
    collect_exprs(panel, exprs);
    INFO("panel " << panel.at("title"));
    REQUIRE_FALSE(exprs.empty());
    ++panels_with_queries;
    for (const auto& e : exprs) {
      auto metrics = metrics_in(e);
      INFO("query " << e);
      CHECK_FALSE(metrics.empty());
      for (const auto& m : metrics) {
        INFO("metric " << m);
        CHECK(names.count(m) == 1);
        used.insert(m);
      }
    }
  }
  std::vector<std::string> variable_queries;
  collect_exprs(dashboard.at("templating"), variable_queries);
  for (const auto& q : variable_queries)
    for (const auto& m : metrics_in(q)) {
      INFO("variable query " << q);
      CHECK(names.count(m) == 1);
    }
  CHECK(panels_with_queries >= 10);
  // What an operator looks at first: uploads by status, store latency and
  // outcomes, the queue's depth and age, fraud, webhook lag.
  for (const char* m :
       {"receiptd_uploads_total", "receiptd_store_request_duration_seconds_bucket",
        "receiptd_store_requests_total", "receiptd_revalidation_queue_jobs",
        "receiptd_revalidation_queue_oldest_due_age_seconds", "receiptd_fraud_total",
        "receiptd_webhook_oldest_pending_age_seconds", "receiptd_build_info"}) {
    INFO(m);
    CHECK(used.count(m) == 1);
  }
}

TEST_CASE("every metric the Prometheus alert rules name is one receiptd exports",
          "[observability]") {
  auto& s = the_suite();
  auto names = exported(s);
  auto rules
    = read_text(std::string(RECEIPTD_SOURCE_DIR) + "/packaging/prometheus/receiptd.rules.yml");
  auto used = metrics_in(rules);
  CHECK(used.size() >= 6);
  for (const auto& m : used) {
    INFO("metric " << m);
    CHECK(names.count(m) == 1);
  }
  // Each rule says how bad it is and what to do.
  std::size_t alerts = 0;
  for (auto at = rules.find("- alert: "); at != std::string::npos;
       at = rules.find("- alert: ", at + 1)) {
    ++alerts;
    auto next = rules.find("- alert: ", at + 1);
    auto rule = rules.substr(at, next == std::string::npos ? std::string::npos : next - at);
    INFO(rule);
    CHECK(std::regex_search(rule, std::regex("severity: (critical|warning|info)")));
    CHECK(rule.find("summary: ") != std::string::npos);
    CHECK(rule.find("description: ") != std::string::npos);
  }
  CHECK(alerts >= 8);
}

// receiptd's Prometheus instruments: the registry, the labelled children
// looked up once, the answer-counting reply sink, and the scrape-time figures.
#include "actors/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>

#include "model/access_token.hpp"
#include "model/version.hpp"

namespace receiptd::actors {

namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

// Seconds: requests are answered in milliseconds, a store call may take its timeout.
const Histogram::BucketBoundaries request_buckets{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                  0.25,  0.5,    1,     2.5,  5,     10};
const Histogram::BucketBoundaries store_buckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                0.5,   1,    2,     4,    8,   16};
const Histogram::BucketBoundaries commit_buckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                 0.05,   0.1,   0.25,   0.5,   1,    2.5};
// Uploads per group commit (actors/persistence.cpp: at most 256).
const Histogram::BucketBoundaries batch_buckets{1, 2, 4, 8, 16, 32, 64, 128, 256};

constexpr int lowest_status = 100, highest_status = 599;
constexpr std::size_t status_slots = highest_status - lowest_status + 1;

constexpr model::fraud_reason fraud_reasons[] = {
  model::fraud_reason::invalid_signature,     model::fraud_reason::untrusted_certificate,
  model::fraud_reason::malformed_receipt,     model::fraud_reason::bundle_id_mismatch,
  model::fraud_reason::package_name_mismatch, model::fraud_reason::device_hash_mismatch,
  model::fraud_reason::store_rejected,
};
constexpr std::size_t fraud_slots = std::size(fraud_reasons) + 1; // indexed by the enum

// ---- scrape-time figures ------------------------------------------------------

prometheus::MetricFamily one_value(std::string name, std::string help, prometheus::MetricType type,
                                   double value) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  f.metric.push_back(std::move(m));
  return f;
}

// The process figures every Prometheus client library exports, by the names
// Prometheus documents ("Writing client libraries": process metrics), from
// /proc/self (proc(5)); a figure that cannot be read is left out.
void add_process_figures(std::vector<prometheus::MetricFamily>& out) {
  using prometheus::MetricType;
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  // Fields after the command name (in parentheses, which may hold spaces): the
  // first is field 3, state.
  auto close = stat.rfind(')');
  std::vector<std::string> fields;
  if (close != std::string::npos) {
    std::istringstream rest(stat.substr(close + 1));
    for (std::string f; rest >> f;)
      fields.push_back(f);
  }
  auto field = [&](int number) -> std::optional<double> { // proc(5) numbering
    auto i = static_cast<std::size_t>(number - 3);
    if (i >= fields.size())
      return std::nullopt;
    return std::strtod(fields[i].c_str(), nullptr);
  };
  auto ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (auto user = field(14), system = field(15); user && system && ticks > 0)
    out.push_back(one_value("process_cpu_seconds_total",
                            "User and system CPU time spent in seconds.", MetricType::Counter,
                            (*user + *system) / ticks));
  if (auto vsize = field(23))
    out.push_back(one_value("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                            MetricType::Gauge, *vsize));
  if (auto rss = field(24))
    out.push_back(one_value("process_resident_memory_bytes", "Resident memory size in bytes.",
                            MetricType::Gauge, *rss * static_cast<double>(sysconf(_SC_PAGESIZE))));
  // Start: jiffies after boot (field 22) plus the boot time (/proc/stat btime).
  std::ifstream proc_stat("/proc/stat");
  std::optional<double> boot;
  for (std::string key; proc_stat >> key;) {
    if (key == "btime") {
      double t = 0;
      if (proc_stat >> t)
        boot = t;
      break;
    }
    proc_stat.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  if (auto start = field(22); start && boot && ticks > 0)
    out.push_back(one_value("process_start_time_seconds",
                            "Start time of the process since unix epoch in seconds.",
                            MetricType::Gauge, *boot + *start / ticks));
  std::error_code ec;
  std::size_t fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec))
    ++fds;
  if (!ec)
    out.push_back(one_value("process_open_fds", "Number of open file descriptors.",
                            MetricType::Gauge, static_cast<double>(fds)));
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0)
    out.push_back(one_value("process_max_fds", "Maximum number of open file descriptors.",
                            MetricType::Gauge, static_cast<double>(lim.rlim_cur)));
}

} // namespace

// ---- handles ----------------------------------------------------------------------

void counter::add(double n) const {
  if (c_)
    c_->Increment(n);
}
double counter::value() const {
  return c_ ? c_->Value() : 0;
}
void gauge::set(double v) const {
  if (g_)
    g_->Set(v);
}
double gauge::value() const {
  return g_ ? g_->Value() : 0;
}
void histogram::observe(double v) const {
  if (h_)
    h_->Observe(v);
}

call_outcome outcome_of(const http::outbound_response& r) {
  if (r.status == 0)
    return call_outcome::error;
  if (r.status == 429 || r.status >= 500)
    return call_outcome::unavailable;
  if (r.status >= 400)
    return call_outcome::refused;
  if (r.content_type.find("html") != std::string::npos)
    return call_outcome::bad_answer;
  return call_outcome::ok;
}

std::string_view to_string(call_outcome o) {
  switch (o) {
    case call_outcome::ok:
      return "ok";
    case call_outcome::bad_answer:
      return "bad_answer";
    case call_outcome::refused:
      return "refused";
    case call_outcome::unavailable:
      return "unavailable";
    case call_outcome::error:
      break;
  }
  return "error";
}

void store_call::record(const http::outbound_response& r, std::chrono::nanoseconds took) const {
  outcomes_[static_cast<std::size_t>(outcome_of(r))].add();
  duration_.observe(took);
}

// ---- the registry -------------------------------------------------------------------

struct metrics::impl {
  prometheus::Registry registry;
  std::map<std::string, Family<Counter>*, std::less<>> counters;
  std::map<std::string, Family<Gauge>*, std::less<>> gauges;
  std::map<std::string, Family<Histogram>*, std::less<>> histograms;

  // receiptd_uploads_total's children, made on first use: [route][status - 100].
  Family<Counter>* uploads = nullptr;
  std::unique_ptr<std::atomic<Counter*>[]> upload_slots;
  std::vector<histogram> request_durations; // by route; none for operational ones
  counter fraud[2][fraud_slots];            // [store_b?][reason]
  std::mutex store_calls_mutex;
  std::map<std::string, std::unique_ptr<store_call>, std::less<>> store_calls;
  std::map<std::string, store_client_gauges, std::less<>> store_clients;

  Family<Counter>& counter_family(const std::string& name, const std::string& help) {
    auto& f = counters[name];
    if (!f)
      f = &prometheus::BuildCounter().Name(name).Help(help).Register(registry);
    return *f;
  }
  Family<Gauge>& gauge_family(const std::string& name, const std::string& help) {
    auto& f = gauges[name];
    if (!f)
      f = &prometheus::BuildGauge().Name(name).Help(help).Register(registry);
    return *f;
  }
  Family<Histogram>& histogram_family(const std::string& name, const std::string& help) {
    auto& f = histograms[name];
    if (!f)
      f = &prometheus::BuildHistogram().Name(name).Help(help).Register(registry);
    return *f;
  }

  counter make_counter(const std::string& name, const std::string& help,
                       const prometheus::Labels& labels = {}) {
    counter c;
    c.c_ = &counter_family(name, help).Add(labels);
    return c;
  }
  gauge make_gauge(const std::string& name, const std::string& help,
                   const prometheus::Labels& labels = {}) {
    gauge g;
    g.g_ = &gauge_family(name, help).Add(labels);
    return g;
  }
  histogram make_histogram(const std::string& name, const std::string& help,
                           const Histogram::BucketBoundaries& buckets,
                           const prometheus::Labels& labels = {}) {
    histogram h;
    h.h_ = &histogram_family(name, help).Add(labels, buckets);
    return h;
  }

  impl() {
    uploads = &counter_family("receiptd_uploads_total",
                              "Requests of the API answered by receiptd's actors, by route "
                              "(endpoint) and the HTTP status answered");
    upload_slots = std::make_unique<std::atomic<Counter*>[]>(http::routes().size() * status_slots);
    for (const auto& r : http::routes()) {
      auto i = static_cast<std::size_t>(r.id);
      if (request_durations.size() <= i)
        request_durations.resize(i + 1);
      if (!r.operational)
        request_durations[i]
          = make_histogram("receiptd_request_duration_seconds",
                           "Time from a request reaching the supervisor to its answer, by route",
                           request_buckets, {{"endpoint", r.name}});
    }
    for (int b = 0; b < 2; ++b)
      for (auto reason : fraud_reasons)
        fraud[b][static_cast<std::size_t>(reason)]
          = make_counter("receiptd_fraud_total", "Proofs found fraudulent, by store and reason",
                         {{"store", b ? "store_b" : "store_a"},
                          {"reason", std::string(model::to_string(reason))}});
    for (const char* store : {"store_a", "store_b"}) {
      auto actor = std::string(store) == "store_a" ? "store_a_client" : "store_b_client";
      store_clients[store]
        = {make_gauge("receiptd_store_calls_in_flight", "Store calls sent and not answered yet",
                      {{"store", store}}),
           make_gauge("receiptd_store_calls_waiting",
                      "Store calls waiting for a free slot (store-*.max-concurrent)",
                      {{"store", store}}),
           mailbox(actor)};
    }
    // Which build answers, the Prometheus *_build_info way: always 1, the version a label.
    make_gauge("receiptd_build_info", "receiptd's build: its version as the label, always 1",
               {{"version", std::string(model::version)}})
      .set(1);
  }

  gauge mailbox(const std::string& actor) {
    return make_gauge("receiptd_actor_mailbox_messages",
                      "Messages waiting in a long-lived actor's mailbox, as the actor last saw it",
                      {{"actor", actor}});
  }
  gauge admission(const char* metric, const char* stage) {
    return std::string_view(metric) == "requests"
      ? make_gauge("receiptd_admission_requests",
                   "Requests held by the supervisor, by stage: token being looked up "
                   "(authenticating), admitted (validated or looked up), operational",
                   {{"stage", stage}})
      : make_gauge("receiptd_admission_bytes",
                   "Request body bytes held by the supervisor, by stage", {{"stage", stage}});
  }
  counter job(const char* outcome) {
    return make_counter("receiptd_revalidation_jobs_total",
                        "Revalidation jobs of this instance that ended (completed, given_up), "
                        "were rescheduled, or were overtaken by a newer claim",
                        {{"outcome", outcome}});
  }
  gauge queue(const char* state) {
    return make_gauge("receiptd_revalidation_queue_jobs",
                      "Jobs in the revalidation queue (every instance's), by state: due, "
                      "leased, scheduled; read at scrape time",
                      {{"state", state}});
  }
};

metrics::metrics(std::string scrape_token, const model::time_source& clock)
  : impl_(std::make_unique<impl>()),
    token_(std::move(scrape_token)),
    clock_(&clock),
    authenticating_requests(impl_->admission("requests", "authenticating")),
    authenticating_bytes(impl_->admission("bytes", "authenticating")),
    admitted_requests(impl_->admission("requests", "admitted")),
    admitted_bytes(impl_->admission("bytes", "admitted")),
    operational_requests(impl_->admission("requests", "operational")),
    supervisor_mailbox(impl_->mailbox("supervisor")),
    persistence_queued(
      impl_->make_gauge("receiptd_persistence_queued_requests",
                        "Saves and token lookups waiting in the persistence pool for a worker")),
    persistence_at_workers(impl_->make_gauge(
      "receiptd_persistence_worker_requests",
      "Requests (batches count once) sent to the persistence workers and not answered yet")),
    persistence_saving(impl_->make_gauge("receiptd_persistence_save_batches_in_flight",
                                         "Save batches being committed")),
    persistence_mailbox(impl_->mailbox("persistence_pool")),
    jobs_running(impl_->make_gauge("receiptd_revalidation_jobs_running",
                                   "Jobs claimed by this instance whose run has not ended")),
    retry_scheduler_mailbox(impl_->mailbox("retry_scheduler")),
    queue_due(impl_->queue("due")),
    queue_leased(impl_->queue("leased")),
    queue_scheduled(impl_->queue("scheduled")),
    queue_oldest_due_age(impl_->make_gauge(
      "receiptd_revalidation_queue_oldest_due_age_seconds",
      "How long the longest-waiting due job has been due (0: none is); read at scrape time")),
    webhook_pending(impl_->make_gauge(
      "receiptd_webhook_deliveries_pending",
      "Webhook deliveries not made yet (every instance's; dead ones not counted); read at "
      "scrape time")),
    webhook_oldest_pending_age(impl_->make_gauge(
      "receiptd_webhook_oldest_pending_age_seconds",
      "Age of the oldest event a webhook delivery still waits for (0: none waits): how far "
      "the apps' backends lag; read at scrape time")),
    jobs_claimed(impl_->make_counter("receiptd_revalidation_jobs_claimed_total",
                                     "Jobs this instance claimed from the revalidation queue")),
    jobs_completed(impl_->job("completed")),
    jobs_given_up(impl_->job("given_up")),
    jobs_rescheduled(impl_->job("rescheduled")),
    jobs_overtaken(impl_->job("overtaken")),
    db_errors(impl_->make_counter("receiptd_db_errors_total", "Database calls that failed")),
    queue_read_errors(impl_->make_counter(
      "receiptd_revalidation_queue_read_errors_total",
      "Scrapes whose revalidation queue figures could not be read (the last ones read stay)")),
    customer_answers_kept(impl_->make_counter(
      "receiptd_customer_answers_kept_total",
      "Customer lookups answered again from an answer kept since nothing changed it")),
    save_batch_size(impl_->make_histogram("receiptd_db_save_batch_size",
                                          "Uploads saved per group commit (one transaction)",
                                          batch_buckets)),
    commit_duration(impl_->make_histogram(
      "receiptd_db_commit_duration_seconds",
      "Time one save batch took in the database, its commit included", commit_buckets)) {}

metrics::~metrics() = default;

metrics& metrics::off() {
  static metrics nobody_reads;
  return nobody_reads;
}

bool metrics::may_scrape(std::string_view bearer) const {
  if (token_.empty())
    return true;
  // Both sides through SHA-256, then compared in full: the time depends on neither.
  auto a = model::access_token_hash(std::string(bearer));
  auto b = model::access_token_hash(token_);
  unsigned char differ = a.size() != b.size();
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    differ |= static_cast<unsigned char>(a[i] ^ b[i]);
  return differ == 0;
}

std::string metrics::exposition(const scrape_figures& figures) const {
  auto families = impl_->registry.Collect();
  families.push_back(one_value("receiptd_trace_spans_dropped_total",
                               "Spans dropped because the trace buffer was full (trace.buffer)",
                               prometheus::MetricType::Counter,
                               static_cast<double>(figures.spans_dropped)));
  add_process_figures(families);
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

counter metrics::uploads(http::route r, int status) const {
  if (status < lowest_status || status > highest_status)
    status = 500;
  auto& slot = impl_->upload_slots[static_cast<std::size_t>(r) * status_slots
                                   + static_cast<std::size_t>(status - lowest_status)];
  counter c;
  c.c_ = slot.load(std::memory_order_acquire);
  if (!c.c_) {
    // Family::Add is thread-safe and gives every caller the same child.
    c.c_ = &impl_->uploads->Add(
      {{"endpoint", http::info(r).name}, {"status", std::to_string(status)}});
    slot.store(c.c_, std::memory_order_release);
  }
  return c;
}

namespace {

// Counts the answer before it leaves (a client that scrapes right after its answer
// sees it counted), once; a request dropped unanswered is answered 500 by the
// HTTP layer, and counted so here.
class observed_sink final : public http::reply_sink {
public:
  observed_sink(http::reply_sink_ptr inner, const metrics& m, http::route r, histogram duration,
                const model::time_source& clock)
    : inner_(std::move(inner)),
      metrics_(m),
      route_(r),
      duration_(duration),
      clock_(clock),
      start_(clock.steady_now()) {}

  ~observed_sink() override {
    if (!counted_.exchange(true))
      count(500);
  }

  bool send(http::reply r) override {
    if (counted_.exchange(true))
      return false;
    count(r.status);
    return inner_->send(std::move(r));
  }

  bool sent() const override { return inner_->sent(); }

private:
  void count(int status) {
    metrics_.uploads(route_, status).add();
    duration_.observe(clock_.steady_now() - start_);
  }

  http::reply_sink_ptr inner_;
  const metrics& metrics_;
  http::route route_;
  histogram duration_;
  const model::time_source& clock_;
  model::time_source::steady_time start_;
  std::atomic<bool> counted_{false};
};

} // namespace

http::reply_sink_ptr metrics::observe(http::route r, http::reply_sink_ptr sink) {
  auto i = static_cast<std::size_t>(r);
  auto duration = i < impl_->request_durations.size() ? impl_->request_durations[i] : histogram{};
  return std::make_shared<observed_sink>(std::move(sink), *this, r, duration, *clock_);
}

counter metrics::fraud(model::record_kind kind, model::fraud_reason reason) const {
  if (reason == model::fraud_reason::none)
    return {};
  return impl_->fraud[kind == model::record_kind::store_b_purchase_order ? 1 : 0]
                     [static_cast<std::size_t>(reason)];
}

counter metrics::refund_requests(std::string_view store, std::string_view outcome) {
  return impl_->make_counter("receiptd_refund_requests_total",
                             "Store refund requests (Apple CONSUMPTION_REQUEST, Play pending "
                             "refund reviews) by store and outcome: answered, skipped, failed, "
                             "retried, missed (the store's deadline passed unanswered)",
                             {{"store", std::string(store)}, {"outcome", std::string(outcome)}});
}

const store_call& metrics::store_call_of(std::string_view store, std::string_view call) {
  std::lock_guard lock(impl_->store_calls_mutex);
  auto key = std::string(store) + '\n' + std::string(call);
  auto& slot = impl_->store_calls[key];
  if (!slot) {
    slot = std::make_unique<store_call>();
    slot->store = std::string(store);
    slot->call = std::string(call);
    for (std::size_t o = 0; o < call_outcomes; ++o)
      slot->outcomes_[o] = impl_->make_counter(
        "receiptd_store_requests_total",
        "Calls to the stores, by store, call and outcome (ok, bad_answer: an HTML page, "
        "refused: 4xx, unavailable: 5xx or 429, error: no HTTP answer)",
        {{"store", std::string(store)},
         {"call", std::string(call)},
         {"outcome", std::string(to_string(static_cast<call_outcome>(o)))}});
    slot->duration_ = impl_->make_histogram(
      "receiptd_store_request_duration_seconds",
      "Time from a store call's submission (a wait for a free slot included) to its answer",
      store_buckets, {{"store", std::string(store)}, {"call", std::string(call)}});
  }
  return *slot;
}

const metrics::store_client_gauges& metrics::store_client(std::string_view store) const {
  auto it = impl_->store_clients.find(store);
  return it != impl_->store_clients.end() ? it->second : impl_->store_clients.begin()->second;
}

} // namespace receiptd::actors

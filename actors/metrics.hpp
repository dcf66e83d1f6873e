#pragma once
// receiptd's Prometheus instruments (docs/operating.md, "Metrics"): one
// registry, every name prefixed receiptd_ (plus the process_* figures), served as
// text by GET /metrics (actors/operational_handler.cpp).
//
// Counting is cheap: prometheus-cpp's counters and gauges are atomics (a histogram
// takes a short uncontended lock), and every labelled child is looked up once and
// kept — when the object is made, or the first time a label value occurs — never
// per request.
//
// One object per process, reached through validator_deps::instruments and handed to
// the persistence pool and the store clients when they are spawned; never null:
// metrics::off() is one that nobody scrapes, for tests and tools.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/outbound_client.hpp"
#include "http/reply.hpp"
#include "model/clock.hpp"
#include "model/records.hpp"
#include "model/verdict.hpp"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
class Registry;
} // namespace prometheus

namespace receiptd::actors {

// Handles on one labelled child each; copying one copies the handle.
class counter {
public:
  void add(double n = 1) const;
  double value() const;

private:
  friend class metrics;
  prometheus::Counter* c_ = nullptr;
};

class gauge {
public:
  void set(double v) const;
  double value() const;

private:
  friend class metrics;
  prometheus::Gauge* g_ = nullptr;
};

class histogram {
public:
  void observe(double v) const;
  void observe(std::chrono::nanoseconds d) const {
    observe(std::chrono::duration<double>(d).count());
  }

private:
  friend class metrics;
  prometheus::Histogram* h_ = nullptr;
};

// How one store call ended, as far as HTTP tells (the label `outcome` of
// receiptd_store_requests_total): ok (2xx or 3xx, not HTML), bad_answer (2xx or 3xx
// with an HTML page: a proxy's or an outage page), refused (4xx but 429: the store
// said no, to the proof or to our credentials), unavailable (5xx or 429), error (no
// HTTP answer: connection, TLS, timeout, or not sent at all for want of a free slot
// before the deadline).
enum class call_outcome { ok, bad_answer, refused, unavailable, error };
inline constexpr std::size_t call_outcomes = 5;
call_outcome outcome_of(const http::outbound_response& r);
std::string_view to_string(call_outcome o);

// One kind of call to a store: its count by outcome and its duration histogram.
class store_call {
public:
  // `took`: from submitting the call to its answer (waiting for a slot included).
  void record(const http::outbound_response& r, std::chrono::nanoseconds took) const;

  // Its labels: "store_a", "verify_receipt".
  std::string store, call;

private:
  friend class metrics;
  counter outcomes_[call_outcomes];
  histogram duration_;
};

// What GET /metrics reads at scrape time besides the registry.
struct scrape_figures {
  std::uint64_t spans_dropped = 0; // tracer::dropped()
};

class metrics {
  struct impl;
  std::unique_ptr<impl> impl_; // first: every instrument below is made from it
  std::string token_;
  const model::time_source* clock_;

public:
  // `scrape_token`: metrics.token (empty: anyone may scrape). `clock`: request
  // durations are measured on its steady clock.
  explicit metrics(std::string scrape_token = {},
                   const model::time_source& clock = model::system_time());
  ~metrics();
  metrics(const metrics&) = delete;
  metrics& operator=(const metrics&) = delete;

  // Counts into a registry nobody reads.
  static metrics& off();

  // ---- exposure ---------------------------------------------------------------
  // Whether a scrape showing this bearer token (empty: none) may read the metrics:
  // always when metrics.token is empty, else when it is that token (compared in
  // constant time).
  bool may_scrape(std::string_view bearer) const;
  // Everything in the Prometheus text format (version 0.0.4): the registry, the
  // process figures (read from /proc/self now) and `figures`.
  std::string exposition(const scrape_figures& figures) const;

  // ---- requests the supervisor answers ----------------------------------------
  // `sink`, which from now on counts its answer in
  // receiptd_uploads_total{endpoint,status} and the time until it in
  // receiptd_request_duration_seconds{endpoint}. Not for operational routes.
  http::reply_sink_ptr observe(http::route r, http::reply_sink_ptr sink);
  // receiptd_uploads_total{endpoint,status}, looked up once per pair.
  counter uploads(http::route r, int status) const;

  // ---- verdicts -----------------------------------------------------------------
  // receiptd_fraud_total{store,reason}: `kind` names the store; none counts nothing.
  counter fraud(model::record_kind kind, model::fraud_reason reason) const;

  // ---- store calls ----------------------------------------------------------------
  // The instruments of one kind of call (store "store_a" or "store_b", call e.g.
  // "verify_receipt"), for a client to look up once when it starts.
  const store_call& store_call_of(std::string_view store, std::string_view call);

  // ---- refund requests ------------------------------------------------------------
  // receiptd_refund_requests_total{store,outcome}: answered, skipped (the app's
  // settings say answer nothing), failed (the store refused the answer),
  // retried, missed (the store's deadline passed unanswered).
  counter refund_requests(std::string_view store, std::string_view outcome);

  // ---- gauges, set by their owners as their figures change ------------------------
  struct store_client_gauges {
    gauge in_flight; // calls sent, not answered yet
    gauge waiting;   // calls waiting for a free slot (store-*.max-concurrent)
    gauge mailbox;   // the client actor's mailbox
  };
  const store_client_gauges& store_client(std::string_view store) const;

  // The supervisor: requests whose token is being looked up; admitted ones (a
  // validator, a notification handler or a record lookup runs); operational ones.
  const gauge authenticating_requests, authenticating_bytes, admitted_requests, admitted_bytes,
    operational_requests, supervisor_mailbox;
  // The persistence pool: saves and token lookups waiting in it for a worker,
  // requests at the workers, save batches being committed; its mailbox.
  const gauge persistence_queued, persistence_at_workers, persistence_saving, persistence_mailbox;
  // The retry scheduler: revalidations running in this instance; its mailbox.
  const gauge jobs_running, retry_scheduler_mailbox;
  // The revalidation queue, refreshed at scrape time (db::database::queue_figures).
  const gauge queue_due, queue_leased, queue_scheduled, queue_oldest_due_age;
  // The webhook outbox, likewise: deliveries to make, and the age of the oldest event among them.
  const gauge webhook_pending, webhook_oldest_pending_age;

  // ---- counters -----------------------------------------------------------------------
  // Jobs claimed by this instance; jobs that ended with a verdict (completed) or
  // with their record marked failed (given up); rescheduled; and completions or
  // reschedulings fenced out by a newer claim (overtaken).
  const counter jobs_claimed, jobs_completed, jobs_given_up, jobs_rescheduled, jobs_overtaken;
  const counter db_errors;         // database calls that failed
  const counter queue_read_errors; // scrapes that could not read the queue figures
  // Customer lookups answered from a kept answer (actors/customer_answers.hpp).
  const counter customer_answers_kept;

  // ---- the database -------------------------------------------------------------------
  const histogram save_batch_size; // uploads per group commit
  const histogram commit_duration; // one save batch's transaction, its commit included
};

} // namespace receiptd::actors

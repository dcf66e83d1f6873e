// Several sessions at once (several persistence workers or receiptd instances), each
// with its own db::database, as in production.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <set>
#include <thread>

#include "tests/integration/fixture.hpp"

namespace receiptd::test {

TEST_CASE("concurrent claimers never get the same job", "[jobs][concurrency]") {
  database_fixture f;
  constexpr int job_count = 120;
  for (int i = 0; i < job_count; ++i)
    REQUIRE_OK(
      f.db->save_purchase_order(minimal_purchase_order(f.app.id, "t" + std::to_string(i)), t0 + i));

  constexpr int workers = 3;
  std::vector<std::unique_ptr<db::database>> sessions;
  for (int w = 0; w < workers; ++w)
    sessions.push_back(f.second_connection());
  std::vector<std::vector<std::string>> claimed(workers);
  std::vector<std::string> errors(workers);
  std::barrier start(workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      start.arrive_and_wait();
      for (;;) {
        auto batch
          = sessions[w]->claim_due_jobs("w" + std::to_string(w), t0 + job_count, t0 + 3'600'000, 7);
        if (!batch) {
          errors[w] = batch.err().message();
          return;
        }
        if (batch->empty())
          return;
        for (auto& j : *batch)
          claimed[w].push_back(j.id);
      }
    });
  for (auto& t : threads)
    t.join();

  std::multiset<std::string> all;
  for (int w = 0; w < workers; ++w) {
    INFO("worker " << w << " error: " << errors[w]);
    CHECK(errors[w].empty());
    all.insert(claimed[w].begin(), claimed[w].end());
  }
  CHECK(all.size() == job_count);
  CHECK(std::set<std::string>(all.begin(), all.end()).size() == job_count); // no duplicates
}

TEST_CASE("concurrent first uploads of one proof make one record", "[records][concurrency]") {
  database_fixture f;
  auto a = f.second_connection();
  auto b = f.second_connection();
  constexpr int rounds = 25;
  for (int round = 0; round < rounds; ++round) {
    auto token = "race-" + std::to_string(round);
    auto incoming = minimal_purchase_order(f.app.id, token);
    model::result<db::saved<model::purchase_order_record>> ra = db::failure("not run");
    model::result<db::saved<model::purchase_order_record>> rb = db::failure("not run");
    std::barrier start(2);
    std::thread ta([&] {
      start.arrive_and_wait();
      ra = a->save_purchase_order(incoming, t0);
    });
    std::thread tb([&] {
      start.arrive_and_wait();
      rb = b->save_purchase_order(incoming, t0);
    });
    ta.join();
    tb.join();
    INFO("round " << round);
    auto sa = REQUIRE_OK(ra);
    auto sb = REQUIRE_OK(rb);
    CHECK(sa.record.id == sb.record.id);
    CHECK(sa.created != sb.created); // exactly one created it
  }
  auto jobs = REQUIRE_OK(f.db->list_jobs());
  CHECK(jobs.size() == rounds); // one job per record
}

TEST_CASE("concurrent re-uploads and receipts from several sessions all commit",
          "[records][concurrency]") {
  database_fixture f;
  constexpr int workers = 3;
  constexpr int per_worker = 20;
  std::vector<std::unique_ptr<db::database>> sessions;
  for (int w = 0; w < workers; ++w)
    sessions.push_back(f.second_connection());
  std::atomic<int> failures{0};
  std::string first_error;
  std::mutex error_mutex;
  std::barrier start(workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      start.arrive_and_wait();
      for (int i = 0; i < per_worker; ++i) {
        // Everyone re-uploads the same receipt and one purchase order of their own.
        auto receipt = full_receipt(f.app.id, std::string(64, 'c'), 3);
        receipt.echo.user_identifier = "worker " + std::to_string(w);
        auto r1 = sessions[w]->save_receipt(receipt, t0);
        auto r2 = sessions[w]->save_purchase_order(
          minimal_purchase_order(f.app.id, "w" + std::to_string(w) + "-" + std::to_string(i)), t0);
        for (const model::error* e : {r1 ? nullptr : &r1.err(), r2 ? nullptr : &r2.err()})
          if (e) {
            std::lock_guard lock(error_mutex);
            if (failures++ == 0)
              first_error = e->message();
          }
      }
    });
  for (auto& t : threads)
    t.join();
  INFO("first error: " << first_error);
  CHECK(failures == 0);
  CHECK(REQUIRE_OK(f.db->list_jobs()).size() == workers * per_worker); // receipt is rejected
}

TEST_CASE("concurrent batches sharing new proofs make one record of each",
          "[records][batch][concurrency]") {
  database_fixture f;
  auto a = f.second_connection();
  auto b = f.second_connection();
  constexpr int rounds = 10;
  constexpr int proofs = 20;
  for (int round = 0; round < rounds; ++round) {
    std::vector<db::batch_save> forward;
    for (int i = 0; i < proofs; ++i) {
      auto r = minimal_purchase_order(f.app.id,
                                      "share-" + std::to_string(round) + "-" + std::to_string(i));
      r.state = model::validation_state::validated;
      forward.push_back({r, t0});
    }
    std::vector<db::batch_save> backward(forward.rbegin(), forward.rend());
    model::result<std::vector<db::batch_saved>> ra = db::failure("not run");
    model::result<std::vector<db::batch_saved>> rb = db::failure("not run");
    std::barrier start(2);
    std::thread ta([&] {
      start.arrive_and_wait();
      ra = a->save_batch(forward);
    });
    std::thread tb([&] {
      start.arrive_and_wait();
      rb = b->save_batch(backward);
    });
    ta.join();
    tb.join();
    INFO("round " << round);
    auto sa = REQUIRE_OK(ra);
    auto sb = REQUIRE_OK(rb);
    REQUIRE(sa.size() == proofs);
    REQUIRE(sb.size() == proofs);
    for (int i = 0; i < proofs; ++i) {
      REQUIRE(sa[i].ok());
      REQUIRE(sb[proofs - 1 - i].ok());
      auto& x = std::get<model::purchase_order_record>(sa[i].value());
      auto& y = std::get<model::purchase_order_record>(sb[proofs - 1 - i].value());
      CHECK(x.purchase_token == y.purchase_token);
      CHECK(x.id == y.id);
    }
  }
}

// On PostgreSQL a batch's first Play uploads write their purchases with them in
// one statement; a lone save writes them in its transaction. Both at once on the
// same proofs, in opposite orders: each proof is one record and one purchase,
// every save succeeds, and none waits for a deadlock to be found.
namespace {

// Twelve first uploads of the round's purchases, of the record type under test.
template <class Record>
std::vector<db::batch_save> first_uploads(const std::string& app_id, int round, int proofs);

template <>
std::vector<db::batch_save> first_uploads<model::purchase_order_record>(const std::string& app_id,
                                                                        int round, int proofs) {
  std::vector<db::batch_save> batch;
  for (int i = 0; i < proofs; ++i) {
    auto r = minimal_purchase_order(app_id, "start-" + std::to_string(round) + "-" + std::to_string(i));
    r.state = model::validation_state::validated;
    r.purchase.acknowledged = true; // no job: the batch's one statement takes it
    batch.push_back({r, t0});
  }
  return batch;
}

template <>
std::vector<db::batch_save> first_uploads<model::transaction_record>(const std::string& app_id,
                                                                     int round, int proofs) {
  std::vector<db::batch_save> batch;
  for (int i = 0; i < proofs; ++i) {
    auto id = std::to_string(3000000000000000 + round * 100 + i);
    batch.push_back({signed_transaction_record(app_id, id, id), t0});
  }
  return batch;
}

// A lone save of one upload (its own transaction).
auto save_one(db::database& d, const model::purchase_order_record& r) {
  return d.save_purchase_order(r, t0);
}
auto save_one(db::database& d, const model::transaction_record& r) {
  return d.save_transaction(r, t0);
}

} // namespace

TEMPLATE_TEST_CASE("concurrent first uploads of the same purchases make one purchase of each",
                   "[purchases][batch][concurrency]", model::purchase_order_record,
                   model::transaction_record) {
  database_fixture f;
  auto a = f.second_connection();
  auto b = f.second_connection();
  constexpr int rounds = 6;
  constexpr int proofs = 12;
  for (int round = 0; round < rounds; ++round) {
    auto batch = first_uploads<TestType>(f.app.id, round, proofs);
    model::result<std::vector<db::batch_saved>> ra = db::failure("not run");
    std::vector<model::result<db::saved<TestType>>> rb;
    std::barrier start(2);
    std::thread ta([&] {
      start.arrive_and_wait();
      ra = a->save_batch(batch);
    });
    std::thread tb([&] {
      start.arrive_and_wait();
      for (int i = proofs - 1; i >= 0; --i)
        rb.push_back(save_one(*b, std::get<TestType>(batch[static_cast<std::size_t>(i)].record)));
    });
    ta.join();
    tb.join();
    INFO("round " << round);
    auto sa = REQUIRE_OK(ra);
    REQUIRE(sa.size() == proofs);
    for (int i = 0; i < proofs; ++i) {
      REQUIRE(sa[static_cast<std::size_t>(i)].ok());
      auto& x = std::get<TestType>(sa[static_cast<std::size_t>(i)].value());
      auto y = REQUIRE_OK(rb[static_cast<std::size_t>(proofs - 1 - i)]).record;
      CHECK(x.id == y.id);
      REQUIRE(x.purchases);
      REQUIRE(y.purchases);
      REQUIRE(x.purchases->items.size() == 1);
      REQUIRE(y.purchases->items.size() == 1);
      CHECK(x.purchases->items[0].id == y.purchases->items[0].id);
      auto stored = REQUIRE_OK(f.db->purchases_of(model::any_record{x}, t0));
      REQUIRE(stored);
      REQUIRE(stored->items.size() == 1);
      CHECK(stored->items[0].id == x.purchases->items[0].id);
    }
  }
}

} // namespace receiptd::test

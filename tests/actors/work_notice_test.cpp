// The work notice on the deterministic scheduler: a tick to each kind's actor
// when the work written falls due (on the next multiple of the granularity after
// the write, one tick per time), and none before it is attached or after it is
// detached.
#include <catch2/catch.hpp>

#include "actors/work_notice.hpp"
#include "fixture.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;
using std::chrono::milliseconds;

namespace {

struct ticks {
  int jobs = 0, deliveries = 0, refunds = 0;
};

retry_scheduler_actor::behavior_type count_jobs(retry_scheduler_actor::pointer,
                                                std::shared_ptr<ticks> t) {
  return {[=](tick_atom) { ++t->jobs; }, [](done_atom, const std::string&) {}};
}
webhook_dispatcher_actor::behavior_type count_deliveries(webhook_dispatcher_actor::pointer,
                                                         std::shared_ptr<ticks> t) {
  return {[=](tick_atom) { ++t->deliveries; }, [](http_done_atom, http_done&) {}};
}
refund_answerer_actor::behavior_type count_refunds(refund_answerer_actor::pointer,
                                                   std::shared_ptr<ticks> t) {
  return {[=](tick_atom) { ++t->refunds; }};
}

db::work_written written(std::vector<model::unix_ms> jobs, std::vector<model::unix_ms> deliveries,
                         std::vector<model::unix_ms> refunds = {}) {
  db::work_written w;
  w.due[static_cast<std::size_t>(db::work_kind::jobs)] = std::move(jobs);
  w.due[static_cast<std::size_t>(db::work_kind::deliveries)] = std::move(deliveries);
  w.due[static_cast<std::size_t>(db::work_kind::refund_requests)] = std::move(refunds);
  return w;
}

struct notice_bench : actor_fixture {
  std::shared_ptr<ticks> got = std::make_shared<ticks>();
  work_notice notice{clock, milliseconds(100)};

  void attach() {
    notice.attach(keep(sys->spawn(count_jobs, got)), keep(sys->spawn(count_deliveries, got)),
                  keep(sys->spawn(count_refunds, got)));
    run();
  }
  void advance(milliseconds d) { // CAF's clock and the notice's move together
    clock.advance(d);
    sched->advance_time(d);
    run();
  }
};

} // namespace

TEST_CASE("work is ticked when it falls due, once per time", "[actors][work_notice]") {
  notice_bench b;
  const auto now = b.clock.now_ms(); // a multiple of 100 ms
  b.notice.tell(written({now + 1000}, {}));
  CHECK(b.notice.ticks_sent() == 0); // not attached yet: the actors claim at start
  b.attach();

  // Jobs due in 1 s and 1.05 s share the tick at 1.1 s; a delivery due already
  // (or due now) is ticked on the next multiple after now, never at once: the
  // write it follows has committed by then.
  b.notice.tell(written({now + 1000, now + 1050}, {now - 5000, now}, {now + 200}));
  CHECK(b.notice.ticks_sent() == 3);
  b.advance(milliseconds(99));
  CHECK(b.got->deliveries == 0);
  b.advance(milliseconds(1));
  CHECK(b.got->deliveries == 1);
  CHECK(b.got->jobs == 0);
  b.advance(milliseconds(200));
  CHECK(b.got->refunds == 1);
  CHECK(b.got->jobs == 0);

  // A time already on its way is not ticked twice; another one is.
  b.notice.tell(written({now + 1020}, {}));
  CHECK(b.notice.ticks_sent() == 3);
  b.notice.tell(written({now + 1900}, {}));
  CHECK(b.notice.ticks_sent() == 4);
  b.advance(milliseconds(799));
  CHECK(b.got->jobs == 0);
  b.advance(milliseconds(1));
  CHECK(b.got->jobs == 1);
  b.advance(milliseconds(1000));
  CHECK(b.got->jobs == 2);
  CHECK(b.got->deliveries == 1);
  CHECK(b.got->refunds == 1);

  b.notice.detach();
  b.notice.tell(written({now}, {now}, {now}));
  CHECK(b.notice.ticks_sent() == 4);
}

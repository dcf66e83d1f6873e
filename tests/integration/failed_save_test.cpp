// A refused save must not keep a copy of what it tried to write. SOCI 4.0.3's
// PostgreSQL backend copies each bound value into a buffer before it executes and
// frees it after; when the execution throws, the buffer stays until the next
// execution of the same prepared statement overwrites the pointer: one leaked copy
// of the row per failure (a whole 1 MiB receipt, for a receipt). Found by the
// ASan suite (scripts/test --sanitize=address, LeakSanitizer in integration_postgresql).

#include <malloc.h>

#include "tests/integration/fixture.hpp"

#if defined(__SANITIZE_ADDRESS__)
// libasan's count of live allocations (gcc ships no header declaring it).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace receiptd::test {

namespace {

constexpr std::size_t big = 1 << 20;
constexpr int failures = 40;

model::purchase_order_record orphan(int i) {
  // No such app: the foreign key refuses the insert.
  auto r
    = minimal_purchase_order("00000000-0000-4000-8000-00000000ffff", "orphan-" + std::to_string(i));
  r.purchase_data = std::string(big, 'x');
  return r;
}

// Bytes the allocator has handed out and not had back (ASan replaces malloc and
// keeps its own count).
std::size_t held_bytes() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

void check_nothing_kept(std::size_t before) {
  auto after = held_bytes();
  INFO("heap grew by " << (after > before ? after - before : 0) << " bytes over " << failures
                       << " failed saves of " << big << " bytes each");
  CHECK(after < before + failures * big / 4);
}

} // namespace

TEST_CASE("a refused save keeps no copy of its values", "[records][leak]") {
  database_fixture f;
  auto& d = *f.db;
  REQUIRE_FALSE(d.save_purchase_order(orphan(-1), t0).ok()); // statements prepared
  REQUIRE(d.save_purchase_order(minimal_purchase_order(f.app.id, "fine"), t0).ok());
  auto before = held_bytes();
  for (int i = 0; i < failures; ++i) {
    REQUIRE_FALSE(d.save_purchase_order(orphan(i), t0).ok());
    // The statement runs again, successfully, after each failure.
    REQUIRE(d.save_purchase_order(minimal_purchase_order(f.app.id, "fine"), t0).ok());
  }
  check_nothing_kept(before);
}

TEST_CASE("a save refused inside a batch keeps no copy of its values", "[records][leak]") {
  database_fixture f;
  auto& d = *f.db;
  auto before = held_bytes();
  for (int i = 0; i < failures; ++i) {
    std::vector<db::batch_save> batch{{orphan(i), t0},
                                      {minimal_purchase_order(f.app.id, "fine"), t0}};
    auto results = REQUIRE_OK(d.save_batch(batch));
    REQUIRE(results.size() == 2);
    CHECK_FALSE(results[0].ok());
    CHECK(results[1].ok());
  }
  check_nothing_kept(before);
}

} // namespace receiptd::test

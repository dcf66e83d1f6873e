#pragma once
// Play's voided purchases list: purchases refunded, cancelled or
// charged back. receiptd polls it per app (purchases.voidedpurchases.list, with
// subscriptions: type=1) and marks the purchase orders it names. Google keeps
// 30 days of it and refuses a startTime further back.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::store_b {

inline constexpr unix_ms voided_lookback_ms = 30LL * 24 * 3600 * 1000;

struct voided_purchase {
  std::string purchase_token;
  std::string order_id;                 // may be empty
  unix_ms voided_time = 0;              // voidedTimeMillis (an int64 as a JSON string)
  std::optional<unix_ms> purchase_time; // purchaseTimeMillis
  int voided_source = 0;                // 0 user, 1 developer, 2 Google
  int voided_reason = 0;                // 0 other … 7 chargeback
  std::optional<int> voided_quantity;   // quantity-based partial refunds
};

struct voided_page {
  std::vector<voided_purchase> purchases;
  std::string next_page_token; // empty: the last page
};

// GET …/applications/{package}/purchases/voidedpurchases?startTime=&endTime=
//     &maxResults=&type=1[&token=]
std::string voided_purchases_url(std::string_view api_base, std::string_view package_name,
                                 unix_ms start_time, unix_ms end_time, int max_results,
                                 std::string_view page_token);

// A 200 answer's page ({} is an empty last page). Anything else is an error
// naming the status (or the transport error; http_status 0: no answer): the
// poll is tried again at its next interval. Entries without a purchaseToken or
// voidedTimeMillis are skipped.
result<voided_page> parse_voided_page(int http_status, std::string_view body,
                                      std::string_view transport_error);

// Where an app's poll stands, stored so that it survives a restart: the window
// being read starts at window_start; page_token is the next page of it (empty:
// its first); high_water is the latest voidedTimeMillis seen in it.
struct voided_cursor {
  unix_ms window_start = 0;
  std::string page_token;
  unix_ms high_water = 0;
};

// The first cursor of an app: as far back as Google allows.
voided_cursor first_voided_cursor(unix_ms now);

// The startTime to ask with: the window's start, but never further back than
// Google allows at `now` (less a minute of clock slack).
unix_ms voided_start_time(const voided_cursor& c, unix_ms now);

// The cursor after a page of the window that ends at end_time (the endTime
// asked with): the next page of the same window, or — after the last one — a
// new window starting at the latest voided time seen (entries at that instant
// are read again: applying one twice changes nothing). A voided time past
// end_time (Play's answer out of its window, or a clock ahead of receiptd's)
// counts as end_time: the next window never starts in the future, where it
// would skip what is voided until then.
voided_cursor advance_voided_cursor(const voided_cursor& c, const voided_page& page,
                                    unix_ms end_time);

// Marks a purchase voided: purchase_state refunded and the voided fields.
// Returns whether anything changed (a second application changes nothing).
// Never fraud: a refund or chargeback is not a forged proof.
bool apply_voided(purchase_order_record& r, const voided_purchase& v);

} // namespace receiptd::model::store_b

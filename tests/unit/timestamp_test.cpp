#include <catch2/catch.hpp>

#include <cstdio>
#include <ctime>
#include <string>

#include "model/timestamp.hpp"

using namespace receiptd::model;

TEST_CASE("timestamps render as SPEC §2.3 says", "[timestamp]") {
  CHECK(format_utc(0) == "1970-01-01 00:00:00 UTC");
  CHECK(format_utc(1456139019030) == "2016-02-22 11:03:39 UTC");
  CHECK(format_utc(-1) == "1969-12-31 23:59:59 UTC");
  auto j = timestamp_json(1456139019030);
  CHECK(j.at("ms").as_int64() == 1456139019030);
  CHECK(j.at("utc").as_string() == "2016-02-22 11:03:39 UTC");
  CHECK(timestamp_json(std::optional<unix_ms>{}).is_null());
}

TEST_CASE("timestamps render as the C library's UTC calendar says, any year", "[timestamp]") {
  auto libc = [](unix_ms ms) {
    std::time_t t = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02d %02d:%02d:%02d UTC",
                  static_cast<long long>(tm.tm_year) + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
    return std::string(buf);
  };
  const unix_ms year = 31'556'952'000; // mean Gregorian year
  const unix_ms edges[] = {
    0, 999, 1000, -999, -1000, -1001, 951'782'400'000 /* 2000-02-29 */, 4'107'542'399'999,
    -62'167'219'200'000 /* 0000-01-01 */, -62'167'219'200'001, 253'402'300'799'999 /* 9999 */,
    253'402'300'800'000 /* 10000 */, -80'000'000'000'000};
  for (auto ms : edges)
    CHECK(format_utc(ms) == libc(ms));
  // Every ~37 days and some odd seconds over ±12,000 years.
  for (unix_ms ms = -12'000 * year; ms < 12'000 * year; ms += 3'196'834'567'891)
    REQUIRE(format_utc(ms) == libc(ms));
}

TEST_CASE("RFC 3339 dates as Apple writes them", "[timestamp]") {
  CHECK(parse_rfc3339("2023-02-22T14:30:15Z") == 1677076215000);
  CHECK(parse_rfc3339("2023-02-22T14:30:15.123Z") == 1677076215123);
  CHECK(parse_rfc3339("2023-02-22T16:30:15+02:00") == 1677076215000);
  CHECK_FALSE(parse_rfc3339(""));
  CHECK_FALSE(parse_rfc3339("2023-02-22"));
  CHECK_FALSE(parse_rfc3339("2023-13-22T14:30:15Z"));
  CHECK_FALSE(parse_rfc3339("2023-02-22T14:30:15"));
  CHECK(parse_apple_gmt("2015-11-18 04:34:41 Etc/GMT") == 1447821281000);
}

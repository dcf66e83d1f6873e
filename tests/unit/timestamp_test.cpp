#include <catch2/catch.hpp>

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

// Numbers in metadata beyond a double's range (found by the upload_store_b fuzz
// target, tests/fuzz/regressions/upload_store_b/): Boost.JSON reads 1e309 as
// infinity and writes it back as `Infinity`, which no JSON parser reads, so the
// metadata stored for the client came back as null. Refused with a 422 instead.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include "model/upload_request.hpp"

using namespace receiptd::model;

namespace {

std::string body(const std::string& metadata) {
  return R"({"package_name":"p","purchase_token":"t","product_id":"x","metadata":)" + metadata
    + "}";
}

} // namespace

TEST_CASE("metadata numbers beyond a double are a field error", "[request][metadata]") {
  for (const char* m : {R"({"a":1e309})", R"({"a":-1e309})", R"({"a":[1,{"b":1E400}]})"}) {
    INFO(m);
    auto r = parse_store_b_legacy_upload(body(m));
    REQUIRE_FALSE(r.ok());
    REQUIRE(r.errors().size() == 1);
    CHECK(r.errors()[0].field == "metadata");
    CHECK(r.errors()[0].code == "number_out_of_range");
  }
}

TEST_CASE("metadata numbers a double holds are kept as JSON", "[request][metadata]") {
  for (const char* m :
       {R"({"a":1e308})", R"({"a":1e-400})", R"({"a":-0,"b":12345678901234567890})"}) {
    INFO(m);
    auto r = parse_store_b_legacy_upload(body(m));
    REQUIRE(r.ok());
    REQUIRE(r->common.metadata);
    boost::system::error_code ec;
    boost::json::parse(*r->common.metadata, ec);
    CHECK_FALSE(ec);
  }
}

// The one table of error codes: what each answers, and the error value's shape.
#include <catch2/catch.hpp>

#include "model/resource_json.hpp"
#include "model/result.hpp"

using namespace receiptd::model;

TEST_CASE("each error code has its status and retry hint", "[errors]") {
  CHECK(kind_of(errc::invalid_request).status == 422);
  CHECK(kind_of(errc::app_not_configured).status == 422);
  CHECK(kind_of(errc::unauthorized).status == 401);
  CHECK(kind_of(errc::not_found).status == 404);
  CHECK(kind_of(errc::method_not_allowed).status == 405);
  CHECK(kind_of(errc::body_too_large).status == 413);
  CHECK(kind_of(errc::conflict).status == 409);
  CHECK(kind_of(errc::internal_error).status == 500);
  CHECK(kind_of(errc::malformed_request).status == 400);
  CHECK(kind_of(errc::headers_too_large).status == 431);
  CHECK(kind_of(errc::request_timeout).status == 408);
  for (auto busy : {errc::overloaded, errc::too_many_connections, errc::shutting_down,
                    errc::storage_unavailable}) {
    CHECK(kind_of(busy).status == 503);
    CHECK(kind_of(busy).retry_after == 1);
  }
  CHECK_FALSE(kind_of(errc::invalid_request).retry_after);
  CHECK_FALSE(kind_of(errc::internal_error).retry_after);
  CHECK(name_of(errc::storage_unavailable) == "storage_unavailable");
}

TEST_CASE("an error not about a field is listed under its code's name", "[errors]") {
  error e(errc::overloaded, "too many uploads in flight; retry shortly");
  CHECK(e.code() == errc::overloaded);
  REQUIRE(e.fields().size() == 1);
  CHECK(e.fields()[0].field.empty());
  CHECK(e.fields()[0].code == "overloaded");
  CHECK(e.message() == "too many uploads in flight; retry shortly");
  CHECK(
    error_body(e.fields())
    == R"({"errors":[{"code":"overloaded","message":"too many uploads in flight; retry shortly"}]})");
}

TEST_CASE("field errors are an invalid request, and a result holds them or its value", "[errors]") {
  result<int> bad(field_errors{{"purchase_token", "missing", "is required"},
                               {"product_id", "too_long", "at most 256 characters"}});
  REQUIRE_FALSE(bad);
  CHECK(bad.err().code() == errc::invalid_request);
  CHECK(bad.errors().size() == 2);
  CHECK(bad.err().message() == "is required");
  result<int> good(7);
  REQUIRE(good);
  CHECK(*good == 7);
  status done_ok = done{};
  CHECK(done_ok.ok());
}

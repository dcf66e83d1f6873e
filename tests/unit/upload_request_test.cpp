// Request parsing: every field rule of SPEC §4 / DESIGN.md §2 for the three endpoints.
#include <catch2/catch.hpp>

#include <boost/json/serialize.hpp>

#include "model/upload_request.hpp"
#include "field_errors.hpp"
#include "test_files.hpp"

using namespace receiptd::model;

namespace {

using receiptd::test::has_error;

template <class Result>
field_errors errors_of(const Result& r) {
  REQUIRE_FALSE(r.ok());
  return r.errors();
}

const std::string play_data
  = R"({"orderId":"GPA.1","packageName":"my.package","productId":"p1","purchaseTime":1437564796303,"purchaseState":0,"purchaseToken":"tok"})";

std::string b_body(const std::string& extra = "") {
  boost::json::object o{{"purchase_data", play_data}, {"purchase_signature", "AAAA"}};
  auto s = boost::json::serialize(o);
  if (!extra.empty())
    s.insert(s.size() - 1, "," + extra);
  return s;
}

} // namespace

TEST_CASE("bodies that are not a JSON object", "[request]") {
  for (auto body : {"", "not json", "{\"receipt\":", "[1,2]", "\"text\"", "42", "null"}) {
    auto r = parse_store_a_upload(body);
    REQUIRE_FALSE(r.ok());
    CHECK(r.errors().size() == 1);
    CHECK(r.errors()[0].field.empty());
    CHECK((r.errors()[0].code == "invalid_json" || r.errors()[0].code == "not_an_object"));
  }
  CHECK(errors_of(parse_store_b_upload("[]"))[0].code == "not_an_object");
  CHECK(errors_of(parse_store_b_legacy_upload("{"))[0].code == "invalid_json");
}

TEST_CASE("Store A: receipt rules", "[request][store_a]") {
  CHECK(has_error(errors_of(parse_store_a_upload("{}")), "receipt", "missing"));
  CHECK(has_error(errors_of(parse_store_a_upload(R"({"receipt":null})")), "receipt", "missing"));
  CHECK(has_error(errors_of(parse_store_a_upload(R"({"receipt":12})")), "receipt", "wrong_type"));
  CHECK(has_error(errors_of(parse_store_a_upload(R"({"receipt":""})")), "receipt", "blank"));
  CHECK(has_error(errors_of(parse_store_a_upload(R"({"receipt":"%%%"})")), "receipt",
                  "invalid_base64"));
  auto ok = parse_store_a_upload(R"({"receipt":"aGVsbG8="})");
  REQUIRE(ok);
  CHECK(ok->receipt_bytes == "hello");
  CHECK(ok->receipt_data == "aGVsbG8=");
  CHECK(ok->common.ip.k == ip_choice::kind::omitted);
}

TEST_CASE("Store A: country code, identifier_for_vendor", "[request][store_a]") {
  auto ok = parse_store_a_upload(
    R"({"receipt":"aGVsbG8=","country_code":"de","identifier_for_vendor":"956328D9-CC6A-47F4-BE40-6953FB0AB6C7"})");
  REQUIRE(ok);
  CHECK(ok->country_code == std::string("DE"));
  CHECK(ok->identifier_for_vendor == std::string("956328D9-CC6A-47F4-BE40-6953FB0AB6C7"));
  for (auto cc : {R"("DEU")", R"("D")", R"("1A")", R"("")", "7"}) {
    auto r
      = parse_store_a_upload(std::string(R"({"receipt":"aGVsbG8=","country_code":)") + cc + "}");
    auto e = errors_of(r);
    CHECK((has_error(e, "country_code", "invalid_country_code")
           || has_error(e, "country_code", "wrong_type")));
  }
  CHECK(has_error(errors_of(parse_store_a_upload(
                    R"({"receipt":"aGVsbG8=","identifier_for_vendor":"not-a-uuid"})")),
                  "identifier_for_vendor", "invalid_identifier_for_vendor"));
  CHECK(
    parse_store_a_upload(R"({"receipt":"aGVsbG8=","identifier_for_vendor":"f8:ff:c2:1e:91:82"})"));
}

TEST_CASE("common fields: metadata, user_identifier, ip_address", "[request]") {
  SECTION("metadata must be an object, echoed compactly") {
    auto ok = parse_store_a_upload(
      R"({"receipt":"aGVsbG8=","metadata":{ "campaign" : "x", "n": [1, 2] }})");
    REQUIRE(ok);
    CHECK(ok->common.metadata == std::string(R"({"campaign":"x","n":[1,2]})"));
    for (auto m : {"[]", "\"x\"", "1", "true"})
      CHECK(has_error(errors_of(parse_store_a_upload(
                        std::string(R"({"receipt":"aGVsbG8=","metadata":)") + m + "}")),
                      "metadata", "wrong_type"));
    auto null_meta = parse_store_a_upload(R"({"receipt":"aGVsbG8=","metadata":null})");
    REQUIRE(null_meta);
    CHECK_FALSE(null_meta->common.metadata);
  }
  SECTION("user_identifier must be a string of bounded length") {
    CHECK(
      has_error(errors_of(parse_store_a_upload(R"({"receipt":"aGVsbG8=","user_identifier":5})")),
                "user_identifier", "wrong_type"));
    std::string long_id(max_user_identifier_length + 1, 'u');
    CHECK(has_error(errors_of(parse_store_a_upload(R"({"receipt":"aGVsbG8=","user_identifier":")"
                                                   + long_id + "\"}")),
                    "user_identifier", "too_long"));
  }
  SECTION("ip_address: omitted, null, IPv4, IPv6, invalid") {
    auto omitted = parse_store_b_legacy_upload(
      R"({"package_name":"p","purchase_token":"t","product_id":"x"})");
    REQUIRE(omitted);
    CHECK(omitted->common.echo("10.1.2.3").ip_address == std::string("10.1.2.3"));
    auto null_ip = parse_store_b_legacy_upload(
      R"({"package_name":"p","purchase_token":"t","product_id":"x","ip_address":null})");
    REQUIRE(null_ip);
    CHECK_FALSE(null_ip->common.echo("10.1.2.3").ip_address);
    auto v6 = parse_store_b_legacy_upload(
      R"({"package_name":"p","purchase_token":"t","product_id":"x","ip_address":"2001:DB8:0:0::1"})");
    REQUIRE(v6);
    CHECK(v6->common.echo("10.1.2.3").ip_address == std::string("2001:db8::1"));
    // A NUL inside the string ends what inet_pton reads: not the address before it.
    for (auto bad :
         {R"("999.1.1.1")", R"("example.com")", R"("")", "12", "[]", R"("192.0.2.1\u0000junk")"}) {
      auto r = parse_store_b_legacy_upload(
        std::string(R"({"package_name":"p","purchase_token":"t","product_id":"x","ip_address":)")
        + bad + "}");
      auto e = errors_of(r);
      CHECK((has_error(e, "ip_address", "invalid_ip_address")
             || has_error(e, "ip_address", "wrong_type")));
    }
  }
}

TEST_CASE("Store B: purchase_data and purchase_signature", "[request][store_b]") {
  auto ok = parse_store_b_upload(b_body());
  REQUIRE(ok);
  CHECK(ok->purchase_data == play_data);
  CHECK(ok->data.package_name == "my.package");
  CHECK(ok->data.product_id == "p1");
  CHECK(ok->data.purchase_token == "tok");
  CHECK(ok->data.order_id == std::string("GPA.1"));
  CHECK(ok->data.purchase_time == 1437564796303);
  CHECK_FALSE(ok->data.is_subscription());

  CHECK(has_error(errors_of(parse_store_b_upload(R"({"purchase_signature":"AAAA"})")),
                  "purchase_data", "missing"));
  CHECK(has_error(
    errors_of(parse_store_b_upload(R"({"purchase_data":{"a":1},"purchase_signature":"AAAA"})")),
    "purchase_data", "wrong_type"));
  CHECK(has_error(
    errors_of(parse_store_b_upload(R"({"purchase_data":"not json","purchase_signature":"AAAA"})")),
    "purchase_data", "invalid_purchase_data"));
  CHECK(has_error(errors_of(parse_store_b_upload(
                    R"({"purchase_data":"{\"packageName\":\"p\"}","purchase_signature":"AAAA"})")),
                  "purchase_data", "invalid_purchase_data"));
  boost::json::object no_sig{{"purchase_data", play_data}};
  CHECK(has_error(errors_of(parse_store_b_upload(boost::json::serialize(no_sig))),
                  "purchase_signature", "missing"));
  boost::json::object num_sig{{"purchase_data", play_data}, {"purchase_signature", 5}};
  CHECK(has_error(errors_of(parse_store_b_upload(boost::json::serialize(num_sig))),
                  "purchase_signature", "wrong_type"));
  boost::json::object bad_sig{{"purchase_data", play_data}, {"purchase_signature", "!!"}};
  CHECK(has_error(errors_of(parse_store_b_upload(boost::json::serialize(bad_sig))),
                  "purchase_signature", "invalid_base64"));
  SECTION("every error is reported at once") {
    auto e = errors_of(parse_store_b_upload(R"({"metadata":3,"ip_address":"x"})"));
    CHECK(e.size() == 4);
  }
  SECTION("the real purchase data keeps its exact bytes") {
    auto data
      = receiptd::test::data_file("google-play/voltrue2-trivialdrive-subscription/signed_data.txt");
    boost::json::object o{{"purchase_data", data}, {"purchase_signature", "AAAA"}};
    auto r = parse_store_b_upload(boost::json::serialize(o));
    REQUIRE(r);
    CHECK(r->purchase_data == data);
    CHECK(r->data.is_subscription());
  }
}

TEST_CASE("Store B legacy: required and optional fields", "[request][store_b]") {
  auto e = errors_of(parse_store_b_legacy_upload("{}"));
  CHECK(has_error(e, "package_name", "missing"));
  CHECK(has_error(e, "purchase_token", "missing"));
  CHECK(has_error(e, "product_id", "missing"));
  CHECK(has_error(errors_of(parse_store_b_legacy_upload(
                    R"({"package_name":1,"purchase_token":"t","product_id":"x"})")),
                  "package_name", "wrong_type"));
  CHECK(has_error(errors_of(parse_store_b_legacy_upload(
                    R"({"package_name":"p","purchase_token":"t","product_id":"x","order_id":7})")),
                  "order_id", "wrong_type"));
  auto ok = parse_store_b_legacy_upload(
    R"({"package_name":"p","purchase_token":"t","product_id":"x","order_id":"GPA.9","user_identifier":"u1"})");
  REQUIRE(ok);
  CHECK(ok->order_id == std::string("GPA.9"));
  CHECK(ok->common.user_identifier == std::string("u1"));
}

TEST_CASE("NUL characters are refused in every text field", "[request]") {
  CHECK(has_error(errors_of(parse_store_b_legacy_upload(
                    R"({"package_name":"p\u0000","purchase_token":"t","product_id":"x"})")),
                  "package_name", "invalid_characters"));
  CHECK(has_error(
    errors_of(parse_store_b_legacy_upload(
      R"({"package_name":"p","purchase_token":"t","product_id":"x","user_identifier":"a\u0000"})")),
    "user_identifier", "invalid_characters"));
  auto meta = parse_store_b_legacy_upload(
    R"({"package_name":"p","purchase_token":"t","product_id":"x","metadata":{"k":"a\u0000b"}})");
  REQUIRE(meta);
  CHECK(meta->common.metadata->find('\0') == std::string::npos); // escaped as \u0000
}

TEST_CASE("a store notification body is {\"signedPayload\": JWS} or a 400", "[request]") {
  auto refused = [](std::string_view body, const char* field, const char* code) {
    auto r = parse_store_a_notification_request(body);
    REQUIRE_FALSE(r);
    CHECK(r.err().code() == errc::bad_request);
    CHECK(kind_of(r.err().code()).status == 400);
    CHECK(has_error(r.err().fields(), field, code));
  };
  refused("", "", "invalid_json");
  refused("[1]", "", "not_an_object");
  refused("{}", "signedPayload", "missing");
  refused(R"({"signedPayload":null})", "signedPayload", "not_a_string");
  refused(R"({"signedPayload":"a.b"})", "signedPayload", "invalid_jws");
  refused(R"({"signedPayload":"a.b.c d"})", "signedPayload", "invalid_jws");
  std::string huge
    = R"({"signedPayload":")" + std::string(max_notification_length + 1, 'a') + R"("})";
  refused(huge, "signedPayload", "too_long");
  refused(R"({"x":)" + std::string(200, '[') + std::string(200, ']') + "}", "", "too_deep");
  auto ok = parse_store_a_notification_request(R"({"signedPayload":"eyJh.eyJi.c2ln","x":1})");
  REQUIRE(ok);
  CHECK(*ok == "eyJh.eyJi.c2ln");
}

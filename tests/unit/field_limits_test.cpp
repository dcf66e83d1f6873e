// Every request field has a documented maximum and a 422 field error beyond it
//; base64 arrives in any wrapping and is kept in canonical form (§6).
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/encoding.hpp"
#include "model/records.hpp"
#include "model/resource_json.hpp"
#include "model/upload_request.hpp"
#include "field_errors.hpp"

using namespace receiptd::model;
namespace json = boost::json;

namespace {

using receiptd::test::has_error;

// A legacy body with one more member (JSON text, so it may nest past any parser limit).
std::string legacy(const std::string& extra) {
  return R"({"package_name":"p","purchase_token":"t","product_id":"x",)" + extra + "}";
}

// A legacy body with `field` set to `value`.
std::string legacy_with(const std::string& field, const std::string& value) {
  json::object o{{"package_name", "p"}, {"purchase_token", "t"}, {"product_id", "x"}};
  o[field] = value;
  return json::serialize(o);
}

std::string text(std::size_t n, char c = 'a') {
  return std::string(n, c);
}

// {"x":1} is depth 1; each wrapping object adds one.
std::string nested(std::size_t depth) {
  std::string s = R"({"x":1})";
  for (std::size_t i = 1; i < depth; ++i)
    s = R"({"a":)" + s + "}";
  return s;
}

const std::string play_data
  = R"({"orderId":"GPA.1","packageName":"my.package","productId":"p1","purchaseTime":1437564796303,"purchaseState":0,"purchaseToken":"tok"})";

std::string signed_body(const std::string& data, const std::string& signature = "AAAA",
                        const std::string& extra = "") {
  json::object o{{"purchase_data", data}, {"purchase_signature", signature}};
  auto s = json::serialize(o);
  if (!extra.empty())
    s.insert(s.size() - 1, "," + extra);
  return s;
}

} // namespace

TEST_CASE("legacy Store B fields: at their maximum accepted, one byte more refused",
          "[request][limits]") {
  struct field {
    const char* name;
    std::size_t max;
  };
  for (auto f : {field{"package_name", max_package_name_length},
                 field{"purchase_token", max_purchase_token_length},
                 field{"product_id", max_product_id_length}, field{"order_id", max_order_id_length},
                 field{"user_identifier", max_user_identifier_length}}) {
    INFO(f.name);
    CHECK(parse_store_b_legacy_upload(legacy_with(f.name, text(f.max))).ok());
    auto over = parse_store_b_legacy_upload(legacy_with(f.name, text(f.max + 1)));
    REQUIRE_FALSE(over.ok());
    CHECK(has_error(over.errors(), f.name, "too_long"));
  }
}

TEST_CASE("a 3,000-byte purchase token is refused, not handed to the database",
          "[request][limits]") {
  auto r = parse_store_b_legacy_upload(legacy_with("purchase_token", text(3000)));
  REQUIRE_FALSE(r.ok());
  CHECK(has_error(r.errors(), "purchase_token", "too_long"));
}

TEST_CASE("signed Store B: purchase_data, its fields and the signature are bounded",
          "[request][limits]") {
  SECTION("purchase_data itself") {
    auto padded = play_data;
    padded.insert(padded.size() - 1,
                  ",\"developerPayload\":\"" + text(max_purchase_data_length) + "\"");
    auto r = parse_store_b_upload(signed_body(padded));
    REQUIRE_FALSE(r.ok());
    CHECK(has_error(r.errors(), "purchase_data", "too_long"));
  }
  SECTION("the purchase token inside it (it becomes the record's indexed token)") {
    auto data = R"({"packageName":"my.package","productId":"p1","purchaseToken":")"
      + text(max_purchase_token_length + 1) + R"(","purchaseState":0})";
    auto r = parse_store_b_upload(signed_body(data));
    REQUIRE_FALSE(r.ok());
    CHECK(has_error(r.errors(), "purchase_data", "too_long"));
    auto at_max = R"({"packageName":"my.package","productId":"p1","purchaseToken":")"
      + text(max_purchase_token_length) + R"(","purchaseState":0})";
    CHECK(parse_store_b_upload(signed_body(at_max)).ok());
  }
  SECTION("orderId, productId and packageName inside it") {
    for (auto key : {"orderId", "productId", "packageName"}) {
      INFO(key);
      json::object d{{"orderId", "GPA.1"},
                     {"packageName", "my.package"},
                     {"productId", "p1"},
                     {"purchaseToken", "tok"},
                     {"purchaseState", 0}};
      d[key] = text(300);
      auto r = parse_store_b_upload(signed_body(json::serialize(d)));
      REQUIRE_FALSE(r.ok());
      CHECK(has_error(r.errors(), "purchase_data", "too_long"));
    }
  }
  SECTION("purchase_signature") {
    auto r
      = parse_store_b_upload(signed_body(play_data, text(max_purchase_signature_length + 4, 'A')));
    REQUIRE_FALSE(r.ok());
    CHECK(has_error(r.errors(), "purchase_signature", "too_long"));
    CHECK(
      parse_store_b_upload(signed_body(play_data, text(max_purchase_signature_length, 'A'))).ok());
  }
}

TEST_CASE("Store A fields: receipt, identifier_for_vendor, country_code, ip_address",
          "[request][limits]") {
  SECTION("receipt") {
    auto r = parse_store_a_upload(R"({"receipt":")" + text(max_receipt_length + 4, 'A') + "\"}");
    REQUIRE_FALSE(r.ok());
    CHECK(has_error(r.errors(), "receipt", "too_long"));
    CHECK(parse_store_a_upload(R"({"receipt":")" + text(max_receipt_length, 'A') + "\"}").ok());
  }
  SECTION("identifier_for_vendor") {
    auto r = parse_store_a_upload(R"({"receipt":"aGVsbG8=","identifier_for_vendor":")"
                                  + text(max_identifier_for_vendor_length + 1) + "\"}");
    REQUIRE_FALSE(r.ok());
    CHECK(has_error(r.errors(), "identifier_for_vendor", "too_long"));
  }
  SECTION("country_code: two letters; anything longer is not a country code") {
    auto r
      = parse_store_a_upload(R"({"receipt":"aGVsbG8=","country_code":")" + text(100000) + "\"}");
    REQUIRE_FALSE(r.ok());
    CHECK(r.errors().size() == 1);
    CHECK(r.errors()[0].field == "country_code");
  }
  SECTION("ip_address") {
    auto r = parse_store_a_upload(R"({"receipt":"aGVsbG8=","ip_address":")"
                                  + text(max_ip_address_length + 1, '1') + "\"}");
    REQUIRE_FALSE(r.ok());
    CHECK(has_error(r.errors(), "ip_address", "too_long"));
  }
}

TEST_CASE("metadata: bounded in size and depth, never silently dropped", "[request][limits]") {
  SECTION("at the maximum depth it is kept exactly") {
    auto meta = nested(max_metadata_depth);
    auto r = parse_store_a_upload(R"({"receipt":"aGVsbG8=","metadata":)" + meta + "}");
    REQUIRE(r.ok());
    CHECK(r->common.metadata == meta);
  }
  SECTION("one level deeper: 422 on metadata") {
    auto r = parse_store_a_upload(R"({"receipt":"aGVsbG8=","metadata":)"
                                  + nested(max_metadata_depth + 1) + "}");
    REQUIRE_FALSE(r.ok());
    CHECK(has_error(r.errors(), "metadata", "too_deep"));
  }
  SECTION("arrays count as levels too") {
    std::string meta = "1";
    for (std::size_t i = 0; i < max_metadata_depth; ++i)
      meta = "[" + meta + "]";
    auto r = parse_store_b_legacy_upload(legacy("\"metadata\":{\"a\":" + meta + "}"));
    REQUIRE_FALSE(r.ok());
    CHECK(has_error(r.errors(), "metadata", "too_deep"));
  }
  SECTION("depths 33 to 63, once accepted and then echoed as null, are refused") {
    for (std::size_t depth : {33u, 40u, 63u}) {
      INFO(depth);
      auto r = parse_store_b_legacy_upload(legacy("\"metadata\":" + nested(depth)));
      REQUIRE_FALSE(r.ok());
      CHECK(has_error(r.errors(), "metadata", "too_deep"));
    }
  }
  SECTION("a body deeper than the parser goes: 422 too_deep") {
    auto r = parse_store_b_legacy_upload(legacy("\"metadata\":" + nested(max_body_depth + 5)));
    REQUIRE_FALSE(r.ok());
    CHECK(r.errors()[0].code == "too_deep");
  }
  SECTION("size") {
    auto big = R"({"k":")" + text(max_metadata_bytes) + "\"}";
    auto r = parse_store_b_legacy_upload(legacy("\"metadata\":" + big));
    REQUIRE_FALSE(r.ok());
    CHECK(has_error(r.errors(), "metadata", "too_long"));
    auto fits = R"({"k":")" + text(max_metadata_bytes - 8) + "\"}";
    CHECK(parse_store_b_legacy_upload(legacy("\"metadata\":" + fits)).ok());
  }
}

TEST_CASE("metadata at the maximum depth comes back exactly in the resource", "[request][limits]") {
  auto meta = nested(max_metadata_depth);
  auto upload = parse_store_b_legacy_upload(legacy("\"metadata\":" + meta));
  REQUIRE(upload.ok());
  purchase_order_record r;
  r.echo = upload->common.echo("127.0.0.1");
  auto resource = purchase_order_json(r);
  CHECK(json::serialize(resource.at("metadata")) == meta);
}

TEST_CASE("wrapped base64 is normalised before it is stored or forwarded", "[request][base64]") {
  auto bytes = random_bytes(1000);
  auto canonical = base64_encode(bytes);
  std::string wrapped;
  for (std::size_t i = 0; i < canonical.size(); i += 64)
    wrapped += canonical.substr(i, 64) + "\r\n";
  wrapped = "  " + wrapped + "\t";
  auto json_wrapped = json::serialize(json::value(wrapped));
  SECTION("receipt") {
    auto r = parse_store_a_upload(R"({"receipt":)" + json_wrapped + "}");
    REQUIRE(r.ok());
    CHECK(r->receipt_bytes == bytes);
    CHECK(r->receipt_data == canonical);
  }
  SECTION("receipt without its padding") {
    auto unpadded = base64_encode("hello"); // "aGVsbG8="
    unpadded.pop_back();
    auto r = parse_store_a_upload(R"({"receipt":")" + unpadded + "\"}");
    REQUIRE(r.ok());
    CHECK(r->receipt_data == "aGVsbG8=");
  }
  SECTION("purchase_signature") {
    auto r = parse_store_b_upload(signed_body(play_data, wrapped));
    REQUIRE(r.ok());
    CHECK(r->signature_bytes == bytes);
    CHECK(r->purchase_signature == canonical);
  }
}

TEST_CASE("metadata stored before the depth limit is still echoed, not null", "[limits]") {
  // Uploads once took metadata up to the body parser's 64 levels; the resource's
  // parser stopped at Boost.JSON's default of 32 and answered null.
  purchase_order_record r;
  r.echo.metadata = nested(40);
  CHECK(json::serialize(purchase_order_json(r).at("metadata")) == nested(40));
}

// The Store A building blocks on their own: the old-style plist parser, style
// detection, the transaction blob layout and trust loading errors.

#include <catch2/catch.hpp>

#include "model/store_a/der.hpp"
#include "model/store_a/plist.hpp"
#include "tests/unit/store_a_fixtures.hpp"

using namespace store_a_fixtures;
using namespace receiptd::model;

TEST_CASE("old-style plist dictionaries", "[store_a][plist]") {
  auto ok = [](std::string_view text) {
    auto r = sa::parse_plist_dict(text, "test");
    INFO(text);
    INFO((r ? std::string() : r.errors().front().message));
    REQUIRE(r);
    return *r;
  };
  auto bad = [](std::string_view text) {
    auto r = sa::parse_plist_dict(text, "test");
    INFO(text);
    CHECK_FALSE(r);
    if (!r) {
      CHECK(r.errors().front().code == "malformed_receipt");
      CHECK(r.errors().front().field == "receipt");
    }
  };
  SECTION("Apple's layout") {
    auto d = ok("{\n\t\"signature\" = \"AnTJ+/=\";\n\t\"pod\" = \"100\";\n}");
    CHECK(d.size() == 2);
    CHECK(d.at("signature") == "AnTJ+/=");
    CHECK(d.at("pod") == "100");
  }
  SECTION("one line, bare words, comments") {
    auto d = ok("{\"a\" = \"1\"; b = 2.5; /* c = 3; */ // d = 4;\n e-f = x/y:z;}");
    CHECK(d.size() == 3);
    CHECK(d.at("b") == "2.5");
    CHECK(d.at("e-f") == "x/y:z");
  }
  SECTION("escapes") {
    auto d = ok(R"({ "k" = "q\"b\\n\n t\t o\101 u\U00e9 p\Ud83d\Ude00"; })");
    CHECK(d.at("k") == "q\"b\\n\n t\t oA u\xc3\xa9 p\xf0\x9f\x98\x80");
  }
  SECTION("empty dictionary and empty string") {
    CHECK(ok("  {}  ").empty());
    CHECK(ok("{ \"k\" = \"\"; }").at("k").empty());
  }
  SECTION("errors") {
    bad("");
    bad("   ");
    bad("\"a\" = \"b\";");
    bad("{ \"a\" = \"b\" }");                 // missing ';'
    bad("{ \"a\" \"b\"; }");                  // missing '='
    bad("{ \"a\" = \"b\";");                  // unterminated dictionary
    bad("{ \"a\" = \"b; }");                  // unterminated string
    bad("{ \"a\" = \"b\\");                   // escape at the end
    bad("{ \"a\" = { \"b\" = \"c\"; }; }");   // nested dictionary
    bad("{ \"a\" = (\"b\"); }");              // array
    bad("{ \"a\" = <0102>; }");               // data
    bad("{ \"a\" = \"1\"; \"a\" = \"2\"; }"); // duplicate key
    bad("{ \"a\" = \"1\"; } trailing");
    bad("{ \"a\" = \"\xc3\x28\"; }"); // not UTF-8
    bad("{ \"a\" = \"\\Udc00\"; }");  // lone low surrogate
    bad("{ \"a\" = \"\\Ud800x\"; }"); // lone high surrogate
    bad("{ \"a\" = \"\\U\"; }");      // no hex digits
    bad("{ = \"b\"; }");
  }
  SECTION("a hostile key is shortened in the message") {
    auto r = sa::parse_plist_dict("{ \"" + std::string(5000, 'k') + "\" \"v\"; }", "test");
    REQUIRE_FALSE(r);
    CHECK(r.errors().front().message.size() < 200);
  }
}

TEST_CASE("DER reader bounds", "[store_a][der]") {
  namespace der = sa::der;
  std::string_view in;
  CHECK_FALSE(der::read(in));
  in = std::string_view("\x04", 1);
  CHECK_FALSE(der::read(in));
  in = std::string_view("\x04\x05\x00", 3); // length beyond the input
  CHECK_FALSE(der::read(in));
  in = std::string_view("\x04\x84\xff\xff\xff\xff", 6);
  CHECK_FALSE(der::read(in));
  in = std::string_view("\x04\x85\x00\x00\x00\x00\x01\x00", 8); // 5 length octets
  CHECK_FALSE(der::read(in));
  in = std::string_view("\x1f\x01\x00", 3); // high tag number
  CHECK_FALSE(der::read(in));
  in = std::string_view("\x04\x81\x02"
                        "ab!",
                        6); // long form (non-minimal but bounded)
  auto t = der::read(in);
  REQUIRE(t);
  CHECK(t->value == "ab");
  CHECK(in == "!");
  CHECK(der::to_int64(std::string_view("\xff", 1)) == -1);
  CHECK(der::to_int64(std::string_view("\x00\x80", 2)) == 128);
  CHECK(der::to_int64(std::string_view("\x03\x8d\x7e\xa7\xff\x20\x47", 7)) == 1000000054042695);
  CHECK_FALSE(der::to_int64(""));
  CHECK_FALSE(der::to_int64(std::string(9, '\x01')));
}

TEST_CASE("style detection and undecodable bytes", "[store_a][decode]") {
  auto code = [](std::string_view bytes) {
    auto r = sa::decode_receipt(bytes);
    return r ? std::string("ok") : r.errors().front().code;
  };
  CHECK(code("") == "malformed_receipt");
  CHECK(code("hello") == "malformed_receipt");
  CHECK(code(std::string(1, '\x30')) == "malformed_receipt");
  CHECK(code("{}") == "malformed_receipt");
  CHECK(code("{ \"signature\" = \"AA==\"; }") == "malformed_receipt"); // no purchase-info
  // Google Play purchase data is JSON, not an old-style plist.
  CHECK(code("{\"orderId\":\"GPA.1\",\"packageName\":\"x\"}") == "malformed_receipt");

  auto bytes = vector_bytes("apple-transaction", "es-purchaser-consumable-sandbox-2015");
  auto d = sa::decode_receipt(bytes);
  REQUIRE(d);
  const auto& t = std::get<sa::transaction_receipt>(d->detail);
  auto blob = *base64_decode(t.outer.at("signature"));
  auto with_blob = [&](const std::string& b) {
    std::string out = "{";
    for (const auto& [k, v] : t.outer)
      out += "\"" + k + "\" = \"" + (k == "signature" ? base64_encode(b) : v) + "\";";
    return out + "}";
  };
  CHECK(code(with_blob(blob)) == "ok");
  CHECK(code(with_blob("")) == "malformed_receipt");
  CHECK(code(with_blob(std::string(1, '\x04') + blob.substr(1))) == "malformed_receipt");
  CHECK(code(with_blob(blob.substr(0, 100))) == "malformed_receipt");
  CHECK(code(with_blob(blob + "x")) == "malformed_receipt"); // length mismatch
  CHECK(code(with_blob(blob.substr(0, blob.size() - 1))) == "malformed_receipt");
  auto bad_cert = blob;
  bad_cert[133] = '\x31'; // not a certificate
  CHECK(code(with_blob(bad_cert)) == "malformed_receipt");
  std::string not_base64 = "{\"signature\" = \"***\"; \"purchase-info\" = \"e30=\";}";
  CHECK(code(not_base64) == "malformed_receipt");
}

TEST_CASE("trust loading fails fast on bad material", "[store_a][trust]") {
  auto error = [](const sa::trust_config& cfg) {
    auto r = sa::load_trust_anchors(cfg);
    REQUIRE_FALSE(r);
    CHECK(r.errors().front().field == "trust");
    CHECK(r.errors().front().code == "invalid_certificate");
    return r.errors().front().message;
  };
  CHECK_THAT(error({}), Catch::Contains("no trust root"));
  CHECK_THAT(error({{"not a pem"}, {}, {}}), Catch::Contains("root_pems[0]"));
  CHECK_THAT(error({{trust_pem("apple-root-ca.pem"), ""}, {}, {}}),
             Catch::Contains("root_pems[1]"));
  CHECK_THAT(error({{trust_pem("apple-root-ca.pem")}, {"garbage"}, {}}),
             Catch::Contains("intermediate_pems[0]"));
  CHECK_THAT(error({{trust_pem("apple-wwdr-ca.pem")}, {}, {}}), Catch::Contains("self-signed"));
  auto broken = trust_pem("apple-root-ca.pem");
  broken[100] = broken[100] == 'A' ? 'B' : 'A';
  broken.insert(200, "!!!");
  CHECK_THAT(error({{broken}, {}, {}}), Catch::Contains("root_pems[0]"));
  // Several certificates in one text are fine; so is a sandbox root alone.
  CHECK(sa::load_trust_anchors(
    {{trust_pem("apple-root-ca.pem") + trust_pem("storekit-test.pem")},
     {trust_pem("apple-itunes-store-ca.pem") + trust_pem("apple-wwdr-ca.pem")},
     {}}));
  CHECK(sa::load_trust_anchors({{}, {}, {trust_pem("storekit-test.pem")}}));
}

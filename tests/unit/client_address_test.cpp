// The client's address behind trusted reverse proxies (http.trusted-proxies).
#include <catch2/catch.hpp>

#include "model/client_address.hpp"

using namespace receiptd::model;

namespace {

trusted_proxies proxies(std::vector<std::string> networks) {
  auto t = trusted_proxies::parse(networks);
  REQUIRE(t);
  return *t;
}

} // namespace

TEST_CASE("networks parse as CIDR blocks or single addresses", "[client_address]") {
  auto ten = ip_network::parse("10.0.0.0/8");
  REQUIRE(ten);
  CHECK(ten->contains("10.255.1.2"));
  CHECK(ten->contains("::ffff:10.1.2.3")); // a dual-stack listener's view of 10.1.2.3
  CHECK_FALSE(ten->contains("11.0.0.1"));
  CHECK_FALSE(ten->contains("::1"));
  auto one = ip_network::parse("127.0.0.1");
  REQUIRE(one);
  CHECK(one->contains("127.0.0.1"));
  CHECK_FALSE(one->contains("127.0.0.2"));
  auto v6 = ip_network::parse("2001:db8::/32");
  REQUIRE(v6);
  CHECK(v6->contains("2001:db8:ffff::1"));
  CHECK_FALSE(v6->contains("2001:db9::1"));
  CHECK_FALSE(v6->contains("10.0.0.1"));
  auto all = ip_network::parse("0.0.0.0/0");
  REQUIRE(all);
  CHECK(all->contains("203.0.113.9"));

  for (auto bad : {"", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/x", "10.1.0.0/8", "proxy.example",
                   "::1/129", "10.0.0.0/8/8"}) {
    INFO(bad);
    auto n = ip_network::parse(bad);
    REQUIRE_FALSE(n);
    CHECK(n.err().message().find(std::string("\"") + bad + "\"") != std::string::npos);
  }
  auto list = trusted_proxies::parse({"10.0.0.0/8", "nonsense"});
  REQUIRE_FALSE(list);
  CHECK(list.err().message().find("nonsense") != std::string::npos);
}

TEST_CASE("forwarded headers count only from a trusted peer", "[client_address]") {
  auto t = proxies({"127.0.0.1", "10.0.0.0/8"});
  // Not a trusted proxy: its headers are the client's own words.
  CHECK(t.client_address("198.51.100.7", std::nullopt, "203.0.113.9") == "198.51.100.7");
  CHECK(t.client_address("198.51.100.7", "for=203.0.113.9", std::nullopt) == "198.51.100.7");
  // No proxies configured: the peer, always.
  CHECK(trusted_proxies().client_address("127.0.0.1", std::nullopt, "203.0.113.9") == "127.0.0.1");
  // A trusted proxy: the address it forwarded.
  CHECK(t.client_address("127.0.0.1", std::nullopt, "203.0.113.9") == "203.0.113.9");
  CHECK(t.client_address("127.0.0.1", std::nullopt, " 2001:DB8::1 ") == "2001:db8::1");
  // A trusted proxy that forwarded nothing: the proxy itself.
  CHECK(t.client_address("127.0.0.1", std::nullopt, std::nullopt) == "127.0.0.1");
  CHECK(t.client_address("127.0.0.1", std::nullopt, "") == "127.0.0.1");
}

TEST_CASE("the walk goes right to left, past trusted proxies only", "[client_address]") {
  auto t = proxies({"127.0.0.1", "10.0.0.0/8"});
  // What the client claimed comes first; each proxy appended what it saw.
  CHECK(t.client_address("127.0.0.1", std::nullopt, "1.2.3.4, 203.0.113.9, 10.0.0.5")
        == "203.0.113.9");
  // Every hop trusted: the farthest.
  CHECK(t.client_address("127.0.0.1", std::nullopt, "10.0.0.9, 10.0.0.5") == "10.0.0.9");
  // A hop that is not an address ends the walk at the last trusted one.
  CHECK(t.client_address("127.0.0.1", std::nullopt, "203.0.113.9, garbage, 10.0.0.5")
        == "10.0.0.5");
  CHECK(t.client_address("127.0.0.1", std::nullopt, "203.0.113.9, unknown") == "127.0.0.1");
}

TEST_CASE("Forwarded (RFC 7239) wins over X-Forwarded-For", "[client_address]") {
  auto t = proxies({"127.0.0.1"});
  CHECK(t.client_address("127.0.0.1", "for=192.0.2.60;proto=https;by=203.0.113.43", "1.1.1.1")
        == "192.0.2.60");
  CHECK(t.client_address("127.0.0.1", R"(for="[2001:db8:cafe::17]:4711")", std::nullopt)
        == "2001:db8:cafe::17");
  CHECK(t.client_address("127.0.0.1", R"(For="192.0.2.43:47011", for=127.0.0.1)", std::nullopt)
        == "192.0.2.43");
  CHECK(t.client_address("127.0.0.1", "for=unknown", std::nullopt) == "127.0.0.1");
  CHECK(t.client_address("127.0.0.1", "for=_hidden, for=198.51.100.17", std::nullopt)
        == "198.51.100.17");
  CHECK(t.client_address("127.0.0.1", "proto=https", std::nullopt) == "127.0.0.1");
  CHECK(forwarded_for_values(R"(for="a,b";by=x, for=c)")
        == std::vector<std::string>{R"("a,b")", "c"});
}

TEST_CASE("what a client writes cannot hide the hops its proxies appended", "[client_address]") {
  // The header arrives as the client's text, then ", <address>" from each proxy:
  // an unclosed quote or a stray backslash of the client's is its own element.
  auto t = proxies({"127.0.0.1", "10.0.0.0/8"});
  CHECK(t.client_address("127.0.0.1", R"(for=", for=203.0.113.9)", std::nullopt) == "203.0.113.9");
  CHECK(t.client_address("127.0.0.1", R"(for="x\", for=203.0.113.9, for=10.0.0.5)", std::nullopt)
        == "203.0.113.9");
  CHECK(t.client_address("127.0.0.1", R"(", for="[2001:db8::7]:80")", std::nullopt)
        == "2001:db8::7");
  // X-Forwarded-For has no quoted strings: a quote is a character of its entry.
  CHECK(t.client_address("127.0.0.1", std::nullopt, R"(", 203.0.113.9)") == "203.0.113.9");
  CHECK(t.client_address("127.0.0.1", std::nullopt, R"("1.2.3.4, 10.0.0.5)") == "10.0.0.5");
  // Read from the right, quoted strings still hold commas and escaped quotes.
  CHECK(forwarded_for_values(R"(for="a,\"b\\";by=x, for=c)")
        == std::vector<std::string>{R"("a,\"b\\")", "c"});
  CHECK(forwarded_for_values(R"(for="x, for=y)") == std::vector<std::string>{R"("x)", "y"});
  // A NUL ends what inet_pton reads: a hop with one is not an address.
  CHECK(t.client_address("127.0.0.1", std::nullopt, std::string("203.0.113.9\0junk", 16))
        == "127.0.0.1");
}

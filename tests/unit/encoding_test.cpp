#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "model/encoding.hpp"
#include "model/identifiers.hpp"

using namespace receiptd::model;

TEST_CASE("base64 decoding is strict about the alphabet", "[encoding]") {
  CHECK(base64_decode("aGVsbG8=") == std::string("hello"));
  CHECK(base64_decode("aGVsbG8") == std::string("hello"));
  CHECK(base64_decode("aGVs\nbG8=\n") == std::string("hello"));
  CHECK(base64_decode("") == std::string());
  CHECK_FALSE(base64_decode("aGVsbG8*"));
  CHECK_FALSE(base64_decode("a"));
  CHECK_FALSE(base64_decode("aG=Vz"));
  CHECK_FALSE(base64_decode("aGVsbG8-"));
  CHECK(base64_encode("hello") == "aGVsbG8=");
  CHECK(base64url_encode("\xfb\xff") == "-_8");
}

TEST_CASE("digests and constant-time comparison", "[encoding]") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Again, after another input, and empty: each digest starts afresh.
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex(std::string(1000, 'a'))
        == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string other;
  std::thread([&] { other = sha256_hex("abc"); }).join(); // a thread's first digest
  CHECK(other == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex_encode(sha1("abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(constant_time_equal("abc", "abc"));
  CHECK_FALSE(constant_time_equal("abc", "abd"));
  CHECK_FALSE(constant_time_equal("abc", "ab"));
}

TEST_CASE("UUIDs and IP addresses", "[identifiers]") {
  auto id = make_uuid();
  CHECK(id.size() == 36);
  CHECK(id[14] == '4');
  CHECK(is_uuid(id));
  for (int i = 0; i < 64; ++i) { // lower-case 8-4-4-4-12, version 4, RFC 4122 variant
    auto u = make_uuid();
    CAPTURE(u);
    for (std::size_t k = 0; k < u.size(); ++k)
      CHECK((k == 8 || k == 13 || k == 18 || k == 23
               ? u[k] == '-'
               : ((u[k] >= '0' && u[k] <= '9') || (u[k] >= 'a' && u[k] <= 'f'))));
    CHECK(u[14] == '4');
    CHECK(std::string_view("89ab").find(u[19]) != std::string_view::npos);
  }
  CHECK(make_uuid() != id);
  CHECK(is_uuid("956328D9-CC6A-47F4-BE40-6953FB0AB6C7"));
  CHECK_FALSE(is_uuid("956328D9CC6A47F4BE406953FB0AB6C7"));
  CHECK_FALSE(is_uuid("956328D9-CC6A-47F4-BE40-6953FB0AB6CZ"));
  auto b = parse_uuid("956328D9-CC6A-47F4-BE40-6953FB0AB6C7");
  REQUIRE(b);
  CHECK((*b)[0] == 0x95);
  CHECK((*b)[15] == 0xC7);
  CHECK(canonical_ip("192.168.0.1") == std::string("192.168.0.1"));
  CHECK(canonical_ip("2001:0db8:0000:0000:0000:0000:0000:0001") == std::string("2001:db8::1"));
  CHECK(canonical_ip("::FFFF:10.0.0.1") == std::string("::ffff:10.0.0.1"));
  CHECK_FALSE(canonical_ip("256.1.1.1"));
  CHECK_FALSE(canonical_ip("localhost"));
  CHECK_FALSE(canonical_ip(""));
  CHECK_FALSE(canonical_ip("1.2.3.4 "));
  CHECK_FALSE(canonical_ip(std::string_view("1.2.3.4\0junk", 12)));
  CHECK_FALSE(canonical_ip(std::string_view("::1\0", 4)));
}

TEST_CASE("random bytes: the asked length, never repeated across draws and blocks",
          "[encoding][random]") {
  std::set<std::string> seen;
  for (int i = 0; i < 2000; ++i) { // 2,000 × 16 bytes: many 512-byte blocks
    auto b = random_bytes(16);
    REQUIRE(b.size() == 16);
    CHECK(seen.insert(b).second);
  }
  CHECK(random_bytes(0).empty());
  CHECK(random_bytes(100).size() == 100); // larger than a draw from the block
  CHECK(random_bytes(64) != random_bytes(64));
}

TEST_CASE("random bytes: a forked child never draws what its parent draws next",
          "[encoding][random]") {
  (void)random_bytes(16); // this thread now holds a block
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto b = random_bytes(16);
    auto written = write(fds[1], b.data(), b.size());
    _exit(written == 16 ? 0 : 1);
  }
  auto parent_draw = random_bytes(16);
  std::string child_draw(16, '\0');
  auto got = read(fds[0], child_draw.data(), child_draw.size());
  int status = 0;
  waitpid(child, &status, 0);
  close(fds[0]);
  close(fds[1]);
  REQUIRE(got == 16);
  CHECK(WIFEXITED(status));
  CHECK(child_draw != parent_draw);
}

TEST_CASE("is_base64url: RFC 4648 §5's alphabet only", "[encoding]") {
  CHECK(is_base64url(""));
  CHECK(is_base64url("ABCXYZabcxyz0189-_"));
  for (char c : std::string("+/=. \n\t"))
    CHECK_FALSE(is_base64url(std::string("ab") + c + "cd"));
  CHECK_FALSE(is_base64url(std::string("ab\0cd", 5)));
  CHECK_FALSE(is_base64url("ab\xc3\xa9"));
}

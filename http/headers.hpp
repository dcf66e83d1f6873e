#pragma once
// Response headers Pistache 0.0.5 has no class for. Raw headers added with
// headers().addRaw() are silently not written (STACK.md): these typed ones are.

#include <pistache/http_header.h>

#include <ostream>
#include <string>

namespace receiptd::http {

#define RECEIPTD_TEXT_HEADER(Class, Name)                                                          \
  class Class : public Pistache::Http::Header::Header {                                            \
  public:                                                                                          \
    NAME(Name)                                                                                     \
    Class() = default;                                                                             \
    explicit Class(std::string value) : value_(std::move(value)) {}                                \
    void parse(const std::string& data) override { value_ = data; }                                \
    void write(std::ostream& os) const override { os << value_; }                                  \
    const std::string& value() const { return value_; }                                            \
                                                                                                   \
  private:                                                                                         \
    std::string value_;                                                                            \
  };

RECEIPTD_TEXT_HEADER(request_id_header, "X-Request-Id")
RECEIPTD_TEXT_HEADER(retry_after_header, "Retry-After")
RECEIPTD_TEXT_HEADER(www_authenticate_header, "WWW-Authenticate")

#undef RECEIPTD_TEXT_HEADER

} // namespace receiptd::http

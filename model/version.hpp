#pragma once
// receiptd's version: the CMake project's (CMakeLists.txt), the one number the
// binaries' --version, GET /healthz, receiptd_build_info, the .deb and the
// OpenAPI document's info.version all say.

#include <string_view>

namespace receiptd::model {

extern const std::string_view version;

} // namespace receiptd::model

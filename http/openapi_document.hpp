#pragma once
// The OpenAPI 3.1 document of the API (docs/openapi.yaml), embedded into the
// binary at build time (http/embed_openapi.cmake): GET /openapi.yaml serves it,
// and tests/unit/openapi_document_test.cpp holds it against the routing table
// and the error table.

#include <string_view>

namespace receiptd::http {

// The YAML text of docs/openapi.yaml as it was when the binary was built.
std::string_view openapi_document();

} // namespace receiptd::http

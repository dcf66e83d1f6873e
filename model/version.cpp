#include "model/version.hpp"

namespace receiptd::model {

// RECEIPTD_VERSION is defined for this file only (model/CMakeLists.txt), so a new
// version recompiles it alone.
const std::string_view version = RECEIPTD_VERSION;

} // namespace receiptd::model

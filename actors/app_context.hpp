#pragma once
// An app with its store credentials parsed, built once per app (and again when
// its row changes), shared read-only by every upload of that app.

#include "actors/messages.hpp"

namespace receiptd::actors {

app_context_ptr make_app_context(const model::app& app);

} // namespace receiptd::actors

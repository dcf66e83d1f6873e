#include "actors/app_context.hpp"

#include "actors/log.hpp"

namespace receiptd::actors {

namespace {

// A stored credential parsed once; an unusable one is null, and why is recorded
// (and logged) for the uploads that would have needed it.
template <class Credential>
std::shared_ptr<const Credential> parse_credential(const std::string& text, const char* what,
                                                   app_context& ctx) {
  if (text.empty())
    return nullptr;
  auto parsed = Credential::parse(text);
  if (parsed)
    return *parsed;
  ctx.credential_problem
    = "app " + ctx.app.id + ": unusable " + what + ": " + parsed.err().message();
  log_warn(ctx.credential_problem);
  return nullptr;
}

} // namespace

app_context_ptr make_app_context(const model::app& a) {
  auto ctx = std::make_shared<app_context>();
  ctx->app = a;
  ctx->licence_key = parse_credential<model::store_b::licence_key>(a.store_b_public_key,
                                                                   "Store B licence key", *ctx);
  ctx->service_account = parse_credential<model::store_b::service_account>(
    a.store_b_service_account, "Store B service account", *ctx);
  return ctx;
}

} // namespace receiptd::actors

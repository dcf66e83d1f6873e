#include "actors/app_context.hpp"

#include "actors/log.hpp"

namespace receiptd::actors {

namespace {

// Records (and logs) why a configured credential is unusable, for the uploads
// of the store that would have needed it (`into`: that store's problem text);
// several unusable credentials of one store are all named.
void note_problem(const app_context& ctx, std::string& into, const char* what,
                  const std::string& why) {
  auto problem = "app " + ctx.app.id + ": unusable " + what + ": " + why;
  log_warn(problem);
  if (!into.empty())
    into += "; ";
  into += problem;
}

// A stored credential parsed once; an unusable one is null.
template <class Credential>
std::shared_ptr<const Credential> parse_credential(const std::string& text, const char* what,
                                                   app_context& ctx) {
  if (text.empty())
    return nullptr;
  auto parsed = Credential::parse(text);
  if (parsed)
    return *parsed;
  note_problem(ctx, ctx.store_b_problem, what, parsed.err().message());
  return nullptr;
}

// The App Store Server API key: none when all three fields are empty; one or
// two of them set (SQL by hand: receiptctl stores all three) is unusable too.
std::shared_ptr<const model::store_a::server_api_key> parse_server_api_key(app_context& ctx) {
  const auto& a = ctx.app;
  if (a.app_store_issuer_id.empty() && a.app_store_key_id.empty()
      && a.app_store_private_key.empty())
    return nullptr;
  auto parsed = model::store_a::server_api_key::parse(a.app_store_issuer_id, a.app_store_key_id,
                                                      a.app_store_private_key);
  if (parsed)
    return *parsed;
  note_problem(ctx, ctx.server_api_problem, "App Store Server API credentials",
               parsed.err().message());
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
  ctx->server_api_key = parse_server_api_key(*ctx);
  return ctx;
}

const app_context::compiled_entitlements& app_context::entitlements() const {
  std::call_once(entitlements_once_, [this] {
    namespace ent = model::entitlements;
    auto compiled = [&]() -> model::result<std::shared_ptr<const ent::matcher>> {
      auto rules = ent::parse_rules(app.entitlement_rules);
      if (!rules)
        return rules.err();
      return ent::matcher::compile(*rules);
    }();
    if (compiled) {
      entitlements_.matcher = *compiled;
      return;
    }
    entitlements_.problem
      = "app " + app.id + ": unusable entitlement rules, none apply: " + compiled.err().message();
    log_warn(entitlements_.problem);
  });
  return entitlements_;
}

} // namespace receiptd::actors

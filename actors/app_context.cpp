#include "actors/app_context.hpp"

#include "actors/log.hpp"

namespace receiptd::actors {

app_context_ptr make_app_context(const model::app& a) {
  auto ctx = std::make_shared<app_context>();
  ctx->app = a;
  if (!a.store_b_public_key.empty()) {
    auto key = model::store_b::licence_key::parse(a.store_b_public_key);
    if (key) {
      ctx->licence_key = *key;
    } else {
      ctx->credential_problem = "app " + a.id + ": unusable Store B licence key: "
                                + key.errors().front().message;
      log_warn(ctx->credential_problem);
    }
  }
  if (!a.store_b_service_account.empty()) {
    auto account = model::store_b::service_account::parse(a.store_b_service_account);
    if (account) {
      ctx->service_account = *account;
    } else {
      ctx->credential_problem = "app " + a.id + ": unusable Store B service account: "
                                + account.errors().front().message;
      log_warn(ctx->credential_problem);
    }
  }
  return ctx;
}

bool same_app(const app_context& ctx, const model::app& a) {
  const auto& b = ctx.app;
  return a.id == b.id && a.name == b.name && a.bundle_id == b.bundle_id
         && a.package_name == b.package_name
         && a.store_a_shared_secret == b.store_a_shared_secret
         && a.store_b_public_key == b.store_b_public_key
         && a.store_b_service_account == b.store_b_service_account
         && a.accept_storekit_test_receipts == b.accept_storekit_test_receipts
         && a.transfers == b.transfers;
}

} // namespace receiptd::actors

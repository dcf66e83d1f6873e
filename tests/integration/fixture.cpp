#include "tests/integration/fixture.hpp"

#include "model/identifiers.hpp"

namespace receiptd::test {

std::unique_ptr<db::database> open_database(const std::string& url) {
  return REQUIRE_OK(db::database::open(url));
}

database_fixture::database_fixture()
  : kind(dialect_under_test()), url(fresh_database_url(kind)), db(open_database(url)) {
  REQUIRE_OK(db->migrate());
  app = make_app(*db, "app " + model::make_uuid());
}

model::app make_app(db::database& d, const std::string& name) {
  model::app a;
  a.name = name;
  a.bundle_id = "com.example.game";
  a.package_name = "com.example.game";
  a.store_a_shared_secret = "s3cr3t";
  a.store_b_public_key = "MIIBIjANBgkqh";
  a.store_b_service_account = R"({"client_email":"x@y.iam.gserviceaccount.com"})";
  return REQUIRE_OK(d.create_app(a));
}

std::vector<db::batch_saved> save_all(db::database& d, const std::vector<db::batch_save>& batch) {
  auto results = REQUIRE_OK(d.save_batch(batch));
  REQUIRE(results.size() == batch.size());
  for (const auto& r : results)
    REQUIRE(r.ok());
  return results;
}

std::vector<model::validation_job> jobs_of(db::database& d, const std::string& record_id) {
  std::vector<model::validation_job> out;
  for (auto& j : REQUIRE_OK(d.list_jobs()))
    if (j.record_id == record_id)
      out.push_back(j);
  return out;
}

model::purchase_order_record full_purchase_order(const std::string& app_id,
                                                 const std::string& token) {
  model::purchase_order_record r;
  r.app_id = app_id;
  r.is_legacy = false;
  r.fraud = model::fraud_reason::package_name_mismatch;
  r.env = model::environment::sandbox;
  r.package_name = "com.example.game";
  r.purchase_token = token;
  r.order_id = "GPA.1234-5678-9012-34567";
  r.purchase.product_id = "gems_100";
  r.purchase.kind = model::product_kind::subscription;
  r.purchase.purchase_time = 1'345'678'900'000;
  r.purchase.purchase_state = model::purchase_state::purchased;
  r.purchase.quantity = 3;
  r.purchase.acknowledged = false;
  r.purchase.auto_renewing = true;
  r.purchase.expiry_time = 253'402'300'799'999; // 9999-12-31T23:59:59.999Z
  r.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
  r.purchase.is_test = true;
  r.purchase.refundable_quantity = 2;
  r.purchase.offer_phase = "introductory_price";
  r.purchase.latest_order_id = "GPA.1234-5678-9012-34567..5";
  r.purchase.prepaid = false;
  r.purchase.allow_extend_after = 1'345'678'900'001;
  r.purchase.installments = model::play_installments{12, std::nullopt, 7, true};
  r.purchase.deferred_product_id = "gems_yearly";
  r.purchase_data = "{\"orderId\":\"GPA.1234\",\n \"note\":\"it's; \\\"quoted\\\" — ünïcödé ✓\"}";
  r.purchase_signature = "c2lnbmF0dXJl+/==";
  r.echo.user_identifier = "user'; DROP TABLE apps; --";
  r.echo.metadata = R"({"level":7,"tags":["a","b"],"nested":{"q":"\"x\""}})";
  r.echo.ip_address = "2001:db8::1";
  r.state = model::validation_state::rejected;
  r.created_at = t0;
  r.updated_at = t0 + 1;
  r.store_detail = "Play 400: invalid value";
  return r;
}

model::purchase_order_record minimal_purchase_order(const std::string& app_id,
                                                    const std::string& token) {
  model::purchase_order_record r;
  r.app_id = app_id;
  r.is_legacy = true;
  r.package_name = "com.example.game";
  r.purchase_token = token;
  r.purchase.product_id = "gems_100";
  r.state = model::validation_state::pending;
  r.created_at = t0;
  r.updated_at = t0;
  return r;
}

model::purchase_order_record validated(model::purchase_order_record r) {
  r.state = model::validation_state::validated;
  return r;
}

model::receipt_record full_receipt(const std::string& app_id, const std::string& hash,
                                   int in_app_purchases) {
  model::receipt_record r;
  r.app_id = app_id;
  r.style = model::receipt_style::transaction;
  r.bundle_id = "com.example.game";
  r.fraud = model::fraud_reason::device_hash_mismatch;
  r.env = model::environment::sandbox;
  r.receipt_hash = hash;
  r.receipt_data = "ewoJInNpZ25hdHVyZSIgPSAi+/==";
  r.country_code = "DE";
  r.identifier_for_vendor = "9B3E2A4C-1D6F-4E8A-B0C2-7F5D3E1A9B8C";
  r.echo.user_identifier = "ユーザー 42";
  r.echo.metadata = R"({"k":"v;'"})";
  r.echo.ip_address = "203.0.113.7";
  for (int i = 0; i < in_app_purchases; ++i) {
    model::apple_in_app_purchase p;
    p.product_id = "product_" + std::to_string(i);
    p.transaction_id = std::to_string(1000000000 + i);
    p.original_transaction_id = std::to_string(1000000000);
    p.quantity = i + 1;
    p.purchase_date = t0 - i;
    p.original_purchase_date = t0 - 1000;
    p.expires_date = t0 + 86'400'000;
    p.cancellation_date = t0 + i;
    p.cancellation_reason = i % 2;
    p.web_order_line_item_id = std::to_string(2000000000 + i);
    p.is_trial_period = i % 2 == 0;
    p.is_in_intro_offer_period = i % 3 == 0;
    p.product_type = i % 4;
    if (i % 2 == 1)
      p.store_contradiction = "absent from the App Store's transaction history";
    r.in_app_purchases.push_back(p);
  }
  r.state = model::validation_state::rejected;
  r.created_at = t0;
  r.updated_at = t0 + 5;
  r.store_detail = "device hash mismatch";
  return r;
}

model::receipt_record minimal_receipt(const std::string& app_id, const std::string& hash) {
  model::receipt_record r;
  r.app_id = app_id;
  r.receipt_hash = hash;
  r.receipt_data = "AAAA";
  model::apple_in_app_purchase p; // every optional absent
  p.product_id = "product";
  p.transaction_id = "1";
  p.original_transaction_id = "1";
  r.in_app_purchases.push_back(p);
  r.state = model::validation_state::pending;
  r.created_at = t0;
  r.updated_at = t0;
  return r;
}

model::transaction_record signed_transaction_record(const std::string& app_id,
                                                    const std::string& transaction_id,
                                                    const std::string& original_transaction_id) {
  model::transaction_record r;
  r.app_id = app_id;
  r.transaction_key = transaction_id;
  r.signed_transaction = "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2ln";
  auto& t = r.transaction;
  t.transaction_id = transaction_id;
  t.original_transaction_id = original_transaction_id;
  t.bundle_id = "com.example.game";
  t.product_id = "premium_monthly";
  t.type = "Auto-Renewable Subscription";
  t.purchase_date = t0;
  t.original_purchase_date = t0 - 1000;
  t.expires_date = t0 + 30LL * 86'400'000;
  t.quantity = 1;
  r.state = model::validation_state::validated;
  r.created_at = t0;
  r.updated_at = t0;
  return r;
}

namespace {

void check_same(const model::echo_fields& got, const model::echo_fields& want) {
  CHECK(got.user_identifier == want.user_identifier);
  CHECK(got.metadata == want.metadata);
  CHECK(got.ip_address == want.ip_address);
}

void check_same(const model::apple_in_app_purchase& got, const model::apple_in_app_purchase& want) {
  CHECK(got.product_id == want.product_id);
  CHECK(got.transaction_id == want.transaction_id);
  CHECK(got.original_transaction_id == want.original_transaction_id);
  CHECK(got.quantity == want.quantity);
  CHECK(got.purchase_date == want.purchase_date);
  CHECK(got.original_purchase_date == want.original_purchase_date);
  CHECK(got.expires_date == want.expires_date);
  CHECK(got.cancellation_date == want.cancellation_date);
  CHECK(got.cancellation_reason == want.cancellation_reason);
  CHECK(got.web_order_line_item_id == want.web_order_line_item_id);
  CHECK(got.is_trial_period == want.is_trial_period);
  CHECK(got.is_in_intro_offer_period == want.is_in_intro_offer_period);
  CHECK(got.product_type == want.product_type);
  CHECK(got.store_contradiction == want.store_contradiction);
}

} // namespace

void check_same(const model::purchase_order_record& got, const model::purchase_order_record& want) {
  CHECK(got.id == want.id);
  CHECK(got.app_id == want.app_id);
  CHECK(got.is_legacy == want.is_legacy);
  CHECK(got.fraud == want.fraud);
  CHECK(got.env == want.env);
  CHECK(got.package_name == want.package_name);
  CHECK(got.purchase_token == want.purchase_token);
  CHECK(got.order_id == want.order_id);
  CHECK(got.purchase.product_id == want.purchase.product_id);
  CHECK(got.purchase.kind == want.purchase.kind);
  CHECK(got.purchase.purchase_time == want.purchase.purchase_time);
  CHECK(got.purchase.purchase_state == want.purchase.purchase_state);
  CHECK(got.purchase.quantity == want.purchase.quantity);
  CHECK(got.purchase.acknowledged == want.purchase.acknowledged);
  CHECK(got.purchase.auto_renewing == want.purchase.auto_renewing);
  CHECK(got.purchase.expiry_time == want.purchase.expiry_time);
  CHECK(got.purchase.subscription_state == want.purchase.subscription_state);
  CHECK(got.purchase.is_test == want.purchase.is_test);
  CHECK(got.purchase.refundable_quantity == want.purchase.refundable_quantity);
  CHECK(got.purchase.offer_phase == want.purchase.offer_phase);
  CHECK(got.purchase.latest_order_id == want.purchase.latest_order_id);
  CHECK(got.purchase.prepaid == want.purchase.prepaid);
  CHECK(got.purchase.allow_extend_after == want.purchase.allow_extend_after);
  CHECK(got.purchase.installments == want.purchase.installments);
  CHECK(got.purchase.deferred_product_id == want.purchase.deferred_product_id);
  CHECK(got.purchase_data == want.purchase_data);
  CHECK(got.purchase_signature == want.purchase_signature);
  check_same(got.echo, want.echo);
  CHECK(got.state == want.state);
  CHECK(got.created_at == want.created_at);
  CHECK(got.updated_at == want.updated_at);
  CHECK(got.store_detail == want.store_detail);
}

void check_same(const model::receipt_record& got, const model::receipt_record& want) {
  CHECK(got.id == want.id);
  CHECK(got.app_id == want.app_id);
  CHECK(got.style == want.style);
  CHECK(got.bundle_id == want.bundle_id);
  CHECK(got.fraud == want.fraud);
  CHECK(got.env == want.env);
  CHECK(got.receipt_hash == want.receipt_hash);
  CHECK(got.receipt_data == want.receipt_data);
  CHECK(got.country_code == want.country_code);
  CHECK(got.identifier_for_vendor == want.identifier_for_vendor);
  check_same(got.echo, want.echo);
  REQUIRE(got.in_app_purchases.size() == want.in_app_purchases.size());
  for (std::size_t i = 0; i < got.in_app_purchases.size(); ++i) {
    INFO("in-app purchase " << i);
    check_same(got.in_app_purchases[i], want.in_app_purchases[i]);
  }
  CHECK(got.state == want.state);
  CHECK(got.created_at == want.created_at);
  CHECK(got.updated_at == want.updated_at);
  CHECK(got.store_detail == want.store_detail);
}

void check_same(const model::validation_job& got, const model::validation_job& want) {
  CHECK(got.id == want.id);
  CHECK(got.kind == want.kind);
  CHECK(got.record_id == want.record_id);
  CHECK(got.app_id == want.app_id);
  CHECK(got.attempts == want.attempts);
  CHECK(got.next_attempt_at == want.next_attempt_at);
  CHECK(got.version == want.version);
  CHECK(got.last_error == want.last_error);
  CHECK(got.lease_owner == want.lease_owner);
  CHECK(got.lease_until == want.lease_until);
}

} // namespace receiptd::test

// What the stores say, made into In-App Purchases (model/purchases/
// observation.hpp and fold.hpp): a StoreKit 2 transaction, a Play purchase with
// the Play Developer API's answer about it, and an App Store Server
// Notification, each as if its signature had checked out (what a genuine proof
// or notification with these claims becomes), observed, started as a purchase
// and folded into it.
//
// Input: byte 0: bits 0-1 the source (0: StoreKit 2 transaction payload JSON,
// twice; 1: Play purchase data JSON "|@|" the products or subscriptionsv2 answer,
// twice; 2: a transaction payload JSON, then notification payload JSON "|@|"
// transaction payload JSON "|@|" renewal info JSON), bit 2: the app names its
// customers by the stores' account tokens, bit 3: the second source is folded
// first. Sources are separated by "|@@|".
//
// Properties: an observation names the app and a key; a purchase is started
// only from one that proves it, and takes in the others the database would
// find it by (its store, environment and keys); the same observation folded twice
// changes nothing the second time; every purchase (started, then folded) meets
// purchase_checks.hpp: its stored facts read back exactly, its resource parses,
// it is active exactly before active_until.

#include <algorithm>

#include "model/encoding.hpp"
#include "model/purchases/fold.hpp"
#include "model/purchases/observation.hpp"
#include "model/store_a/notification.hpp"
#include "model/store_a/transaction_record.hpp"
#include "model/store_b/play_api.hpp"
#include "model/store_b/purchase_order.hpp"
#include "tests/fuzz/purchase_checks.hpp"
#include "tests/fuzz/upload_checks.hpp"

namespace {

using namespace receiptd;
namespace mp = model::purchases;
namespace sa = model::store_a;
namespace sb = model::store_b;

constexpr std::string_view source_separator = "|@@|";

// A StoreKit 2 transaction as a JWS that verified would make it.
std::vector<mp::observation> transaction_says(std::string_view payload,
                                              const mp::observe_options& options,
                                              const std::string& record_id) {
  auto t = sa::parse_signed_transaction(payload);
  if (!t)
    return {};
  model::store_a_transaction_upload upload;
  upload.signed_transaction = "e30.e30.AA"; // the JWS itself is not read again
  upload.common.user_identifier = "alice";
  auto app = fuzz::fuzz_app();
  app.bundle_id = t->bundle_id;
  app.accept_storekit_test_receipts = true;
  sa::jws_verification as_if;
  as_if.payload = std::string(payload);
  as_if.xcode = t->env == model::environment::xcode;
  auto record = sa::make_record(upload, app, as_if, fuzz::peer_ip, fuzz::fixed_now);
  record.id = record_id;
  return mp::observe(record, options);
}

// A Play purchase whose signature checked out, and the Developer API's answer.
std::vector<mp::observation> play_says(std::string_view source, const mp::observe_options& options,
                                       const std::string& record_id) {
  auto fields = fuzz::split_fields(source, 2);
  if (!model::is_valid_utf8(fields[0])) // what a JSON request body can carry
    return {};
  boost::json::object body{
    {"purchase_data", boost::json::string_view(fields[0].data(), fields[0].size())},
    {"purchase_signature", "AAAA"},
    {"user_identifier", "alice"}};
  auto upload = model::parse_store_b_upload(boost::json::serialize(body));
  if (!upload)
    return {};
  auto app = fuzz::fuzz_app();
  app.package_name = upload->data.package_name;
  auto record = sb::make_record(*upload, app, fuzz::peer_ip, fuzz::fixed_now);
  record.id = record_id;
  const auto api = record.purchase.kind == model::product_kind::subscription
    ? sb::purchase_api::subscriptions_v2
    : sb::purchase_api::products;
  auto verdict = sb::classify_purchase_response(api, 200, fields[1], "", record.purchase);
  model::apply_store_verdict(record, verdict);
  return mp::observe(record, options);
}

// An App Store Server Notification that verified, for the app of its bundle.
std::vector<mp::observation> notification_says(std::string_view source,
                                               const mp::observe_options& options) {
  auto fields = fuzz::split_fields(source, 3);
  auto n = sa::parse_notification(fields[0]);
  if (!n)
    return {};
  sa::verified_notification v;
  v.n = std::move(n).value();
  if (auto t = sa::parse_signed_transaction(fields[1]); t && t->bundle_id == v.n.bundle_id)
    v.transaction = std::move(t).value();
  if (auto r = sa::parse_renewal_info(fields[2]))
    v.renewal = std::move(r).value();
  auto o = mp::observe("00000000-0000-4000-8000-000000000001", v, options);
  if (!o)
    return {};
  FUZZ_CHECK(o->store_signed && !o->from);
  return {*o};
}

void check_observation(const mp::observation& o) {
  FUZZ_CHECK(o.app_id == "00000000-0000-4000-8000-000000000001");
  FUZZ_CHECK(!o.key.empty());
  if (o.from)
    FUZZ_CHECK(!o.from->id.empty());
  if (o.country_code && *o.country_code)
    FUZZ_CHECK(!(*o.country_code)->empty());
}

// Folded in once it may change the purchase; a second time, it changes nothing.
void fold_twice(mp::purchase& p, const mp::observation& o) {
  mp::fold(p, o);
  auto once = p;
  FUZZ_CHECK(!mp::fold(p, o));
  FUZZ_CHECK(p == once);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const auto flags = data[0];
  mp::observe_options options;
  options.customer_from_account_token = flags & 4;
  auto input = fuzz::as_text(data + 1, size - 1);
  auto cut = input.find(source_separator);
  std::string_view sources[2] = {input.substr(0, cut),
                                 cut == std::string_view::npos
                                   ? std::string_view()
                                   : input.substr(cut + source_separator.size())};
  std::vector<mp::observation> said;
  for (int i = 0; i < 2; ++i) {
    const std::string record_id = "00000000-0000-4000-8000-00000000020" + std::to_string(i);
    std::vector<mp::observation> more;
    switch (flags & 3) {
      case 1:
        more = play_says(sources[i], options, record_id);
        break;
      case 2:
        more = i == 0 ? transaction_says(sources[i], options, record_id)
                      : notification_says(sources[i], options);
        break;
      default:
        more = transaction_says(sources[i], options, record_id);
        break;
    }
    said.insert(said.end(), more.begin(), more.end());
  }
  if (said.empty())
    return 0;
  if (flags & 8)
    std::reverse(said.begin(), said.end());
  for (const auto& o : said)
    check_observation(o);

  // The first observation that may start the purchase does; the others fold in
  // (each only into a purchase of its own store and key, as the database finds it).
  std::optional<mp::purchase> p;
  for (const auto& o : said) {
    if (!p) {
      if (!mp::may_start(o))
        continue;
      FUZZ_CHECK(o.proves || o.store_signed);
      p = mp::start(o, "00000000-0000-4000-8000-000000000100", fuzz::fixed_now);
      p->versions = 1;
      FUZZ_CHECK(p->app_id == o.app_id && p->market == o.market && p->env == o.env);
      fold_twice(*p, o);
      fuzz::check_purchase(*p, fuzz::fixed_now);
      continue;
    }
    // Folded only into the purchase the database would find for it: of its
    // store and environment, named by its key or the key it links to.
    auto named = [&](const std::string& key) {
      return std::find(p->keys.begin(), p->keys.end(), key) != p->keys.end();
    };
    if (o.market != p->market || o.env != p->env
        || !(named(o.key) || (o.linked_key && named(*o.linked_key))))
      continue;
    fold_twice(*p, o);
    fuzz::check_purchase(*p, fuzz::fixed_now);
  }
  return 0;
}

// receiptd-customer-seed: the purchases of bench/customers, as CSV for PostgreSQL's
// COPY (see bench/README.md). Every row is what receiptd itself writes for a
// validated StoreKit 2 transaction upload: the record is observed, the purchase
// started and folded by model/purchases/, and its columns (facts JSON, timer, …)
// filled by db::purchase_row, so the rows follow the schema and the facts format.
//
//   receiptd-customer-seed --app-id=ID --out=FILE [--customers=100000]
//                          [--big-user=ID] [--big-purchases=1000] [--now=UNIX_MS]
//
// --customers customers with 1–5 purchases each (3 on average: a monthly
// subscription, active or lapsed, for half of them; consumables; a non-consumable
// for a quarter), plus --big-user with --big-purchases: one active yearly
// subscription, 24 lapsed monthly ones, 12 lapsed weekly boosts, 2 non-consumables
// and consumables for the rest. Writes a header line of column names, then one
// line per purchase; prints "small_user=ID big_user=ID rows=N" (the small user:
// a typical customer with an active subscription, a consumable and a
// non-consumable).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "db/purchase_repository.hpp"
#include "model/identifiers.hpp"
#include "model/purchases/activity.hpp"
#include "model/purchases/fold.hpp"
#include "model/purchases/observation.hpp"

using namespace receiptd;
namespace mp = model::purchases;

namespace {

constexpr model::unix_ms day = 86'400'000;
const char* const bundle_id = "com.example.bench";

std::map<std::string, std::string> parse_args(int argc, char** argv) {
  std::map<std::string, std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) {
      std::cerr << "receiptd-customer-seed: unexpected argument " << a << "\n";
      std::exit(2);
    }
    out[a.substr(2, eq - 2)] = a.substr(eq + 1);
  }
  return out;
}

// A user identifier as apps should make them (a UUID), the same for the same index.
std::string user_id(std::uint64_t i) {
  char out[40];
  std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ULL;
  std::snprintf(out, sizeof out, "%08llx-%04llx-4%03llx-8%03llx-%012llx",
                static_cast<unsigned long long>(h >> 32),
                static_cast<unsigned long long>((h >> 16) & 0xffff),
                static_cast<unsigned long long>(h & 0xfff),
                static_cast<unsigned long long>((h >> 40) & 0xfff),
                static_cast<unsigned long long>(i));
  return out;
}

class writer {
public:
  writer(const std::string& path, std::string app_id, model::unix_ms now)
    : out_(path, std::ios::binary), app_id_(std::move(app_id)), now_(now) {
    db::purchase_row row;
    bool first = true;
    row.all_columns([&](const char* name, auto&) {
      out_ << (first ? "" : ",") << name;
      first = false;
    });
    out_ << "\n";
  }
  bool good() const { return static_cast<bool>(out_); }
  std::uint64_t rows() const { return rows_; }

  // One StoreKit 2 transaction upload by `user`, validated by Apple, as its purchase.
  // `renewed_at`: the newest renewal's purchase time (a subscription's unit).
  void transaction(const std::string& user, const std::string& product, const char* type,
                   model::unix_ms purchased_at, std::optional<model::unix_ms> expires_at = {},
                   std::optional<model::unix_ms> renewed_at = {}) {
    const auto original = std::to_string(2000000000000000ULL + next_transaction_);
    const auto latest = renewed_at ? std::to_string(2000000000000000ULL + next_transaction_ + 1)
                                   : original;
    next_transaction_ += 2;
    model::transaction_record r;
    r.id = model::make_uuid();
    r.app_id = app_id_;
    r.env = model::environment::production;
    r.state = model::validation_state::validated;
    r.echo.user_identifier = user;
    r.created_at = r.updated_at = renewed_at.value_or(purchased_at) + 2'000;
    r.said_at = renewed_at.value_or(purchased_at) + 1'000; // the JWS's signedDate
    r.transaction_key = latest;
    auto& t = r.transaction;
    t.transaction_id = latest;
    t.original_transaction_id = original;
    t.bundle_id = bundle_id;
    t.product_id = product;
    t.type = type;
    t.purchase_date = renewed_at.value_or(purchased_at);
    t.original_purchase_date = purchased_at;
    t.expires_date = expires_at;
    t.quantity = 1;
    t.storefront = "USA";
    t.currency = "USD";
    t.price = product.find("yearly") != std::string::npos ? 49'990 : 4'990;
    t.ownership_type = "PURCHASED";
    auto observed = mp::observe(r, {});
    auto p = mp::start(observed.at(0), model::make_uuid(), purchased_at + 2'000);
    for (std::size_t i = 1; i < observed.size(); ++i)
      mp::fold(p, observed[i]);
    p.versions = 1 + (renewed_at ? 1 : 0);
    p.updated_at = r.updated_at;
    write(p);
  }

private:
  void write(const mp::purchase& p) {
    db::purchase_row row;
    row.assign(p, mp::next_change(p, now_));
    bool first = true;
    row.all_columns([&](const char*, auto& v) {
      out_ << (first ? "" : ",");
      first = false;
      field(v);
    });
    out_ << "\n";
    ++rows_;
  }

  void field(const std::string& s) {
    out_ << '"';
    for (char c : s)
      out_ << (c == '"' ? "\"\"" : std::string(1, c));
    out_ << '"';
  }
  void field(long long v) { out_ << v; }
  template <class T>
  void field(const db::nullable<T>& v) {
    if (v.ind != soci::i_null) // an unquoted empty field is NULL in COPY's CSV format
      field(v.value);
  }

  std::ofstream out_;
  std::string app_id_;
  model::unix_ms now_;
  std::uint64_t next_transaction_ = 0;
  std::uint64_t rows_ = 0;
};

} // namespace

int main(int argc, char** argv) {
  auto a = parse_args(argc, argv);
  if (!a.count("app-id") || !a.count("out")) {
    std::cerr << "usage: receiptd-customer-seed --app-id=ID --out=FILE [--customers=N]"
                 " [--big-user=ID] [--big-purchases=N] [--now=UNIX_MS]\n";
    return 2;
  }
  const auto customers = std::stoull(a.count("customers") ? a["customers"] : "100000");
  const auto big_purchases = std::stoull(a.count("big-purchases") ? a["big-purchases"] : "1000");
  const model::unix_ms now
    = a.count("now") ? std::stoll(a["now"])
                     : std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  writer w(a["out"], a["app-id"], now);

  // Typical customers: bought over the last two years.
  std::string small_user;
  for (std::uint64_t i = 0; i < customers; ++i) {
    const auto user = user_id(i);
    const model::unix_ms first = now - static_cast<model::unix_ms>((i * 7919) % 700 + 20) * day;
    if (i % 2 == 0) {
      // A monthly subscription renewed 0-11 times: renewing (active) or lapsed 10 days ago.
      const bool lapsed = i % 4 == 2;
      const auto period_end
        = lapsed ? now - 10 * day : now + static_cast<model::unix_ms>(i % 29 + 1) * day;
      const auto renewals = static_cast<model::unix_ms>(i % 12);
      const auto latest = period_end - 30 * day;
      w.transaction(user, "premium.monthly", "Auto-Renewable Subscription",
                    latest - renewals * 30 * day, period_end,
                    renewals ? std::optional<model::unix_ms>(latest) : std::nullopt);
    }
    const auto consumables = 1 + i % 3;
    for (std::uint64_t k = 0; k < consumables; ++k)
      w.transaction(user, k % 2 ? "gems.500" : "gems.100", "Consumable",
                    first + static_cast<model::unix_ms>(k + 1) * day);
    if (i % 4 == 0) {
      w.transaction(user, "remove_ads", "Non-Consumable", first + 3 * day);
      if (small_user.empty())
        small_user = user;
    }
  }

  // The big customer: years of consumables and subscriptions.
  const auto big_user = a.count("big-user") ? a["big-user"] : user_id(customers);
  std::uint64_t made = 0;
  auto at = [&](std::uint64_t k) { return now - 1500 * day + static_cast<model::unix_ms>(k) * day; };
  w.transaction(big_user, "premium.yearly", "Auto-Renewable Subscription", at(0), now + 200 * day,
                now - 165 * day);
  ++made;
  for (std::uint64_t k = 0; k < 24 && made < big_purchases; ++k, ++made)
    w.transaction(big_user, "premium.monthly", "Auto-Renewable Subscription", at(10 + 40 * k),
                  at(10 + 40 * k) + 90 * day, at(10 + 40 * k) + 60 * day);
  for (std::uint64_t k = 0; k < 12 && made < big_purchases; ++k, ++made)
    w.transaction(big_user, "boost.weekly", "Auto-Renewable Subscription", at(20 + 100 * k),
                  at(20 + 100 * k) + 7 * day);
  for (const char* product : {"remove_ads", "level_pack.1"})
    if (made < big_purchases) {
      w.transaction(big_user, product, "Non-Consumable", at(30));
      ++made;
    }
  for (std::uint64_t k = 0; made < big_purchases; ++k, ++made)
    w.transaction(big_user, k % 3 == 0 ? "gems.500" : (k % 3 == 1 ? "gems.100" : "coins.1000"),
                  "Consumable", at(0) + static_cast<model::unix_ms>(k) * (1400 * day / 1000));

  if (!w.good()) {
    std::cerr << "receiptd-customer-seed: cannot write " << a["out"] << "\n";
    return 1;
  }
  std::printf("small_user=%s big_user=%s rows=%llu\n", small_user.c_str(), big_user.c_str(),
              static_cast<unsigned long long>(w.rows()));
  return 0;
}

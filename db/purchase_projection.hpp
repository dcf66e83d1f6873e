#pragma once
// The purchase layer's writer: inside a write transaction that changed a record
// (an upload's save, a completed job, an applied notification, Play's voided
// list, an RTDN), every purchase the change speaks of folds what it says
// (model/purchases/fold.hpp), in the same transaction: a crash never leaves a
// record without its purchase, and the purchase's row lock makes one writer fold
// it at a time. A change of a purchase's resource bumps its versions and becomes
// an in_app_purchase.* event for the endpoints that want it; a change of a
// customer's active entitlements a customer.entitlements_changed event.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/app_repository.hpp"
#include "db/customer_repository.hpp"
#include "db/purchase_repository.hpp"
#include "db/webhook_repository.hpp"
#include "model/purchases/rules.hpp"
#include "model/purchases/observation.hpp"
#include "model/purchases/ownership.hpp"

namespace receiptd::db {

// What the purchase layer needs of an app, read once per transaction.
struct purchase_terms {
  model::purchases::observe_options observe;
  std::shared_ptr<const model::purchases::entitlement_rules> rules
    = model::purchases::no_entitlements(); // never null
};

class purchase_projection {
public:
  // `terms` reads an app's (the session's cache decides how often).
  purchase_projection(std::function<purchase_repository&()> purchases,
                      std::function<customer_repository&()> customers, outbox& box,
                      std::function<purchase_terms(const std::string& app_id)> terms,
                      model::unix_ms now);

  // The 409 an upload of `incoming` gets when a purchase it proves is bound to
  // another user the app's transfer policy protects; nullopt when it may go on.
  template <class Record>
  std::optional<model::field_error> refusal(const Record& incoming);

  // After `stored` was written: its purchases fold what it says; the result is
  // what the record's answer embeds.
  template <class Record>
  std::shared_ptr<const model::purchases::purchase_set> project(const Record& stored);

  // A new record's purchase when the record's INSERT may write it too (a save
  // batch's new records, sql::records::insert_many_starting): the record names
  // one purchase, which it starts by itself (it proves it, no linked key) if no
  // purchase holds the key yet, and nothing else is written of it (no endpoint of
  // the app wants its event or its customer's). Then what project() stores for
  // it: its first version, with its timer. nullopt: the usual save and fold.
  // Whether the key is free is the statement's to find: a record whose key is
  // taken writes nothing there and is saved the usual way.
  struct first_purchase {
    model::purchases::purchase purchase;
    std::string key;
    std::optional<model::unix_ms> next_change;
  };
  template <class Record>
  std::optional<first_purchase> first_of(const Record& incoming);
  // What project() answers for a record whose first_of purchase was written
  // (the purchase is kept: passed by value, to be moved in).
  std::shared_ptr<const model::purchases::purchase_set>
  started(model::purchases::purchase p);

  // A verified App Store Server Notification's own word on its purchase: the
  // purchase as folded (none when the notification names none).
  std::optional<model::purchases::purchase>
  project(const std::string& app_id, const model::store_a::verified_notification& v);

  // The purchase's refund_request field (model/purchases/refund_request.hpp)
  // set to `text`; the change announced. False: no such purchase.
  bool note_refund_request(const std::string& purchase_id, std::string text);

  // A purchase whose period-end timer was due at `due`: its activity is
  // evaluated now against what it was just before; what changed is announced,
  // and the timer set to the next change.
  void expire(model::purchases::purchase p, model::unix_ms due);

  // A customer's grants or purchases changed outside a fold: its entitlements
  // are compared with what was last announced.
  void touch(const std::string& app_id, model::environment env, const std::string& user);

  // The purchases' "entitlement/offering" names under the app's rules.
  std::vector<std::string> entitlements_of(const model::purchases::purchase& p);

  // The apps' terms read so far are read again at their next use (and the
  // outbox's endpoints: outbox::forget_reads).
  void forget_reads() {
    terms_.clear();
    box_.forget_reads();
  }

private:
  std::optional<first_purchase> first_of(const std::vector<model::purchases::observation>& seen);
  std::optional<model::purchases::purchase> fold_in(const model::purchases::observation& o);
  std::optional<model::purchases::purchase> find(const model::purchases::observation& o);
  void write(model::purchases::purchase& p, const boost::json::object& before);
  // `before`: its resource before the change (null: created); `after` its
  // resource now, made here when not given.
  void announce(const model::purchases::purchase& p, const boost::json::object* before,
                std::optional<boost::json::object> after);
  // The customers a change touched: their active entitlements are compared with
  // what was last announced.
  void touch_customer(const std::string& app_id, model::environment env,
                      const std::optional<std::string>& user);
  void announce_customers();
  const purchase_terms& terms_of(const std::string& app_id);

  std::function<purchase_repository&()> purchases_;
  std::function<customer_repository&()> customers_;
  outbox& box_;
  std::function<purchase_terms(const std::string&)> read_terms_;
  model::unix_ms now_;
  std::map<std::string, purchase_terms> terms_;
  struct customer_key {
    std::string app_id;
    model::environment env;
    std::string user;
    auto operator<=>(const customer_key&) const = default;
  };
  std::vector<customer_key> touched_;
};

template <class Record>
std::optional<model::field_error> purchase_projection::refusal(const Record& incoming) {
  const auto& t = terms_of(incoming.app_id);
  for (const auto& o : model::purchases::observe(incoming, t.observe)) {
    if (!o.proves || !o.binds_user)
      continue;
    auto p = find(o);
    if (!p)
      continue;
    if (auto why = model::purchases::transfer_refusal(*p, o.user_identifier,
                                                      incoming.terms.transfers))
      return why;
  }
  return std::nullopt;
}

template <class Record>
std::optional<purchase_projection::first_purchase>
purchase_projection::first_of(const Record& incoming) {
  return first_of(model::purchases::observe(incoming, terms_of(incoming.app_id).observe));
}

template <class Record>
std::shared_ptr<const model::purchases::purchase_set>
purchase_projection::project(const Record& stored) {
  auto set = std::make_shared<model::purchases::purchase_set>();
  set->at = now_;
  for (const auto& o : model::purchases::observe(stored, terms_of(stored.app_id).observe))
    if (auto p = fold_in(o)) {
      set->entitlements.push_back(entitlements_of(*p));
      set->items.push_back(std::move(*p));
    }
  announce_customers();
  return set;
}

} // namespace receiptd::db

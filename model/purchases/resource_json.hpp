#pragma once
// The In-App Purchase resource's JSON (Mbaasy's names where Mbaasy had them),
// the shape upload answers embed, GET /client/in_app_purchases/{id} returns and
// in_app_purchase.* events carry; and the purchase's stored form (its facts
// with the store times they were said at).

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "model/json_out.hpp"
#include "model/purchases/purchase.hpp"
#include "model/result.hpp"

namespace receiptd::model::purchases {

// The resource at `now` (is_active is computed then); `entitlements`: the
// "entitlement/offering" names it grants under the app's rules.
boost::json::object purchase_json(const purchase& p, const std::vector<std::string>& entitlements,
                                  unix_ms now);
// Its fields written into an object being written (the record resources embed them).
void put_purchase(json_out::text_object& o, const purchase& p,
                  const std::vector<std::string>& entitlements, unix_ms now);
void put_purchase(json_out::dom_object& o, const purchase& p,
                  const std::vector<std::string>& entitlements, unix_ms now);
// purchase_json's answer brought to `p`'s versions and updated_at, the only
// fields a new version changes: what purchase_json would answer now.
void restamp(boost::json::object& resource, const purchase& p);

// The facts, with their store times, as the database stores them: a JSON
// object the next read restores exactly (identity columns apart).
std::string facts_json(const purchase& p);
// Fills `p`'s facts from facts_json's text; an error names what is malformed.
result<bool> read_facts(purchase& p, std::string_view text);

} // namespace receiptd::model::purchases

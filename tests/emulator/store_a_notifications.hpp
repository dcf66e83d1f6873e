#pragma once
// Store A — App Store Server Notifications V2 (PROTOCOL.md): the emulator signs a
// notification with the PKI it signs Server API answers with (Apple's chain
// shape: leaf ← WWDR-like intermediate ← root, Apple's OIDs) and, when asked,
// sends it as Apple does: POST {"signedPayload": …} to the given URL.

#include <boost/json/object.hpp>

#include "http_util.hpp"

namespace receiptd::emulator {

class emulator_state;

// POST /control/store_a/notifications.
reply store_a_notification(const emulator_state& state, const boost::json::object& request);

} // namespace receiptd::emulator

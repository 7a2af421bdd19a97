// The notification channels config.json names (notify.channels), built for
// the alert engine (instance.cc) and for `vigil notify test` (cmd_notify.cc)
// from the one place.
#pragma once

#include <memory>

#include "alert/notification.h"
#include "cli/config.h"

namespace vigil::cli {

// The channel `c` describes (validated by the config parser).
std::unique_ptr<alert::Notifier> MakeChannel(const ChannelConfig& c);

}  // namespace vigil::cli

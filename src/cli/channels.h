// The notification channels config.json names (notify.channels), built for
// the alert engine (instance.cc) and for `vigil notify test` (cmd_notify.cc)
// from the one place. The email and SMS values are checked here too (the
// config parser calls EmailOptionsOf / SmsOptionsOf), so what is refused at
// load is exactly what could not be built.
#pragma once

#include <memory>
#include <string>

#include "alert/notification.h"
#include "cli/config.h"
#include "core/status.h"
#include "notify/email.h"
#include "notify/sms.h"

namespace vigil::cli {

// The channel `c` describes (validated by the config parser).
std::unique_ptr<alert::Notifier> MakeChannel(const ChannelConfig& c);

// An email / SMS channel's options; InvalidArgument naming the key (after
// `at`, "notify.channels[2]") when a value is wrong or missing.
Result<notify::EmailOptions> EmailOptionsOf(const ChannelConfig& c, const std::string& at);
Result<notify::SmsOptions> SmsOptionsOf(const ChannelConfig& c, const std::string& at);

}  // namespace vigil::cli

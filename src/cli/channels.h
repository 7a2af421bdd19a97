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

// The test notification `vigil notify test` and the UI send: one info
// alert, both languages in its summary, as the engine would hand it out.
// `external_url` is the UI's address, for the message's links.
alert::Notification TestNotification(const std::string& channel, int64_t now_ms,
                                     const std::string& external_url);
// Builds the channel `c` describes and sends it the test notification; the
// receiver's refusal (or the connection's error) when it did not arrive.
Status SendTestNotification(const ChannelConfig& c, int64_t now_ms,
                            const std::string& external_url);

// An email / SMS channel's options; InvalidArgument naming the key (after
// `at`, "notify.channels[2]") when a value is wrong or missing.
Result<notify::EmailOptions> EmailOptionsOf(const ChannelConfig& c, const std::string& at);
Result<notify::SmsOptions> SmsOptionsOf(const ChannelConfig& c, const std::string& at);

}  // namespace vigil::cli

// The optional configuration file, $VIGIL_HOME/config.json. Everything works
// without it (zero-config); it is for what discovery cannot see and for
// volume limits:
//
//   {"logs": {"paths":   ["/data/runs/*/metrics.jsonl"],   // extra files (glob)
//             "exclude": ["/var/log/*"],                   // never tailed
//             "level_floor": "info",                       // drop below (counted)
//             "lines_per_second": 10000, "burst": 20000,   // per-source rate limit
//             "collect": true}}                            // false: no log collection
//
//   {"alerts": {"time_scale": 1.0, "eval_interval_ms": 1000,
//               "price_per_gpu_hour": 2.5, "currency": "USD",
//               "rules": {"gpu_temperature_high": {"enabled": false, "for": "5m",
//                                                  "warning": 85, "critical": 95}}},
//    "notify": {"channels": [{"name": "hook", "type": "webhook", "url": "http://...",
//                             "quiet_hours": {"start": "22:00", "end": "08:00",
//                                             "timezone": "Asia/Shanghai"}}],
//               "routes": [{"match": {"severity": "critical"}, "channels": ["hook"]}],
//               "group_by": ["node", "job"], "group_wait": "1s",
//               "group_interval": "30s", "repeat_interval": "4h",
//               "delivery_max_age": "24h"}}
//
// (docs/config.md has every key.) Unknown keys are refused with their name,
// so a typo is not silently ignored.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "alert/actions.h"
#include "alert/delivery_log.h"
#include "alert/dispatch.h"
#include "alert/quiet_hours.h"
#include "alert/rules.h"
#include "core/status.h"
#include "wire/log_batch.h"

namespace vigil::cli {

struct LogsConfig {
  bool collect = true;
  std::vector<std::string> paths;
  std::vector<std::string> exclude;
  wire::LogLevel level_floor = wire::LogLevel::kUnknown;  // keep everything
  uint32_t lines_per_second = 10000;
  uint32_t burst = 20000;
};

// A notification channel (docs/notify.md has every key; channels.h turns it
// into a notify:: channel and checks the email and SMS values).
struct ChannelConfig {
  std::string name;
  std::string type;  // webhook, slack, feishu, dingtalk, wecom, email, sms
  std::string url;   // webhook, bots; SMS: the URL template
  // IM bots (notify/im_bots.h): the signing secret (Feishu, DingTalk), the
  // language ("en" or "zh"; default zh for Feishu, DingTalk and WeCom, en for
  // Slack), DingTalk's mobiles to @ on critical, a CA bundle to trust.
  std::string secret;
  std::string language;
  std::vector<std::string> at_mobiles;
  std::string ca_file;
  std::vector<std::pair<std::string, std::string>> headers;
  // Email (notify/email.h): the SMTP server ("host:port", "smtps://host"),
  // STARTTLS (default true; implicit TLS on port 465 or smtps://), AUTH
  // credentials (the password is never printed), the sender.
  std::string smtp;
  std::optional<bool> starttls;
  std::string username;
  std::string password;
  std::string from;
  // Email: the recipients' mailboxes; SMS: their numbers.
  std::vector<std::string> to;
  // SMS (notify/sms.h): the body template, the caps per recipient and day,
  // the time zone of that day ("local" unless set).
  std::string body;
  std::optional<int64_t> max_per_day;
  double cost_per_message = 0;
  double max_cost_per_day = 0;
  std::string timezone;
  // Warning and info notifications wait through these (alert/quiet_hours.h).
  std::optional<alert::QuietHours> quiet_hours;
  // The channel's object as config.json has it (compact JSON): a live
  // reload (notify_settings.h) keeps the running channel when it is unchanged.
  std::string source;
};

struct NotifyConfig {
  std::vector<ChannelConfig> channels;
  // Routes, grouping; channels and quiet_hours filled from `channels`.
  alert::DispatchOptions dispatch;
  // Retries of the delivery log; `delivery_max_age` sets max_age_ms.
  alert::DeliveryLogOptions delivery;
  // Optional actions (docs/notify.md "Actions"): none, off.
  std::vector<alert::ActionSpec> actions;
};

struct Config {
  LogsConfig logs;
  alert::AlertsConfig alerts;
  NotifyConfig notify;
};

// The `alerts` and `notify` sections (config_alerts.cc).
Status ParseAlertsSection(const nlohmann::json& j, alert::AlertsConfig* out);
Status ParseNotifySection(const nlohmann::json& j, NotifyConfig* out);
// `notify.actions` (config_actions.cc).
Status ParseActions(const nlohmann::json& j, std::vector<alert::ActionSpec>* out);

// Parses the file's text. InvalidArgument names the offending key or value.
Result<Config> ParseConfig(const std::string& text);
// Reads <home>/config.json; a missing file is the default configuration.
Result<Config> LoadConfig(const std::string& home);

}  // namespace vigil::cli

#include "cli/config.h"

#include <gtest/gtest.h>

#include "cli/channels.h"
#include "core/temp_dir.h"

namespace vigil::cli {
namespace {

TEST(ConfigTest, EmptyAndMissingAreTheDefaults) {
  auto c = ParseConfig("{}");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->logs.collect);
  EXPECT_EQ(c->logs.lines_per_second, 10000u);
  TempDir dir;
  auto missing = LoadConfig(dir.path());
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->logs.paths.empty());
}

TEST(ConfigTest, ReadsEveryLogsKey) {
  auto c = ParseConfig(R"({
    // comments are allowed
    "logs": {"paths": ["/data/runs/*/metrics.jsonl"], "exclude": ["/var/log/*"],
             "level_floor": "warning", "lines_per_second": 500, "burst": 1000,
             "collect": false}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->logs.paths, std::vector<std::string>{"/data/runs/*/metrics.jsonl"});
  EXPECT_EQ(c->logs.exclude, std::vector<std::string>{"/var/log/*"});
  EXPECT_EQ(c->logs.level_floor, wire::LogLevel::kWarn);
  EXPECT_EQ(c->logs.lines_per_second, 500u);
  EXPECT_EQ(c->logs.burst, 1000u);
  EXPECT_FALSE(c->logs.collect);
}

// The issue's example, key by key.
TEST(ConfigTest, ReadsAlertsAndNotify) {
  auto c = ParseConfig(R"({"alerts": {"time_scale": 0.01, "eval_interval_ms": 500,
      "price_per_gpu_hour": 2.5, "currency": "CNY",
      "rules": {"gpu_temperature_high": {"enabled": false, "for": "5m", "warning": 85, "critical": 95}}},
    "notify": {"channels": [{"name": "hook", "type": "webhook", "url": "http://127.0.0.1:8080/",
                             "headers": {"Authorization": "Bearer x"}}],
               "routes": [{"match": {"severity": "critical"}, "channels": ["hook"]}],
               "group_by": ["node"], "group_wait": "2s", "group_interval": "1m",
               "repeat_interval": "2h"}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->alerts.time_scale, 0.01);
  EXPECT_EQ(c->alerts.eval_interval_ms, 500);
  EXPECT_EQ(c->alerts.currency, "CNY");
  const alert::RuleOverride& o = c->alerts.rules.at("gpu_temperature_high");
  EXPECT_EQ(o.enabled, false);
  EXPECT_EQ(o.for_ms, 300'000);
  EXPECT_EQ(o.warning, 85);
  EXPECT_EQ(o.critical, 95);
  ASSERT_EQ(c->notify.channels.size(), 1u);
  EXPECT_EQ(c->notify.channels[0].url, "http://127.0.0.1:8080/");
  EXPECT_EQ(c->notify.channels[0].headers.size(), 1u);
  EXPECT_EQ(c->notify.dispatch.channels, std::vector<std::string>{"hook"});
  ASSERT_EQ(c->notify.dispatch.routes.size(), 1u);
  EXPECT_EQ(c->notify.dispatch.routes[0].match.at("severity"), "critical");
  EXPECT_EQ(c->notify.dispatch.group_by, std::vector<std::string>{"node"});
  EXPECT_EQ(c->notify.dispatch.group_wait_ms, 2000);
  EXPECT_EQ(c->notify.dispatch.group_interval_ms, 60'000);
  EXPECT_EQ(c->notify.dispatch.repeat_interval_ms, 7'200'000);
}

// People and teams: their fields, routes naming them, their language and
// quiet hours reaching their channels, and what is refused by name.
TEST(ConfigTest, ReadsRecipients) {
  auto c = ParseConfig(R"({"notify": {
      "channels": [{"name": "a-slack", "type": "slack", "url": "https://hooks.slack.com/x"},
                   {"name": "t-wx", "type": "wecom", "url": "https://qyapi.weixin.qq.com/x",
                    "language": "en"},
                   {"name": "hook", "type": "webhook", "url": "http://127.0.0.1:1/"}],
      "recipients": [{"name": "alice", "users": ["alice", "al"], "team": "lab", "language": "zh",
                      "channels": ["a-slack"],
                      "quiet_hours": {"start": "22:00", "end": "07:00", "timezone": "UTC"}},
                     {"name": "lab", "kind": "team", "lead": "alice", "channels": ["t-wx"]}],
      "routes": [{"match": {"alertname": "node_disk_full"}, "recipients": ["alice"]}]}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto& d = c->notify.dispatch;
  ASSERT_EQ(d.recipients.size(), 2u);
  EXPECT_EQ(d.recipients[0].users, (std::vector<std::string>{"alice", "al"}));
  EXPECT_EQ(d.recipients[0].channels, std::vector<std::string>{"a-slack"});
  EXPECT_EQ(d.recipients[0].team_name, "lab");
  EXPECT_TRUE(d.recipients[1].team);
  EXPECT_EQ(d.recipients[1].lead, "alice");
  EXPECT_EQ(d.routes[0].recipients, std::vector<std::string>{"alice"});
  EXPECT_EQ(d.channel_classes.at("a-slack"), alert::ChannelClass::kChat);
  EXPECT_EQ(d.channel_classes.at("hook"), alert::ChannelClass::kEverything);
  EXPECT_EQ(c->notify.channels[0].language, "zh");  // alice's
  EXPECT_EQ(c->notify.channels[1].language, "en");  // its own
  EXPECT_EQ(d.quiet_hours.count("a-slack"), 1u);
  EXPECT_EQ(d.quiet_hours.count("t-wx"), 0u);

  auto bad = [](const std::string& notify) {
    auto r = ParseConfig(R"({"notify": )" + notify + "}");
    return r.ok() ? std::string("accepted") : r.status().message();
  };
  EXPECT_NE(bad(R"({"recipients": [{"name": "a", "channels": ["nope"]}]})").find("nope"),
            std::string::npos);
  EXPECT_NE(bad(R"({"recipients": [{"name": "a", "kind": "robot"}]})").find("person or team"),
            std::string::npos);
  EXPECT_NE(bad(R"({"recipients": [{"name": "a", "team": "ghosts"}]})").find("ghosts"),
            std::string::npos);
  EXPECT_NE(bad(R"({"recipients": [{"name": "a", "phone": "1"}]})").find("phone"),
            std::string::npos);
  EXPECT_NE(bad(R"({"routes": [{"match": {}, "recipients": ["nobody"]}]})").find("nobody"),
            std::string::npos);
  EXPECT_NE(bad(R"({"channels": [{"name": "inbox", "type": "webhook", "url": "http://x/"}]})")
                .find("in-app inbox"),
            std::string::npos);
}

// Thresholds per node, job and GPU model: alerts.rules.<id>.overrides.
TEST(ConfigTest, ReadsScopedOverrides) {
  auto c = ParseConfig(R"({"alerts": {"rules": {"gpu_temperature_high": {"warning": 85,
      "overrides": [{"gpu_model": "*A100*", "warning": 80, "critical": 88},
                    {"node": "gpu-07", "job": "llama-*", "enabled": false, "for": "10m"}]}}}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const alert::RuleOverride& o = c->alerts.rules.at("gpu_temperature_high");
  EXPECT_EQ(o.warning, 85);
  ASSERT_EQ(o.overrides.size(), 2u);
  EXPECT_EQ(o.overrides[0].scope.gpu_model, "*A100*");
  EXPECT_EQ(o.overrides[0].set.warning, 80);
  EXPECT_EQ(o.overrides[0].set.critical, 88);
  EXPECT_FALSE(o.overrides[0].set.enabled.has_value());
  EXPECT_EQ(o.overrides[1].scope.node, "gpu-07");
  EXPECT_EQ(o.overrides[1].scope.job, "llama-*");
  EXPECT_EQ(o.overrides[1].set.enabled, false);
  EXPECT_EQ(o.overrides[1].set.for_ms, 600'000);

  auto bad = [](const char* text) {
    auto r = ParseConfig(text);
    return r.ok() ? std::string("accepted") : r.status().message();
  };
  EXPECT_NE(bad(R"({"alerts": {"rules": {"gpu_xid": {"overrides": [{"warning": 1}]}}}})")
                .find("needs \"node\", \"job\" or \"gpu_model\""),
            std::string::npos);
  EXPECT_NE(bad(R"({"alerts": {"rules": {"gpu_xid": {"overrides": [{"node": "n1"}]}}}})")
                .find("changes nothing"),
            std::string::npos);
  EXPECT_NE(
      bad(R"({"alerts": {"rules": {"gpu_xid": {"overrides": [{"gpu": "3", "warning": 1}]}}}})")
          .find("alerts.rules.gpu_xid.overrides[0].gpu"),
      std::string::npos);
  EXPECT_NE(bad(R"({"alerts": {"rules": {"gpu_xid": {"overrides": {"node": "n1"}}}}})")
                .find("must be a list"),
            std::string::npos);
}

TEST(ConfigTest, ReadsImBotChannels) {
  auto c = ParseConfig(R"({"notify": {"channels": [
      {"name": "lark", "type": "feishu", "url": "https://open.feishu.cn/open-apis/bot/v2/hook/x",
       "secret": "s", "language": "en"},
      {"name": "ding", "type": "dingtalk", "url": "https://oapi.dingtalk.com/robot/send?access_token=t",
       "secret": "SEC1", "at_mobiles": ["13800000000"], "ca_file": "/etc/ssl/certs/ca-certificates.crt"},
      {"name": "wx", "type": "wecom", "url": "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k"},
      {"name": "sl", "type": "slack", "url": "https://hooks.slack.com/services/T/B/X"}]}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->notify.channels.size(), 4u);
  EXPECT_EQ(c->notify.channels[0].secret, "s");
  EXPECT_EQ(c->notify.channels[0].language, "en");
  EXPECT_EQ(c->notify.channels[1].at_mobiles, std::vector<std::string>{"13800000000"});
  EXPECT_EQ(c->notify.channels[1].ca_file, "/etc/ssl/certs/ca-certificates.crt");
  auto bad = [](const char* text) {
    auto r = ParseConfig(text);
    return r.ok() ? std::string("accepted") : r.status().message();
  };
  EXPECT_NE(
      bad(R"({"notify": {"channels": [{"name": "a", "type": "wecom", "url": "https://x/", "secret": "s"}]}})")
          .find("secret is for Feishu and DingTalk"),
      std::string::npos);
  EXPECT_NE(
      bad(R"({"notify": {"channels": [{"name": "a", "type": "slack", "url": "https://x/", "at_mobiles": ["1"]}]}})")
          .find("DingTalk robots only"),
      std::string::npos);
  EXPECT_NE(
      bad(R"({"notify": {"channels": [{"name": "a", "type": "feishu", "url": "https://x/", "language": "fr"}]}})")
          .find("\"en\" or \"zh\""),
      std::string::npos);
  EXPECT_NE(bad(R"({"notify": {"channels": [{"name": "a", "type": "feishu", "url": "ftp://x/"}]}})")
                .find("https:// webhook URL"),
            std::string::npos);
  EXPECT_NE(
      bad(R"({"notify": {"channels": [{"name": "a", "type": "webhook", "url": "http://x/", "secret": "s"}]}})")
          .find("url, headers and quiet_hours only"),
      std::string::npos);
}

TEST(ConfigTest, ReadsEmailAndSmsChannels) {
  auto c = ParseConfig(R"({"notify": {"channels": [
      {"name": "mail", "type": "email", "smtp": "smtp.lab.example:587", "starttls": true,
       "username": "vigil", "password": "pw", "from": "Vigil <vigil@lab.example>",
       "to": ["a@lab.example"], "language": "zh"},
      {"name": "sms", "type": "sms", "url": "https://sms.example/send?to={{to}}",
       "body": "{\"text\": \"{{message}}\"}", "to": ["+8613800000000"],
       "headers": {"Authorization": "Bearer x"}, "max_per_day": 5, "cost_per_message": 0.05,
       "max_cost_per_day": 1, "timezone": "Asia/Shanghai"}]}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const ChannelConfig& mail = c->notify.channels[0];
  EXPECT_EQ(mail.smtp, "smtp.lab.example:587");
  EXPECT_EQ(mail.starttls, true);
  EXPECT_EQ(mail.to, std::vector<std::string>{"a@lab.example"});
  auto email = EmailOptionsOf(mail, "m");
  ASSERT_TRUE(email.ok());
  EXPECT_EQ(email->server.tls, net::SmtpTls::kStartTls);
  EXPECT_EQ(email->server.port, 587);
  const ChannelConfig& sms = c->notify.channels[1];
  EXPECT_EQ(sms.max_per_day, 5);
  auto o = SmsOptionsOf(sms, "s");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->cost_per_message_micros, 50'000);
  EXPECT_EQ(o->max_cost_per_day_micros, 1'000'000);
  EXPECT_EQ(o->utc_offset(1'764'640'800), 8 * 3600);
  // Implicit TLS: smtps:// or port 465.
  ChannelConfig implicit = mail;
  implicit.starttls.reset();
  implicit.smtp = "smtps://smtp.lab.example";
  EXPECT_EQ(EmailOptionsOf(implicit, "m")->server.tls, net::SmtpTls::kImplicit);
  EXPECT_EQ(EmailOptionsOf(implicit, "m")->server.port, 465);
  implicit.smtp = "smtp.lab.example:465";
  EXPECT_EQ(EmailOptionsOf(implicit, "m")->server.tls, net::SmtpTls::kImplicit);

  auto bad = [](const std::string& channel) {
    auto r = ParseConfig(R"({"notify": {"channels": [)" + channel + "]}}");
    return r.ok() ? std::string("accepted") : r.status().message();
  };
  std::string m = R"("name": "m", "type": "email", "from": "v@x.org", "to": ["a@x.org"], )";
  EXPECT_NE(bad("{" + m + R"("smtp": "smtp.x.org"})").find(".smtp must be"), std::string::npos);
  EXPECT_NE(bad("{" + m +
                R"("smtp": "x:25", "starttls": false, "username": "u", "password": "TOPSECRET"})")
                .find("clear text"),
            std::string::npos);
  EXPECT_EQ(bad("{" + m +
                R"("smtp": "x:25", "starttls": false, "username": "u", "password": "TOPSECRET"})")
                .find("TOPSECRET"),
            std::string::npos);
  EXPECT_NE(bad("{" + m + R"("smtp": "x:587", "username": "u"})").find("both"), std::string::npos);
  EXPECT_NE(
      bad("{" + m + R"("smtp": "x:587", "url": "http://x/"})").find(".url is not a key of email"),
      std::string::npos);
  EXPECT_NE(bad("{" + m + R"("smtp": "x:587", "max_per_day": 3})").find("max_per_day is for sms"),
            std::string::npos);
  EXPECT_NE(bad("{" + m + R"("smtp": "x:587", "starttls": "yes"})").find("true or false"),
            std::string::npos);
  EXPECT_NE(
      bad(R"({"name": "m", "type": "email", "smtp": "x:587", "from": "nobody", "to": ["a@x.org"]})")
          .find(".from"),
      std::string::npos);
  EXPECT_NE(
      bad(R"({"name": "m", "type": "email", "smtp": "x:587", "from": "v@x.org"})").find("\"to\""),
      std::string::npos);
  std::string s = R"("name": "s", "type": "sms", "to": ["+86 138"], )";
  EXPECT_NE(bad("{" + s + R"("url": "https://x/?t={{text}}"})").find("{{text}}"),
            std::string::npos);
  EXPECT_NE(bad("{" + s + R"("url": "https://x/", "body": "{\"t\": {{message}}}"})").find("JSON"),
            std::string::npos);
  EXPECT_NE(
      bad("{" + s + R"("url": "https://x/", "max_cost_per_day": 1})").find("cost_per_message"),
      std::string::npos);
  EXPECT_NE(bad("{" + s + R"("url": "https://x/", "max_per_day": -1})").find("max_per_day"),
            std::string::npos);
  EXPECT_NE(bad("{" + s + R"("url": "https://x/", "smtp": "x:25"})").find("smtp is for email"),
            std::string::npos);
  EXPECT_NE(bad("{" + s + R"("url": "https://x/", "timezone": "Mars/Base"})").find(".timezone"),
            std::string::npos);
  EXPECT_NE(
      bad(R"({"name": "s", "type": "sms", "url": "https://x/", "to": ["call me"]})").find("phone"),
      std::string::npos);
  EXPECT_NE(bad(R"({"name": "w", "type": "webhook", "url": "http://x/", "to": ["a"]})")
                .find("to is for email and sms"),
            std::string::npos);
}

TEST(ConfigTest, AlertMistakesAreNamed) {
  auto bad = [](const char* text) {
    auto c = ParseConfig(text);
    return c.ok() ? std::string("accepted") : c.status().message();
  };
  EXPECT_NE(bad(R"({"alerts": {"rules": {"gpu_temprature_high": {"enabled": false}}}})")
                .find("gpu_temprature_high"),
            std::string::npos);
  EXPECT_NE(bad(R"({"alerts": {"rules": {"gpu_xid": {"for": "5 minutes"}}}})")
                .find("alerts.rules.gpu_xid.for"),
            std::string::npos);
  EXPECT_NE(bad(R"({"alerts": {"scale": 1}})").find("alerts.scale"), std::string::npos);
  EXPECT_NE(bad(R"({"notify": {"channels": [{"name": "a", "type": "pager", "url": "http://x/"}]}})")
                .find("pager"),
            std::string::npos);
  EXPECT_NE(bad(R"({"notify": {"channels": [{"name": "a", "type": "webhook", "url": "ftp://x"}]}})")
                .find("url"),
            std::string::npos);
  EXPECT_NE(
      bad(R"({"notify": {"routes": [{"match": {}, "channels": ["nobody"]}]}})").find("nobody"),
      std::string::npos);
}

TEST(ConfigTest, ReadsQuietHoursPerChannel) {
  auto c = ParseConfig(R"({"notify": {"channels": [
      {"name": "im", "type": "webhook", "url": "http://127.0.0.1:8080/",
       "quiet_hours": {"start": "22:00", "end": "08:00", "timezone": "+08:00"}},
      {"name": "pager", "type": "webhook", "url": "http://127.0.0.1:8081/"}]}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->notify.dispatch.quiet_hours.size(), 1u);
  const alert::QuietHours& q = c->notify.dispatch.quiet_hours.at("im");
  EXPECT_EQ(q.start_minute, 22 * 60);
  EXPECT_EQ(q.end_minute, 8 * 60);
  EXPECT_EQ(q.zone.name(), "+08:00");
  // 2026-01-01T00:00Z is 08:00 at +08:00: the end.
  EXPECT_TRUE(alert::InQuietHours(q, 1'767'225'600'000 - 1));
  EXPECT_FALSE(alert::InQuietHours(q, 1'767'225'600'000));
  // The timezone defaults to the server's local time.
  c = ParseConfig(R"({"notify": {"channels": [{"name": "im", "type": "webhook",
      "url": "http://127.0.0.1:8080/", "quiet_hours": {"start": "22:00", "end": "08:00"}}]}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->notify.dispatch.quiet_hours.at("im").zone.name(), "local");

  auto bad = [](const std::string& quiet) {
    auto r = ParseConfig(R"({"notify": {"channels": [{"name": "im", "type": "webhook",
        "url": "http://127.0.0.1:8080/", "quiet_hours": )" +
                         quiet + "}]}}");
    return r.ok() ? std::string("accepted") : r.status().message();
  };
  EXPECT_NE(bad(R"({"start": "22:00", "end": "8am"})").find("notify.channels[0].quiet_hours.end"),
            std::string::npos);
  EXPECT_NE(
      bad(R"({"start": "25:00", "end": "08:00"})").find("notify.channels[0].quiet_hours.start"),
      std::string::npos);
  EXPECT_NE(bad(R"({"start": "22:00", "end": "08:00", "timezone": "Mars/Olympus"})")
                .find("notify.channels[0].quiet_hours.timezone"),
            std::string::npos);
  EXPECT_NE(bad(R"({"start": "22:00", "end": "08:00", "tz": "UTC"})")
                .find("unknown key notify.channels[0].quiet_hours.tz"),
            std::string::npos);
  EXPECT_NE(bad(R"({"start": "22:00"})").find("needs"), std::string::npos);
  EXPECT_NE(bad(R"("22:00-08:00")").find("must be an object"), std::string::npos);
  EXPECT_NE(bad(R"({"start": 22, "end": "08:00"})").find("start must be a string"),
            std::string::npos);
}

TEST(ConfigTest, MistakesAreNamed) {
  struct Case {
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {"{", "not valid JSON"},
      {"[]", "top level"},
      {R"({"log": {}})", "unknown key log"},
      {R"({"logs": {"path": []}})", "unknown key logs.path"},
      {R"({"logs": {"paths": "/x"}})", "list of strings"},
      {R"({"logs": {"paths": ["relative/*.log"]}})", "absolute"},
      {R"({"logs": {"level_floor": "loud"}})", "level_floor"},
      {R"({"logs": {"lines_per_second": -1}})", "lines_per_second"},
  };
  for (const Case& c : cases) {
    auto r = ParseConfig(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos)
        << c.text << " -> " << r.status().message();
  }
}

TEST(ConfigTest, ReadsTheDeliveryLogsMaxAge) {
  auto c = ParseConfig(R"({"notify": {"delivery_max_age": "2h"}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->notify.delivery.max_age_ms, 7'200'000);
  EXPECT_EQ(ParseConfig("{}")->notify.delivery.max_age_ms, 24 * 3600'000);
  EXPECT_FALSE(ParseConfig(R"({"notify": {"delivery_max_age": "soon"}})").ok());
}

TEST(ConfigTest, ReadsActions) {
  EXPECT_TRUE(ParseConfig("{}")->notify.actions.empty()) << "off by default";
  auto c = ParseConfig(R"({"notify": {"actions": [
      {"name": "stop-instance", "on": "job_finished", "match": {"job": "train-*"},
       "command": ["/usr/local/bin/stop-instance", "--id", "i-123"]},
      {"name": "idle-stop", "on": "gpus_idle", "idle_for": "2h", "dry_run": false,
       "confirm_window": "1m", "timeout": "30s", "command": ["/bin/true"]}]}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->notify.actions.size(), 2u);
  const alert::ActionSpec& a = c->notify.actions[0];
  EXPECT_EQ(a.on, alert::ActionTrigger::kJobFinished);
  EXPECT_TRUE(a.dry_run) << "a dry run unless said otherwise";
  EXPECT_EQ(a.confirm_window_ms, 600'000);
  EXPECT_EQ(a.timeout_ms, 300'000);
  EXPECT_EQ(a.match.at("job"), "train-*");
  EXPECT_EQ(a.command, (std::vector<std::string>{"/usr/local/bin/stop-instance", "--id", "i-123"}));
  const alert::ActionSpec& b = c->notify.actions[1];
  EXPECT_EQ(b.on, alert::ActionTrigger::kGpusIdle);
  EXPECT_EQ(b.idle_for_ms, 7'200'000);
  EXPECT_FALSE(b.dry_run);
  EXPECT_EQ(b.confirm_window_ms, 60'000);
  EXPECT_EQ(b.timeout_ms, 30'000);
}

TEST(ConfigTest, ActionMistakesAreNamed) {
  struct Case {
    const char* actions;
    const char* expect;
  };
  const Case cases[] = {
      {R"({})", "notify.actions must be a list"},
      {R"([{"name": "a", "command": ["/bin/true"]}])", "notify.actions[0] needs \"on\""},
      {R"([{"name": "a", "on": "job_finished"}])", "needs \"command\""},
      {R"([{"name": "a", "on": "done", "command": ["/bin/true"]}])",
       "notify.actions[0].on must be"},
      {R"([{"name": "a", "on": "job_finished", "command": "/bin/true"}])",
       ".command must be a list"},
      {R"([{"name": "a", "on": "job_finished", "command": ["true"]}])", "absolute path"},
      {R"([{"name": "a", "on": "gpus_idle", "command": ["/bin/true"]}])", "idle_for is required"},
      {R"([{"name": "a", "on": "job_finished", "idle_for": "1h", "command": ["/bin/true"]}])",
       "idle_for is for"},
      {R"([{"name": "a", "on": "job_finished", "timeout": "soon", "command": ["/bin/true"]}])",
       "notify.actions[0].timeout must be a duration"},
      {R"([{"name": "a", "on": "job_finished", "dry_run": "no", "command": ["/bin/true"]}])",
       "dry_run must be true or false"},
      {R"([{"name": "a", "on": "job_finished", "match": {"job": 1}, "command": ["/bin/true"]}])",
       "notify.actions[0].match.job must be a string"},
      {R"([{"name": "a", "on": "job_finished", "cmd": ["/bin/true"]}])",
       "unknown key notify.actions[0].cmd"},
      {R"([{"name": "a", "on": "job_finished", "command": ["/bin/true"]},
           {"name": "a", "on": "job_finished", "command": ["/bin/true"]}])",
       "two actions named \"a\""},
  };
  for (const Case& c : cases) {
    auto r = ParseConfig(std::string(R"({"notify": {"actions": )") + c.actions + "}}");
    ASSERT_FALSE(r.ok()) << c.actions;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos)
        << c.actions << " -> " << r.status().message();
  }
}

}  // namespace
}  // namespace vigil::cli

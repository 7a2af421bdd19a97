// `vigil notify test CHANNEL`: sends one test notification through a channel
// of config.json, as the engine would send a real one, and says whether it
// arrived (the receiver's refusal, verbatim, when not).
#include <cstdio>

#include "alert/notification.h"
#include "cli/channels.h"
#include "cli/commands.h"
#include "cli/config.h"
#include "cli/home.h"
#include "core/env.h"

namespace vigil::cli {
namespace {

alert::Notification TestNotification(const std::string& channel, int64_t now_ms) {
  alert::Alert a;
  a.id = "0000000000000000";
  a.rule = "vigil_test";
  a.severity = alert::Severity::kInfo;
  a.state = alert::AlertState::kFiring;
  a.labels = {{"alertname", "vigil_test"}, {"node", "vigil"}, {"severity", "info"}};
  a.active_at_ms = a.fired_at_ms = now_ms;
  a.value = 1;
  a.summary_en = "Test notification from Vigil to channel " + channel + ": it works.";
  a.summary_zh = "Vigil 发往通道 " + channel + " 的测试通知：通道可用。";
  alert::Notification n;
  n.receiver = channel;
  n.group_key = "vigil_test";
  n.group_labels = {{"node", "vigil"}};
  n.alerts.push_back(std::move(a));
  n.external_url = "http://127.0.0.1:9300";
  return n;
}

}  // namespace

int RunNotify(const NotifyFlags& flags) {
  auto config = LoadConfig(ResolveHome(flags.home));
  if (!config.ok()) {
    std::fprintf(stderr, "vigil notify: %s\n", config.status().message().c_str());
    return 3;
  }
  for (const ChannelConfig& c : config->notify.channels) {
    if (c.name != flags.channel) continue;
    Status st = MakeChannel(c)->Send(TestNotification(c.name, Env::Default()->NowMillis()));
    if (!st.ok()) {
      std::fprintf(stderr, "vigil notify: %s (%s): not delivered: %s\n", c.name.c_str(),
                   c.type.c_str(), st.message().c_str());
      return 1;
    }
    std::printf("%s (%s): delivered\n", c.name.c_str(), c.type.c_str());
    return 0;
  }
  std::fprintf(stderr, "vigil notify: no channel \"%s\" in notify.channels of config.json\n",
               flags.channel.c_str());
  return 2;
}

}  // namespace vigil::cli

// `vigil notify test CHANNEL`: sends one test notification through a channel
// of config.json, as the engine would send a real one, and says whether it
// arrived (the receiver's refusal, verbatim, when not).
#include <cstdio>

#include "cli/channels.h"
#include "cli/commands.h"
#include "cli/config.h"
#include "cli/home.h"
#include "core/env.h"

namespace vigil::cli {

int RunNotify(const NotifyFlags& flags) {
  auto config = LoadConfig(ResolveHome(flags.home));
  if (!config.ok()) {
    std::fprintf(stderr, "vigil notify: %s\n", config.status().message().c_str());
    return 3;
  }
  for (const ChannelConfig& c : config->notify.channels) {
    if (c.name != flags.channel) continue;
    // The address `vigil up` has by default: the message's links lead there.
    Status st = SendTestNotification(c, Env::Default()->NowMillis(), "http://127.0.0.1:9300");
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

#include "cli/channels.h"

#include "notify/im_bots.h"
#include "notify/webhook.h"

namespace vigil::cli {

std::unique_ptr<alert::Notifier> MakeChannel(const ChannelConfig& c) {
  if (auto kind = notify::ParseImKind(c.type)) {
    notify::ImOptions im;
    im.kind = *kind;
    im.url = c.url;
    im.secret = c.secret;
    bool zh_by_default = *kind != notify::ImKind::kSlack;  // the Chinese vendors' bots
    im.language = c.language == "zh" || (c.language.empty() && zh_by_default)
                      ? notify::Language::kChinese
                      : notify::Language::kEnglish;
    im.at_mobiles = c.at_mobiles;
    im.tls.ca_file = c.ca_file;
    return std::make_unique<notify::ImChannel>(std::move(im));
  }
  notify::WebhookOptions w;
  w.url = c.url;
  for (const auto& [name, value] : c.headers) w.headers.Add(name, value);
  return std::make_unique<notify::WebhookChannel>(std::move(w));
}

}  // namespace vigil::cli

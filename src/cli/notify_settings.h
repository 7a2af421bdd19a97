// The notification channels of config.json as the UI edits them
// (api/notify_settings_routes.h serves them; docs/http-api.md "Notification
// settings"): the same file the CLI reads, changed one channel at a time,
// validated by the very parser config.json is read with (ParseConfig), and
// applied to the running alert engine without a restart.
//
// Secrets: a channel's `secret`, `password`, SMS `body` and `headers` may
// hold a credential, and so may its `url` (a Slack hook path, WeCom's `key`,
// DingTalk's `access_token`). The view never shows them: `secret_set`,
// `password_set`, `body_set` say whether they are set, `header_names` names
// the headers, and the URL is cut to its scheme and host
// ("https://open.feishu.cn/..."). A channel put back under the same name and
// type keeps each of them that the body leaves out (or, for the URL, gives
// as the view shows it), so editing a channel never needs its secret again;
// an empty string ("secret": "") removes one. The keys the view adds are
// ignored in a body, so the view of a channel, edited, is a valid body.
//
// The file is rewritten whole (2-space indent, every other section and key
// as it was, in its order), atomically (a temporary file, fsync, rename,
// fsync of the folder) with mode 0600 as it holds secrets. JSON comments,
// which config.json may have, cannot be kept: the file with them is saved
// as config.json.bak first.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "alert/engine.h"
#include "api/notify_settings_routes.h"
#include "cli/config.h"
#include "core/status.h"

namespace vigil::cli {

// config.json's text after one change, and what it parses to.
struct ConfigEdit {
  std::string text;
  Config config;
};

// The pure parts, on config.json's text ("" for a home without one); each
// refuses a file that does not parse as it is now (fix it first).
//
// GET's `data`: {"channels": [each channel's view], "routes": [as in the
// file], "path": `path`}.
Result<std::string> ChannelsView(std::string_view config_text, const std::string& path);
// The file with channel `name` added (at the end) or replaced (in its
// place) by `body`. InvalidArgument with the parser's message when the
// result is not a valid config.json.
Result<ConfigEdit> WithChannel(std::string_view config_text, const std::string& name,
                               std::string_view body);
// The file without channel `name`: NotFound when it has none, and
// FailedPrecondition while a route or a recipient names it.
Result<ConfigEdit> WithoutChannel(std::string_view config_text, const std::string& name);
// The channel a test request names ({"channel": NAME}) or describes
// ({"channel_config": {...}}, secrets it leaves out taken from the stored
// channel of its name and type), validated by the parser.
Result<ChannelConfig> ChannelToTest(std::string_view config_text, std::string_view request);

// Recipients and routes (notify_routing.cc), on the same rules; they hold
// no secret, so the view is the file's.
//
// GET's `data`: {"recipients": [as in the file], "path": `path`}.
Result<std::string> RecipientsView(std::string_view config_text, const std::string& path);
// The file with recipient `name` added (at the end) or replaced (in its
// place) by `body`; InvalidArgument with the parser's message when the
// result is not a valid config.json (an unknown channel, team or lead).
Result<ConfigEdit> WithRecipient(std::string_view config_text, const std::string& name,
                                 std::string_view body);
// The file without recipient `name`: NotFound when it has none, and
// FailedPrecondition while a route names it, it leads a team, or (a team)
// a person is in it.
Result<ConfigEdit> WithoutRecipient(std::string_view config_text, const std::string& name);
// GET's `data`: {"routes": [as in the file], "path": `path`}.
Result<std::string> RoutesView(std::string_view config_text, const std::string& path);
// The file with notify.routes replaced by `body`'s {"routes": [...]}, in
// its order.
Result<ConfigEdit> WithRoutes(std::string_view config_text, std::string_view body);

// The channel objects of a running server: built from notify.channels for
// the alert engine, and rebuilt when the settings change. A channel whose
// config.json object is unchanged keeps its object (its rate limits and SMS
// caps go on counting).
//
// Apply hands the engine the routes and recipients too (ReplaceRouting,
// before the channels: each single edit of the settings keeps what the
// other one checks valid). A channel is rebuilt when its language changes
// through its recipient's, as it renders the messages.
//
// Thread safety: Apply from any thread (serialised by mu_). Every channel
// ever built is kept until this object goes, after the engine has stopped:
// a replaced channel may still be sending (AlertEngine::ReplaceChannels).
class LiveChannels {
 public:
  // The engine's channels for `notify`, before the engine exists.
  std::map<std::string, alert::Notifier*> Build(const NotifyConfig& notify);
  // The engine Apply hands the channels to (not owned).
  void Attach(alert::AlertEngine* engine);
  // Has the engine deliver through `notify`'s channels, routes and
  // recipients from now on.
  Status Apply(const NotifyConfig& notify);

 private:
  struct Running {
    std::string source;  // ChannelConfig::source and language (SourceOf)
    alert::Notifier* channel = nullptr;
  };
  std::map<std::string, Running> BuildLocked(const NotifyConfig& notify);

  std::mutex mu_;
  std::vector<std::unique_ptr<alert::Notifier>> built_;  // every one ever built
  std::map<std::string, Running> running_;
  alert::AlertEngine* engine_ = nullptr;
};

// The settings of the server whose home is `home`: reads and writes its
// config.json and applies each change to `live`. `external_url` is the UI's
// address, for the test message's links.
//
// Thread safety: any thread. Changes go one at a time (read, change, write,
// apply under mu_); one test is sent at a time, another gets
// ResourceExhausted, so tests cannot hold every server thread.
class NotifySettingsFile final : public api::NotifySettings {
 public:
  NotifySettingsFile(std::string home, std::string external_url, LiveChannels* live);

  Result<std::string> View() override;
  Status Put(const std::string& name, std::string_view body) override;
  Status Remove(const std::string& name) override;
  Result<api::NotifyTestOutcome> Test(std::string_view body) override;
  Result<std::string> RecipientsView() override;
  Status PutRecipient(const std::string& name, std::string_view body) override;
  Status RemoveRecipient(const std::string& name) override;
  Result<std::string> RoutesView() override;
  Status PutRoutes(std::string_view body) override;

 private:
  using ViewFn = Result<std::string> (*)(std::string_view, const std::string&);
  using EditFn = std::function<Result<ConfigEdit>(std::string_view)>;
  Result<std::string> ViewWith(ViewFn view);
  // Reads the file, edits it with `edit`, saves and applies the edit, and
  // logs `what` ("notification channel \"lark\" saved in") and the path; under mu_.
  Status Change(const std::string& what, const EditFn& edit);
  Result<std::string> Read() const;
  // Writes the edit (keeping a commented file as config.json.bak) and
  // applies it; mu_ held.
  Status Save(const std::string& old_text, const ConfigEdit& edit);

  const std::string path_;
  const std::string external_url_;
  LiveChannels* const live_;
  std::mutex mu_;
  std::mutex test_mu_;
};

}  // namespace vigil::cli

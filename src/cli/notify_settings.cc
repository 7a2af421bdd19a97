#include "cli/notify_settings.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/channels.h"
#include "cli/config_edit.h"
#include "core/env.h"
#include "core/log.h"
#include "core/strings.h"

namespace vigil::cli {
namespace {

using config_edit::Dump;
using config_edit::Edited;
using config_edit::Holds;
using config_edit::IndexOf;
using config_edit::IsString;
using config_edit::Json;
using config_edit::kNone;
using config_edit::Member;
using config_edit::ParseBody;
using config_edit::ParseRoot;

constexpr size_t kMaxConfigBytes = 1 << 20;  // as LoadConfig reads it

// Keys that may hold a credential: never shown, kept when a body leaves
// them out. (The URL is one too, but shown cut to scheme and host.)
constexpr const char* kHiddenStrings[] = {"secret", "password", "body"};
// Keys the view adds, ignored in a body.
constexpr const char* kViewOnly[] = {"secret_set", "password_set", "body_set", "header_names"};

Json& ChannelsOf(Json& root) { return config_edit::NotifyList(root, "channels"); }

// What GET shows of one channel object (see the header).
Json ViewOf(const Json& channel) {
  Json out = Json::object();
  for (const auto& [key, v] : channel.items()) {
    if (key == "secret" || key == "password" || key == "body") {
      out[key + "_set"] = v.is_string() && !v.get_ref<const std::string&>().empty();
    } else if (key == "headers") {
      Json names = Json::array();
      if (v.is_object()) {
        for (const auto& [name, value] : v.items()) names.push_back(name);
      }
      out["header_names"] = std::move(names);
    } else if (key == "url" && v.is_string()) {
      out[key] = RedactUrls(v.get_ref<const std::string&>());
    } else {
      out[key] = v;
    }
  }
  return out;
}

// `given` with what it leaves out of the credentials taken from `stored`,
// the channel of the same name, when it has the same type.
Json Merged(Json given, const Json* stored) {
  for (const char* key : kViewOnly) given.erase(key);
  const bool same = stored != nullptr && Member(given, "type").is_string() &&
                    Member(given, "type") == Member(*stored, "type");
  if (same) {
    for (const char* key : {"secret", "password", "body", "headers", "url"}) {
      const Json& kept = Member(*stored, key);
      if (!given.contains(key) && !kept.is_null()) given[key] = kept;
    }
    // The URL as the view shows it stands for the stored one.
    const Json& url = Member(*stored, "url");
    if (url.is_string() &&
        IsString(Member(given, "url"), RedactUrls(url.get_ref<const std::string&>()))) {
      given["url"] = url;
    }
  }
  for (const char* key : kHiddenStrings) {
    if (IsString(Member(given, key), "")) given.erase(key);  // "": removed
  }
  const Json& headers = Member(given, "headers");
  if (headers.is_object() && headers.empty()) given.erase("headers");
  return given;
}

// Whether the text has JSON comments (ParseConfig allows them; a rewrite
// cannot keep them).
bool HasComments(std::string_view text) {
  return !TrimSpace(text).empty() && Json::accept(text, /*ignore_comments=*/false) == false &&
         Json::accept(text, /*ignore_comments=*/true);
}

Status Errno(const std::string& what, const std::string& path) {
  return IoError("cannot " + what + " " + path + ": " + std::strerror(errno));
}

// Writes `data` as `path`, mode 0600 from its first byte (it holds
// secrets), atomically: a temporary file, fsync, rename, fsync of the
// folder. Not through Env: no fake needs it, and Env's files are 0644.
Status WritePrivateFile(const std::string& path, std::string_view data) {
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());  // left by a crash; O_EXCL makes it anew, 0600
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("create", tmp);
  Status st;
  for (size_t off = 0; off < data.size() && st.ok();) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) st = Errno("write", tmp);
    if (n > 0) off += static_cast<size_t>(n);
  }
  if (st.ok() && ::fsync(fd) != 0) st = Errno("fsync", tmp);
  ::close(fd);
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) st = Errno("rename", tmp);
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return Errno("open the folder of", path);
  if (::fsync(dir) != 0) st = Errno("fsync the folder of", path);
  ::close(dir);
  return st;
}

}  // namespace

Result<std::string> ChannelsView(std::string_view config_text, const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(Json root, ParseRoot(config_text));
  Json data = Json::object();
  data["path"] = path;
  data["channels"] = Json::array();
  for (const Json& c : ChannelsOf(root)) data["channels"].push_back(ViewOf(c));
  const Json& routes = Member(Member(root, "notify"), "routes");
  data["routes"] = routes.is_array() ? routes : Json::array();
  return Dump(data, -1);
}

Result<ConfigEdit> WithChannel(std::string_view config_text, const std::string& name,
                               std::string_view body) {
  VIGIL_ASSIGN_OR_RETURN(Json root, ParseRoot(config_text));
  VIGIL_ASSIGN_OR_RETURN(
      Json channel, config_edit::NamedBody(body, name, "channel",
                                           "add it under the new name and delete the old one"));
  Json& channels = ChannelsOf(root);
  const size_t at = IndexOf(channels, name);
  channel = Merged(std::move(channel), at == kNone ? nullptr : &channels[at]);
  config_edit::PutAt(channels, at, std::move(channel));
  return Edited(root);
}

Result<ConfigEdit> WithoutChannel(std::string_view config_text, const std::string& name) {
  VIGIL_ASSIGN_OR_RETURN(Json root, ParseRoot(config_text));
  Json& channels = ChannelsOf(root);
  const size_t at = IndexOf(channels, name);
  if (at == kNone) return NotFound("config.json has no channel \"" + name + "\"");
  VIGIL_RETURN_IF_ERROR(config_edit::RefuseWhileRouted(root, "channels", name, "channel"));
  // A recipient's channel too: the parser would refuse the recipient, less
  // clearly.
  const Json& recipients = Member(Member(root, "notify"), "recipients");
  for (size_t i = 0; recipients.is_array() && i < recipients.size(); ++i) {
    if (!Holds(Member(recipients[i], "channels"), name)) continue;
    return FailedPrecondition("notify.recipients \"" + config_edit::NameOf(recipients[i]) +
                              "\" receives alerts on \"" + name +
                              "\": take the channel from that recipient first, then delete it");
  }
  channels.erase(at);
  return Edited(root);
}

Result<ChannelConfig> ChannelToTest(std::string_view config_text, std::string_view request) {
  VIGIL_ASSIGN_OR_RETURN(Json root, ParseRoot(config_text));
  VIGIL_ASSIGN_OR_RETURN(Json req,
                         ParseBody(request, R"({"channel": NAME} or {"channel_config": {...}})"));
  if (req.contains("channel")) {
    const Json& named = Member(req, "channel");
    if (!named.is_string()) return InvalidArgument("\"channel\" must be a channel's name");
    const std::string& name = named.get_ref<const std::string&>();
    auto config = ParseConfig(Dump(root, -1));
    if (!config.ok()) return config.status();
    for (const ChannelConfig& c : config->notify.channels) {
      if (c.name == name) return c;
    }
    return NotFound("config.json has no channel \"" + name + "\"");
  }
  Json given = Member(req, "channel_config");
  if (!given.is_object()) {
    return InvalidArgument(R"(the body must be {"channel": NAME} or {"channel_config": {...}})");
  }
  const Json& name = Member(given, "name");
  if (!name.is_string() || IsString(name, "")) {
    return InvalidArgument("channel_config needs a \"name\"");
  }
  const Json& channels = ChannelsOf(root);
  const size_t at = IndexOf(channels, name.get_ref<const std::string&>());
  Json lone = Json::object();
  lone["notify"]["channels"] =
      Json::array({Merged(std::move(given), at == kNone ? nullptr : &channels[at])});
  auto config = ParseConfig(Dump(lone, -1));
  if (!config.ok()) return config.status();
  return config->notify.channels.front();
}

std::map<std::string, alert::Notifier*> LiveChannels::Build(const NotifyConfig& notify) {
  std::lock_guard lock(mu_);
  running_ = BuildLocked(notify);
  std::map<std::string, alert::Notifier*> out;
  for (const auto& [name, r] : running_) out[name] = r.channel;
  return out;
}

void LiveChannels::Attach(alert::AlertEngine* engine) {
  std::lock_guard lock(mu_);
  engine_ = engine;
}

namespace {

// What a running channel is built from: its object, and the language it may
// take from its recipient (the object does not say it then).
std::string SourceOf(const ChannelConfig& c) { return c.source + '\n' + c.language; }

}  // namespace

std::map<std::string, LiveChannels::Running> LiveChannels::BuildLocked(const NotifyConfig& notify) {
  std::map<std::string, Running> next;
  for (const ChannelConfig& c : notify.channels) {
    const std::string source = SourceOf(c);
    auto it = running_.find(c.name);
    if (it != running_.end() && it->second.source == source) {
      next[c.name] = it->second;
      continue;
    }
    built_.push_back(MakeChannel(c));
    next[c.name] = {source, built_.back().get()};
  }
  return next;
}

Status LiveChannels::Apply(const NotifyConfig& notify) {
  std::lock_guard lock(mu_);
  if (engine_ == nullptr) return FailedPrecondition("the alert engine is not running");
  std::map<std::string, Running> next = BuildLocked(notify);
  std::map<std::string, alert::Notifier*> channels;
  for (const auto& [name, r] : next) channels[name] = r.channel;
  VIGIL_RETURN_IF_ERROR(
      engine_->ReplaceRouting(notify.dispatch.routes, notify.dispatch.recipients));
  VIGIL_RETURN_IF_ERROR(engine_->ReplaceChannels(std::move(channels), notify.dispatch.channels,
                                                 notify.dispatch.quiet_hours,
                                                 notify.dispatch.channel_classes));
  running_ = std::move(next);
  return Status::Ok();
}

NotifySettingsFile::NotifySettingsFile(std::string home, std::string external_url,
                                       LiveChannels* live)
    : path_(JoinPath(home, "config.json")), external_url_(std::move(external_url)), live_(live) {}

Result<std::string> NotifySettingsFile::Read() const {
  Env* env = Env::Default();
  if (!env->FileExists(path_)) return std::string();
  auto text = env->ReadFile(path_, kMaxConfigBytes);
  if (!text.ok()) return text.status().WithContext("reading " + path_);
  return text;
}

Status NotifySettingsFile::Save(const std::string& old_text, const ConfigEdit& edit) {
  if (HasComments(old_text)) VIGIL_RETURN_IF_ERROR(WritePrivateFile(path_ + ".bak", old_text));
  VIGIL_RETURN_IF_ERROR(WritePrivateFile(path_, edit.text));
  Status applied = live_->Apply(edit.config.notify);
  if (!applied.ok()) {
    return Internal("saved in " + path_ +
                    ", but the running server could not take the new settings (it will at its "
                    "next start): " +
                    applied.message());
  }
  return Status::Ok();
}

Result<std::string> NotifySettingsFile::ViewWith(ViewFn view) {
  std::lock_guard lock(mu_);
  VIGIL_ASSIGN_OR_RETURN(std::string text, Read());
  return view(text, path_);
}

Status NotifySettingsFile::Change(const std::string& what, const EditFn& edit) {
  std::lock_guard lock(mu_);
  VIGIL_ASSIGN_OR_RETURN(std::string text, Read());
  VIGIL_ASSIGN_OR_RETURN(ConfigEdit edited, edit(text));
  VIGIL_RETURN_IF_ERROR(Save(text, edited));
  Logf(LogLevel::kInfo, "%s %s", what.c_str(), path_.c_str());
  return Status::Ok();
}

Result<std::string> NotifySettingsFile::View() { return ViewWith(&ChannelsView); }

Status NotifySettingsFile::Put(const std::string& name, std::string_view body) {
  return Change("notification channel \"" + name + "\" saved in",
                [&](std::string_view text) { return WithChannel(text, name, body); });
}

Status NotifySettingsFile::Remove(const std::string& name) {
  return Change("notification channel \"" + name + "\" deleted from",
                [&](std::string_view text) { return WithoutChannel(text, name); });
}

Result<std::string> NotifySettingsFile::RecipientsView() { return ViewWith(&cli::RecipientsView); }

Status NotifySettingsFile::PutRecipient(const std::string& name, std::string_view body) {
  return Change("notification recipient \"" + name + "\" saved in",
                [&](std::string_view text) { return WithRecipient(text, name, body); });
}

Status NotifySettingsFile::RemoveRecipient(const std::string& name) {
  return Change("notification recipient \"" + name + "\" deleted from",
                [&](std::string_view text) { return WithoutRecipient(text, name); });
}

Result<std::string> NotifySettingsFile::RoutesView() { return ViewWith(&cli::RoutesView); }

Status NotifySettingsFile::PutRoutes(std::string_view body) {
  return Change("notification routes saved in",
                [&](std::string_view text) { return WithRoutes(text, body); });
}

Result<api::NotifyTestOutcome> NotifySettingsFile::Test(std::string_view body) {
  std::unique_lock busy(test_mu_, std::try_to_lock);
  if (!busy.owns_lock()) {
    return ResourceExhausted("a test notification is being sent; try again once it has its answer");
  }
  ChannelConfig c;
  {
    std::lock_guard lock(mu_);
    VIGIL_ASSIGN_OR_RETURN(std::string text, Read());
    VIGIL_ASSIGN_OR_RETURN(c, ChannelToTest(text, body));
  }
  // Sent outside mu_: a slow receiver (up to the channel's own timeout)
  // holds up no edit.
  api::NotifyTestOutcome out;
  out.channel = c.name;
  out.type = c.type;
  out.delivery = SendTestNotification(c, Env::Default()->NowMillis(), external_url_);
  return out;
}

}  // namespace vigil::cli

// The `alerts` and `notify` sections of config.json (docs/config.md).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/channels.h"
#include "cli/config.h"
#include "net/http_client.h"
#include "notify/im_bots.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

Status Bad(const std::string& what) { return InvalidArgument("config.json: " + what); }

Result<int64_t> Duration(const json& v, const std::string& key) {
  if (v.is_string()) {
    if (auto ms = alert::ParseDuration(v.get<std::string>())) return *ms;
  }
  return Bad(key + " must be a duration such as \"30s\", \"5m\" or \"1h\"");
}

Result<double> Number(const json& v, const std::string& key, double min, double max) {
  if (!v.is_number() || v.get<double>() < min || v.get<double>() > max) {
    return Bad(key + " must be a number from " + std::to_string(min) + " to " +
               std::to_string(max));
  }
  return v.get<double>();
}

// One of a rule's settings (enabled, for, warning, critical) into `o`;
// false when `key` is none of them.
Result<bool> ParseLevelSetting(const std::string& at, const std::string& key, const json& v,
                               alert::LevelOverride* o) {
  if (key == "enabled") {
    if (!v.is_boolean()) return Bad(at + ".enabled must be true or false");
    o->enabled = v.get<bool>();
  } else if (key == "for") {
    VIGIL_ASSIGN_OR_RETURN(o->for_ms, Duration(v, at + ".for"));
  } else if (key == "warning") {
    VIGIL_ASSIGN_OR_RETURN(o->warning, Number(v, at + ".warning", -1e12, 1e12));
  } else if (key == "critical") {
    VIGIL_ASSIGN_OR_RETURN(o->critical, Number(v, at + ".critical", -1e12, 1e12));
  } else {
    return false;
  }
  return true;
}

// {"node": "gpu-07", "job": "llama-*", "gpu_model": "*A100*", "warning": 80, ...}
Result<alert::ScopedOverride> ParseScopedOverride(const json& j, const std::string& at) {
  if (!j.is_object()) return Bad(at + " must be an object");
  alert::ScopedOverride o;
  bool any_setting = false;
  for (const auto& [key, v] : j.items()) {
    std::string* pattern = key == "node"        ? &o.scope.node
                           : key == "job"       ? &o.scope.job
                           : key == "gpu_model" ? &o.scope.gpu_model
                                                : nullptr;
    if (pattern != nullptr) {
      if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 256) {
        return Bad(at + "." + key + " must be a non-empty string ('*' matches anything)");
      }
      *pattern = v.get<std::string>();
      continue;
    }
    VIGIL_ASSIGN_OR_RETURN(bool known, ParseLevelSetting(at, key, v, &o.set));
    if (!known) return Bad("unknown key " + at + "." + key);
    any_setting = true;
  }
  if (o.scope.node.empty() && o.scope.job.empty() && o.scope.gpu_model.empty()) {
    return Bad(at + " needs \"node\", \"job\" or \"gpu_model\" to say where it applies");
  }
  if (!any_setting) {
    return Bad(at + " changes nothing: give \"enabled\", \"for\", \"warning\" or \"critical\"");
  }
  return o;
}

Status ParseRuleOverride(const std::string& id, const json& j, alert::RuleOverride* o) {
  std::string at = "alerts.rules." + id;
  if (!j.is_object()) return Bad(at + " must be an object");
  for (const auto& [key, v] : j.items()) {
    if (key == "overrides") {
      constexpr size_t kMaxOverrides = 256;
      if (!v.is_array() || v.size() > kMaxOverrides) {
        return Bad(at + ".overrides must be a list of at most 256 objects");
      }
      for (size_t i = 0; i < v.size(); ++i) {
        VIGIL_ASSIGN_OR_RETURN(
            alert::ScopedOverride so,
            ParseScopedOverride(v[i], at + ".overrides[" + std::to_string(i) + "]"));
        o->overrides.push_back(std::move(so));
      }
      continue;
    }
    VIGIL_ASSIGN_OR_RETURN(bool known, ParseLevelSetting(at, key, v, o));
    if (!known) return Bad("unknown key " + at + "." + key);
  }
  return Status::Ok();
}

Result<std::vector<std::string>> StringList(const json& v, const std::string& key) {
  if (!v.is_array()) return Bad(key + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.is_string()) return Bad(key + " must be a list of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

// {"start": "22:00", "end": "08:00", "timezone": "Asia/Shanghai"}; the
// timezone defaults to the server's local time.
Result<alert::QuietHours> ParseQuietHours(const json& j, const std::string& at) {
  if (!j.is_object()) {
    return Bad(at + R"( must be an object such as {"start": "22:00", "end": "08:00", )"
                    R"("timezone": "Asia/Shanghai"})");
  }
  std::string start, end, timezone = "local";
  for (const auto& [key, v] : j.items()) {
    std::string* into = key == "start"      ? &start
                        : key == "end"      ? &end
                        : key == "timezone" ? &timezone
                                            : nullptr;
    if (into == nullptr) return Bad("unknown key " + at + "." + key);
    if (!v.is_string()) return Bad(at + "." + key + " must be a string");
    *into = v.get<std::string>();
  }
  if (start.empty() || end.empty()) return Bad(at + " needs \"start\" and \"end\" (\"22:00\")");
  auto q = alert::ParseQuietHours(start, end, timezone);
  if (!q.ok()) return Bad(at + "." + q.status().message());
  return q;
}

// The keys only email or SMS channels take, and which of the two.
const char* EmailOrSmsKey(std::string_view key) {
  for (const char* k : {"smtp", "starttls", "username", "password", "from"}) {
    if (key == k) return "email";
  }
  for (const char* k :
       {"body", "max_per_day", "cost_per_message", "max_cost_per_day", "timezone"}) {
    if (key == k) return "sms";
  }
  return key == "to" ? "email and sms" : nullptr;
}

// The keys of email and SMS channels that are not strings; false when `key`
// is none of them.
Result<bool> ParseEmailSmsValue(const std::string& at, const std::string& key, const json& v,
                                ChannelConfig* c) {
  if (key == "starttls") {
    if (!v.is_boolean()) return Bad(at + ".starttls must be true or false");
    c->starttls = v.get<bool>();
  } else if (key == "to") {
    VIGIL_ASSIGN_OR_RETURN(c->to, StringList(v, at + ".to"));
  } else if (key == "max_per_day") {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      return Bad(at + ".max_per_day must be a whole number of messages (0: no cap)");
    }
    c->max_per_day = v.get<int64_t>();
  } else if (key == "cost_per_message") {
    VIGIL_ASSIGN_OR_RETURN(c->cost_per_message, Number(v, at + ".cost_per_message", 0, 1e6));
  } else if (key == "max_cost_per_day") {
    VIGIL_ASSIGN_OR_RETURN(c->max_cost_per_day, Number(v, at + ".max_cost_per_day", 0, 1e9));
  } else {
    return false;
  }
  return true;
}

// Refuses a key the channel's type does not take, by name.
Status CheckKeysOfType(const json& j, const std::string& at, const std::string& type) {
  bool email = type == "email", sms = type == "sms";
  for (const auto& [key, v] : j.items()) {
    if (const char* owner = EmailOrSmsKey(key)) {
      std::string o = owner;
      if ((email && o.find("email") != std::string::npos) ||
          (sms && o.find("sms") != std::string::npos)) {
        continue;
      }
      return Bad(at + "." + key + " is for " + o + " channels");
    }
    bool email_refuses = key == "url" || key == "headers";
    bool both_refuse = key == "secret" || key == "at_mobiles";
    if ((email && (email_refuses || both_refuse)) || (sms && both_refuse)) {
      return Bad(at + "." + key + " is not a key of " + type + " channels");
    }
  }
  return Status::Ok();
}

Status ParseChannel(const json& j, size_t i, ChannelConfig* c) {
  std::string at = "notify.channels[" + std::to_string(i) + "]";
  if (!j.is_object()) return Bad(at + " must be an object");
  c->source = j.dump(-1, ' ', false, json::error_handler_t::replace);
  for (const auto& [key, v] : j.items()) {
    if (key == "quiet_hours") {
      VIGIL_ASSIGN_OR_RETURN(c->quiet_hours, ParseQuietHours(v, at + ".quiet_hours"));
      continue;
    }
    if (key == "headers") {
      if (!v.is_object()) return Bad(at + ".headers must be an object of strings");
      for (const auto& [h, value] : v.items()) {
        if (!value.is_string()) return Bad(at + ".headers must be an object of strings");
        c->headers.push_back({h, value.get<std::string>()});
      }
      continue;
    }
    if (key == "at_mobiles") {
      VIGIL_ASSIGN_OR_RETURN(c->at_mobiles, StringList(v, at + ".at_mobiles"));
      continue;
    }
    VIGIL_ASSIGN_OR_RETURN(bool parsed, ParseEmailSmsValue(at, key, v, c));
    if (parsed) continue;
    if (!v.is_string()) return Bad(at + "." + key + " must be a string");
    std::string* into = key == "name"       ? &c->name
                        : key == "type"     ? &c->type
                        : key == "url"      ? &c->url
                        : key == "secret"   ? &c->secret
                        : key == "language" ? &c->language
                        : key == "ca_file"  ? &c->ca_file
                        : key == "smtp"     ? &c->smtp
                        : key == "username" ? &c->username
                        : key == "password" ? &c->password
                        : key == "from"     ? &c->from
                        : key == "body"     ? &c->body
                        : key == "timezone" ? &c->timezone
                                            : nullptr;
    if (into == nullptr) return Bad("unknown key " + at + "." + key);
    *into = v.get<std::string>();
  }
  if (c->name.empty()) return Bad(at + " needs a \"name\"");
  VIGIL_RETURN_IF_ERROR(CheckKeysOfType(j, at, c->type));
  if (c->type == "email") {
    auto o = EmailOptionsOf(*c, at);
    return o.ok() ? Status::Ok() : Bad(o.status().message());
  }
  if (c->type == "sms") {
    auto o = SmsOptionsOf(*c, at);
    return o.ok() ? Status::Ok() : Bad(o.status().message());
  }
  if (c->type == "webhook") {
    if (!net::ParseHttpUrl(c->url).ok()) return Bad(at + ".url must be an http:// URL");
    if (!c->secret.empty() || !c->language.empty() || !c->at_mobiles.empty() ||
        !c->ca_file.empty()) {
      return Bad(at + ": a webhook takes url, headers and quiet_hours only");
    }
    return Status::Ok();
  }
  auto kind = notify::ParseImKind(c->type);
  if (!kind) {
    return Bad(at + ".type \"" + c->type +
               "\" is not supported (this version has: webhook, slack, feishu, dingtalk, wecom, "
               "email, sms)");
  }
  if (!c->url.starts_with("https://") && !c->url.starts_with("http://")) {
    return Bad(at + ".url must be the bot's https:// webhook URL");
  }
  if (!c->headers.empty()) return Bad(at + ".headers is for webhooks only");
  if (!c->language.empty() && c->language != "en" && c->language != "zh") {
    return Bad(at + ".language must be \"en\" or \"zh\"");
  }
  if (!c->at_mobiles.empty() && *kind != notify::ImKind::kDingTalk) {
    return Bad(at + ".at_mobiles is for DingTalk robots only");
  }
  if (!c->secret.empty() && *kind != notify::ImKind::kFeishu &&
      *kind != notify::ImKind::kDingTalk) {
    return Bad(at +
               ".secret is for Feishu and DingTalk bots (Slack and WeCom keep theirs in the URL)");
  }
  return Status::Ok();
}

Status ParseRoute(const json& j, size_t i, alert::Route* r) {
  std::string at = "notify.routes[" + std::to_string(i) + "]";
  if (!j.is_object()) return Bad(at + " must be an object");
  for (const auto& [key, v] : j.items()) {
    if (key == "match") {
      if (!v.is_object()) return Bad(at + ".match must be an object of label values");
      for (const auto& [label, value] : v.items()) {
        if (!value.is_string()) return Bad(at + ".match must be an object of label values");
        r->match[label] = value.get<std::string>();
      }
    } else if (key == "channels") {
      VIGIL_ASSIGN_OR_RETURN(r->channels, StringList(v, at + ".channels"));
    } else if (key == "recipients") {
      VIGIL_ASSIGN_OR_RETURN(r->recipients, StringList(v, at + ".recipients"));
    } else {
      return Bad("unknown key " + at + "." + key);
    }
  }
  return Status::Ok();
}

// {"name": "alice", "kind": "person", "users": ["alice"], "team": "vision",
//  "channels": [...], "language": "zh", "quiet_hours": {...}}; a recipient's
// language and quiet hours become those of its channels that set none.
struct RecipientConfig {
  alert::Recipient recipient;
  std::optional<alert::QuietHours> quiet_hours;
};

Status ParseRecipient(const json& j, size_t i, RecipientConfig* out) {
  std::string at = "notify.recipients[" + std::to_string(i) + "]";
  if (!j.is_object()) return Bad(at + " must be an object");
  alert::Recipient& r = out->recipient;
  for (const auto& [key, v] : j.items()) {
    if (key == "users" || key == "channels") {
      std::vector<std::string>& into = key == "users" ? r.users : r.channels;
      VIGIL_ASSIGN_OR_RETURN(into, StringList(v, at + "." + key));
      continue;
    }
    if (key == "quiet_hours") {
      VIGIL_ASSIGN_OR_RETURN(out->quiet_hours, ParseQuietHours(v, at + ".quiet_hours"));
      continue;
    }
    if (!v.is_string()) return Bad(at + "." + key + " must be a string");
    const std::string value = v.get<std::string>();
    if (key == "kind") {
      if (value != "person" && value != "team") return Bad(at + ".kind must be person or team");
      r.team = value == "team";
    } else if (key == "language") {
      if (value != "en" && value != "zh") return Bad(at + ".language must be \"en\" or \"zh\"");
      r.language = value;
    } else {
      std::string* into = key == "name"   ? &r.name
                          : key == "team" ? &r.team_name
                          : key == "lead" ? &r.lead
                                          : nullptr;
      if (into == nullptr) return Bad("unknown key " + at + "." + key);
      *into = value;
    }
  }
  return Status::Ok();
}

// Recipients' languages and quiet hours reach their channels that set none.
void InheritFromRecipients(const std::vector<RecipientConfig>& recipients,
                           std::vector<ChannelConfig>* channels) {
  for (const RecipientConfig& rc : recipients) {
    for (ChannelConfig& c : *channels) {
      const auto& named = rc.recipient.channels;
      if (std::find(named.begin(), named.end(), c.name) == named.end()) continue;
      if (c.language.empty() && c.type != "webhook") c.language = rc.recipient.language;
      if (!c.quiet_hours) c.quiet_hours = rc.quiet_hours;
    }
  }
}

}  // namespace

Status ParseAlertsSection(const json& j, alert::AlertsConfig* out) {
  if (!j.is_object()) return Bad("\"alerts\" must be an object");
  for (const auto& [key, v] : j.items()) {
    if (key == "time_scale") {
      VIGIL_ASSIGN_OR_RETURN(out->time_scale, Number(v, "alerts.time_scale", 0.0001, 1000));
    } else if (key == "eval_interval_ms") {
      VIGIL_ASSIGN_OR_RETURN(double ms, Number(v, "alerts.eval_interval_ms", 50, 600'000));
      out->eval_interval_ms = static_cast<int64_t>(ms);
    } else if (key == "price_per_gpu_hour") {
      VIGIL_ASSIGN_OR_RETURN(out->price_per_gpu_hour,
                             Number(v, "alerts.price_per_gpu_hour", 0, 1e6));
    } else if (key == "currency") {
      if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 8) {
        return Bad("alerts.currency must be a currency code such as \"USD\" or \"CNY\"");
      }
      out->currency = v.get<std::string>();
    } else if (key == "rules") {
      if (!v.is_object()) return Bad("alerts.rules must be an object keyed by rule id");
      for (const auto& [id, o] : v.items()) {
        VIGIL_RETURN_IF_ERROR(ParseRuleOverride(id, o, &out->rules[id]));
      }
    } else {
      return Bad("unknown key alerts." + key);
    }
  }
  return Status::Ok();
}

Status ParseNotifySection(const json& j, NotifyConfig* out) {
  if (!j.is_object()) return Bad("\"notify\" must be an object");
  alert::DispatchOptions& d = out->dispatch;
  std::vector<RecipientConfig> recipients;
  for (const auto& [key, v] : j.items()) {
    if (key == "channels") {
      if (!v.is_array()) return Bad("notify.channels must be a list");
      for (size_t i = 0; i < v.size(); ++i) {
        ChannelConfig c;
        VIGIL_RETURN_IF_ERROR(ParseChannel(v[i], i, &c));
        out->channels.push_back(std::move(c));
      }
    } else if (key == "routes") {
      if (!v.is_array()) return Bad("notify.routes must be a list");
      for (size_t i = 0; i < v.size(); ++i) {
        alert::Route r;
        VIGIL_RETURN_IF_ERROR(ParseRoute(v[i], i, &r));
        d.routes.push_back(std::move(r));
      }
    } else if (key == "recipients") {
      if (!v.is_array()) return Bad("notify.recipients must be a list");
      for (size_t i = 0; i < v.size(); ++i) {
        VIGIL_RETURN_IF_ERROR(ParseRecipient(v[i], i, &recipients.emplace_back()));
      }
    } else if (key == "group_by") {
      VIGIL_ASSIGN_OR_RETURN(d.group_by, StringList(v, "notify.group_by"));
    } else if (key == "group_wait") {
      VIGIL_ASSIGN_OR_RETURN(d.group_wait_ms, Duration(v, "notify.group_wait"));
    } else if (key == "group_interval") {
      VIGIL_ASSIGN_OR_RETURN(d.group_interval_ms, Duration(v, "notify.group_interval"));
    } else if (key == "repeat_interval") {
      VIGIL_ASSIGN_OR_RETURN(d.repeat_interval_ms, Duration(v, "notify.repeat_interval"));
    } else if (key == "actions") {
      VIGIL_RETURN_IF_ERROR(ParseActions(v, &out->actions));
    } else if (key == "delivery_max_age") {
      VIGIL_ASSIGN_OR_RETURN(out->delivery.max_age_ms, Duration(v, "notify.delivery_max_age"));
    } else {
      return Bad("unknown key notify." + key);
    }
  }
  InheritFromRecipients(recipients, &out->channels);
  std::set<std::string> names;
  for (const ChannelConfig& c : out->channels) {
    if (c.name == alert::kInboxReceiver) {
      return Bad("notify.channels: \"inbox\" is the in-app inbox's name; choose another");
    }
    if (!names.insert(c.name).second)
      return Bad("notify.channels: two channels named \"" + c.name + "\"");
    d.channels.push_back(c.name);
    d.channel_classes[c.name] = alert::ChannelClassOf(c.type);
    if (c.quiet_hours) d.quiet_hours[c.name] = *c.quiet_hours;
  }
  for (RecipientConfig& rc : recipients) d.recipients.push_back(std::move(rc.recipient));
  VIGIL_RETURN_IF_ERROR(alert::ValidateRecipients(d.recipients, d.channels));
  for (size_t i = 0; i < d.routes.size(); ++i) {
    const std::string at = "notify.routes[" + std::to_string(i) + "]: ";
    for (const std::string& c : d.routes[i].channels) {
      if (names.count(c) == 0) return Bad(at + "unknown channel \"" + c + "\"");
    }
    for (const std::string& name : d.routes[i].recipients) {
      if (std::none_of(d.recipients.begin(), d.recipients.end(),
                       [&](const alert::Recipient& r) { return r.name == name; })) {
        return Bad(at + "unknown recipient \"" + name + "\"");
      }
    }
  }
  return Status::Ok();
}

}  // namespace vigil::cli

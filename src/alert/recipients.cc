#include "alert/recipients.h"

#include <algorithm>
#include <set>

namespace vigil::alert {
namespace {

const Recipient* Find(const std::vector<Recipient>& recipients, std::string_view name) {
  for (const Recipient& r : recipients) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

// The person whose Unix users include `owner`, else the one named `owner`.
const Recipient* PersonOf(const std::vector<Recipient>& recipients, const std::string& owner) {
  if (owner.empty()) return nullptr;
  for (const Recipient& r : recipients) {
    if (!r.team && std::find(r.users.begin(), r.users.end(), owner) != r.users.end()) return &r;
  }
  const Recipient* named = Find(recipients, owner);
  return named != nullptr && !named->team ? named : nullptr;
}

void AddOnce(std::vector<std::string>* out, const std::string& name) {
  if (!name.empty() && std::find(out->begin(), out->end(), name) == out->end()) {
    out->push_back(name);
  }
}

Status Bad(const Recipient& r, const std::string& what) {
  return InvalidArgument("config.json: notify.recipients \"" + r.name + "\": " + what);
}

}  // namespace

ChannelClass ChannelClassOf(std::string_view type) {
  if (type == "slack" || type == "feishu" || type == "lark" || type == "dingtalk" ||
      type == "wecom") {
    return ChannelClass::kChat;
  }
  if (type == "email") return ChannelClass::kEmail;
  if (type == "sms") return ChannelClass::kSms;
  if (type == "inbox") return ChannelClass::kInbox;
  return ChannelClass::kEverything;
}

Status ValidateRecipients(const std::vector<Recipient>& recipients,
                          const std::vector<std::string>& channels) {
  std::set<std::string> names;
  for (const Recipient& r : recipients) {
    if (r.name.empty())
      return InvalidArgument("config.json: a notify.recipients entry needs a \"name\"");
    if (!names.insert(r.name).second) return Bad(r, "two recipients have this name");
    for (const std::string& c : r.channels) {
      if (std::find(channels.begin(), channels.end(), c) == channels.end()) {
        return Bad(r, "unknown channel \"" + c + "\"");
      }
    }
    if (r.team && (!r.users.empty() || !r.team_name.empty())) {
      return Bad(r, "a team has no \"users\" or \"team\" (its people name it as their team)");
    }
    if (!r.team && !r.lead.empty()) return Bad(r, "only a team has a \"lead\"");
  }
  for (const Recipient& r : recipients) {
    if (!r.team_name.empty()) {
      const Recipient* t = Find(recipients, r.team_name);
      if (t == nullptr || !t->team) return Bad(r, "no team \"" + r.team_name + "\"");
    }
    if (!r.lead.empty()) {
      const Recipient* p = Find(recipients, r.lead);
      if (p == nullptr || p->team) return Bad(r, "the lead \"" + r.lead + "\" is no person");
    }
  }
  return Status::Ok();
}

std::vector<std::string> RecipientsOf(const Alert& alert,
                                      const std::vector<Recipient>& recipients) {
  std::vector<std::string> out;
  const bool critical = alert.severity == Severity::kCritical;
  const bool info = alert.severity == Severity::kInfo;
  auto add_team = [&](const Recipient& team) {
    AddOnce(&out, team.name);
    if (critical) AddOnce(&out, team.lead);
  };
  if (const Recipient* person = PersonOf(recipients, alert.owner)) {
    AddOnce(&out, person->name);
    if (info) return out;
    if (const Recipient* team = Find(recipients, person->team_name)) add_team(*team);
    return out;
  }
  for (const Recipient& r : recipients) {
    if (r.team) add_team(r);
  }
  return out;
}

bool ChannelTakes(ChannelClass cls, const Alert& alert) {
  switch (alert.severity) {
    case Severity::kCritical:
      return true;
    case Severity::kWarning:
      return cls != ChannelClass::kSms;
    case Severity::kInfo:
      if (cls == ChannelClass::kChat || cls == ChannelClass::kEmail) {
        return alert.rule == "job_finished";
      }
      return cls != ChannelClass::kSms;
  }
  return false;
}

std::vector<std::string> RecipientChannelsFor(const Alert& alert,
                                              const std::vector<Recipient>& recipients,
                                              const std::map<std::string, ChannelClass>& classes) {
  std::vector<std::string> out;
  for (const std::string& name : RecipientsOf(alert, recipients)) {
    const Recipient* r = Find(recipients, name);
    for (const std::string& c : r->channels) {
      auto cls = classes.find(c);
      if (ChannelTakes(cls == classes.end() ? ChannelClass::kEverything : cls->second, alert)) {
        AddOnce(&out, c);
      }
    }
  }
  return out;
}

}  // namespace vigil::alert

// Who an alert is for (config.json `notify.recipients`, docs/notify.md
// "Recipients"): people and teams, each with their channels.
//
// "Whose job is it": an alert's owner is the Unix user running the job it is
// about (Alert::owner, from the job's report or, for a GPU's series, from
// the job holding that GPU). The person whose `users` name the owner (or
// whose own name is the owner) gets it, so a lab's shared machine sends each
// researcher their own alerts; their team gets it too, and a critical one
// also reaches the team's lead. An alert nobody owns (a node's disk, a GPU
// no job holds) or whose owner is no configured person goes to every team.
//
// What each kind of channel takes (the default the issue asks for):
//   critical -> every channel (IM, email, SMS, webhook, inbox);
//   warning  -> every channel but SMS;
//   info     -> the inbox and webhooks, plus the IM and email channels of
//               the run's owner for `job_finished` (the run summary they
//               asked for by starting the run); never SMS.
// A route that names a channel explicitly sends it whatever the severity:
// the user said so.
//
// Thread safety: immutable values and pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "alert/alert.h"
#include "core/status.h"

namespace vigil::alert {

// How a channel's type is treated by the severity policy above.
enum class ChannelClass {
  kEverything,  // a webhook (a machine: Alertmanager receivers want it all), or unknown
  kChat,        // Slack, Feishu, DingTalk, WeCom
  kEmail,
  kSms,
  kInbox,
};
ChannelClass ChannelClassOf(std::string_view channel_type);

struct Recipient {
  std::string name;
  bool team = false;               // "kind": "team" (else "person")
  std::vector<std::string> users;  // a person's Unix users (their jobs are theirs)
  std::string team_name;           // a person's team ("team")
  std::string lead;                // a team's lead: a person's name
  std::vector<std::string> channels;
  std::string language;  // "en" / "zh": the default of their channels
  bool operator==(const Recipient&) const = default;
};

// Checks names are unique, kinds' fields fit, and that teams, leads and
// channels named exist (`channels`: every configured channel).
Status ValidateRecipients(const std::vector<Recipient>& recipients,
                          const std::vector<std::string>& channels);

// Which recipients `alert` is for, by name, without duplicates: the owner's
// person, their team and (critical) its lead; else every team and
// (critical) their leads. An info alert reaches the owner only (or the
// teams when nobody owns it).
std::vector<std::string> RecipientsOf(const Alert& alert, const std::vector<Recipient>& recipients);

// Whether a channel of `cls` takes `alert` for a recipient (the policy).
bool ChannelTakes(ChannelClass cls, const Alert& alert);

// A recipient's channels that take `alert`, for every recipient it is for.
std::vector<std::string> RecipientChannelsFor(const Alert& alert,
                                              const std::vector<Recipient>& recipients,
                                              const std::map<std::string, ChannelClass>& classes);

}  // namespace vigil::alert

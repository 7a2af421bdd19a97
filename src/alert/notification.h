// What the alert engine hands to delivery: one group of alerts for one
// receiver (a configured channel), the unit Alertmanager notifies in. The
// channels (notify/) implement Notifier; the engine never knows how a
// channel talks to its peer, and a channel never judges alerts.
//
// Thread safety: a Notifier is called from the engine's dispatch thread
// only, one Send at a time.
#pragma once

#include <string>
#include <vector>

#include "alert/alert.h"
#include "core/status.h"

namespace vigil::alert {

struct Notification {
  std::string receiver;   // the channel's name
  std::string group_key;  // stable for the group: receiver and group labels
  wire::Labels group_labels;
  // Firing alerts of the group, and the ones resolved since the last
  // notification of this group, each as it is now.
  std::vector<Alert> alerts;
  std::string external_url;  // the UI's base URL, for links
};

class Notifier {
 public:
  virtual ~Notifier() = default;
  // Delivers one notification; an error means it did not arrive and the
  // same notification is tried again after a backoff (the delivery log,
  // delivery_log.h), except kResourceExhausted: a cap of the channel held it
  // back on purpose (recorded as capped, not retried). The error's message
  // is kept as the receiver's answer, its URLs cut to scheme and host.
  virtual Status Send(const Notification& notification) = 0;
  // Whether several groups may go as one message (MergeNotifications,
  // delivery_log.h) when more than one waits for this channel at once — a
  // storm, or what a rate limit or an outage held back. A person's channel
  // (IM, email, SMS) reads one message better than forty; a machine's
  // (Alertmanager's webhook) expects one group per payload.
  virtual bool MergesGroups() const { return false; }
};

}  // namespace vigil::alert

// The content of a notification as a person reads it, in English or
// Simplified Chinese, before any channel's format: a title for the group and
// one entry per alert (what, how bad, value against threshold, since when,
// where, what to do, the diagnosis, the log lines that tell it, a link). Every channel family
// renders this one model (im_bots.h; email.h, sms.h), so what a notification says is decided once.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "alert/notification.h"

namespace vigil::notify {

enum class Language { kEnglish, kChinese };

struct MessageEntry {
  bool resolved = false;
  std::string severity;  // "critical", "warning", "info"
  std::string headline;  // the alert's summary in the language
  std::string value;     // "value 95, threshold 90" (empty for flag rules)
  std::string since;     // "since 2026-12-02 06:35 UTC" / "resolved at ..."
  std::string where;     // "node gpu-07 · GPU 3 (NVIDIA H100 80GB HBM3) · job llama"
  // More lines for a person (an ended run's summary), each on its own line.
  std::vector<std::string> details;
  // The job's log lines that tell what happened (Alert::log_excerpt), while
  // it fires: printable but untrusted, so each channel quotes them in its
  // own way (code spans, <pre>), never as markup.
  std::vector<std::string> log_lines;
  std::string link;  // the alert's page in the UI
};

struct Message {
  std::string title;                  // "[FIRING] 2 alerts on gpu-07 (critical)"
  std::string severity;               // the most severe firing alert's, else "resolved"
  std::vector<MessageEntry> entries;  // firing first, most severe first
  std::string link;                   // the Alerts page
  std::string settings_link;          // the UI's notification settings (unsubscribe)
};

// Where the UI's notification settings are, below its external URL: what
// an email's List-Unsubscribe header and footer point to.
inline constexpr const char* kSettingsPath = "/#settings&tab=notifications";

Message BuildMessage(const alert::Notification& n, Language language);

}  // namespace vigil::notify

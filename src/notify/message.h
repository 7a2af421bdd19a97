// The content of a notification as a person reads it, in English or
// Simplified Chinese, before any channel's format: a title for the group and
// one entry per alert (what, how bad, value against threshold, since when,
// where, what to do, the diagnosis, the log lines that tell it, the job's log
// collapsed into templates, a link). Every channel family
// renders this one model (im_bots.h; email.h, sms.h), so what a notification says is decided once.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "alert/notification.h"

namespace vigil::notify {

enum class Language { kEnglish, kChinese };

// One collapsed log template as a notification quotes it: `mark` is ours
// ("×312", "×3 error, new"); `text` is the template ("Epoch <*> step <*>"),
// log text and untrusted, so each channel quotes it in its own way.
struct TemplateLine {
  std::string mark;
  std::string text;
  bool error = false;  // an error template
};

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
  // The diagnosis' log templates (errors first, then new ones, then by
  // count), while it fires: "Log templates (2401 lines, 14 templates):" and
  // at most MessageLimits::max_templates lines.
  std::string templates_heading;
  std::vector<TemplateLine> templates;
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

// How much of the diagnosis' log templates a channel quotes per alert: an IM
// bot's message and an SMS are small, a mail less so.
struct MessageLimits {
  size_t max_templates = 5;
  size_t max_template_bytes = 200;  // of the template's text, "…" marks a cut
};

Message BuildMessage(const alert::Notification& n, Language language,
                     const MessageLimits& limits = {});

// The log templates of a diagnosis (Alert::diagnosis, docs/diagnosis.md
// "JSON"): errors first, then new ones, then by count (the server's order
// among equals); at most `max_lines`, each text on one line (control
// characters become spaces) and cut to `max_bytes` with "…". Empty when the
// diagnosis has none or is not JSON.
std::vector<TemplateLine> DiagnosisTemplates(std::string_view diagnosis, Language language,
                                             size_t max_lines, size_t max_bytes);

}  // namespace vigil::notify

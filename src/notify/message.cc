#include "notify/message.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/strings.h"

namespace vigil::notify {
namespace {

using alert::Alert;
using alert::AlertState;
using alert::Severity;

int Rank(const Alert& a) {
  if (a.state == AlertState::kResolved) return 0;
  return a.severity == Severity::kCritical ? 3 : a.severity == Severity::kWarning ? 2 : 1;
}

using nlohmann::json;

// The diagnosis as JSON, or null while there is none ("{}" until it is made).
json ParseDiagnosis(std::string_view diagnosis) {
  if (diagnosis.size() < 3) return nullptr;
  json j = json::parse(diagnosis, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : json(nullptr);
}

std::string StringAt(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

uint64_t CountAt(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

// The diagnosis' one line for a person (its "summary", or "summary_zh" in
// Chinese), "" while there is none.
std::string DiagnosisLine(const json& d, bool zh) {
  if (!d.is_object()) return "";
  for (const char* key : {zh ? "summary_zh" : "summary", "summary"}) {
    if (std::string s = StringAt(d, key); !s.empty()) return std::string(CutUtf8(s, 500));
  }
  return "";
}

// The diagnosis' first suggestion for a person, with the job's own value
// and the suggested one when the diagnosis knows them: "Halve the batch
// size ... (batch_size: 16 → 8)"; "" when it has none.
std::string SuggestionLine(const json& d, bool zh) {
  if (!d.is_object()) return "";
  auto list = d.find("suggestions");
  if (list == d.end() || !list->is_array() || list->empty() || !(*list)[0].is_object()) return "";
  const json& s = (*list)[0];
  std::string text =
      zh && !StringAt(s, "text_zh").empty() ? StringAt(s, "text_zh") : StringAt(s, "text");
  if (text.empty()) return "";
  std::string parameter = StringAt(s, "parameter"), current = StringAt(s, "current"),
              suggested = StringAt(s, "suggested");
  if (!parameter.empty() && (!current.empty() || !suggested.empty())) {
    text += " (" + parameter + ": " + (current.empty() ? "?" : current) + " → " +
            (suggested.empty() ? "?" : suggested) + ")";
  }
  return std::string(CutUtf8(text, 500));
}

// A template's text on one line, cut to `max` bytes (with "…").
std::string OneLine(std::string text, size_t max) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  }
  if (text.size() <= max) return text;
  const size_t ellipsis = std::string_view("…").size();
  return std::string(CutUtf8(text, max > ellipsis ? max - ellipsis : 0)) + "…";
}

std::vector<TemplateLine> TemplatesOf(const json& d, bool zh, size_t max_lines, size_t max_bytes) {
  if (!d.is_object()) return {};
  auto list = d.find("log_templates");
  if (list == d.end() || !list->is_array()) return {};
  struct Ranked {
    bool error, is_new;
    uint64_t count;
    const json* t;
  };
  std::vector<Ranked> ranked;
  for (const json& t : *list) {
    if (!t.is_object() || StringAt(t, "template").empty()) continue;
    auto is_new = t.find("new");
    ranked.push_back({StringAt(t, "severity") == "error",
                      is_new != t.end() && is_new->is_boolean() && is_new->get<bool>(),
                      CountAt(t, "count"), &t});
  }
  // The server ranks them so already; a notification does not count on it.
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    return std::tie(b.error, b.is_new, b.count) < std::tie(a.error, a.is_new, a.count);
  });
  if (ranked.size() > max_lines) ranked.resize(max_lines);
  std::vector<TemplateLine> out;
  for (const Ranked& r : ranked) {
    std::string severity = StringAt(*r.t, "severity");
    std::string mark = "×" + std::to_string(r.count);
    std::vector<std::string> words;
    if (severity == "error") words.push_back(zh ? "错误" : "error");
    if (severity == "warn") words.push_back(zh ? "警告" : "warn");
    if (r.is_new) words.push_back(zh ? "新出现" : "new");
    for (size_t i = 0; i < words.size(); ++i) {
      mark += (i == 0 ? " " : zh ? "，" : ", ") + words[i];
    }
    out.push_back({std::move(mark), OneLine(StringAt(*r.t, "template"), max_bytes), r.error});
  }
  return out;
}

// "Log templates (2401 lines, 14 templates):", from the totals when they
// say.
std::string TemplatesHeading(const json& d, bool zh) {
  uint64_t lines = 0, templates = 0;
  if (auto t = d.find("log_template_totals"); t != d.end() && t->is_object()) {
    lines = CountAt(*t, "window_lines");
    templates = CountAt(*t, "window_templates");
  }
  if (lines == 0 || templates == 0) return zh ? "日志模板：" : "Log templates:";
  return zh ? "日志模板（" + std::to_string(lines) + " 行，" + std::to_string(templates) + " 种）："
            : "Log templates (" + std::to_string(lines) + " lines, " + std::to_string(templates) +
                  (templates == 1 ? " template):" : " templates):");
}

std::string Minute(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

std::string Where(const Alert& a, Language lang) {
  bool zh = lang == Language::kChinese;
  std::vector<std::string> parts;
  auto label = [&](const char* name) { return std::string(alert::LabelOf(a, name)); };
  if (!label("node").empty()) parts.push_back((zh ? "节点 " : "node ") + label("node"));
  if (!label("gpu").empty()) {
    std::string gpu = "GPU " + label("gpu");
    if (!label("modelName").empty()) gpu += " (" + label("modelName") + ")";
    if (!label("UUID").empty()) gpu += " " + label("UUID");
    parts.push_back(gpu);
  }
  if (!label("job").empty()) parts.push_back((zh ? "任务 " : "job ") + label("job"));
  if (!label("container").empty())
    parts.push_back((zh ? "容器 " : "container ") + label("container"));
  if (!label("mountpoint").empty())
    parts.push_back((zh ? "挂载点 " : "mount ") + label("mountpoint"));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " · ") + p;
  return out;
}

}  // namespace

std::vector<TemplateLine> DiagnosisTemplates(std::string_view diagnosis, Language language,
                                             size_t max_lines, size_t max_bytes) {
  return TemplatesOf(ParseDiagnosis(diagnosis), language == Language::kChinese, max_lines,
                     max_bytes);
}

Message BuildMessage(const alert::Notification& n, Language lang, const MessageLimits& limits) {
  bool zh = lang == Language::kChinese;
  std::vector<const Alert*> alerts;
  for (const Alert& a : n.alerts) alerts.push_back(&a);
  std::stable_sort(alerts.begin(), alerts.end(),
                   [](const Alert* a, const Alert* b) { return Rank(*a) > Rank(*b); });
  Message m;
  size_t firing = 0;
  for (const Alert* a : alerts) firing += a->state != AlertState::kResolved;
  m.severity = firing == 0 ? "resolved" : alert::SeverityName(alerts.front()->severity);
  std::string node;
  for (const auto& l : n.group_labels) {
    if (l.name == "node") node = l.value;
  }
  std::string n_alerts = std::to_string(firing > 0 ? firing : alerts.size());
  if (zh) {
    std::string on = node.empty() ? "" : node + " 上 ";
    m.title = (firing > 0 ? "【告警 " + m.severity + "】" : std::string("【已恢复】")) + on +
              n_alerts + " 条告警";
  } else {
    std::string on = node.empty() ? "" : " on " + node;
    std::string plural = n_alerts == "1" ? " alert" : " alerts";
    m.title = (firing > 0 ? "[FIRING " + m.severity + "] " : std::string("[RESOLVED] ")) +
              n_alerts + plural + on;
  }
  m.link = n.external_url + "/#alerts";
  m.settings_link = n.external_url + kSettingsPath;
  for (const Alert* a : alerts) {
    MessageEntry e;
    e.resolved = a->state == AlertState::kResolved;
    e.severity = alert::SeverityName(a->severity);
    e.headline = zh && !a->summary_zh.empty() ? a->summary_zh : a->summary_en;
    if (e.headline.empty()) e.headline = a->rule;
    if (a->threshold != 0 || a->value != 1) {
      e.value = zh ? "当前值 " + Number(a->value) + "，阈值 " + Number(a->threshold)
                   : "value " + Number(a->value) + ", threshold " + Number(a->threshold);
    }
    int64_t since = a->fired_at_ms != 0 ? a->fired_at_ms : a->active_at_ms;
    e.since = e.resolved ? (zh ? "恢复于 " : "resolved at ") + Minute(a->resolved_at_ms)
                         : (zh ? "开始于 " : "since ") + Minute(since);
    e.where = Where(*a, lang);
    const std::string& details =
        zh && !a->description_zh.empty() ? a->description_zh : a->description_en;
    for (size_t start = 0; start < details.size();) {
      size_t nl = details.find('\n', start);
      if (nl == std::string::npos) nl = details.size();
      if (nl > start) e.details.push_back(details.substr(start, nl - start));
      start = nl + 1;
    }
    // What to do, while it fires; and the diagnosis once one is made: its
    // summary, and while it fires its suggestion and the log's templates.
    const std::string& steps = zh && !a->steps_zh.empty() ? a->steps_zh : a->steps_en;
    if (!e.resolved && !steps.empty())
      e.details.push_back((zh ? "建议：" : "What to do: ") + steps);
    const json diagnosis = ParseDiagnosis(a->diagnosis);
    if (std::string line = DiagnosisLine(diagnosis, zh); !line.empty()) {
      e.details.push_back((zh ? "诊断：" : "Diagnosis: ") + line);
    }
    if (std::string s = SuggestionLine(diagnosis, zh); !e.resolved && !s.empty()) {
      e.details.push_back((zh ? "修改建议：" : "Suggestion: ") + s);
    }
    if (!e.resolved) {
      e.log_lines = a->log_excerpt;
      e.templates = TemplatesOf(diagnosis, zh, limits.max_templates, limits.max_template_bytes);
      if (!e.templates.empty()) e.templates_heading = TemplatesHeading(diagnosis, zh);
    }
    e.link = n.external_url + "/#alerts&id=" + a->id;
    m.entries.push_back(std::move(e));
  }
  return m;
}

}  // namespace vigil::notify

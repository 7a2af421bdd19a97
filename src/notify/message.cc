#include "notify/message.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

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

// The diagnosis' one line for a person (its "summary", or "summary_zh" in
// Chinese), "" while there is none: the slot the diagnosis issue fills.
std::string DiagnosisLine(const std::string& diagnosis, bool zh) {
  if (diagnosis.size() < 3) return "";  // "{}"
  auto j = nlohmann::json::parse(diagnosis, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return "";
  for (const char* key : {zh ? "summary_zh" : "summary", "summary"}) {
    if (auto it = j.find(key); it != j.end() && it->is_string() && !it->empty()) {
      return std::string(CutUtf8(it->get<std::string>(), 500));
    }
  }
  return "";
}

// The diagnosis' first suggestion for a person, with the job's own value
// and the suggested one when the diagnosis knows them: "Halve the batch
// size ... (batch_size: 16 → 8)"; "" when it has none.
std::string SuggestionLine(const std::string& diagnosis, bool zh) {
  if (diagnosis.size() < 3) return "";
  auto j = nlohmann::json::parse(diagnosis, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return "";
  auto list = j.find("suggestions");
  if (list == j.end() || !list->is_array() || list->empty() || !(*list)[0].is_object()) return "";
  const nlohmann::json& s = (*list)[0];
  auto text_of = [&](const char* key) -> std::string {
    auto it = s.find(key);
    return it != s.end() && it->is_string() ? it->get<std::string>() : "";
  };
  std::string text = zh && !text_of("text_zh").empty() ? text_of("text_zh") : text_of("text");
  if (text.empty()) return "";
  std::string parameter = text_of("parameter"), current = text_of("current"),
              suggested = text_of("suggested");
  if (!parameter.empty() && (!current.empty() || !suggested.empty())) {
    text += " (" + parameter + ": " + (current.empty() ? "?" : current) + " → " +
            (suggested.empty() ? "?" : suggested) + ")";
  }
  return std::string(CutUtf8(text, 500));
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

Message BuildMessage(const alert::Notification& n, Language lang) {
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
    // What to do, while it fires; and the diagnosis once one is made
    // (its "summary"; the diagnosis issue fills it).
    const std::string& steps = zh && !a->steps_zh.empty() ? a->steps_zh : a->steps_en;
    if (!e.resolved && !steps.empty())
      e.details.push_back((zh ? "建议：" : "What to do: ") + steps);
    if (std::string diagnosis = DiagnosisLine(a->diagnosis, zh); !diagnosis.empty()) {
      e.details.push_back((zh ? "诊断：" : "Diagnosis: ") + diagnosis);
    }
    if (std::string s = SuggestionLine(a->diagnosis, zh); !e.resolved && !s.empty()) {
      e.details.push_back((zh ? "修改建议：" : "Suggestion: ") + s);
    }
    if (!e.resolved) e.log_lines = a->log_excerpt;
    e.link = n.external_url + "/#alerts&id=" + a->id;
    m.entries.push_back(std::move(e));
  }
  return m;
}

}  // namespace vigil::notify

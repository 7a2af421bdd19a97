// `vigil alerts` (firing and pending alerts, --all with the resolved history)
// and `vigil rules ls|export` (the rules in effect; a Prometheus rule file):
// docs/alerts.md. Tables for a person, --json for scripts.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "alert/evaluate.h"
#include "alert/prometheus_rules.h"
#include "alert/rules.h"
#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/config.h"
#include "cli/home.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

// Chinese summaries when the terminal's locale is Chinese.
bool ChineseLocale() {
  for (const char* var : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return std::string_view(v).substr(0, 2) == "zh";
  }
  return false;
}

const char* SeverityColor(const std::string& s) {
  if (s == "critical") return "\033[31m";
  if (s == "warning") return "\033[33m";
  return "\033[34m";
}

// "n1 gpu 3 job train": where an alert is.
std::string Where(const json& labels) {
  std::string out;
  auto add = [&](const char* label, const char* prefix) {
    std::string v = JsonString(labels, label);
    if (v.empty()) return;
    if (!out.empty()) out += ' ';
    out += prefix + v;
  };
  add("node", "");
  add("gpu", "gpu ");
  add("mountpoint", "");
  add("job", "job ");
  return Printable(out, 40);
}

}  // namespace

int RunAlerts(const AlertsFlags& flags) {
  auto base = ResolveServerUrl(flags.server, flags.home);
  if (!base.ok()) {
    std::fprintf(stderr, "%s\n", base.status().message().c_str());
    return 3;
  }
  std::string url = *base + "/api/v1/alerts/records" + (flags.all ? "?all=1" : "");
  auto r = GetJsonList(url, std::chrono::seconds(10));
  if (!r.ok()) {
    std::fprintf(stderr, "vigil alerts: %s\n", r.status().message().c_str());
    return 1;
  }
  if (flags.json) {
    std::printf("%s\n", r->dump().c_str());
    return 0;
  }
  if (r->empty()) {
    std::printf(flags.all ? "No alert, firing or resolved.\n" : "No alert is firing or pending.\n");
    return 0;
  }
  const bool tty = ::isatty(1) != 0;
  const bool zh = ChineseLocale();
  std::printf("%-9s %-9s %-24s %-30s %-15s %s\n", "STATE", "SEVERITY", "RULE", "WHERE", "SINCE",
              "SUMMARY");
  for (const json& a : *r) {
    std::string state = JsonString(a, "state"), sev = JsonString(a, "severity");
    if (a.contains("inhibited")) state += "*";
    if (a.contains("silenced")) state += "~";
    int64_t since = static_cast<int64_t>(JsonNumber(a, "fired_at_ms"));
    if (since == 0) since = static_cast<int64_t>(JsonNumber(a, "active_at_ms"));
    std::string summary = JsonString(a, zh ? "summary_zh" : "summary");
    std::printf("%-9s %s%-9s%s %-24s %-30s %-15s %s\n", state.c_str(),
                tty ? SeverityColor(sev) : "", sev.c_str(), tty ? "\033[0m" : "",
                Printable(JsonString(a, "rule"), 24).c_str(),
                Where(a.value("labels", json::object())).c_str(), LocalTime(since).c_str(),
                Printable(summary, 200).c_str());
  }
  std::printf(
      "(* muted by another alert; docs/alerts.md \"Inhibition\". ~ silenced: vigil silence ls)\n");
  return 0;
}

namespace {

// Each GPU's effective threshold of a level, one line per GPU where they
// differ (a GPU's own slowdown temperature, an override), else one line.
void PrintPerGpuThresholds(const json& per_series) {
  if (per_series.empty()) return;
  std::vector<std::pair<std::string, double>> rows;
  for (const json& t : per_series)
    rows.push_back({JsonString(t, "where"), JsonNumber(t, "threshold")});
  std::sort(rows.begin(), rows.end());
  bool same = std::all_of(rows.begin(), rows.end(),
                          [&](const auto& r) { return r.second == rows[0].second; });
  if (same && rows.size() > 1) {
    std::printf("%-24s   each of %zu GPUs: %s\n", "", rows.size(),
                alert::FormatAlertValue(rows[0].second).c_str());
    return;
  }
  for (const auto& [where, threshold] : rows) {
    std::printf("%-24s   %s: %s\n", "", Printable(where, 60).c_str(),
                alert::FormatAlertValue(threshold).c_str());
  }
}

}  // namespace

int RunRules(const RulesFlags& flags) {
  if (flags.action == "export") {
    // From this home's config.json, without asking a server: a rule file is
    // what the presets are, not what one server has seen.
    auto config = LoadConfig(ResolveHome(flags.home));
    if (!config.ok()) {
      std::fprintf(stderr, "vigil rules export: %s\n", config.status().message().c_str());
      return 2;
    }
    auto rules = alert::EffectiveRules(config->alerts);
    if (!rules.ok()) {
      std::fprintf(stderr, "vigil rules export: %s\n", rules.status().message().c_str());
      return 2;
    }
    std::fputs(alert::PrometheusRuleFile(*rules, config->alerts.eval_interval_ms).c_str(), stdout);
    return 0;
  }
  auto base = ResolveServerUrl(flags.server, flags.home);
  if (!base.ok()) {
    std::fprintf(stderr, "%s\n", base.status().message().c_str());
    return 3;
  }
  auto r = GetJson(*base + "/api/v1/rules", std::chrono::seconds(10));
  if (!r.ok()) {
    std::fprintf(stderr, "vigil rules: %s\n", r.status().message().c_str());
    return 1;
  }
  if (flags.json) {
    std::printf("%s\n", r->dump().c_str());
    return 0;
  }
  std::printf("%-24s %-9s %-8s %-7s %-8s %s\n", "RULE", "SEVERITY", "STATE", "FOR", "HEALTH",
              "CONDITION (threshold / clear)");
  for (const json& g : (*r)["data"].value("groups", json::array())) {
    for (const json& rule : g.value("rules", json::array())) {
      const json& v = rule.value("vigil", json::object());
      bool enabled = v.value("enabled", true);
      char thresholds[96];
      std::snprintf(thresholds, sizeof(thresholds), "%g / %g%s%s", JsonNumber(v, "threshold"),
                    JsonNumber(v, "clear"), JsonString(v, "unit").empty() ? "" : " ",
                    JsonString(v, "unit").c_str());
      std::string state = enabled ? JsonString(rule, "state") : "off";
      std::printf(
          "%-24s %-9s %-8s %-7s %-8s %s  (%s)\n", JsonString(rule, "name").c_str(),
          JsonString(rule["labels"], "severity").c_str(), state.c_str(),
          alert::FormatDuration(static_cast<int64_t>(JsonNumber(rule, "duration") * 1000)).c_str(),
          JsonString(rule, "health").c_str(), Printable(JsonString(rule, "query"), 160).c_str(),
          thresholds);
      for (const json& o : v.value("overrides", json::array())) {
        std::string where;
        for (const char* k : {"node", "job", "gpu_model"}) {
          if (!JsonString(o, k).empty())
            where += std::string(where.empty() ? "" : ", ") + k + " " + JsonString(o, k);
        }
        std::string what;
        if (o.contains("enabled")) what += o.value("enabled", true) ? " on" : " off";
        if (o.contains("threshold"))
          what += " " + alert::FormatAlertValue(JsonNumber(o, "threshold"));
        if (o.contains("for")) what += " for " + JsonString(o, "for");
        std::printf("%-24s   override (%s):%s\n", "", Printable(where, 80).c_str(), what.c_str());
      }
      PrintPerGpuThresholds(v.value("per_series", json::array()));
    }
  }
  return 0;
}

}  // namespace vigil::cli

#include "alert/prometheus_rules.h"

#include <cctype>
#include <cstdio>
#include <map>

namespace vigil::alert {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  return buf;
}

bool IsMetricName(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') return false;
  }
  return true;
}

std::string OnClause(const Rule& rule) {
  std::string on;
  for (const std::string& l : rule.reference_on) on += (on.empty() ? "" : ", ") + l;
  return "on(" + on + ")";
}

// The per-series reference: the reference query, else the fallback of the
// series' model, else the default — as Vigil picks it (evaluate.cc).
std::string ReferenceExpr(const Rule& rule, const std::string& value) {
  std::string ref = "(" + rule.reference + ")";
  const std::string on = OnClause(rule);
  if (IsMetricName(value)) {
    for (const auto& [model, v] : rule.reference_fallback) {
      ref += " or " + on + " (0 * " + value + "{" + rule.reference_label + "=\"" + model +
             "\"} + " + Num(v) + ")";
    }
  }
  return ref + " or " + on + " (0 * " + value + " + " + Num(rule.reference_default) + ")";
}

// `value op threshold`, the threshold relative to the reference when the
// rule has one.
std::string Compare(const Rule& rule, const std::string& value, double threshold) {
  const char* op = ComparisonText(rule.comparison);
  // Comparisons bind tighter than `and`/`or` and arithmetic's neighbours:
  // the value keeps its own parentheses unless it is one metric name.
  const std::string lhs = IsMetricName(value) ? value : "(" + value + ")";
  if (rule.reference.empty()) return lhs + " " + op + " " + Num(threshold);
  // group_left keeps the GPU's own labels (one-to-one matching on(...)
  // would keep only node and gpu), as Vigil's alerts have them.
  return lhs + " " + op + " " + OnClause(rule) + " group_left() (" + ReferenceExpr(rule, value) +
         ") " + (threshold < 0 ? "- " + Num(-threshold) : "+ " + Num(threshold));
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string PrometheusExpr(const Rule& rule, const Level& level) {
  if (rule.source != RuleSource::kQuery) return "";
  const std::string value = level.expr.empty() ? rule.expr : level.expr;
  std::string fire = Compare(rule, value, level.fire);
  if (level.clear == level.fire) return fire;
  // Hysteresis: holding past the clear threshold needs the level's own
  // alert, pending or firing, at the previous evaluation.
  std::string hold = Compare(rule, value, level.clear);
  return "(" + fire + ") or ((" + hold + ") and ignoring(alertname, alertstate, severity) " +
         "ALERTS{alertname=\"" + rule.id + "\", severity=\"" + SeverityName(level.severity) +
         "\"})";
}

std::string PrometheusSummary(const Rule& rule, const Level& level, const std::string& text) {
  return ExpandPlaceholders(text, [&](const std::string& name) -> std::string {
    if (name == "value") return "{{ $value }}";
    if (name == "threshold") {
      return rule.reference.empty() ? Num(level.fire)
                                    : "slowdown " + std::string(level.fire < 0 ? "- " : "+ ") +
                                          Num(level.fire < 0 ? -level.fire : level.fire);
    }
    if (name == "reference") return "its slowdown temperature";
    if (name == "for") return FormatDuration(level.for_ms);
    if (name == "value_duration") return "{{ $value | humanizeDuration }}";
    if (name == "cost" && rule.priced) {
      // Templates have no arithmetic; a query does it (value x price x the
      // `for` in hours), as Vigil's {cost} (FormatCost).
      std::string cost = "{{ printf \"%v * " + Num(rule.price_per_gpu_hour) + " * " +
                         Num(static_cast<double>(level.for_ms) / 3'600'000.0) +
                         "\" $value | query | first | value | printf \"%.2f\" }}";
      return rule.currency.empty() ? cost : cost + " " + rule.currency;
    }
    return "{{ $labels." + name + " }}";
  });
}

std::string PrometheusRuleFile(const std::vector<Rule>& rules, int64_t eval_interval_ms) {
  // One group per evaluation interval: the presets Vigil evaluates every
  // time, then the trend rules it evaluates less often (Rule::eval_every_ms).
  std::map<int64_t, std::string> groups;
  for (const Rule& r : rules) {
    const int64_t every = r.eval_every_ms > 0 ? r.eval_every_ms : eval_interval_ms;
    std::string& out = groups[every];
    if (r.source != RuleSource::kQuery) {
      out += "      # " + r.id + ": from Vigil's job and node reports, not expressible in PromQL\n";
      continue;
    }
    if (!r.enabled) {
      out += "      # " + r.id + ": disabled in config.json\n";
      continue;
    }
    if (!r.overrides.empty()) {
      // Scopes by job need Vigil's job reports; by node or model they would
      // each need a rule of their own: the export keeps the rule's defaults.
      out += "      # " + r.id + ": " + std::to_string(r.overrides.size()) +
             " override(s) by node, job or GPU model in config.json are not exported\n";
    }
    for (const Level& level : r.levels) {
      out += "      - alert: " + r.id + "\n";
      out += "        expr: " + Quoted(PrometheusExpr(r, level)) + "\n";
      if (level.for_ms > 0) out += "        for: " + FormatDuration(level.for_ms) + "\n";
      if (r.keep_firing_for_ms > 0) {
        out += "        keep_firing_for: " + FormatDuration(r.keep_firing_for_ms) + "\n";
      }
      out += "        labels:\n          severity: " + std::string(SeverityName(level.severity)) +
             "\n";
      out += "        annotations:\n";
      out += "          summary: " + Quoted(PrometheusSummary(r, level, r.summary_en)) + "\n";
      out += "          summary_zh: " + Quoted(PrometheusSummary(r, level, r.summary_zh)) + "\n";
    }
  }
  std::string out =
      "# Vigil's alert presets as Prometheus alerting rules (vigil rules export).\n"
      "# One rule per level; hysteresis through each level's own ALERTS series.\n"
      "groups:\n";
  for (const auto& [every, rules_text] : groups) {
    const std::string name = every == eval_interval_ms
                                 ? "vigil-presets"
                                 : "vigil-presets-every-" + FormatDuration(every);
    out += "  - name: " + name + "\n    interval: " + FormatDuration(every) + "\n    rules:\n" +
           rules_text;
  }
  return out;
}

}  // namespace vigil::alert

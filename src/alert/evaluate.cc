#include "alert/evaluate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>

#include "alert/rules.h"
#include "core/strings.h"

namespace vigil::alert {
namespace {

// The label set `on` picks out of `labels`, as a map key.
std::string MatchKey(const wire::Labels& labels, const std::vector<std::string>& on) {
  std::string key;
  for (const std::string& name : on) {
    key += wire::LabelValue(labels, name);
    key += '\xff';
  }
  return key;
}

wire::Labels WithoutName(wire::Labels labels) {
  std::erase_if(labels, [](const wire::Label& l) { return l.name == wire::kMetricNameLabel; });
  return labels;
}

void SetLabel(wire::Labels* labels, const std::string& name, const std::string& value) {
  if (value.empty()) return;
  for (wire::Label& l : *labels) {
    if (l.name == name) {
      l.value = value;
      return;
    }
  }
  labels->push_back({name, value});
}

wire::Labels JobLabels(const diagnose::JobReport& r) {
  wire::Labels labels;
  SetLabel(&labels, "node", r.node);
  SetLabel(&labels, "job", r.job.name);
  SetLabel(&labels, "run", r.job.id);
  return labels;
}

// The reason a job ended, for its summary: the verdict's text, else its kind.
std::string EndReason(const diagnose::JobReport& r) {
  if (!r.verdict.reason_text.empty()) return r.verdict.reason_text;
  if (!r.verdict.reason.empty()) return r.verdict.reason;
  return r.state;
}

bool EndedRecently(const diagnose::JobReport& r, const JobContext& context) {
  return r.job.ended && r.job.last_seen_ms >= context.ended_after_ms;
}

}  // namespace

bool Past(Comparison comparison, double value, double threshold) {
  if (std::isnan(value)) return false;
  switch (comparison) {
    case Comparison::kAbove:
      return value > threshold;
    case Comparison::kBelow:
      return value < threshold;
    case Comparison::kAtLeast:
      return value >= threshold;
  }
  return false;
}

std::string FormatAlertValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  double a = std::fabs(v);
  if (a >= 100 || a == std::floor(a)) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else if (a >= 1) {
    std::snprintf(buf, sizeof(buf), "%.1f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3g", v);
  }
  return buf;
}

std::string FormatApproxDuration(double seconds) {
  if (std::isnan(seconds) || std::isinf(seconds)) return FormatAlertValue(seconds) + "s";
  if (seconds < 0) return "-" + FormatApproxDuration(-seconds);
  double unit = seconds < 90 ? 1 : seconds < 48 * 3600 ? 60 : 3600;
  double rounded = std::round(seconds / unit) * unit;
  if (rounded > 1e15) return FormatAlertValue(seconds) + "s";  // beyond int64 ms
  return FormatDuration(static_cast<int64_t>(rounded) * 1000);
}

std::string FormatCost(const Rule& rule, double gpus, int64_t for_ms) {
  double cost = gpus * rule.price_per_gpu_hour * (static_cast<double>(for_ms) / 3'600'000.0);
  return FormatAlertValue(cost) + (rule.currency.empty() ? "" : " " + rule.currency);
}

std::string RenderSummary(const std::string& text, const wire::Labels& labels, double value,
                          double threshold, double reference, int64_t for_ms,
                          const std::map<std::string, std::string>& extra) {
  return ExpandPlaceholders(text, [&](const std::string& name) -> std::string {
    if (name == "value") return FormatAlertValue(value);
    if (name == "threshold") return FormatAlertValue(threshold);
    if (name == "reference") return FormatAlertValue(reference);
    if (name == "for") return FormatDuration(for_ms);
    if (name == "value_duration") return FormatApproxDuration(value);
    if (auto e = extra.find(name); e != extra.end()) return e->second;
    std::string_view v = wire::LabelValue(labels, name);
    return std::string(v.empty() ? std::string_view("?") : v);
  });
}

Sample Judge(const Rule& rule, const Level& level, wire::Labels labels, double value,
             double reference, int64_t /*now_ms*/,
             const std::map<std::string, std::string>& extra) {
  Sample s;
  s.value = value;
  s.threshold = level.fire + reference;
  s.fire = Past(rule.comparison, value, s.threshold);
  // A clear threshold on the wrong side of the firing one would never
  // clear: the firing threshold then clears too.
  double clear = level.clear + reference;
  s.hold = s.fire || Past(rule.comparison, value, clear);
  s.for_ms = level.for_ms;
  std::map<std::string, std::string> fill = extra;
  if (rule.priced) fill.emplace("cost", FormatCost(rule, value, level.for_ms));
  s.summary_en =
      RenderSummary(rule.summary_en, labels, value, s.threshold, reference, level.for_ms, fill);
  s.summary_zh =
      RenderSummary(rule.summary_zh, labels, value, s.threshold, reference, level.for_ms, fill);
  s.steps_en = rule.steps_en;
  s.steps_zh = rule.steps_zh;
  s.labels = std::move(labels);
  return s;
}

SeriesScope ScopeOf(const wire::Labels& labels, const ScopeContext& context) {
  SeriesScope out;
  out.node = wire::LabelValue(labels, "node");
  out.job = wire::LabelValue(labels, "job");
  out.gpu_model = wire::LabelValue(labels, "modelName");
  std::string_view gpu = wire::LabelValue(labels, "gpu");
  if (!gpu.empty() && (out.job.empty() || out.gpu_model.empty())) {
    std::string key = std::string(out.node) + "/" + std::string(gpu);
    if (auto j = context.gpu_job.find(key); out.job.empty() && j != context.gpu_job.end()) {
      out.job = j->second;
    }
    if (auto m = context.gpu_model.find(key);
        out.gpu_model.empty() && m != context.gpu_model.end()) {
      out.gpu_model = m->second;
    }
  }
  return out;
}

std::string OwnerOf(const wire::Labels& labels, const ScopeContext& context) {
  const std::string node(wire::LabelValue(labels, "node"));
  std::string_view run = wire::LabelValue(labels, "run");
  if (!run.empty()) {
    auto it = context.run_owner.find(node + "/" + std::string(run));
    if (it != context.run_owner.end()) return it->second;
  }
  std::string_view gpu = wire::LabelValue(labels, "gpu");
  if (!gpu.empty()) {
    auto it = context.gpu_owner.find(node + "/" + std::string(gpu));
    if (it != context.gpu_owner.end()) return it->second;
  }
  return "";
}

std::optional<Sample> JudgeInScope(const Rule& rule, const Level& level, wire::Labels labels,
                                   double value, double reference, int64_t now_ms,
                                   const ScopeContext& scope,
                                   const std::map<std::string, std::string>& extra) {
  Level scratch;
  const Level* in_scope = rule.overrides.empty()
                              ? &level
                              : LevelFor(rule, level, ScopeOf(labels, scope), &reference, &scratch);
  if (in_scope == nullptr) return std::nullopt;
  std::string owner = OwnerOf(labels, scope);
  auto sample = Judge(rule, *in_scope, std::move(labels), value, reference, now_ms, extra);
  sample.owner = std::move(owner);
  return sample;
}

Result<const query::QueryResult*> QueryCache::Run(const std::string& expr, int64_t now_ms) {
  if (now_ms != results_ms_) {
    results_.clear();
    results_ms_ = now_ms;
  }
  auto done = results_.find(expr);
  if (done == results_.end()) {
    auto p = parsed_.find(expr);
    if (p == parsed_.end()) {
      Parsed parsed;
      auto root = query::ParseExpr(expr);
      if (root.ok()) {
        parsed.root = std::move(root).value();
      } else {
        parsed.status = root.status();
      }
      p = parsed_.emplace(expr, std::move(parsed)).first;
    }
    done = results_
               .emplace(expr, p->second.root ? engine_->Instant(*p->second.root, now_ms)
                                             : Result<query::QueryResult>(p->second.status))
               .first;
  }
  if (!done->second.ok()) return done->second.status();
  return &*done->second;
}

Result<std::vector<Sample>> QuerySamples(QueryCache* queries, const Rule& rule, const Level& level,
                                         int64_t now_ms, const ScopeContext& scope) {
  const std::string& expr = level.expr.empty() ? rule.expr : level.expr;
  auto result = queries->Run(expr, now_ms);
  if (!result.ok()) return result.status().WithContext("rule " + rule.id);
  std::map<std::string, double> references;
  if (!rule.reference.empty()) {
    auto ref = queries->Run(rule.reference, now_ms);
    if (!ref.ok()) return ref.status().WithContext("rule " + rule.id + " reference");
    for (const query::ResultSeries& s : (*ref)->series) {
      if (!s.points.empty()) references[MatchKey(s.labels, rule.reference_on)] = s.points[0].v;
    }
  }
  std::vector<Sample> samples;
  for (const query::ResultSeries& s : (*result)->series) {
    if (s.points.empty()) continue;
    double reference = 0;
    if (!rule.reference.empty()) {
      auto it = references.find(MatchKey(s.labels, rule.reference_on));
      if (it != references.end()) {
        reference = it->second;
      } else {
        auto fb = rule.reference_fallback.find(
            std::string(wire::LabelValue(s.labels, rule.reference_label)));
        reference = fb != rule.reference_fallback.end() ? fb->second : rule.reference_default;
      }
    }
    if (auto sample = JudgeInScope(rule, level, WithoutName(s.labels), s.points[0].v, reference,
                                   now_ms, scope)) {
      samples.push_back(std::move(*sample));
    }
  }
  return samples;
}

std::vector<Sample> JobSamples(const Rule& rule, const Level& level,
                               const std::vector<diagnose::JobReport>& reports,
                               const JobContext& context, int64_t now_ms) {
  std::vector<Sample> out;
  // A job's state, not a value against a threshold: its scope can still
  // disable the rule or change its `for`.
  auto add = [&](wire::Labels labels, double value, bool on,
                 const std::map<std::string, std::string>& extra) {
    Level scratch;
    double no_reference = 0;
    const Level* in_scope =
        rule.overrides.empty()
            ? &level
            : LevelFor(rule, level, ScopeOf(labels, context.scope), &no_reference, &scratch);
    if (in_scope == nullptr) return;
    Sample s;
    s.value = value;
    s.fire = s.hold = on;
    s.for_ms = in_scope->for_ms;
    s.summary_en = RenderSummary(rule.summary_en, labels, value, 0, 0, in_scope->for_ms, extra);
    s.summary_zh = RenderSummary(rule.summary_zh, labels, value, 0, 0, in_scope->for_ms, extra);
    s.owner = OwnerOf(labels, context.scope);
    s.steps_en = rule.steps_en;
    s.steps_zh = rule.steps_zh;
    s.labels = std::move(labels);
    out.push_back(std::move(s));
  };
  auto judge = [&](wire::Labels labels, double value,
                   const std::map<std::string, std::string>& extra) {
    if (auto s =
            JudgeInScope(rule, level, std::move(labels), value, 0, now_ms, context.scope, extra)) {
      out.push_back(std::move(*s));
    }
  };
  // An ended run: its alert carries the run's summary.
  auto ended = [&](const diagnose::JobReport& r) {
    std::string reason = EndReason(r);
    const size_t before = out.size();
    add(JobLabels(r), 1, true, {{"reason", reason}});
    if (context.describe_end && out.size() > before) {
      std::tie(out.back().description_en, out.back().description_zh) =
          context.describe_end(r, reason);
    }
  };
  for (const diagnose::JobReport& r : reports) {
    switch (rule.job_check) {
      case JobCheck::kCrashed:
        if ((r.state == "crashed" || r.state == "killed") && EndedRecently(r, context)) ended(r);
        break;
      case JobCheck::kFinished:
        if ((r.state == "completed" || r.state == "exited") && EndedRecently(r, context)) ended(r);
        break;
      case JobCheck::kStalled:
        if (r.state == "stalled" && r.progress.last_change_ms) {
          add(JobLabels(r), static_cast<double>(now_ms - *r.progress.last_change_ms) / 1000.0, true,
              {});
        }
        break;
      case JobCheck::kUnderutilized:
        if (r.state != "running") break;
        for (const diagnose::JobGpu& g : r.gpus) {
          auto u = context.gpu_util.find(r.node + "/" + g.gpu);
          if (u == context.gpu_util.end()) continue;
          wire::Labels labels = JobLabels(r);
          SetLabel(&labels, "gpu", g.gpu);
          SetLabel(&labels, "UUID", g.uuid);
          judge(std::move(labels), u->second, {});
        }
        break;
      case JobCheck::kStraggler: {
        if (r.state != "running" || r.gpus.size() < 2) break;
        std::vector<std::pair<const diagnose::JobGpu*, double>> util;
        for (const diagnose::JobGpu& g : r.gpus) {
          auto u = context.gpu_util.find(r.node + "/" + g.gpu);
          if (u != context.gpu_util.end() && !std::isnan(u->second)) {
            util.push_back({&g, u->second});
          }
        }
        if (util.size() < 2) break;
        std::vector<double> sorted;
        for (const auto& [g, u] : util) sorted.push_back(u);
        std::sort(sorted.begin(), sorted.end());
        size_t n = sorted.size();
        double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        if (median < kStragglerMinMedian) break;
        for (const auto& [g, u] : util) {
          wire::Labels labels = JobLabels(r);
          SetLabel(&labels, "gpu", g->gpu);
          SetLabel(&labels, "UUID", g->uuid);
          judge(std::move(labels), 100 * u / median, {{"median", FormatAlertValue(median)}});
        }
        break;
      }
    }
  }
  return out;
}

std::vector<Sample> NodeSamples(const Rule& rule, const Level& level,
                                const std::map<std::string, int64_t>& last_report_ms,
                                int64_t now_ms, const ScopeContext& scope) {
  std::vector<Sample> out;
  for (const auto& [node, ms] : last_report_ms) {
    double silent_s = static_cast<double>(now_ms - ms) / 1000.0;
    if (auto s = JudgeInScope(rule, level, {{"node", node}}, silent_s, 0, now_ms, scope)) {
      out.push_back(std::move(*s));
    }
  }
  return out;
}

std::vector<Sample> DeliverySamples(const Rule& rule, const Level& level,
                                    const DeliverySummary& summary, int64_t now_ms,
                                    const ScopeContext& scope) {
  std::vector<Sample> out;
  for (const auto& [channel, c] : summary.channels) {
    auto count = [&c](DeliveryState s) {
      auto it = c.counts.find(s);
      return it == c.counts.end() ? 0 : it->second;
    };
    const double undone =
        c.failing
            ? static_cast<double>(count(DeliveryState::kPending) + count(DeliveryState::kFailed))
            : 0;
    const std::map<std::string, std::string> extra = {
        {"answer", std::string(CutUtf8(c.last_error, 200))}};
    if (auto s =
            JudgeInScope(rule, level, {{"channel", channel}}, undone, 0, now_ms, scope, extra)) {
      out.push_back(std::move(*s));
    }
  }
  return out;
}

}  // namespace vigil::alert

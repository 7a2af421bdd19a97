#include "alert/run_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "alert/evaluate.h"

namespace vigil::alert {
namespace {

constexpr size_t kMaxEval = 4;
constexpr int64_t kLateLinesMs = 60'000;

std::string Range(int64_t ms) { return "[" + std::to_string(std::max<int64_t>(ms, 1000)) + "ms]"; }

// The first value of an instant query that answers one number, if any.
std::optional<double> One(const query::Engine& engine, const std::string& q, int64_t t_ms) {
  auto r = engine.Instant(q, t_ms);
  if (!r.ok() || r->series.empty() || r->series[0].points.empty()) return std::nullopt;
  double v = r->series[0].points[0].v;
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string GpuSelector(const diagnose::JobReport& r) {
  std::string gpus;
  for (const diagnose::JobGpu& g : r.gpus) gpus += (gpus.empty() ? "" : "|") + g.gpu;
  return "{node=" + PromQLString(r.node) + ",gpu=~" + PromQLString(gpus) + "}";
}

std::string RunSelector(const diagnose::JobReport& r, const std::string& name_matcher) {
  std::string sel = "{" + name_matcher + ",";
  if (r.by_run) return sel + "run=" + PromQLString(r.job.id) + "}";
  return sel + "job=" + PromQLString(r.job.name) + ",node=" + PromQLString(r.node) + "}";
}

void ReadTraining(const query::Engine& engine, const diagnose::JobReport& r, const std::string& d,
                  int64_t t, RunSummary* s) {
  std::string loss = RunSelector(r, "__name__=\"training_loss\"");
  s->final_loss = One(engine, "last_over_time(" + loss + d + ")", t);
  s->best_loss = One(engine, "min(min_over_time(" + loss + d + "))", t);
  auto eval = engine.Instant(
      "last_over_time(" + RunSelector(r, "__name__=~\"training_eval_.+\"") + d + ")", t);
  if (eval.ok()) {
    for (const auto& series : eval->series) {
      if (s->eval.size() >= kMaxEval || series.points.empty()) break;
      std::string name(wire::MetricName(series.labels));
      if (std::isfinite(series.points[0].v)) {
        s->eval[name.substr(std::string_view("training_").size())] = series.points[0].v;
      }
    }
  }
  for (const auto& [metric, unit] : {std::pair{"training_samples_per_second", "samples/s"},
                                     {"training_tokens_per_second", "tokens/s"},
                                     {"training_iterations_per_second", "it/s"}}) {
    std::string sel = RunSelector(r, std::string("__name__=\"") + metric + "\"");
    if (auto v = One(engine, "avg(avg_over_time(" + sel + d + "))", t)) {
      s->throughput = {{unit, *v}};
      break;
    }
  }
}

// A training value as printed by most trainers: four significant digits.
std::string Metric(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

std::string Money(double v, const std::string& currency) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return std::string(buf) + " " + currency;
}

std::string Hours(double h) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), h < 10 ? "%.2f" : "%.1f", h);
  return buf;
}

std::string MemoryText(double mib) {
  char buf[32];
  if (mib >= 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f GiB", mib / 1024);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f MiB", mib);
  }
  return buf;
}

}  // namespace

RunSummary SummarizeRun(const query::Engine& engine, const RunSummaryInput& in) {
  const diagnose::JobReport& r = *in.report;
  RunSummary s;
  s.exit_reason = in.exit_reason;
  s.alerts = in.alerts_during_run;
  s.price_per_gpu_hour = in.price_per_gpu_hour;
  s.currency = in.currency;
  const int64_t start = r.job.start_time_ms, end = std::max(r.job.last_seen_ms, start);
  s.duration_ms = end - start;
  s.gpus = r.gpus.size();
  s.gpu_hours = static_cast<double>(s.gpus) * static_cast<double>(s.duration_ms) / 3.6e6;
  const std::string d = Range(s.duration_ms);
  if (!r.gpus.empty()) {
    std::string gpus = GpuSelector(r);
    s.mean_gpu_util = One(engine, "avg(avg_over_time(DCGM_FI_DEV_GPU_UTIL" + gpus + d + "))", end);
    s.gpu_memory_peak_mib =
        One(engine, "max(max_over_time(DCGM_FI_DEV_FB_USED" + gpus + d + "))", end);
    diagnose::EfficiencyOptions options;
    options.price_per_gpu_hour = in.price_per_gpu_hour;
    options.currency = in.currency;
    auto e = diagnose::ComputeEfficiency(engine, r, options, std::max(in.now_ms, end));
    if (e.ok() && e->shares) s.efficiency = *std::move(e);
  }
  // The training series a little past the end, for lines flushed at exit,
  // when they are the run's own (by run id): by job name, a next run of the
  // same script could start within that minute.
  const int64_t read_to = r.by_run ? std::clamp(in.now_ms, end, end + kLateLinesMs) : end;
  ReadTraining(engine, r, Range(read_to - start), read_to, &s);
  return s;
}

std::string RenderRunSummary(const RunSummary& s, bool zh) {
  std::vector<std::string> lines;
  std::string ran = FormatApproxDuration(static_cast<double>(s.duration_ms) / 1000.0);
  if (s.gpus > 0) {
    lines.push_back(zh ? "运行 " + ran + "，" + std::to_string(s.gpus) + " 块 GPU（" +
                             Hours(s.gpu_hours) + " GPU 小时）"
                       : "Ran " + ran + " on " + std::to_string(s.gpus) + " GPU" +
                             (s.gpus == 1 ? "" : "s") + " (" + Hours(s.gpu_hours) + " GPU-hours)");
  } else {
    lines.push_back(zh ? "运行 " + ran + "，未使用 GPU" : "Ran " + ran + ", no GPU");
  }
  std::vector<std::string> use;
  if (s.mean_gpu_util) {
    use.push_back((zh ? "平均 GPU 利用率 " : "mean GPU utilisation ") +
                  FormatAlertValue(std::round(*s.mean_gpu_util)) + "%");
  }
  if (s.gpu_memory_peak_mib) {
    use.push_back((zh ? "显存峰值 " : "GPU memory peak ") + MemoryText(*s.gpu_memory_peak_mib));
  }
  std::string joined;
  for (const std::string& u : use) joined += (joined.empty() ? "" : zh ? "，" : " · ") + u;
  if (!joined.empty()) lines.push_back(joined);
  if (s.efficiency) lines.push_back(diagnose::EfficiencyLine(*s.efficiency, zh));
  std::string learn;
  if (s.final_loss) {
    learn = (zh ? "最终 loss " : "final loss ") + Metric(*s.final_loss);
    if (s.best_loss) learn += (zh ? "，最佳 " : ", best ") + Metric(*s.best_loss);
  }
  for (const auto& [name, v] : s.eval) {
    learn += (learn.empty() ? "" : zh ? "，" : " · ") + name + " " + Metric(v);
  }
  if (s.throughput) {
    learn += (learn.empty() ? ""
              : zh          ? "，"
                            : " · ") +
             std::string(zh ? "平均 " : "mean ") +
             FormatAlertValue(std::round(s.throughput->second * 10) / 10) + " " +
             s.throughput->first;
  }
  if (!learn.empty()) lines.push_back(learn);
  if (s.price_per_gpu_hour > 0 && s.gpus > 0) {
    // The idle share's cost is on the efficiency line.
    lines.push_back((zh ? "费用约 " : "cost about ") +
                    Money(s.gpu_hours * s.price_per_gpu_hour, s.currency));
  }
  lines.push_back(zh ? "运行期间告警 " + std::to_string(s.alerts) + " 条"
                     : std::to_string(s.alerts) + (s.alerts == 1 ? " alert" : " alerts") +
                           " during the run");
  if (!s.exit_reason.empty()) lines.push_back((zh ? "结束原因：" : "exit: ") + s.exit_reason);
  std::string out;
  for (const std::string& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

}  // namespace vigil::alert

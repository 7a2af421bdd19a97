#include "diagnose/efficiency.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "query/parser.h"

namespace vigil::diagnose {
namespace {

using query::PromQLString;

constexpr size_t kMaxCached = 4096;

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

// When the job's GPU time ends: its recorded exit, else when it was last
// seen alive; now while it runs (as the jobs API's end_time_ms).
int64_t EndOf(const JobReport& r, int64_t now_ms) {
  if (!r.job.ended) return r.state == "unknown" ? r.job.last_seen_ms : now_ms;
  if (r.job.run_exit && r.job.run_exit->ended_ms > 0) return r.job.run_exit->ended_ms;
  return r.job.last_seen_ms;
}

// {node="n",gpu=~"0|3"}: the job's GPUs (NVML indexes are digits; anything
// else is left out rather than pasted into a regex).
std::string GpuSelector(const JobReport& r) {
  std::string alt;
  for (const JobGpu& g : r.gpus) {
    const bool digits =
        std::all_of(g.gpu.begin(), g.gpu.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (g.gpu.empty() || !digits) continue;
    alt += (alt.empty() ? "" : "|") + g.gpu;
  }
  if (alt.empty()) return "";
  return "{node=" + PromQLString(r.node) + ",gpu=~" + PromQLString(alt) + "}";
}

// The run cut into n intervals of `step` ending at start + k*step (k = 1..n):
// the last may reach a little past the end, never more than n ms.
struct Grid {
  int64_t start = 0;
  int64_t step = 0;
  int64_t n = 0;
  int64_t End(int64_t k) const { return start + k * step; }
  // The interval a range query's point at `t_ms` closes, or -1.
  int64_t IndexOf(int64_t t_ms) const {
    if (t_ms <= start || (t_ms - start) % step != 0) return -1;
    int64_t k = (t_ms - start) / step - 1;
    return k < n ? k : -1;
  }
};

Grid GridFor(int64_t start, int64_t end, const EfficiencyOptions& o) {
  const int64_t span = std::max<int64_t>(end - start, 1000);
  Grid g;
  g.start = start;
  g.n = std::clamp<int64_t>(span / std::max<int64_t>(o.min_step_ms, 1), 1,
                            std::max<int64_t>(o.max_intervals, 1));
  g.step = (span + g.n - 1) / g.n;
  return g;
}

using PerInterval = std::vector<std::optional<double>>;

// A range query over the grid: per series key (`key_label`'s value, "" for
// an aggregate), each interval's value where there is one and it is finite.
Result<std::map<std::string, PerInterval>> Read(const query::Engine& engine, const Grid& g,
                                                const std::string& promql, const char* key_label) {
  auto r = engine.Range(promql, g.End(1), g.End(g.n), g.step);
  if (!r.ok()) return r.status().WithContext("efficiency query " + promql);
  std::map<std::string, PerInterval> out;
  for (const query::ResultSeries& s : r->series) {
    PerInterval& values = out[std::string(wire::LabelValue(s.labels, key_label))];
    values.resize(static_cast<size_t>(g.n));
    for (const query::Point& p : s.points) {
      const int64_t k = g.IndexOf(p.t_ms);
      if (k >= 0 && std::isfinite(p.v)) {
        auto& v = values[static_cast<size_t>(k)];
        v = v ? std::max(*v, p.v) : p.v;  // several series of one key: the busiest
      }
    }
  }
  return out;
}

// The aggregate of a node query (one series, or none).
PerInterval NodeSeries(const std::map<std::string, PerInterval>& by_key, const Grid& g) {
  PerInterval out(static_cast<size_t>(g.n));
  for (const auto& [key, values] : by_key) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i]) out[i] = out[i] ? std::max(*out[i], *values[i]) : *values[i];
    }
  }
  return out;
}

struct Mean {
  double sum = 0;
  size_t n = 0;
  void Add(const std::optional<double>& v) {
    if (!v) return;
    sum += std::clamp(*v, 0.0, 1.0);
    ++n;
  }
  std::optional<double> Get() const {
    return n == 0 ? std::nullopt : std::optional<double>(sum / static_cast<double>(n));
  }
};

std::string Percent(double share) { return Fmt("%.0f", std::round(100 * share)) + "%"; }

std::string GpuHours(double h) { return Fmt(h < 10 ? "%.2f" : "%.1f", h); }

}  // namespace

EfficiencyShares SplitInterval(const IntervalEvidence& e, bool multi_rank,
                               const EfficiencyThresholds& t) {
  EfficiencyShares s;
  if (!e.util) return s;
  const double u = std::clamp(*e.util, 0.0, 1.0);
  // A kernel resident while the SMs are almost empty is a collective waiting
  // on other ranks (NCCL kernels spin on few SMs): "busy" to NVML, not work.
  const bool spinning =
      multi_rank && e.sm_active && u >= t.spin_util && *e.sm_active < t.spin_sm_active;
  (spinning ? s.communication : s.gpu_busy) = u;
  const double rest = 1 - u;
  const bool input = (e.host_cpu_busy && *e.host_cpu_busy >= t.host_cpu_saturated) ||
                     (e.host_iowait && *e.host_iowait >= t.host_iowait_high);
  const bool network = multi_rank && e.network && *e.network >= t.network_busy;
  if (input) {
    s.input_bound += rest;
  } else if (network) {
    s.communication += rest;
  } else {
    s.idle += rest;
  }
  return s;
}

Result<JobEfficiency> ComputeEfficiency(const query::Engine& engine, const JobReport& job,
                                        const EfficiencyOptions& options, int64_t now_ms) {
  JobEfficiency e;
  e.start_ms = job.job.start_time_ms;
  e.end_ms = std::max(EndOf(job, now_ms), e.start_ms);
  e.gpus = job.gpus.size();
  e.gpu_hours = static_cast<double>(e.gpus) * static_cast<double>(e.end_ms - e.start_ms) / 3.6e6;
  e.price_per_gpu_hour = options.price_per_gpu_hour;
  e.currency = options.currency;
  e.final = job.job.ended && now_ms >= e.end_ms + options.settle_ms;
  const std::string gpus = GpuSelector(job);
  if (gpus.empty() || e.start_ms <= 0) return e;
  const Grid g = GridFor(e.start_ms, e.end_ms, options);
  e.step_ms = g.step;
  const std::string w = "[" + std::to_string(g.step) + "ms]";
  const std::string node = "node=" + PromQLString(job.node);
  auto over = [&](const char* metric, const char* scale) {
    return std::string(scale) + "avg_over_time(" + metric + gpus + w + ")";
  };
  VIGIL_ASSIGN_OR_RETURN(auto util,
                         Read(engine, g, over("DCGM_FI_DEV_GPU_UTIL", "0.01 * "), "gpu"));
  VIGIL_ASSIGN_OR_RETURN(auto sm, Read(engine, g, over("DCGM_FI_PROF_SM_ACTIVE", ""), "gpu"));
  VIGIL_ASSIGN_OR_RETURN(auto tensor,
                         Read(engine, g, over("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", ""), "gpu"));
  VIGIL_ASSIGN_OR_RETURN(
      auto idle_cpu,
      Read(engine, g, "1 - avg(rate(node_cpu_seconds_total{mode=\"idle\"," + node + "}" + w + "))",
           ""));
  VIGIL_ASSIGN_OR_RETURN(
      auto iowait,
      Read(engine, g, "avg(rate(node_cpu_seconds_total{mode=\"iowait\"," + node + "}" + w + "))",
           ""));
  // Communication over the network matters only between ranks; a NIC whose
  // speed the kernel does not report (virtual ones) is left out.
  const bool multi_rank = job.job.world_size > 1 || job.gpus.size() > 1;
  PerInterval network(static_cast<size_t>(g.n));
  if (multi_rank) {
    for (const char* dir : {"receive", "transmit"}) {
      VIGIL_ASSIGN_OR_RETURN(auto nic, Read(engine, g,
                                            std::string("max(rate(node_network_") + dir +
                                                "_bytes_total{" + node + ",device!=\"lo\"}" + w +
                                                ") / (node_network_speed_bytes{" + node + "} > 0))",
                                            ""));
      PerInterval one = NodeSeries(nic, g);
      for (size_t i = 0; i < one.size(); ++i) {
        if (one[i]) network[i] = std::max(network[i].value_or(0), *one[i]);
      }
    }
  }
  const PerInterval cpu = NodeSeries(idle_cpu, g), io = NodeSeries(iowait, g);
  EfficiencyShares sum;
  size_t measured = 0;
  Mean sm_mean, tensor_mean;
  for (const auto& [gpu, values] : util) {
    const PerInterval* gpu_sm = sm.count(gpu) ? &sm.at(gpu) : nullptr;
    const PerInterval* gpu_tensor = tensor.count(gpu) ? &tensor.at(gpu) : nullptr;
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i]) continue;
      IntervalEvidence ev{values[i], gpu_sm ? (*gpu_sm)[i] : std::nullopt, cpu[i], io[i],
                          network[i]};
      EfficiencyShares s = SplitInterval(ev, multi_rank, options.thresholds);
      sum.gpu_busy += s.gpu_busy;
      sum.input_bound += s.input_bound;
      sum.communication += s.communication;
      sum.idle += s.idle;
      ++measured;
      sm_mean.Add(ev.sm_active);
      if (gpu_tensor) tensor_mean.Add((*gpu_tensor)[i]);
    }
  }
  e.measured = std::min(
      1.0, static_cast<double>(measured) / static_cast<double>(static_cast<int64_t>(e.gpus) * g.n));
  e.sm_active = sm_mean.Get();
  e.tensor_active = tensor_mean.Get();
  if (measured == 0) return e;
  const double n = static_cast<double>(measured);
  e.shares =
      EfficiencyShares{sum.gpu_busy / n, sum.input_bound / n, sum.communication / n, sum.idle / n};
  e.idle_gpu_hours = e.shares->idle * e.gpu_hours;
  return e;
}

std::string EfficiencyLine(const JobEfficiency& e, bool zh) {
  if (!e.shares) return "";
  const EfficiencyShares& s = *e.shares;
  std::string line = (zh ? "GPU 忙碌 " : "GPU busy ") + Percent(s.gpu_busy);
  const char* sep = zh ? "，" : ", ";
  if (std::round(100 * s.input_bound) > 0) {
    line += sep + std::string(zh ? "等待输入 " : "input-bound ") + Percent(s.input_bound);
  }
  if (std::round(100 * s.communication) > 0) {
    line += sep + std::string(zh ? "通信 " : "communication ") + Percent(s.communication);
  }
  line += sep + std::string(zh ? "空闲 " : "idle ") + Percent(s.idle);
  // What the idle share cost, once it is worth a figure (a short run's
  // "0.00 GPU-h idle" says nothing).
  const double idle_h = e.idle_gpu_hours.value_or(0);
  if (idle_h >= 0.005) {
    std::string idle =
        zh ? "空闲 " + GpuHours(idle_h) + " GPU 小时" : GpuHours(idle_h) + " GPU-h idle";
    if (e.price_per_gpu_hour > 0) {
      idle += (zh ? "，约 " : ", about ") + Fmt("%.2f", idle_h * e.price_per_gpu_hour) + " " +
              e.currency;
    }
    line += (zh ? "（" : " (") + idle + (zh ? "）" : ")");
  }
  if (e.sm_active) {
    line += (zh ? "；SM 活跃 " : "; SM active ") + Percent(*e.sm_active);
    if (e.tensor_active) line += (zh ? "，Tensor " : ", tensor ") + Percent(*e.tensor_active);
  }
  return line;
}

void WriteEfficiencyJson(const JobEfficiency& e, JsonWriter* w) {
  auto number = [w](const std::optional<double>& v) {
    if (v) {
      w->Double(*v);
    } else {
      w->Null();
    }
  };
  w->BeginObject();
  w->Key("start_ms").Int(e.start_ms).Key("end_ms").Int(e.end_ms).Key("step_ms").Int(e.step_ms);
  w->Key("gpus").Uint(e.gpus).Key("gpu_hours").Double(e.gpu_hours);
  w->Key("measured").Double(e.measured);
  w->Key("shares");
  if (e.shares) {
    w->BeginObject().Key("gpu_busy").Double(e.shares->gpu_busy);
    w->Key("input_bound").Double(e.shares->input_bound);
    w->Key("communication").Double(e.shares->communication);
    w->Key("idle").Double(e.shares->idle).EndObject();
  } else {
    w->Null();
  }
  w->Key("idle_gpu_hours");
  number(e.idle_gpu_hours);
  w->Key("sm_active");
  number(e.sm_active);
  w->Key("tensor_active");
  number(e.tensor_active);
  w->Key("cost");
  if (e.price_per_gpu_hour > 0) {
    w->BeginObject().Key("price_per_gpu_hour").Double(e.price_per_gpu_hour);
    w->Key("currency").String(e.currency);
    w->Key("total").Double(e.gpu_hours * e.price_per_gpu_hour).Key("idle");
    number(e.idle_gpu_hours ? std::optional<double>(*e.idle_gpu_hours * e.price_per_gpu_hour)
                            : std::nullopt);
    w->EndObject();
  } else {
    w->Null();
  }
  w->Key("final").Bool(e.final);
  w->Key("summary").String(EfficiencyLine(e, false));
  w->Key("summary_zh").String(EfficiencyLine(e, true));
  w->EndObject();
}

EfficiencyReporter::EfficiencyReporter(const query::Engine* engine, EfficiencyOptions options)
    : engine_(engine), options_(std::move(options)) {}

Result<JobEfficiency> EfficiencyReporter::For(const JobReport& job, int64_t now_ms) {
  const std::string key = job.node + "/" + job.job.id;
  {
    std::lock_guard lock(mu_);
    if (auto it = final_.find(key); it != final_.end()) return it->second;
  }
  VIGIL_ASSIGN_OR_RETURN(JobEfficiency e, ComputeEfficiency(*engine_, job, options_, now_ms));
  if (e.final) {
    std::lock_guard lock(mu_);
    if (final_.size() >= kMaxCached) final_.clear();  // rare: recomputed on demand
    final_[key] = e;
  }
  return e;
}

}  // namespace vigil::diagnose

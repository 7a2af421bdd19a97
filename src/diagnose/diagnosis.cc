#include "diagnose/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "core/log.h"
#include "core/strings.h"
#include "parse/settings/job_settings.h"
#include "parse/training/log_events.h"
#include "query/parser.h"
#include "store/logs/log_store.h"

namespace vigil::diagnose {
namespace {

using parse::training::EventKind;

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

using query::PromQLString;
using wire::LabelValue;

// The node the signals look at: the alert's, else its job's.
std::string NodeOf(const AlertFacts& alert, const JobReport* job) {
  std::string node(LabelValue(alert.labels, "node"));
  if (node.empty() && job != nullptr) node = job->node;
  return node;
}

// The matcher of a job's training series: its run, else its name.
std::string RunMatcher(const JobReport& job) {
  return job.by_run ? "run=" + PromQLString(job.job.id) : "job=" + PromQLString(job.job.name);
}

void Add(std::vector<Signal>* out, std::string id, std::string en, std::string zh) {
  for (const Signal& s : *out) {
    if (s.id == id) return;  // the first evidence of a signal is kept
  }
  out->push_back({std::move(id), std::move(en), std::move(zh)});
}

// The GPUs the signals look at: the alert's own, else the job's.
std::vector<std::string> GpusOf(const AlertFacts& alert, const JobReport* job) {
  std::string_view gpu = LabelValue(alert.labels, "gpu");
  if (!gpu.empty()) return {std::string(gpu)};
  std::vector<std::string> out;
  if (job != nullptr) {
    for (const JobGpu& g : job->gpus) out.push_back(g.gpu);
  }
  return out;
}

// `gpu=~"0|3"` for the GPUs (each index escaped as a regex literal would
// need: indexes are digits, anything else is dropped).
std::string GpuMatcher(const std::vector<std::string>& gpus) {
  std::string alt;
  for (const std::string& g : gpus) {
    if (g.empty() || !std::all_of(g.begin(), g.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    if (!alt.empty()) alt += "|";
    alt += g;
  }
  return alt.empty() ? "" : ",gpu=~\"" + alt + "\"";
}

// Words of an input-data problem in a log template (a corrupt image, a bad
// record, a decode failure).
bool LooksLikeDataError(std::string_view text) {
  static constexpr std::string_view kWords[] = {
      "corrupt",     "cannot identify image", "UnicodeDecodeError", "truncated",
      "DecodeError", "invalid record",        "bad record",         "Premature end of JPEG"};
  for (std::string_view w : kWords) {
    if (text.find(w) != std::string_view::npos) return true;
  }
  return false;
}

const char* EventWord(EventKind kind) { return parse::training::EventKindName(kind); }

std::string EventText(const TimedEvent& e) {
  std::string text = std::string("log: ") + EventWord(e.event.kind);
  for (const auto& d : e.event.details) {
    if (d.key == "message" || d.key == "exception" || d.key == "error") {
      text += " (" + d.value + ")";
      break;
    }
  }
  return text;
}

// Fills a suggestion's `current` from the job's own setting of its
// parameter, and says where it was read.
void WithCurrent(const parse::settings::JobSettings& settings, Suggestion* s) {
  if (s->parameter.empty()) return;
  const parse::settings::JobSetting* set = settings.Find(s->parameter);
  if (set == nullptr) return;
  s->current = set->value;
  const std::string where = parse::settings::SettingProvenance(*set);
  s->text += " Now: " + where + ".";
  s->text_zh += " 当前：" + where + "。";
}

}  // namespace

Diagnoser::Diagnoser(DiagnoserSources sources, DiagnoserOptions options)
    : sources_(sources), options_(options) {}

std::vector<std::string> Diagnoser::FirstLogLines(const AlertFacts& alert,
                                                  const JobReport& job) const {
  std::vector<std::string> out;
  if (sources_.logs == nullptr || (!job.by_run && job.job.name.empty())) return out;
  using logstore::MatchType;
  logstore::LogQuery q;
  q.matchers = {job.by_run ? logstore::LabelMatcher{MatchType::kEqual, "run", job.job.id}
                           : logstore::LabelMatcher{MatchType::kEqual, "job", job.job.name},
                {MatchType::kEqual, "node", job.node}};
  // From a minute before the job was seen (its first lines may be older
  // than its discovery), not from the start of the store: by name, an
  // older run of the same name is no part of this one.
  q.start_ns = std::max<int64_t>(0, job.job.first_seen_ms - 60'000) * 1'000'000;
  q.end_ns = (alert.at_ms + options_.templates.late_ms) * 1'000'000;
  q.forward = true;
  q.limit = std::min(logstore::kMaxQueryLimit, options_.settings_log_records);
  auto r = sources_.logs->Query(q);
  if (!r.ok()) {
    Logf(LogLevel::kDebug, "diagnosis settings read: %s", r.status().ToString().c_str());
    return out;
  }
  size_t bytes = 0;
  for (const logstore::LogEntry& e : r->entries) {
    // A record the multiline stage joined (a dump printed as one block) is
    // read a physical line at a time, as the settings reader expects.
    for (std::string_view line : Split(e.line, '\n')) {
      if (bytes + line.size() > options_.settings_log_bytes) return out;
      bytes += line.size();
      out.emplace_back(line);
    }
  }
  return out;
}

// The job's settings as its node reported them: each process's command
// line (arguments joined by spaces: quoting is lost, plain flags and
// numbers read right), and what its trainer dumped in its log, which
// ranks first (the resolved values).
parse::settings::JobSettings Diagnoser::SettingsOf(const AlertFacts& alert,
                                                   const JobReport* job) const {
  if (job == nullptr) return {};
  parse::settings::JobSettingsInput in;
  for (const wire::JobProcessRecord& p : job->job.processes) {
    std::vector<std::string> argv;
    for (std::string_view w : Split(p.cmdline, ' ')) {
      if (!w.empty()) argv.emplace_back(w);
    }
    if (!argv.empty()) in.argv.push_back(std::move(argv));
  }
  in.log_lines = FirstLogLines(alert, *job);
  return parse::settings::ParseJobSettings(in);
}

std::optional<double> Diagnoser::Scalar(const std::string& promql, int64_t at_ms) const {
  if (sources_.query == nullptr) return std::nullopt;
  auto r = sources_.query->Instant(promql, at_ms);
  if (!r.ok()) {
    Logf(LogLevel::kDebug, "diagnosis query %s: %s", promql.c_str(), r.status().ToString().c_str());
    return std::nullopt;
  }
  std::optional<double> out;
  for (const query::ResultSeries& s : r->series) {
    for (const query::Point& p : s.points) {
      if (std::isfinite(p.v) && (!out || p.v > *out)) out = p.v;  // the worst of several
    }
  }
  return out;
}

void Diagnoser::AddMetricSignals(const AlertFacts& alert, const JobReport* job,
                                 std::vector<Signal>* out) const {
  const std::string node = NodeOf(alert, job);
  if (node.empty()) return;
  const std::string n = "node=" + PromQLString(node);
  const std::string w = "[" + std::to_string(options_.metric_window_ms) + "ms]";
  const int64_t t = alert.at_ms;
  // Shares of all CPU time, so that a window only partly covered by samples
  // (a node or a Vigil that started a minute ago) reads right: rate()
  // divides by the whole window, which the ratio cancels.
  const std::string all_cpu = "sum(rate(node_cpu_seconds_total{" + n + "}" + w + "))";
  auto cpu_share = [&](const char* mode) {
    return "100 * sum(rate(node_cpu_seconds_total{mode=\"" + std::string(mode) + "\"," + n + "}" +
           w + ")) / " + all_cpu;
  };
  if (auto idle = Scalar(cpu_share("idle"), t)) {
    const double busy = 100 - *idle;
    if (busy >= 90) {
      Add(out, "host_cpu_saturated", "host CPU " + Fmt("%.0f", busy) + "% busy",
          "主机 CPU 占用 " + Fmt("%.0f", busy) + "%");
    } else if (busy <= 30) {
      Add(out, "host_cpu_idle", "host CPU only " + Fmt("%.0f", busy) + "% busy",
          "主机 CPU 占用仅 " + Fmt("%.0f", busy) + "%");
    }
  }
  if (auto iowait = Scalar(cpu_share("iowait"), t); iowait && *iowait >= 20) {
    Add(out, "host_iowait_high",
        "CPU waiting on disk I/O " + Fmt("%.0f", *iowait) + "% of the time",
        "CPU 等待磁盘 I/O 的时间占 " + Fmt("%.0f", *iowait) + "%");
  }
  if (auto stall = Scalar("rate(node_pressure_io_stalled_seconds_total{" + n + "}" + w + ")", t);
      stall && *stall >= 0.2) {
    Add(out, "host_io_stall",
        "I/O pressure: tasks stalled " + Fmt("%.0f", *stall * 100) + "% of the time",
        "I/O 压力：任务停顿时间占 " + Fmt("%.0f", *stall * 100) + "%");
  }
  if (auto avail = Scalar(
          "100 * node_memory_MemAvailable_bytes{" + n + "} / node_memory_MemTotal_bytes{" + n + "}",
          t);
      avail && *avail <= 10) {
    Add(out, "host_memory_low", "host memory " + Fmt("%.1f", *avail) + "% available",
        "主机可用内存仅 " + Fmt("%.1f", *avail) + "%");
  }
  if (auto stall =
          Scalar("rate(node_pressure_memory_stalled_seconds_total{" + n + "}" + w + ")", t);
      stall && *stall >= 0.1) {
    Add(out, "host_memory_stall",
        "memory pressure: tasks stalled " + Fmt("%.0f", *stall * 100) + "% of the time",
        "内存压力：任务停顿时间占 " + Fmt("%.0f", *stall * 100) + "%");
  }
  const std::string g = GpuMatcher(GpusOf(alert, job));
  if (g.empty()) return;
  if (auto used = Scalar("100 * DCGM_FI_DEV_FB_USED{" + n + g + "} / (DCGM_FI_DEV_FB_USED{" + n +
                             g + "} + DCGM_FI_DEV_FB_FREE{" + n + g + "})",
                         t)) {
    if (*used >= 90) {
      Add(out, "gpu_memory_high", "GPU memory " + Fmt("%.0f", *used) + "% used",
          "显存已用 " + Fmt("%.0f", *used) + "%");
    } else if (*used <= 50) {
      Add(out, "gpu_memory_mostly_free", "GPU memory only " + Fmt("%.0f", *used) + "% used",
          "显存仅用 " + Fmt("%.0f", *used) + "%");
    }
  }
  // Host<->GPU copies: NVML's PCIe counters (KB/s over 20 ms windows, so
  // averaged over the window), both directions, on the busiest GPU.
  if (auto kbs =
          Scalar("max(avg_over_time(DCGM_FI_DEV_PCIE_TX_THROUGHPUT{" + n + g + "}" + w +
                     ") + avg_over_time(DCGM_FI_DEV_PCIE_RX_THROUGHPUT{" + n + g + "}" + w + "))",
                 t);
      kbs && *kbs >= options_.pcie_busy_kbs) {
    const std::string gbs = Fmt("%.1f", *kbs / 1e6);
    Add(out, "pcie_busy", "PCIe traffic to and from the GPU " + gbs + " GB/s",
        "GPU 的 PCIe 传输 " + gbs + " GB/s");
  }
  auto reason_active = [&](const char* reasons) {
    auto v = Scalar("max(vigil_gpu_clock_event_reason_active{" + n + g + ",reason=~\"" +
                        std::string(reasons) + "\"})",
                    t);
    return v && *v >= 1;
  };
  if (reason_active("hw_thermal_slowdown|sw_thermal_slowdown")) {
    Add(out, "gpu_thermal_throttle", "NVML reports thermal clock slowdown", "NVML 报告因温度降频");
  }
  if (reason_active("sw_power_cap|hw_power_brake_slowdown")) {
    Add(out, "gpu_power_throttle", "NVML reports power-cap clock slowdown",
        "NVML 报告因功耗上限降频");
  }
}

void Diagnoser::AddJobSignals(const AlertFacts& alert, const JobReport& job,
                              std::vector<Signal>* out) const {
  for (const TimedEvent& e : job.events) {
    if (e.time_ms < alert.at_ms - options_.event_window_ms) continue;
    if (e.time_ms > alert.at_ms + options_.templates.late_ms) continue;
    std::string kind = EventWord(e.event.kind);
    Add(out, "event:" + kind, EventText(e), "日志：" + kind);
  }
  if (job.verdict.state == JobState::kKilled &&
      job.verdict.reason_text.rfind("stopped by SIG", 0) == 0) {
    Add(out, "verdict:sigterm", job.verdict.reason_text,
        "被信号停止（调度器取消或抢占，或用户操作）");
  }
  if (job.verdict.state == JobState::kStalled) {
    Add(out, "verdict:stalled", "no training step for several step intervals",
        "多个步长间隔内没有训练进展");
  }
  if (job.job.world_size > 1) {
    Add(out, "multi_rank", std::to_string(job.job.world_size) + " ranks",
        std::to_string(job.job.world_size) + " 个进程组成员");
  }
  if (job.progress.last_step && *job.progress.last_step <= 10) {
    Add(out, "nan_early", "at step " + Fmt("%.0f", *job.progress.last_step) + " (the first steps)",
        "在第 " + Fmt("%.0f", *job.progress.last_step) + " 步（训练刚开始）");
  }
  // A learning rate that rose within the event window (warm-up, a schedule
  // restart, a resumed run with a larger value).
  const std::string sel = RunMatcher(job);
  const std::string w = "[" + std::to_string(options_.event_window_ms) + "ms]";
  auto hi = Scalar("max_over_time(training_learning_rate{" + sel + "}" + w + ")", alert.at_ms);
  auto lo = Scalar("min_over_time(training_learning_rate{" + sel + "}" + w + ")", alert.at_ms);
  if (hi && lo && *lo > 0 && *hi >= 1.5 * *lo) {
    Add(out, "lr_recently_raised",
        "learning rate rose from " + Fmt("%.3g", *lo) + " to " + Fmt("%.3g", *hi) +
            " shortly before",
        "学习率不久前从 " + Fmt("%.3g", *lo) + " 升到 " + Fmt("%.3g", *hi));
  }
}

void Diagnoser::AddLogSignals(const LogTemplateSummary& templates, std::vector<Signal>* out) const {
  for (const LogTemplate& t : templates.templates) {
    if (t.severity != TemplateSeverity::kInfo && t.text.find("NCCL") != std::string::npos) {
      Add(out, "log:nccl", "log: " + t.text.substr(0, 160), "日志：" + t.text.substr(0, 160));
    }
    if (LooksLikeDataError(t.text)) {
      Add(out, "log:data_error", "log: " + t.text.substr(0, 160), "日志：" + t.text.substr(0, 160));
    }
  }
}

Diagnosis Diagnoser::Diagnose(const AlertFacts& alert, const JobReport* job) const {
  Diagnosis d;
  Add(&d.signals, "alert:" + alert.rule, "alert " + alert.rule, "告警 " + alert.rule);
  AddMetricSignals(alert, job, &d.signals);
  if (job != nullptr) {
    AddJobSignals(alert, *job, &d.signals);
    if (sources_.logs != nullptr) {
      auto t = JobLogTemplates(*sources_.logs, *job, alert.at_ms, options_.templates);
      if (t.ok()) {
        d.templates = std::move(t).value();
        AddLogSignals(*d.templates, &d.signals);
      }
    }
    auto has = [&](std::initializer_list<std::string_view> ids) {
      return std::find_if(d.signals.begin(), d.signals.end(), [&](const Signal& s) {
        return std::find(ids.begin(), ids.end(), s.id) != ids.end();
      });
    };
    const auto none = d.signals.end();
    auto nccl = has({"log:nccl"});
    if (has({"verdict:stalled", "alert:job_stalled"}) != none && nccl != none) {
      Add(&d.signals, "stalled_with_nccl", "stalled while NCCL logs: " + nccl->evidence,
          "停滞且有 NCCL 日志");
    }
    // An NCCL error at a crash is the collective that failed (a rank that
    // died, the network), not the traceback PyTorch wraps it in; an NCCL
    // warning while the job runs (a slow socket) is not.
    auto error = has({"event:nccl_error"});
    if (alert.rule == "job_crashed" && error != none) {
      Add(&d.signals, "crashed_with_nccl_error", "crashed with an NCCL error: " + error->evidence,
          "因 NCCL 错误崩溃");
    }
  }
  d.causes = RankCauses(d.signals);
  d.suggestions = Suggest(d.causes.front(), alert, job);
  return d;
}

std::vector<Suggestion> Diagnoser::Suggest(const RankedCause& top, const AlertFacts& alert,
                                           const JobReport* job) const {
  const std::string& id = top.id;
  const parse::settings::JobSettings settings = SettingsOf(alert, job);
  const std::string node = NodeOf(alert, job);
  std::vector<Suggestion> out;
  if (id == "input_pipeline_cpu" && !node.empty()) {
    Suggestion s{
        "Raise the DataLoader's num_workers so that batches are ready when the GPU asks; "
        "check the value in the job's command line or config.",
        "调大 DataLoader 的 num_workers，让数据在 GPU "
        "需要时已准备好；请在作业的命令行或配置中查看当前值。",
        "num_workers", std::nullopt, std::nullopt};
    auto cores =
        Scalar("count(node_cpu_seconds_total{mode=\"idle\",node=" + PromQLString(node) + "})",
               alert.at_ms);
    auto gpus = Scalar("count(DCGM_FI_DEV_GPU_UTIL{node=" + PromQLString(node) + "})", alert.at_ms);
    if (cores && gpus && *gpus >= 1) {
      int per_gpu = std::max(1, static_cast<int>(*cores / *gpus) - 1);
      const std::string node_en = " This node has " + Fmt("%.0f", *cores) + " cores for " +
                                  Fmt("%.0f", *gpus) + " GPUs: up to " + std::to_string(per_gpu) +
                                  " workers per GPU process";
      const std::string node_zh = " 本节点 " + Fmt("%.0f", *cores) + " 核、" + Fmt("%.0f", *gpus) +
                                  " 块 GPU：每个 GPU 进程最多 " + std::to_string(per_gpu) +
                                  " 个 worker";
      auto now = settings.Number("num_workers");
      if (now && *now >= per_gpu) {
        // More workers than the cores can run only queue for the same CPU:
        // what helps is less CPU work per sample.
        s.text += node_en +
                  ", and the job already runs that many or more: more workers cannot help. Cut "
                  "the CPU work per sample (decode and resize once and cache the result, augment "
                  "on the GPU, e.g. NVIDIA DALI) or run on a node with more cores per GPU.";
        s.text_zh += node_zh +
                     "，作业已用到或超过此数：再加 worker 无济于事。请减少每个样本的 CPU "
                     "工作（解码和缩放一次并缓存结果，在 GPU 上做数据增强，如 NVIDIA DALI），"
                     "或换每块 GPU 核数更多的节点。";
      } else {
        s.suggested = std::to_string(per_gpu);
        s.text += node_en + ".";
        s.text_zh += node_zh + "。";
      }
    }
    out.push_back(std::move(s));
  } else if (id == "cuda_oom" || id == "gpu_memory_pressure") {
    Suggestion s{
        "Halve the per-GPU batch size and double gradient_accumulation_steps to keep "
        "the effective batch; or enable gradient checkpointing or bf16.",
        "把每卡 batch size 减半并把 gradient_accumulation_steps "
        "加倍以保持等效批大小；或开启梯度检查点或 bf16。",
        "batch_size", std::nullopt, std::nullopt};
    if (auto n = settings.Number("batch_size"); n && *n >= 2) s.suggested = Fmt("%.0f", *n / 2);
    out.push_back(std::move(s));
  } else if (id == "learning_rate_too_high") {
    Suggestion s{"Lower the learning rate (about a third), or lengthen its warm-up.",
                 "降低学习率（约为三分之一），或延长 warm-up。", "learning_rate", std::nullopt,
                 std::nullopt};
    if (auto set = settings.Number("learning_rate"); set && *set > 0) {
      s.suggested = Fmt("%.3g", *set / 3);  // `current` is the setting (WithCurrent)
    } else if (job != nullptr) {
      if (auto lr = Scalar("last_over_time(training_learning_rate{" + RunMatcher(*job) + "}[1h])",
                           alert.at_ms);
          lr && *lr > 0) {
        s.current = Fmt("%.3g", *lr);
        s.suggested = Fmt("%.3g", *lr / 3);
      }
    }
    out.push_back(std::move(s));
  } else if (id == "nccl_hang" || id == "communication_bound") {
    out.push_back(
        {"Run with NCCL_DEBUG=INFO (and TORCH_NCCL_ASYNC_ERROR_HANDLING=1) to see which "
         "rank and collective waits; compare the ranks' step times.",
         "设置 NCCL_DEBUG=INFO（以及 TORCH_NCCL_ASYNC_ERROR_HANDLING=1）运行，查看哪个 "
         "rank、哪个集合通信在等待；比较各 rank 的步时。",
         "NCCL_DEBUG", std::nullopt, std::string("INFO")});
  } else if (id == "host_oom_killed" || id == "host_memory_pressure") {
    out.push_back(
        {"Lower host memory use: fewer DataLoader workers or a smaller prefetch_factor; "
         "check for a dataset loaded whole into memory.",
         "降低主机内存占用：减少 DataLoader worker 或 "
         "prefetch_factor；检查是否把整个数据集读入了内存。",
         "num_workers", std::nullopt, std::nullopt});
  } else if (id == "thermal_throttle" || id == "power_throttle") {
    out.push_back(
        {"Check the GPU's cooling and power limit (nvidia-smi -q -d PERFORMANCE,POWER); "
         "the job itself needs no change.",
         "检查 GPU 散热与功耗上限（nvidia-smi -q -d PERFORMANCE,POWER）；作业本身无需改动。", "",
         std::nullopt, std::nullopt});
  } else if (id == "gpu_hardware_fault") {
    out.push_back(
        {"Move the job off this GPU; if the Xid repeats, drain the node and reset or "
         "replace the GPU.",
         "把作业移出这块 GPU；若 Xid 反复出现，下线该节点并重置或更换 GPU。", "", std::nullopt,
         std::nullopt});
  } else if (id == "environment_mismatch") {
    out.push_back(
        {"Install a framework build for this GPU and driver (vigil env doctor lists "
         "what matches).",
         "安装与本 GPU 和驱动匹配的框架版本（vigil env doctor 会列出匹配项）。", "", std::nullopt,
         std::nullopt});
  } else if (id == "preempted") {
    out.push_back(
        {"Resume from the last checkpoint; save checkpoints on SIGTERM so a preemption "
         "loses little.",
         "从最近的检查点恢复；在收到 SIGTERM 时保存检查点，减少被抢占的损失。", "", std::nullopt,
         std::nullopt});
  } else if (id == "code_error") {
    out.push_back(
        {"Fix the exception the traceback ends with, at its innermost frame in the "
         "job's own code (see the log excerpt).",
         "根据 traceback 最后的异常，在作业代码最内层的帧处修复（见日志摘录）。", "", std::nullopt,
         std::nullopt});
  } else if (id == "bad_input_data") {
    out.push_back(
        {"Check the first batches for NaN/Inf or corrupt records "
         "(torch.autograd.set_detect_anomaly(True) names the op).",
         "检查最初几个批次中的 NaN/Inf 或损坏样本（torch.autograd.set_detect_anomaly(True) "
         "可定位算子）。",
         "", std::nullopt, std::nullopt});
  } else if (id == "host_device_transfer") {
    out.push_back(
        {"Pin the host memory batches come from (DataLoader pin_memory=True) and copy with "
         ".to(device, non_blocking=True); keep per-step work on the GPU (no .cpu() or .item() "
         "on every step).",
         "让批数据来自锁页内存（DataLoader pin_memory=True），并用 .to(device, "
         "non_blocking=True) 拷贝；每步的计算留在 GPU 上（不要每步调用 .cpu() 或 .item()）。",
         "pin_memory", std::nullopt, std::string("True")});
  } else if (id == "batch_too_small") {
    out.push_back(
        {"Raise the per-GPU batch size while GPU memory allows (and scale the learning "
         "rate with it).",
         "在显存允许的范围内调大每卡 batch size（并相应调整学习率）。", "batch_size", std::nullopt,
         std::nullopt});
  } else if (id == "input_pipeline_io") {
    out.push_back(
        {"Read the data from local fast storage or cache it; raise num_workers and "
         "prefetch to hide the I/O.",
         "把数据放到本地高速存储或做缓存；调大 num_workers 与预取以掩盖 I/O。", "num_workers",
         std::nullopt, std::nullopt});
  }
  for (Suggestion& s : out) WithCurrent(settings, &s);
  return out;
}

std::string DiagnosisJson(const Diagnosis& d) {
  using nlohmann::json;
  json j = json::object();
  const RankedCause& top = d.causes.front();
  const CauseRule* rule = FindCauseRule(top.id);
  if (rule != nullptr) {
    std::string pct = Fmt("%.0f", top.confidence * 100);
    std::string ev = top.evidence.empty() ? "" : top.evidence.front().evidence;
    std::string ev_zh = top.evidence.empty() ? "" : top.evidence.front().evidence_zh;
    // The first needed signal is the most telling one (all_of comes first).
    for (const Signal& s : top.evidence) {
      if (s.id.rfind("alert:", 0) != 0) {
        ev = s.evidence;
        ev_zh = s.evidence_zh;
        break;
      }
    }
    j["summary"] = "Probable cause: " + std::string(rule->title) + " (" + pct + "%)" +
                   (ev.empty() ? "" : ": " + ev);
    j["summary_zh"] = "可能原因：" + std::string(rule->title_zh) + "（" + pct + "%）" +
                      (ev_zh.empty() ? "" : "：" + ev_zh);
  }
  json causes = json::array();
  for (const RankedCause& c : d.causes) {
    const CauseRule* r = FindCauseRule(c.id);
    json e = json::array();
    for (const Signal& s : c.evidence) {
      e.push_back({{"signal", s.id}, {"text", s.evidence}, {"text_zh", s.evidence_zh}});
    }
    causes.push_back({{"id", c.id},
                      {"title", r ? std::string(r->title) : "Unknown"},
                      {"title_zh", r ? std::string(r->title_zh) : "未知"},
                      {"confidence", std::round(c.confidence * 100) / 100},
                      {"evidence", std::move(e)},
                      {"source", r ? std::string(r->source) : ""}});
  }
  j["causes"] = std::move(causes);
  json suggestions = json::array();
  for (const Suggestion& s : d.suggestions) {
    suggestions.push_back({{"text", s.text},
                           {"text_zh", s.text_zh},
                           {"parameter", s.parameter},
                           {"current", s.current ? json(*s.current) : json(nullptr)},
                           {"suggested", s.suggested ? json(*s.suggested) : json(nullptr)}});
  }
  j["suggestions"] = std::move(suggestions);
  if (d.templates) {
    json t = LogTemplatesJson(*d.templates);
    for (auto& [k, v] : t.items()) j[k] = v;
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace vigil::diagnose

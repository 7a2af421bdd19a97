#include "alert/rules.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "core/strings.h"

namespace vigil::alert {
namespace {

constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;

// The trend rules' evaluation interval (Rule::eval_every_ms).
constexpr int64_t kTrendEvalMs = 15 * kSecond;

Level L(Severity s, double fire, double clear, int64_t for_ms, std::string expr = "") {
  return {s, fire, clear, for_ms, std::move(expr)};
}

// Slowdown temperatures of GPUs whose NVML reports none, from `nvidia-smi
// -q` outputs posted publicly (docs/alerts.md cites each); other GPUs that
// report none fall back to reference_default (90 °C: warn at 85, critical at
// 90, the usual community defaults).
std::map<std::string, double> SlowdownFallback() {
  return {
      {"Tesla P100-SXM2-16GB", 92},  // tensorflow/tensorflow#16947
  };
}

// Xids that mean the GPU or its node needs attention now (NVIDIA's Xid
// document: memory faults that need a reset, the bus, NVLink, the GSP); the
// others are usually the application's own fault (13, 31, 43) and warn.
constexpr const char* kCriticalXids =
    "48|54|62|64|74|79|92|94|95|119|120|140|143|144|145|146|147|148|149|150|157";

Rule GpuUnderutilized() {
  Rule r;
  r.id = "gpu_underutilized";
  r.source = RuleSource::kJob;
  r.job_check = JobCheck::kUnderutilized;
  r.comparison = Comparison::kBelow;
  r.levels = {L(Severity::kWarning, 80, 85, 15 * kMinute),
              L(Severity::kCritical, 10, 15, 10 * kMinute)};
  r.unit = "%";
  r.summary_en =
      "GPU {gpu} of job {job} on {node} is under-used: {value}% utilisation (under {threshold}% "
      "for {for})";
  r.summary_zh =
      "{node} 上任务 {job} 的 GPU {gpu} 利用率偏低：{value}%（持续 {for} 低于 {threshold}%）";
  return r;
}

Rule GpuIdleAllocated() {
  Rule r;
  r.id = "gpu_idle_allocated";
  // A process holds memory on the GPU (over 256 MiB: a CUDA context alone
  // takes ~300-500 MiB, so any real allocation) and it computes nothing.
  r.expr =
      "DCGM_FI_DEV_GPU_UTIL and on(node, gpu) "
      "(sum by (node, gpu) (vigil_gpu_process_memory_bytes) > 268435456)";
  r.comparison = Comparison::kBelow;
  r.levels = {L(Severity::kWarning, 1, 5, 10 * kMinute),
              L(Severity::kCritical, 1, 5, 60 * kMinute)};
  r.unit = "%";
  r.summary_en =
      "GPU {gpu} on {node} holds memory but computes nothing: {value}% utilisation for {for}";
  r.summary_zh = "{node} 上的 GPU {gpu} 占用显存但没有计算：利用率 {value}%，已持续 {for}";
  return r;
}

Rule IdleGpuCost() {
  Rule r;
  r.eval_every_ms = kTrendEvalMs;
  r.id = "idle_gpu_cost";
  // GPUs of one model on one node that computed nothing (under 5 % on
  // average over 30 minutes), allocated or not; the summary prices them
  // (alerts.price_per_gpu_hour). Warns past one idle GPU-hour per hour, so
  // one spare GPU alone does not; holds while any one stays idle.
  r.expr = "count by (node, modelName) (avg_over_time(DCGM_FI_DEV_GPU_UTIL[${30m}]) < 5)";
  r.levels = {L(Severity::kWarning, 1, 0, 60 * kMinute)};
  r.unit = "GPUs";
  r.priced = true;
  r.summary_en = "{value} × {modelName} idle on {node} for {for} ≈ {cost} (under 5% utilisation)";
  r.summary_zh = "{node} 上 {value} 块 {modelName} 已空闲 {for}，约 {cost}（利用率低于 5%）";
  return r;
}

Rule GpuMemoryNearFull() {
  Rule r;
  r.id = "gpu_memory_near_full";
  r.expr = "100 * DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)";
  r.levels = {L(Severity::kWarning, 90, 85, 1 * kMinute),
              L(Severity::kCritical, 97, 94, 30 * kSecond)};
  r.unit = "%";
  r.summary_en = "GPU {gpu} on {node} memory {value}% full (over {threshold}%): out-of-memory risk";
  r.summary_zh = "{node} 上的 GPU {gpu} 显存已用 {value}%（超过 {threshold}%）：有显存不足风险";
  return r;
}

Rule GpuMemoryGrowing() {
  Rule r;
  r.eval_every_ms = kTrendEvalMs;
  r.id = "gpu_memory_growing";
  // The value is the seconds until the memory is full at the rate it grew
  // over the last 10 minutes: where predict_linear(FB_USED[10m], t) reaches
  // FB_USED + FB_FREE, counted from the current value (free MiB over the
  // least-squares slope, MiB/s). Only while it grows step over step: it rose
  // in each third of those 10 minutes, as a leak does (a staircase too: the
  // caching allocator grows in chunks). A model loading (one ramp, then
  // flat) rises in two thirds at most unless it takes over 3m20s, and
  // constant memory (slope 0) has no value at all.
  r.expr =
      "DCGM_FI_DEV_FB_FREE / (deriv(DCGM_FI_DEV_FB_USED[${10m}]) > 0)"
      " and (deriv(DCGM_FI_DEV_FB_USED[${200s}]) > 0)"
      " and (deriv(DCGM_FI_DEV_FB_USED[${200s}] offset ${200s}) > 0)"
      " and (deriv(DCGM_FI_DEV_FB_USED[${200s}] offset ${400s}) > 0)";
  r.comparison = Comparison::kBelow;
  r.levels = {L(Severity::kWarning, 1800, 2700, 5 * kMinute),
              L(Severity::kCritical, 300, 600, 2 * kMinute)};
  r.unit = "s";
  r.summary_en =
      "GPU {gpu} on {node} will be out of memory in ~{value_duration}: its memory keeps growing";
  r.summary_zh = "{node} 上的 GPU {gpu} 显存持续增长：按当前速度约 {value_duration} 后耗尽";
  return r;
}

Rule GpuTemperatureHigh() {
  Rule r;
  r.id = "gpu_temperature_high";
  r.expr = "DCGM_FI_DEV_GPU_TEMP";
  // Thresholds relative to the GPU's own slowdown temperature.
  r.reference = "vigil_gpu_temp_slowdown_celsius > 0";
  r.reference_on = {"node", "gpu"};
  r.reference_label = "modelName";
  r.reference_fallback = SlowdownFallback();
  r.reference_default = 90;
  r.comparison = Comparison::kAtLeast;
  r.levels = {L(Severity::kWarning, -5, -8, 1 * kMinute),
              L(Severity::kCritical, 0, -3, 30 * kSecond)};
  r.unit = "°C";
  r.summary_en =
      "GPU {gpu} on {node} at {value} °C (alert at {threshold} °C; it slows down at {reference} "
      "°C)";
  r.summary_zh =
      "{node} 上的 GPU {gpu} 温度 {value} °C（告警阈值 {threshold} °C，降频温度 {reference} °C）";
  return r;
}

Rule GpuThrottled() {
  Rule r;
  r.id = "gpu_throttled";
  // Power capping under full load is normal; these reasons are not.
  r.expr =
      "max by (node, gpu, UUID, modelName, reason) (vigil_gpu_clock_event_reason_active{reason=~"
      "\"hw_slowdown|sw_thermal_slowdown|hw_thermal_slowdown|hw_power_brake_slowdown\"})";
  r.levels = {
      L(Severity::kWarning, 0, 0, 2 * kMinute),
      L(Severity::kCritical, 0, 0, 5 * kMinute,
        "max by (node, gpu, UUID, modelName, reason) (vigil_gpu_clock_event_reason_active{reason=~"
        "\"hw_slowdown|hw_thermal_slowdown|hw_power_brake_slowdown\"})")};
  r.summary_en = "GPU {gpu} on {node} is throttled ({reason}) for {for}";
  r.summary_zh = "{node} 上的 GPU {gpu} 正在降频（{reason}），已持续 {for}";
  return r;
}

Rule GpuEccErrors() {
  Rule r;
  // An hour of a counter per GPU, every second, was the engine's costliest
  // query; an ECC count is no reason to wake someone within the second (a
  // double-bit error also raises Xid 48, which gpu_xid sees at once).
  r.eval_every_ms = kTrendEvalMs;
  r.id = "gpu_ecc_errors";
  r.expr = "increase(DCGM_FI_DEV_ECC_SBE_VOL_TOTAL[${1h}])";
  r.levels = {L(Severity::kWarning, 10, 10, 0),
              L(Severity::kCritical, 0, 0, 0, "increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[${1h}])")};
  r.keep_firing_for_ms = 15 * kMinute;
  r.summary_en = "GPU {gpu} on {node}: {value} ECC errors in the last hour";
  r.summary_zh = "{node} 上的 GPU {gpu}：最近一小时 {value} 个 ECC 错误";
  return r;
}

// The Xids of the last 5 minutes, by code. The collector's counter of a code
// starts with its first event (at 1, or more when several came in one pass),
// so increase() alone never sees a GPU's first Xid of a code — the usual
// "Xid 79, then the GPU is gone": a series born in the window counts whole.
std::string NewXids(const std::string& matcher) {
  std::string s = "vigil_gpu_xid_errors_total{" + matcher + "}";
  return "(increase(" + s + "[${5m}]) > 0) or (" + s + " * 1 unless " + s + " offset ${5m})";
}

Rule GpuXid() {
  Rule r;
  r.id = "gpu_xid";
  r.expr = NewXids(std::string("xid!~\"") + kCriticalXids + "\"");
  r.levels = {
      L(Severity::kWarning, 0, 0, 0),
      L(Severity::kCritical, 0, 0, 0, NewXids(std::string("xid=~\"") + kCriticalXids + "\""))};
  r.keep_firing_for_ms = 15 * kMinute;
  r.summary_en = "GPU {gpu} on {node} reported Xid {xid}";
  r.summary_zh = "{node} 上的 GPU {gpu} 报告 Xid {xid}";
  return r;
}

Rule GpuLost() {
  Rule r;
  r.id = "gpu_lost";
  r.expr = "vigil_gpu_up";
  r.comparison = Comparison::kBelow;
  r.levels = {L(Severity::kCritical, 1, 1, 0)};
  r.summary_en = "GPU {gpu} on {node} does not answer (fallen off the bus or lost)";
  r.summary_zh = "{node} 上的 GPU {gpu} 无响应（已从总线掉线或丢失）";
  return r;
}

Rule GpuDriverUnresponsive() {
  Rule r;
  r.id = "gpu_driver_unresponsive";
  r.expr = "vigil_gpu_driver_responsive";
  r.comparison = Comparison::kBelow;
  r.levels = {L(Severity::kCritical, 1, 1, 30 * kSecond)};
  r.summary_en = "The NVIDIA driver on {node} does not answer (NVML calls hang)";
  r.summary_zh = "{node} 上的 NVIDIA 驱动无响应（NVML 调用卡住）";
  return r;
}

Rule JobRule(std::string id, JobCheck check, Severity s, std::string en, std::string zh,
             int64_t for_ms = 0) {
  Rule r;
  r.id = std::move(id);
  r.source = RuleSource::kJob;
  r.job_check = check;
  r.levels = {L(s, 0, 0, for_ms)};
  r.summary_en = std::move(en);
  r.summary_zh = std::move(zh);
  return r;
}

// The training series (docs/training-metrics.md) of one job run: labels job,
// run, node and the log stream's. Each rule compares a run with its own
// recent past, so no threshold depends on the model or the loss function.

Rule TrainingLossDiverging() {
  Rule r;
  r.eval_every_ms = kTrendEvalMs;
  r.id = "training_loss_diverging";
  // The loss of the last 5 minutes, on average, against its average over
  // the 15 minutes before: a normal noisy decreasing loss stays under 1 (the
  // averages take the noise out), a blow-up or a sustained rise goes over
  // (a rise to 1.5x holds past 1.3x for ~7 minutes before it is the new
  // baseline). A loss that is not positive has no ratio; a finished run's
  // series is gone.
  r.expr =
      "avg_over_time(training_loss[${5m}]) / "
      "(avg_over_time(training_loss[${15m}] offset ${5m}) > 0) and training_loss";
  r.levels = {L(Severity::kWarning, 1.3, 1.15, 5 * kMinute),
              L(Severity::kCritical, 2, 1.5, 2 * kMinute)};
  r.unit = "×";
  r.summary_en =
      "Job {job} on {node}: the loss is diverging, {value}× its recent average (over "
      "{threshold}× for {for})";
  r.summary_zh =
      "{node} 上任务 {job} 的 loss 正在发散：为近期平均值的 {value} 倍（超过 {threshold} 倍，持续 "
      "{for}）";
  return r;
}

Rule TrainingLossPlateau() {
  Rule r;
  r.eval_every_ms = kTrendEvalMs;
  r.id = "training_loss_plateau";
  // How much lower (%) the best loss of the last 30 minutes is than the best
  // of the 30 minutes before; a run needs an hour of loss to be judged.
  r.expr =
      "100 * (1 - min_over_time(training_loss[${30m}]) / "
      "(min_over_time(training_loss[${30m}] offset ${30m}) > 0)) and training_loss";
  r.comparison = Comparison::kBelow;
  r.levels = {L(Severity::kWarning, 0.5, 1, 30 * kMinute)};
  r.unit = "%";
  r.summary_en =
      "Job {job} on {node}: the loss has plateaued, its best improved {value}% (under "
      "{threshold}% for {for})";
  r.summary_zh =
      "{node} 上任务 {job} 的 loss 停滞：最佳 loss 仅改善 {value}%（持续 {for} 低于 {threshold}%）";
  return r;
}

Rule TrainingGradNormSpike() {
  Rule r;
  r.eval_every_ms = kTrendEvalMs;
  r.id = "training_grad_norm_spike";
  // The largest gradient norm of the last minute (a spike between two
  // evaluations still counts) against the median of the last 10 minutes,
  // which the spike itself does not move.
  r.expr =
      "max_over_time(training_grad_norm[${1m}]) / "
      "(quantile_over_time(0.5, training_grad_norm[${10m}]) > 0)";
  r.levels = {L(Severity::kWarning, 10, 5, 0), L(Severity::kCritical, 100, 50, 0)};
  r.keep_firing_for_ms = 5 * kMinute;
  r.unit = "×";
  r.summary_en =
      "Job {job} on {node}: the gradient norm spiked to {value}× its median (over {threshold}×)";
  r.summary_zh =
      "{node} 上任务 {job} 的梯度范数突增：为近期中位数的 {value} 倍（超过 {threshold} 倍）";
  return r;
}

// One throughput series as % of its own baseline, named by a `throughput`
// label (the functions drop the metric name, and the three must not merge).
std::string ThroughputRatio(const std::string& what) {
  const std::string m = "training_" + what;
  return "label_replace(100 * avg_over_time(" + m + "[${2m}]) / (quantile_over_time(0.9, " + m +
         "[${30m}]) > 0) and " + m + ", \"throughput\", \"" + what + "\", \"\", \"\")";
}

Rule TrainingThroughputDrop() {
  Rule r;
  r.eval_every_ms = kTrendEvalMs;
  r.id = "training_throughput_drop";
  // The last 2 minutes' average throughput against the run's own baseline,
  // the 90th percentile of the last 30 minutes (one fast outlier does not
  // raise it); only while the run reports it (the series is present).
  r.expr = ThroughputRatio("samples_per_second") + " or " + ThroughputRatio("tokens_per_second") +
           " or " + ThroughputRatio("iterations_per_second");
  r.comparison = Comparison::kBelow;
  r.levels = {L(Severity::kWarning, 50, 60, 5 * kMinute),
              L(Severity::kCritical, 20, 30, 5 * kMinute)};
  r.unit = "%";
  r.summary_en =
      "Job {job} on {node}: {throughput} dropped to {value}% of its recent level (under "
      "{threshold}% for {for})";
  r.summary_zh =
      "{node} 上任务 {job} 的吞吐量（{throughput}）降至近期水平的 {value}%（持续 {for} 低于 "
      "{threshold}%）";
  return r;
}

Rule JobStragglerRank() {
  Rule r;
  r.id = "job_straggler_rank";
  // No per-rank series exist (no `rank` label on training_*), so this is a
  // job rule: the utilisation of each GPU of a running job on two or more
  // GPUs of a node, as % of the job's median. A rank starved by its input
  // pipeline, its CPU or a hang idles its GPU while the others wait in NCCL
  // (which counts as busy). A rank slowed by its own GPU (throttled) keeps
  // its GPU busy and shows in gpu_throttled instead.
  r.source = RuleSource::kJob;
  r.job_check = JobCheck::kStraggler;
  r.comparison = Comparison::kBelow;
  r.levels = {L(Severity::kWarning, 50, 70, 5 * kMinute),
              L(Severity::kCritical, 20, 30, 10 * kMinute)};
  r.unit = "%";
  r.summary_en =
      "GPU {gpu} of job {job} on {node} lags the job's other GPUs: {value}% of their median "
      "utilisation ({median}%) for {for}";
  r.summary_zh =
      "{node} 上任务 {job} 的 GPU {gpu} 落后于其他 GPU：利用率为中位数（{median}%）的 "
      "{value}%，已持续 "
      "{for}";
  return r;
}

// The loss a job run's log printed last is NaN or infinite (the
// extractor stores them as they are): NaN != NaN, and +-Inf is past any
// number. Resolves when a finite loss follows or the run's series end.
Rule TrainingLossNan() {
  Rule r;
  r.id = "training_loss_nan";
  r.expr =
      "count by (node, job, run) (training_loss != training_loss or training_loss == +Inf or "
      "training_loss == -Inf)";
  r.levels = {L(Severity::kCritical, 0, 0, 0)};
  r.summary_en = "Job {job} on {node}: the loss is NaN or infinite";
  r.summary_zh = "{node} 上的任务 {job}：loss 变为 NaN 或无穷大";
  return r;
}

Rule HostMemoryNearFull() {
  Rule r;
  r.id = "host_memory_near_full";
  r.expr = "100 * (1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes)";
  r.levels = {L(Severity::kWarning, 90, 85, 2 * kMinute),
              L(Severity::kCritical, 97, 94, 30 * kSecond)};
  r.unit = "%";
  r.summary_en = "Host memory on {node} {value}% used (over {threshold}%): the OOM killer is near";
  r.summary_zh = "{node} 主机内存已用 {value}%（超过 {threshold}%）：可能触发 OOM killer";
  return r;
}

Rule DiskNearFull() {
  Rule r;
  r.id = "disk_near_full";
  r.expr =
      "100 * (1 - node_filesystem_avail_bytes{fstype!~\"tmpfs|devtmpfs|overlay|squashfs\"} / "
      "node_filesystem_size_bytes{fstype!~\"tmpfs|devtmpfs|overlay|squashfs\"})";
  r.levels = {L(Severity::kWarning, 90, 88, 5 * kMinute),
              L(Severity::kCritical, 97, 95, 1 * kMinute)};
  r.unit = "%";
  r.summary_en =
      "Filesystem {mountpoint} on {node} {value}% full (over {threshold}%): checkpoints may fail";
  r.summary_zh =
      "{node} 上的文件系统 {mountpoint} 已用 {value}%（超过 {threshold}%）：检查点可能写入失败";
  return r;
}

Rule NodeDown() {
  Rule r;
  r.id = "node_down";
  r.source = RuleSource::kNode;
  // The value is the seconds since the node last reported; agents report
  // every 2-5 s.
  r.levels = {L(Severity::kCritical, 30, 15, 0)};
  r.unit = "s";
  r.summary_en = "Node {node} has not reported for {value} s";
  r.summary_zh = "节点 {node} 已 {value} 秒没有上报";
  return r;
}

// A channel that refuses what it is sent: its own alerts cannot reach it,
// so this one goes through the others (dispatch.h). The value is the count
// of its notifications still waiting or given up on.
Rule NotificationChannelFailing() {
  Rule r;
  r.id = "notification_channel_failing";
  r.source = RuleSource::kDelivery;
  r.eval_every_ms = 5 * kSecond;
  r.levels = {L(Severity::kWarning, 0, 0, 1 * kMinute)};
  r.summary_en =
      "Notification channel {channel} is failing: {value} notifications not delivered (its last "
      "answer: {answer})";
  r.summary_zh = "通知通道 {channel} 发送失败：{value} 条通知未送达（最近的回复：{answer}）";
  return r;
}

// What to do, per preset (docs/alerts.md's last column, shortened).
const std::map<std::string, std::pair<std::string, std::string>>& PresetSteps() {
  static const auto* steps = new std::map<std::string, std::pair<std::string, std::string>>{
      {"gpu_underutilized",
       {"Check the job's DataLoader (num_workers, pin_memory), the host's CPU and disk reads; use "
        "a larger batch if memory allows.",
        "检查任务的 DataLoader（num_workers、pin_memory）、主机 CPU 和磁盘读取；显存允许时增大 "
        "batch。"}},
      {"gpu_idle_allocated",
       {"Find the process holding the GPU (`vigil jobs`, the GPU card) and end it or release its "
        "memory.",
        "找到占用该 GPU 的进程（`vigil jobs`、GPU 卡片），结束它或释放其显存。"}},
      {"idle_gpu_cost",
       {"Release the allocation (end the job or notebook holding it) or give the GPUs work.",
        "释放这些 GPU（结束占用它们的任务或 notebook），或让它们开始工作。"}},
      {"gpu_memory_near_full",
       {"Lower the batch size, use gradient checkpointing or mixed precision; look for tensors "
        "kept across steps.",
        "减小 batch，使用梯度检查点或混合精度；检查是否有张量跨 step 被保留。"}},
      {"gpu_memory_growing",
       {"Look for what grows each step (tensors kept in lists, logged values without .item()); "
        "save a checkpoint now if it cannot be fixed while it runs.",
        "查找每个 step 都在增长的内容（保存在列表里的张量、未调用 .item() "
        "的日志值）；若无法在运行中修复，立即保存 checkpoint。"}},
      {"gpu_temperature_high",
       {"Check the fan, airflow and slot; compare with the node's other GPUs.",
        "检查风扇、风道和插槽；与本节点其他 GPU 对比。"}},
      {"gpu_throttled",
       {"Thermal: improve cooling; power brake: check the PSU or the chassis' power signal.",
        "温度降频：改善散热；电源制动：检查电源或机箱的功率信号。"}},
      {"gpu_ecc_errors",
       {"Drain the GPU; reset it to retire pages or remap rows; RMA it if the errors recur.",
        "停止向该 GPU 调度任务；重置 GPU 以退役页面或重映射行；若反复出现则返修。"}},
      {"gpu_xid",
       {"Follow the action for this Xid code (the alert's xid label); check `dmesg`.",
        "按该 Xid 代码（告警的 xid 标签）对应的处理办法操作；查看 `dmesg`。"}},
      {"gpu_lost",
       {"Drain the node; reset the GPU or reboot; check the PCIe slot and power.",
        "停止向该节点调度任务；重置 GPU 或重启；检查 PCIe 插槽和供电。"}},
      {"gpu_driver_unresponsive",
       {"Check `dmesg` for Xid errors, then reset the GPU or reboot.",
        "查看 `dmesg` 中的 Xid 错误，然后重置 GPU 或重启。"}},
      {"training_loss_nan",
       {"Lower the learning rate, check the data for bad samples, use gradient clipping and loss "
        "scaling.",
        "降低学习率，检查数据中的坏样本，使用梯度裁剪和 loss scaling。"}},
      {"training_loss_diverging",
       {"Roll back to the last good checkpoint; lower the learning rate or tighten gradient "
        "clipping, and skip the bad data.",
        "回滚到最近一个正常的 checkpoint；降低学习率或收紧梯度裁剪，并跳过有问题的数据。"}},
      {"training_loss_plateau",
       {"Decide whether the run has converged (stop it) or is stuck (check the learning-rate "
        "schedule, repeated data, frozen layers).",
        "判断训练是已收敛（可以停止）还是卡住（检查学习率调度、重复的数据、被冻结的层）。"}},
      {"training_grad_norm_spike",
       {"Check the batch at that step; make sure gradient clipping is on; if spikes repeat, lower "
        "the learning rate.",
        "检查该 step 的 batch；确认已开启梯度裁剪；若反复出现，降低学习率。"}},
      {"training_throughput_drop",
       {"Look at the job's GPUs for the same minutes (utilisation, clocks, temperature, Xid), then "
        "the node's CPU, I/O wait and network.",
        "查看同一时段任务 GPU 的利用率、频率、温度和 Xid，再查看节点的 CPU、I/O 等待和网络。"}},
      {"job_crashed",
       {"Read the exception and where it was raised on the job's page (its logs link); fix it and "
        "resume from the last checkpoint.",
        "在任务页面（日志链接）查看异常及其抛出位置；修复后从最近的 checkpoint 恢复。"}},
      {"job_finished", {"", ""}},
      {"job_stalled",
       {"Look at the job's last log lines; NCCL watchdog lines point at a hang; `py-spy dump` "
        "shows where it waits.",
        "查看任务最后的日志；NCCL watchdog 日志说明发生了挂起；`py-spy dump` 可显示卡在哪里。"}},
      {"job_straggler_rank",
       {"Find the rank on that GPU (`vigil jobs`); check its data loader workers, CPU affinity and "
        "whether it hangs.",
        "找到该 GPU 上的 rank（`vigil jobs`）；检查其数据加载进程、CPU 亲和性以及是否挂起。"}},
      {"host_memory_near_full",
       {"Use fewer DataLoader workers or a smaller prefetch, and check for a leak.",
        "减少 DataLoader worker 或预取数量，并检查是否有内存泄漏。"}},
      {"disk_near_full",
       {"Delete old checkpoints or move outputs to a larger volume.",
        "删除旧的 checkpoint，或将输出移到更大的磁盘。"}},
      {"node_down",
       {"Check the machine, its network and `vigil agent` on it.",
        "检查该机器、其网络以及其上的 `vigil agent`。"}},
      {"notification_channel_failing",
       {"Check the channel's URL and secret and the answer above; `vigil notify test CHANNEL` "
        "tries it at once.",
        "检查该通道的 URL、密钥以及上面的回复；`vigil notify test 通道名` 可立即测试。"}},
  };
  return *steps;
}

std::vector<Rule> WithSteps(std::vector<Rule> rules) {
  for (Rule& r : rules) {
    if (auto it = PresetSteps().find(r.id); it != PresetSteps().end()) {
      std::tie(r.steps_en, r.steps_zh) = it->second;
    }
  }
  return rules;
}

}  // namespace

std::vector<Rule> Presets() {
  return WithSteps({
      GpuUnderutilized(),
      GpuIdleAllocated(),
      IdleGpuCost(),
      GpuMemoryNearFull(),
      GpuMemoryGrowing(),
      GpuTemperatureHigh(),
      GpuThrottled(),
      GpuEccErrors(),
      GpuXid(),
      GpuLost(),
      GpuDriverUnresponsive(),
      TrainingLossNan(),
      TrainingLossDiverging(),
      TrainingLossPlateau(),
      TrainingGradNormSpike(),
      TrainingThroughputDrop(),
      JobRule("job_crashed", JobCheck::kCrashed, Severity::kCritical,
              "Job {job} on {node} crashed: {reason}", "{node} 上的任务 {job} 崩溃：{reason}"),
      JobRule("job_finished", JobCheck::kFinished, Severity::kInfo,
              "Job {job} on {node} finished: {reason}", "{node} 上的任务 {job} 已结束：{reason}"),
      JobRule("job_stalled", JobCheck::kStalled, Severity::kWarning,
              "Job {job} on {node} makes no progress: no new step for {value} s",
              "{node} 上的任务 {job} 没有进展：{value} 秒没有新的 step"),
      JobStragglerRank(),
      HostMemoryNearFull(),
      DiskNearFull(),
      NodeDown(),
      NotificationChannelFailing(),
  });
}

const char* ComparisonText(Comparison comparison) {
  switch (comparison) {
    case Comparison::kAbove:
      return ">";
    case Comparison::kBelow:
      return "<";
    case Comparison::kAtLeast:
      return ">=";
  }
  return ">";
}

namespace {

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  return buf;
}

const char* JobCheckText(JobCheck check) {
  switch (check) {
    case JobCheck::kCrashed:
      return "job report: crashed or killed";
    case JobCheck::kFinished:
      return "job report: completed, or exited with status 0";
    case JobCheck::kStalled:
      return "job report: stalled (no step progress for 5 step intervals, at least 1 minute)";
    case JobCheck::kUnderutilized:
      return "job report: a GPU of a running job, avg_over_time(DCGM_FI_DEV_GPU_UTIL[1m])";
    case JobCheck::kStraggler:
      return "job report: a GPU of a running job on 2+ GPUs whose median is 20 % or more, "
             "avg_over_time(DCGM_FI_DEV_GPU_UTIL[1m]) as % of that median";
  }
  return "job report";
}

}  // namespace

std::string LevelCondition(const Rule& rule, const Level& level) {
  const char* op = ComparisonText(rule.comparison);
  switch (rule.source) {
    case RuleSource::kJob:
      if (rule.job_check == JobCheck::kUnderutilized || rule.job_check == JobCheck::kStraggler) {
        return std::string(JobCheckText(rule.job_check)) + " " + op + " " + Number(level.fire);
      }
      return JobCheckText(rule.job_check);
    case RuleSource::kNode:
      return std::string("node report: seconds since the last one ") + op + " " +
             Number(level.fire);
    case RuleSource::kDelivery:
      return std::string(
                 "delivery log: a channel whose newest attempt was refused, its "
                 "notifications waiting or failed ") +
             op + " " + Number(level.fire);
    case RuleSource::kQuery:
      break;
  }
  std::string expr = level.expr.empty() ? rule.expr : level.expr;
  if (rule.reference.empty()) return expr + " " + op + " " + Number(level.fire);
  std::string on;
  for (const std::string& l : rule.reference_on) on += (on.empty() ? "" : ", ") + l;
  return expr + " " + op + " on(" + on + ") group_left() (" + rule.reference + ") " +
         (level.fire < 0 ? "- " + Number(-level.fire) : "+ " + Number(level.fire));
}

std::string ExpandPlaceholders(const std::string& text,
                               const std::function<std::string(const std::string&)>& fill) {
  std::string out;
  out.reserve(text.size() + 32);
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find('{', i);
    size_t close = open == std::string::npos ? open : text.find('}', open);
    if (close == std::string::npos) break;
    out.append(text, i, open - i);
    out += fill(text.substr(open + 1, close - open - 1));
    i = close + 1;
  }
  out.append(text, i, std::string::npos);
  return out;
}

std::optional<int64_t> ParseDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start || i - start > 12) return std::nullopt;
    int64_t n = *ParseInt64(text.substr(start, i - start));
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    int64_t ms;
    if (unit == "ms")
      ms = 1;
    else if (unit == "s")
      ms = kSecond;
    else if (unit == "m")
      ms = kMinute;
    else if (unit == "h")
      ms = 60 * kMinute;
    else if (unit == "d")
      ms = 24 * 60 * kMinute;
    else
      return std::nullopt;
    total += n * ms;
  }
  return total;
}

std::string FormatDuration(int64_t ms) {
  if (ms <= 0) return "0s";
  static constexpr std::pair<int64_t, const char*> kUnits[] = {
      {24 * 60 * kMinute, "d"}, {60 * kMinute, "h"}, {kMinute, "m"}, {kSecond, "s"}, {1, "ms"}};
  std::string out;
  for (const auto& [unit, name] : kUnits) {
    if (ms >= unit) {
      out += std::to_string(ms / unit) + name;
      ms %= unit;
    }
  }
  return out;
}

Result<std::string> ScaleDurations(const std::string& expr, double scale) {
  std::string out;
  size_t i = 0;
  while (i < expr.size()) {
    size_t open = expr.find("${", i);
    if (open == std::string::npos) break;
    size_t close = expr.find('}', open);
    if (close == std::string::npos) return InvalidArgument("unclosed ${ in " + expr);
    auto ms = ParseDuration(std::string_view(expr).substr(open + 2, close - open - 2));
    if (!ms) return InvalidArgument("bad duration in " + expr);
    out += expr.substr(i, open - i);
    out +=
        std::to_string(std::max<int64_t>(1, std::llround(static_cast<double>(*ms) * scale))) + "ms";
    i = close + 1;
  }
  out += expr.substr(i);
  return out;
}

bool ScopeMatches(std::string_view pattern, std::string_view text) {
  if (pattern.empty()) return true;
  // Greedy glob with backtracking to the last '*': linear in practice.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

bool InScope(const Scope& scope, const SeriesScope& series) {
  auto one = [](const std::string& pattern, std::string_view value) {
    return pattern.empty() || (!value.empty() && ScopeMatches(pattern, value));
  };
  return one(scope.node, series.node) && one(scope.job, series.job) &&
         one(scope.gpu_model, series.gpu_model);
}

// The level's firing threshold set to `fire`, the clear one at its distance.
void SetThreshold(Level* level, double fire) {
  double gap = level->clear - level->fire;
  level->fire = fire;
  level->clear = fire + gap;
}

}  // namespace

const Level* LevelFor(const Rule& rule, const Level& level, const SeriesScope& scope,
                      double* reference, Level* scratch) {
  const Level* out = &level;
  for (const ScopedOverride& o : rule.overrides) {
    if (!InScope(o.scope, scope)) continue;
    if (o.set.enabled) {
      if (!*o.set.enabled) return nullptr;
    }
    if (out != scratch) {
      *scratch = level;
      out = scratch;
    }
    if (o.set.for_ms) scratch->for_ms = *o.set.for_ms;
    std::optional<double> fire =
        level.severity == Severity::kCritical ? o.set.critical : o.set.warning;
    if (fire) {
      if (*reference != 0) {
        // From an offset to an absolute value: the offset's distances stay.
        scratch->fire += *reference;
        scratch->clear += *reference;
        *reference = 0;
      }
      SetThreshold(scratch, *fire);
    }
  }
  return out;
}

Result<std::vector<Rule>> EffectiveRules(const AlertsConfig& config) {
  std::vector<Rule> rules = Presets();
  std::set<std::string> known;
  for (const Rule& r : rules) known.insert(r.id);
  for (const auto& [id, o] : config.rules) {
    if (known.count(id) == 0) return InvalidArgument("alerts.rules: unknown rule \"" + id + "\"");
  }
  auto scaled = [&](int64_t ms) {
    return ms <= 0
               ? ms
               : std::max<int64_t>(1, std::llround(static_cast<double>(ms) * config.time_scale));
  };
  for (Rule& r : rules) {
    auto o = config.rules.find(r.id);
    if (o != config.rules.end() && !r.reference.empty() &&
        (o->second.warning || o->second.critical)) {
      // An absolute threshold replaces the reference-relative ones: a level
      // not overridden keeps its offset from the default reference.
      for (Level& level : r.levels) {
        level.fire += r.reference_default;
        level.clear += r.reference_default;
      }
      r.reference.clear();
      r.reference_fallback.clear();
    }
    for (Level& level : r.levels) {
      if (o != config.rules.end()) {
        const RuleOverride& ov = o->second;
        if (ov.for_ms) level.for_ms = *ov.for_ms;
        std::optional<double> fire =
            level.severity == Severity::kCritical ? ov.critical : ov.warning;
        if (fire) SetThreshold(&level, *fire);  // the clear one keeps its distance
      }
      level.for_ms = scaled(level.for_ms);
      if (!level.expr.empty()) {
        auto e = ScaleDurations(level.expr, config.time_scale);
        if (!e.ok()) return e.status();
        level.expr = *e;
      }
    }
    if (o != config.rules.end()) {
      if (o->second.enabled) r.enabled = *o->second.enabled;
      r.overrides = o->second.overrides;
      for (ScopedOverride& so : r.overrides) {
        if (so.set.for_ms) so.set.for_ms = scaled(*so.set.for_ms);
      }
    }
    if (r.priced) {
      r.price_per_gpu_hour = config.price_per_gpu_hour;
      r.currency = config.currency;
    }
    r.keep_firing_for_ms = scaled(r.keep_firing_for_ms);
    if (r.eval_every_ms > 0) {
      r.eval_every_ms = std::max(scaled(r.eval_every_ms), config.eval_interval_ms);
    }
    auto e = ScaleDurations(r.expr, config.time_scale);
    if (!e.ok()) return e.status();
    r.expr = *e;
  }
  return rules;
}

}  // namespace vigil::alert

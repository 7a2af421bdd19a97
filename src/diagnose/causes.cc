#include "diagnose/causes.h"

#include <algorithm>
#include <set>

namespace vigil::diagnose {
namespace {

// A GPU that does less than it could: the alerts whose cause is the pipeline
// feeding it, its clocks or the collectives it waits on.
const std::vector<std::string_view> kUnderUsed = {
    "alert:gpu_underutilized", "alert:training_throughput_drop", "alert:job_straggler_rank"};

std::vector<CauseRule> MakeRules() {
  return {
      {"cuda_oom",
       "CUDA out of memory",
       "显存不足 (CUDA OOM)",
       {},
       {"event:cuda_oom"},
       {{"gpu_memory_high", 1}, {"alert:gpu_memory_near_full", 1}, {"alert:gpu_memory_growing", 1}},
       0.95,
       "https://pytorch.org/docs/stable/notes/cuda.html#memory-management"},
      {"host_oom_killed",
       "Killed by the kernel's OOM killer",
       "被内核 OOM killer 杀死",
       {},
       {"event:oom_killed"},
       {{"host_memory_low", 1}, {"host_memory_stall", 1}},
       0.95,
       "https://www.kernel.org/doc/gorman/html/understand/understand016.html"},
      {"gpu_hardware_fault",
       "GPU hardware or driver fault",
       "GPU 硬件或驱动故障",
       {},
       {"event:xid", "alert:gpu_xid", "alert:gpu_ecc_errors", "alert:gpu_lost",
        "alert:gpu_driver_unresponsive"},
       {{"event:cuda_error", 1}},
       0.9,
       "https://docs.nvidia.com/deploy/xid-errors/index.html"},
      {"environment_mismatch",
       "Driver, CUDA or library mismatch",
       "驱动、CUDA 或库版本不匹配",
       {},
       {"event:no_kernel_image", "event:driver_too_old"},
       {},
       0.9,
       "https://docs.nvidia.com/deploy/cuda-compatibility/index.html"},
      {"nccl_hang",
       "A collective (NCCL) hung or failed",
       "集合通信 (NCCL) 卡住或失败",
       {},
       {"event:nccl_timeout", "stalled_with_nccl", "crashed_with_nccl_error"},
       {{"multi_rank", 1}, {"log:nccl", 1}},
       0.85,
       "https://pytorch.org/docs/stable/distributed.html#debugging-torch-distributed-applications"},
      {"preempted",
       "Stopped by a scheduler (SIGTERM)",
       "被调度器停止 (SIGTERM)",
       {},
       {"verdict:sigterm"},
       {},
       0.85,
       "https://slurm.schedmd.com/scancel.html"},
      {"bad_input_data",
       "Bad input data",
       "输入数据有问题",
       {"nan_early"},
       {"event:nan_loss", "alert:training_loss_nan"},
       {{"log:data_error", 1}},
       0.7,
       "https://pytorch.org/docs/stable/autograd.html#anomaly-detection"},
      {"learning_rate_too_high",
       "Learning rate too high",
       "学习率过高",
       {},
       {"event:nan_loss", "alert:training_loss_nan", "alert:training_loss_diverging",
        "alert:training_grad_norm_spike", "event:loss_overflow"},
       {{"lr_recently_raised", 2}, {"alert:training_grad_norm_spike", 1}},
       0.65,
       "https://github.com/google-research/tuning_playbook",
       {"nan_early"}},
      {"gpu_memory_pressure",
       "GPU memory nearly full",
       "显存接近用满",
       {"gpu_memory_high"},
       {"alert:gpu_memory_near_full", "alert:gpu_memory_growing"},
       {},
       0.8,
       "https://pytorch.org/docs/stable/notes/cuda.html#memory-management"},
      {"thermal_throttle",
       "GPU clocks cut for heat",
       "GPU 因过热降频",
       {"gpu_thermal_throttle"},
       {"alert:gpu_temperature_high", "alert:gpu_throttled", "alert:gpu_underutilized",
        "alert:training_throughput_drop", "alert:job_straggler_rank"},
       {},
       0.8,
       "https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html"},
      {"power_throttle",
       "GPU clocks cut for power",
       "GPU 因功耗限制降频",
       {"gpu_power_throttle"},
       {"alert:gpu_throttled", "alert:gpu_underutilized", "alert:training_throughput_drop",
        "alert:job_straggler_rank"},
       {},
       0.75,
       "https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html"},
      {"input_pipeline_cpu",
       "Input pipeline bound by the CPU",
       "数据加载受 CPU 限制",
       {"host_cpu_saturated"},
       kUnderUsed,
       {{"gpu_memory_mostly_free", 1}},
       0.75,
       "https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html"},
      {"input_pipeline_io",
       "Input pipeline bound by disk I/O",
       "数据加载受磁盘 I/O 限制",
       {"host_iowait_high"},
       kUnderUsed,
       {{"host_io_stall", 1}},
       0.7,
       "https://www.tensorflow.org/guide/data_performance"},
      {"communication_bound",
       "Waiting on communication",
       "通信瓶颈",
       {"multi_rank"},
       kUnderUsed,
       {{"log:nccl", 1}},
       // NCCL's own warnings in the job's log outrank a busy host CPU, which
       // may be another job's: 0.65 against input_pipeline_cpu's 0.5625
       // (0.75 when the GPU's memory is mostly free too).
       0.65,
       "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"},
      {"host_device_transfer",
       "Host-to-GPU copies",
       "主机到 GPU 的数据拷贝",
       {"pcie_busy"},
       kUnderUsed,
       {},
       0.6,
       "https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html"},
      {"batch_too_small",
       "Batch too small for the GPU",
       "批大小对 GPU 来说太小",
       {"gpu_memory_mostly_free", "host_cpu_idle"},
       {"alert:gpu_underutilized"},
       {},
       0.5,
       "https://docs.nvidia.com/deeplearning/performance/dl-performance-getting-started/"
       "index.html"},
      {"host_memory_pressure",
       "Host memory pressure",
       "主机内存压力",
       {"host_memory_low"},
       {},
       {{"host_memory_stall", 1}, {"alert:host_memory_near_full", 1}},
       0.6,
       "https://docs.kernel.org/accounting/psi.html"},
      {"code_error",
       "An error in the job's code",
       "代码错误 (Python 异常)",
       {},
       {"event:traceback", "event:segfault", "event:device_assert"},
       {},
       0.6,
       "https://docs.python.org/3/tutorial/errors.html"},
  };
}

}  // namespace

const std::vector<CauseRule>& CauseRules() {
  static const std::vector<CauseRule> rules = MakeRules();
  return rules;
}

const CauseRule* FindCauseRule(std::string_view id) {
  for (const CauseRule& r : CauseRules()) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

std::vector<RankedCause> RankCauses(const std::vector<Signal>& signals) {
  auto find = [&](std::string_view id) -> const Signal* {
    for (const Signal& s : signals) {
      if (s.id == id) return &s;
    }
    return nullptr;
  };
  std::vector<RankedCause> out;
  for (const CauseRule& rule : CauseRules()) {
    if (std::any_of(rule.none_of.begin(), rule.none_of.end(),
                    [&](std::string_view id) { return find(id) != nullptr; })) {
      continue;
    }
    RankedCause c;
    c.id = std::string(rule.id);
    bool met = true;
    for (std::string_view need : rule.all_of) {
      const Signal* s = find(need);
      if (s == nullptr) {
        met = false;
        break;
      }
      c.evidence.push_back(*s);
    }
    if (!met) continue;
    bool any = rule.any_of.empty();
    for (std::string_view one : rule.any_of) {
      if (const Signal* s = find(one)) {
        any = true;
        c.evidence.push_back(*s);
      }
    }
    if (!any) continue;
    double total = 0, seen = 0;
    for (const WeightedSignal& w : rule.supporting) {
      total += w.weight;
      const Signal* s = find(w.id);
      if (s == nullptr) continue;
      seen += w.weight;
      bool listed = std::any_of(c.evidence.begin(), c.evidence.end(),
                                [&](const Signal& e) { return e.id == s->id; });
      if (!listed) c.evidence.push_back(*s);
    }
    c.confidence = rule.prior * (0.75 + 0.25 * (total > 0 ? seen / total : 1.0));
    out.push_back(std::move(c));
  }
  // Stable: equal confidence keeps the table's order (specific causes first).
  std::stable_sort(out.begin(), out.end(), [](const RankedCause& a, const RankedCause& b) {
    return a.confidence > b.confidence;
  });
  if (out.empty()) {
    // No cause fits: what was seen still tells a person (and a test) where
    // to look, the alert itself aside.
    RankedCause unknown{"unknown", 0, {}};
    for (const Signal& s : signals) {
      if (s.id.rfind("alert:", 0) != 0) unknown.evidence.push_back(s);
    }
    out.push_back(std::move(unknown));
  }
  return out;
}

}  // namespace vigil::diagnose

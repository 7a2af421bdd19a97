// nvml_dump: prints what the GPU collector emits, in Prometheus text format,
// so a person (or tests/gpu/check_real_nvml.sh) can compare it with
// nvidia-smi on a real machine.
//
//   nvml_dump            two passes 1 s apart (GPM ratios need two samples);
//                        prints the second
//   nvml_dump --probe    ProbeNvml()'s inventory, one fact per line
//   nvml_dump --status   the collector's status line after the passes
//
// Uses the same library resolution as the agent ($VIGIL_NVML_LIBRARY or
// libnvidia-ml.so.1). A tool, not part of the agent: it links only the GPU
// collector and keeps its own tiny text formatter.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "collect/metrics/gpu_collector.h"
#include "collect/metrics/nvml_loader.h"

namespace {
using vigil::collect::GpuCollector;
using vigil::collect::GpuCollectorOptions;

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Print(const vigil::wire::MetricBatch& batch) {
  for (const auto& f : batch.families) {
    std::printf("# HELP %s %s\n# TYPE %s %s\n", f.name.c_str(), f.help.c_str(), f.name.c_str(),
                vigil::wire::MetricTypeName(f.type));
    for (const auto& s : batch.series) {
      if (vigil::wire::MetricName(s.labels) != f.name) continue;
      std::string labels;
      for (const auto& l : s.labels) {
        if (l.name == vigil::wire::kMetricNameLabel) continue;
        labels += (labels.empty() ? "" : ",") + l.name + "=\"" + Escape(l.value) + "\"";
      }
      for (const auto& sample : s.samples) {
        std::printf("%s{%s} %.15g\n", f.name.c_str(), labels.c_str(), sample.value);
      }
    }
  }
}

int Probe() {
  auto inv = vigil::collect::ProbeNvml();
  if (!inv.ok()) {
    std::fprintf(stderr, "nvml_dump: %s\n", inv.status().ToString().c_str());
    return 2;
  }
  std::printf(
      "state %s\nsummary %s\nlibrary %s\ndriver_version %s\ncuda_version %s\n"
      "nvml_version %s\ngpu_count %zu\n",
      vigil::collect::NvmlStateName(inv->state), inv->Summary().c_str(), inv->library_path.c_str(),
      inv->driver_version.c_str(), inv->cuda_driver_version.c_str(), inv->nvml_version.c_str(),
      inv->gpus.size());
  for (const auto& g : inv->gpus) {
    std::printf("gpu %u uuid=%s name=\"%s\" minor=%d pci=%s cc=%s memory_total=%llu gpm=%d\n",
                g.index, g.uuid.c_str(), g.name.c_str(), g.minor, g.pci_bus_id.c_str(),
                g.compute_capability.c_str(), g.memory_total_bytes, g.gpm_supported ? 1 : 0);
  }
  return inv->state == vigil::collect::NvmlState::kOk ? 0 : 1;
}
}  // namespace

int main(int argc, char** argv) {
  bool status = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--probe") == 0) return Probe();
    if (std::strcmp(argv[i], "--status") == 0) {
      status = true;
      continue;
    }
    std::fprintf(stderr, "usage: nvml_dump [--probe|--status]\n");
    return 2;
  }
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  GpuCollectorOptions options;
  options.hostname = host;
  options.call_timeout = std::chrono::milliseconds(10000);  // a tool may wait for a cold init
  GpuCollector collector(options);
  vigil::Status st;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass > 0) std::this_thread::sleep_for(std::chrono::seconds(1));
    vigil::wire::MetricBatchBuilder builder(host, 0);
    st = collector.Collect(&builder);
    if (pass == 1) Print(builder.batch());
  }
  if (status) std::fprintf(stderr, "status: %s\n", collector.status().message.c_str());
  if (!st.ok()) std::fprintf(stderr, "nvml_dump: %s\n", st.ToString().c_str());
  return st.ok() ? 0 : 1;
}

#include "diagnose/gpu_evidence.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"

namespace vigil::diagnose {
namespace {

using wire::LabelValue;

// A job's GPUs are those its processes held memory on lately: NVML lists a
// process while it has a context on the GPU.
constexpr int64_t kProcessWindowMs = 5 * 60 * 1000;
// A counter is read this far back to know its value before the range starts.
constexpr int64_t kXidLookbackMs = 6 * 3600 * 1000;
constexpr int64_t kGpuInfoWindowMs = 3600 * 1000;

std::string AnyOf(const std::vector<std::string>& values) {
  std::string re;
  for (const std::string& v : values) {
    if (!re.empty()) re += '|';
    for (char c : v) {
      if (!std::isalnum(static_cast<unsigned char>(c))) re += '\\';
      re += c;
    }
  }
  return re;
}

bool ByIndex(const std::string& a, const std::string& b) {
  auto na = ParseInt64(a), nb = ParseInt64(b);
  if (na && nb && *na != *nb) return *na < *nb;
  return a < b;
}

}  // namespace

std::vector<JobGpu> JobGpus(tsdb::Db* db, const std::string& node, const std::vector<int>& pids,
                            int64_t end_ms) {
  std::vector<JobGpu> out;
  if (db == nullptr || pids.empty()) return out;
  std::vector<std::string> pid_text;
  for (int pid : pids) pid_text.push_back(std::to_string(pid));
  auto series = db->Select({{tsdb::MatchType::kEqual, "__name__", "vigil_gpu_process_memory_bytes"},
                            {tsdb::MatchType::kEqual, "node", node},
                            {tsdb::MatchType::kRegex, "pid", AnyOf(pid_text)}},
                           end_ms - kProcessWindowMs, end_ms);
  if (!series.ok()) return out;
  std::map<std::string, JobGpu> by_gpu;
  for (const wire::Series& s : *series) {
    std::string gpu(LabelValue(s.labels, "gpu"));
    if (gpu.empty() || s.samples.empty()) continue;
    JobGpu& g = by_gpu[gpu];
    g.gpu = gpu;
    if (g.uuid.empty()) g.uuid = LabelValue(s.labels, "UUID");
    g.memory_bytes = g.memory_bytes.value_or(0) + s.samples.back().value;
  }
  for (auto& [gpu, g] : by_gpu) out.push_back(std::move(g));
  std::sort(out.begin(), out.end(),
            [](const JobGpu& a, const JobGpu& b) { return ByIndex(a.gpu, b.gpu); });
  return out;
}

std::vector<GpuXid> NvmlXids(tsdb::Db* db, const std::string& node,
                             const std::vector<std::string>& gpus, int64_t start_ms,
                             int64_t end_ms) {
  std::vector<GpuXid> out;
  if (db == nullptr) return out;
  std::vector<tsdb::Matcher> matchers = {
      {tsdb::MatchType::kEqual, "__name__", "vigil_gpu_xid_errors_total"},
      {tsdb::MatchType::kEqual, "node", node}};
  if (!gpus.empty()) matchers.push_back({tsdb::MatchType::kRegex, "gpu", AnyOf(gpus)});
  auto series = db->Select(matchers, start_ms - kXidLookbackMs, end_ms);
  if (!series.ok()) return out;
  for (const wire::Series& s : *series) {
    auto xid = ParseInt64(LabelValue(s.labels, "xid"));
    if (!xid || *xid <= 0 || *xid > 1'000'000) continue;
    double before = 0;  // the counter starts at 0 when the agent does
    for (const wire::Sample& p : s.samples) {
      if (p.value < before) before = 0;  // reset: the agent restarted
      if (p.value > before && p.t_ms >= start_ms) {
        out.push_back({p.t_ms, std::string(LabelValue(s.labels, "gpu")), static_cast<int>(*xid),
                       static_cast<int64_t>(p.value - before)});
      }
      before = p.value;
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GpuXid& a, const GpuXid& b) { return a.time_ms < b.time_ms; });
  return out;
}

std::string PciKey(std::string_view pci) {
  // domain:bus:device[.function]
  size_t c1 = pci.find(':');
  size_t c2 = c1 == std::string_view::npos ? c1 : pci.find(':', c1 + 1);
  if (c2 == std::string_view::npos) return "";
  std::string_view domain = pci.substr(0, c1);
  std::string_view bus = pci.substr(c1 + 1, c2 - c1 - 1);
  std::string_view device = pci.substr(c2 + 1);
  device = device.substr(0, device.find('.'));
  auto hex = [](std::string_view s) {
    return !s.empty() && s.size() <= 8 && std::all_of(s.begin(), s.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c));
    });
  };
  if (!hex(domain) || !hex(bus) || !hex(device)) return "";
  std::string key = std::to_string(std::stoul(std::string(domain), nullptr, 16)) + ":";
  auto lower = [](std::string_view s) {
    std::string t(s);
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  return key + lower(bus) + ":" + lower(device);
}

std::map<std::string, std::string> GpusByPci(tsdb::Db* db, const std::string& node,
                                             int64_t now_ms) {
  std::map<std::string, std::string> out;
  if (db == nullptr) return out;
  auto labels = db->SeriesLabels({{tsdb::MatchType::kEqual, "__name__", "vigil_gpu_info"},
                                  {tsdb::MatchType::kEqual, "node", node}},
                                 now_ms - kGpuInfoWindowMs, now_ms);
  if (!labels.ok()) return out;
  for (const wire::Labels& l : *labels) {
    std::string key = PciKey(LabelValue(l, "pci_bus_id"));
    if (!key.empty()) out[key] = LabelValue(l, "gpu");
  }
  return out;
}

}  // namespace vigil::diagnose

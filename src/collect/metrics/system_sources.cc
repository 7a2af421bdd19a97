#include "collect/metrics/system_sources.h"

#include <re2/re2.h>
#include <sys/utsname.h>

#include <ctime>

#include "core/strings.h"

namespace vigil::collect {
namespace {

using wire::Labels;
using wire::MetricType;
constexpr MetricType kGauge = MetricType::kGauge;
constexpr MetricType kCounter = MetricType::kCounter;

constexpr size_t kSmallFile = 64 << 10;
// /proc/stat's intr line has a column per IRQ: large on many-core machines.
constexpr size_t kLargeFile = 4 << 20;

bool Matches(const re2::RE2* re, std::string_view s) {
  return re != nullptr && re2::RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), *re);
}

Result<std::string> ReadProc(const SourceConfig& c, std::string_view rel, size_t max) {
  return ReadBounded(c.env, JoinPath(c.proc_root, rel), max);
}

// A sysfs attribute, trimmed; nullopt when absent or unreadable (many
// attributes fail with EINVAL on purpose, e.g. speed of a down link).
std::optional<std::string> ReadAttr(const SourceConfig& c, const std::string& path) {
  auto r = c.env->ReadFile(path, 4096);
  if (!r.ok()) return std::nullopt;
  return std::string(TrimSpace(*r));
}

// udev's properties of a block device, for node_disk_info's labels.
Labels UdevLabels(const SourceConfig& c, const proc::DiskStats& d) {
  Labels out;
  if (c.udev_data_root.empty()) return out;
  std::string path =
      JoinPath(c.udev_data_root, "b" + std::to_string(d.major) + ":" + std::to_string(d.minor));
  auto text = c.env->ReadFile(path, kSmallFile);
  if (!text.ok()) return out;
  static const std::pair<std::string_view, const char*> kProps[] = {{"ID_PATH", "path"},
                                                                    {"ID_WWN", "wwn"},
                                                                    {"ID_MODEL", "model"},
                                                                    {"ID_SERIAL_SHORT", "serial"},
                                                                    {"ID_REVISION", "revision"}};
  for (std::string_view line : Split(*text, '\n')) {
    if (!StartsWith(line, "E:")) continue;
    line.remove_prefix(2);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    for (const auto& [prop, label] : kProps) {
      if (line.substr(0, eq) == prop) out.push_back({label, std::string(line.substr(eq + 1))});
    }
  }
  return out;
}

struct DiskMetric {
  const char* name;
  const char* help;
  MetricType type;
  double scale;
};
// In /proc/diskstats column order; node_exporter emits as many as the kernel
// wrote. Times are ms, multiplied by 1/1000 as node_exporter does.
constexpr double kSecondsPerTick = 1.0 / 1000.0;
const DiskMetric kDiskMetrics[] = {
    {"node_disk_reads_completed_total", "The total number of reads completed successfully.",
     kCounter, 1},
    {"node_disk_reads_merged_total", "The total number of reads merged.", kCounter, 1},
    {"node_disk_read_bytes_total", "The total number of bytes read successfully.", kCounter,
     proc::kDiskSectorBytes},
    {"node_disk_read_time_seconds_total", "The total number of seconds spent by all reads.",
     kCounter, kSecondsPerTick},
    {"node_disk_writes_completed_total", "The total number of writes completed successfully.",
     kCounter, 1},
    {"node_disk_writes_merged_total", "The number of writes merged.", kCounter, 1},
    {"node_disk_written_bytes_total", "The total number of bytes written successfully.", kCounter,
     proc::kDiskSectorBytes},
    {"node_disk_write_time_seconds_total",
     "This is the total number of seconds spent by all writes.", kCounter, kSecondsPerTick},
    {"node_disk_io_now", "The number of I/Os currently in progress.", kGauge, 1},
    {"node_disk_io_time_seconds_total", "Total seconds spent doing I/Os.", kCounter,
     kSecondsPerTick},
    {"node_disk_io_time_weighted_seconds_total", "The weighted # of seconds spent doing I/Os.",
     kCounter, kSecondsPerTick},
    {"node_disk_discards_completed_total", "The total number of discards completed successfully.",
     kCounter, 1},
    {"node_disk_discards_merged_total", "The total number of discards merged.", kCounter, 1},
    // Sectors, not bytes: node_exporter 1.5's name and unit, kept for compatibility.
    {"node_disk_discarded_sectors_total", "The total number of sectors discarded successfully.",
     kCounter, 1},
    {"node_disk_discard_time_seconds_total",
     "This is the total number of seconds spent by all discards.", kCounter, kSecondsPerTick},
    {"node_disk_flush_requests_total", "The total number of flush requests completed successfully",
     kCounter, 1},
    {"node_disk_flush_requests_time_seconds_total",
     "This is the total number of seconds spent by all flush requests.", kCounter, kSecondsPerTick},
};

void EmitNetdev(const SourceConfig& c, const proc::NetDevStats& d, Sink* out) {
  auto emit = [&](const std::string& stat, double v) {
    out->Emit("node_network_" + stat + "_total", kCounter, "Network device statistic " + stat + ".",
              {{"device", d.device}}, v);
  };
  for (size_t i = 0; i < 8; ++i) {
    emit(std::string("receive_") + proc::kNetDevReceiveFields[i],
         static_cast<double>(d.receive[i]));
    emit(std::string("transmit_") + proc::kNetDevTransmitFields[i],
         static_cast<double>(d.transmit[i]));
  }
  // node_exporter reads this over netlink; /proc/net/dev lacks it, sysfs has it.
  std::string nohandler =
      JoinPath(c.sys_root, "class/net/" + d.device + "/statistics/rx_nohandler");
  if (auto s = ReadAttr(c, nohandler)) {
    if (auto v = ParseUint64(*s)) emit("receive_nohandler", static_cast<double>(*v));
  }
}

}  // namespace

SourceConfig::~SourceConfig() = default;

Result<std::string> ReadBounded(Env* env, const std::string& path, size_t max_bytes) {
  auto r = env->ReadFile(path, max_bytes);
  if (!r.ok()) return r.status();
  std::string text = std::move(r).value();
  if (text.size() >= max_bytes) {
    size_t nl = text.rfind('\n');
    text.resize(nl == std::string::npos ? 0 : nl + 1);
  }
  return text;
}

void Sink::Family(std::string_view name, MetricType type, std::string_view help) {
  if (!family_names_.emplace(name).second) return;
  families_.push_back({std::string(name), type, std::string(help)});
}

void Sink::Add(std::string_view name, Labels labels, double value) {
  samples_.push_back({std::string(name), std::move(labels), value});
}

void Sink::Emit(std::string_view name, MetricType type, std::string_view help, Labels labels,
                double value) {
  Family(name, type, help);
  Add(name, std::move(labels), value);
}

void Sink::AppendTo(wire::MetricBatchBuilder* out) const {
  for (const auto& f : families_) out->Family(f.name, f.type, f.help);
  for (const auto& s : samples_) out->Add(s.name, s.labels, s.value);
}

void MergeCpuTimes(const std::vector<proc::CpuTimes>& fresh, CpuHistory* history) {
  constexpr double kJumpBackSeconds = 3.0;
  CpuHistory next;
  for (const auto& n : fresh) {
    proc::CpuTimes old = (*history)[n.cpu];
    if (old.idle - n.idle >= kJumpBackSeconds) old = proc::CpuTimes{};
    old.cpu = n.cpu;
    double proc::CpuTimes::*fields[] = {&proc::CpuTimes::user,    &proc::CpuTimes::nice,
                                        &proc::CpuTimes::system,  &proc::CpuTimes::idle,
                                        &proc::CpuTimes::iowait,  &proc::CpuTimes::irq,
                                        &proc::CpuTimes::softirq, &proc::CpuTimes::steal,
                                        &proc::CpuTimes::guest,   &proc::CpuTimes::guest_nice};
    for (auto f : fields) {
      if (n.*f >= old.*f) old.*f = n.*f;
    }
    next[n.cpu] = old;  // CPUs gone offline drop out of the history
  }
  *history = std::move(next);
}

Status CollectCpu(const SourceConfig& c, CpuHistory* history, Sink* out) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadProc(c, "stat", kLargeFile));
  proc::ProcStat st = proc::ParseProcStat(text);
  if (st.cpus.empty()) return Corruption("no cpuN lines in " + JoinPath(c.proc_root, "stat"));
  MergeCpuTimes(st.cpus, history);
  constexpr const char* kHelp = "Seconds the CPUs spent in each mode.";
  constexpr const char* kGuestHelp = "Seconds the CPUs spent in guests (VMs) for each mode.";
  for (const auto& [cpu, t] : *history) {
    const std::pair<const char*, double> modes[] = {
        {"user", t.user},     {"nice", t.nice}, {"system", t.system},   {"idle", t.idle},
        {"iowait", t.iowait}, {"irq", t.irq},   {"softirq", t.softirq}, {"steal", t.steal}};
    for (const auto& [mode, v] : modes) {
      out->Emit("node_cpu_seconds_total", kCounter, kHelp, {{"cpu", cpu}, {"mode", mode}}, v);
    }
    out->Emit("node_cpu_guest_seconds_total", kCounter, kGuestHelp,
              {{"cpu", cpu}, {"mode", "user"}}, t.guest);
    out->Emit("node_cpu_guest_seconds_total", kCounter, kGuestHelp,
              {{"cpu", cpu}, {"mode", "nice"}}, t.guest_nice);
  }
  return Status::Ok();
}

Status CollectStat(const SourceConfig& c, Sink* out) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadProc(c, "stat", kLargeFile));
  proc::ProcStat st = proc::ParseProcStat(text);
  struct Item {
    const std::optional<double>& v;
    const char* name;
    MetricType type;
    const char* help;
  };
  const Item items[] = {
      {st.interrupts, "node_intr_total", kCounter, "Total number of interrupts serviced."},
      {st.context_switches, "node_context_switches_total", kCounter,
       "Total number of context switches."},
      {st.forks, "node_forks_total", kCounter, "Total number of forks."},
      {st.boot_time, "node_boot_time_seconds", kGauge, "Node boot time, in unixtime."},
      {st.procs_running, "node_procs_running", kGauge, "Number of processes in runnable state."},
      {st.procs_blocked, "node_procs_blocked", kGauge,
       "Number of processes blocked waiting for I/O to complete."},
  };
  bool any = false;
  for (const auto& it : items) {
    if (!it.v) continue;
    out->Emit(it.name, it.type, it.help, {}, *it.v);
    any = true;
  }
  if (!any) return Corruption("no counters in " + JoinPath(c.proc_root, "stat"));
  return Status::Ok();
}

Status CollectMeminfo(const SourceConfig& c, Sink* out) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadProc(c, "meminfo", kSmallFile));
  auto fields = proc::ParseMeminfo(text);
  if (fields.empty()) return Corruption("no fields in " + JoinPath(c.proc_root, "meminfo"));
  for (const auto& f : fields) {
    out->Emit("node_memory_" + f.name, kGauge, "Memory information field " + f.name + ".", {},
              f.value);
  }
  return Status::Ok();
}

Status CollectLoadavg(const SourceConfig& c, Sink* out) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadProc(c, "loadavg", kSmallFile));
  auto l = proc::ParseLoadavg(text);
  if (!l) return Corruption("malformed " + JoinPath(c.proc_root, "loadavg"));
  out->Emit("node_load1", kGauge, "1m load average.", {}, l->load1);
  out->Emit("node_load5", kGauge, "5m load average.", {}, l->load5);
  out->Emit("node_load15", kGauge, "15m load average.", {}, l->load15);
  return Status::Ok();
}

Status CollectDiskstats(const SourceConfig& c, Sink* out) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadProc(c, "diskstats", kLargeFile));
  for (const auto& d : proc::ParseDiskstats(text)) {
    if (Matches(c.disk_exclude.get(), d.device)) continue;
    Labels info = UdevLabels(c, d);
    info.push_back({"device", d.device});
    info.push_back({"major", std::to_string(d.major)});
    info.push_back({"minor", std::to_string(d.minor)});
    out->Emit("node_disk_info", kGauge, "Info of /sys/block/<block_device>.", std::move(info), 1);
    for (size_t i = 0; i < d.values.size() && i < std::size(kDiskMetrics); ++i) {
      const DiskMetric& m = kDiskMetrics[i];
      out->Emit(m.name, m.type, m.help, {{"device", d.device}},
                static_cast<double>(d.values[i]) * m.scale);
    }
  }
  return Status::Ok();
}

Status CollectNetdev(const SourceConfig& c, Sink* out) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadProc(c, "net/dev", kLargeFile));
  for (const auto& d : proc::ParseNetDev(text)) {
    if (Matches(c.netdev_exclude.get(), d.device)) continue;
    EmitNetdev(c, d, out);
  }
  return Status::Ok();
}

Status CollectNetclass(const SourceConfig& c, Sink* out) {
  std::string dir = JoinPath(c.sys_root, "class/net");
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, c.env->ListDir(dir));
  for (const auto& dev : names) {
    std::string base = JoinPath(dir, dev);
    auto operstate = ReadAttr(c, JoinPath(base, "operstate"));
    if (!operstate) continue;  // not a device (e.g. bonding_masters)
    Labels l = {{"device", dev}};
    out->Emit("node_network_up", kGauge, "Value is 1 if operstate is 'up', 0 otherwise.", l,
              *operstate == "up" ? 1 : 0);
    if (auto mtu = ReadAttr(c, JoinPath(base, "mtu")); mtu && ParseInt64(*mtu)) {
      out->Emit("node_network_mtu_bytes", kGauge, "Network device property: mtu_bytes", l,
                static_cast<double>(*ParseInt64(*mtu)));
    }
    // A negative speed means "unknown"; node_exporter 1.5 reports it scaled
    // (-125000) unless --collector.netclass.ignore-invalid-speed. We omit it.
    if (auto sp = ReadAttr(c, JoinPath(base, "speed"));
        sp && ParseInt64(*sp) && *ParseInt64(*sp) >= 0) {
      out->Emit("node_network_speed_bytes", kGauge, "Network device property: speed_bytes", l,
                static_cast<double>(*ParseInt64(*sp) * 1000 * 1000 / 8));
    }
  }
  return Status::Ok();
}

Status CollectVmstat(const SourceConfig& c, Sink* out) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadProc(c, "vmstat", kLargeFile));
  for (const auto& [key, v] : proc::ParseKeyValues(text)) {
    if (!Matches(c.vmstat_include.get(), key)) continue;
    out->Emit("node_vmstat_" + key, MetricType::kUnknown,
              "/proc/vmstat information field " + key + ".", {}, v);
  }
  return Status::Ok();
}

Status CollectPressure(const SourceConfig& c, Sink* out) {
  struct Resource {
    const char* name;
    const char* waiting_help;
    const char* stalled_help;  // nullptr: node_exporter reports no "full" for it
  };
  static const Resource kResources[] = {
      {"cpu", "Total time in seconds that processes have waited for CPU time", nullptr},
      {"io", "Total time in seconds that processes have waited due to IO congestion",
       "Total time in seconds no process could make progress due to IO congestion"},
      {"memory", "Total time in seconds that processes have waited for memory",
       "Total time in seconds no process could make progress due to memory congestion"},
  };
  for (const auto& r : kResources) {
    auto text = ReadProc(c, std::string("pressure/") + r.name, kSmallFile);
    if (!text.ok()) continue;  // kernel without PSI (or disabled): omit, not an error
    auto p = proc::ParsePressure(*text);
    if (!p) continue;
    std::string prefix = std::string("node_pressure_") + r.name;
    if (p->some_seconds) {
      out->Emit(prefix + "_waiting_seconds_total", kCounter, r.waiting_help, {}, *p->some_seconds);
    }
    if (r.stalled_help != nullptr && p->full_seconds) {
      out->Emit(prefix + "_stalled_seconds_total", kCounter, r.stalled_help, {}, *p->full_seconds);
    }
  }
  return Status::Ok();
}

Status CollectFilefd(const SourceConfig& c, Sink* out) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadProc(c, "sys/fs/file-nr", kSmallFile));
  auto f = proc::ParseFileNr(text);
  if (!f) return Corruption("malformed " + JoinPath(c.proc_root, "sys/fs/file-nr"));
  out->Emit("node_filefd_allocated", kGauge, "File descriptor statistics: allocated.", {},
            f->allocated);
  out->Emit("node_filefd_maximum", kGauge, "File descriptor statistics: maximum.", {}, f->maximum);
  return Status::Ok();
}

Status CollectUname(const SourceConfig& c, Sink* out) {
  // /proc/sys/kernel holds what uname(2) returns, readable from a fake tree.
  const std::pair<const char*, const char*> kFiles[] = {
      {"sysname", "sys/kernel/ostype"},        {"release", "sys/kernel/osrelease"},
      {"version", "sys/kernel/version"},       {"nodename", "sys/kernel/hostname"},
      {"domainname", "sys/kernel/domainname"}, {"machine", "sys/kernel/arch"}};
  Labels labels;
  for (const auto& [label, rel] : kFiles) {
    auto text = ReadProc(c, rel, kSmallFile);
    if (text.ok()) {
      labels.push_back({label, std::string(TrimSpace(*text))});
      continue;
    }
    if (std::string_view(label) != "machine") return text.status();
    struct utsname u {};  // kernels before 5.? lack sys/kernel/arch
    if (::uname(&u) == 0) labels.push_back({label, u.machine});
  }
  out->Emit("node_uname_info", kGauge,
            "Labeled system information as provided by the uname system call.", std::move(labels),
            1);
  return Status::Ok();
}

Status CollectTime(const SourceConfig& c, Sink* out) {
  int64_t now_ms = c.env->NowMillis();
  out->Emit("node_time_seconds", kGauge, "System time in seconds since epoch (1970).", {},
            static_cast<double>(now_ms) / 1000.0);
  time_t now = static_cast<time_t>(now_ms / 1000);
  struct tm local {};
  if (::localtime_r(&now, &local) != nullptr && local.tm_zone != nullptr) {
    out->Emit("node_time_zone_offset_seconds", kGauge, "System time zone offset in seconds.",
              {{"time_zone", local.tm_zone}}, static_cast<double>(local.tm_gmtoff));
  }
  std::string dir = JoinPath(c.sys_root, "devices/system/clocksource");
  auto names = c.env->ListDir(dir);
  if (!names.ok()) return Status::Ok();  // clocksource info is optional
  for (const auto& name : *names) {
    if (!StartsWith(name, "clocksource")) continue;
    std::string device = name.substr(std::string_view("clocksource").size());
    std::string base = JoinPath(dir, name);
    if (auto avail = ReadAttr(c, JoinPath(base, "available_clocksource"))) {
      for (std::string_view cs : SplitFields(*avail)) {
        out->Emit("node_time_clocksource_available_info", kGauge,
                  "Available clocksources read from '/sys/devices/system/clocksource'.",
                  {{"clocksource", std::string(cs)}, {"device", device}}, 1);
      }
    }
    if (auto cur = ReadAttr(c, JoinPath(base, "current_clocksource"))) {
      out->Emit("node_time_clocksource_current_info", kGauge,
                "Current clocksource read from '/sys/devices/system/clocksource'.",
                {{"clocksource", *cur}, {"device", device}}, 1);
    }
  }
  return Status::Ok();
}

Result<std::vector<proc::MountEntry>> ReadMounts(const SourceConfig& c) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadBounded(c.env, c.mounts_file, kLargeFile));
  std::vector<proc::MountEntry> out;
  for (auto& m : proc::ParseMounts(text)) {
    if (Matches(c.mount_points_exclude.get(), m.mount_point)) continue;
    if (Matches(c.fs_types_exclude.get(), m.fs_type)) continue;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace vigil::collect

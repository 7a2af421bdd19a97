// Parsers for the /proc files the system collector reads. They take the file
// text and return what they could understand: a malformed or truncated line is
// skipped, never fatal, so one odd kernel (or a read cut short by a size
// bound) costs only the affected series. Values are converted to node_exporter
// 1.5's units here (seconds, bytes), so callers only name and label them.
//
// Thread safety: pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil::collect::proc {

// The kernel reports CPU time in USER_HZ ticks, fixed at 100 for userspace.
inline constexpr double kUserHz = 100.0;
// /proc/diskstats counts 512-byte sectors whatever the device's sector size.
inline constexpr double kDiskSectorBytes = 512.0;

// One "cpuN" line of /proc/stat, in seconds.
struct CpuTimes {
  std::string cpu;  // "0", "1", ...
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0,
         guest = 0, guest_nice = 0;
};

struct ProcStat {
  std::vector<CpuTimes> cpus;
  std::optional<double> context_switches, interrupts, forks, boot_time, procs_running,
      procs_blocked;
};
ProcStat ParseProcStat(std::string_view text);

// A /proc/meminfo field under node_exporter's name ("Active_anon_bytes",
// "HugePages_Total") and its value in bytes (or a count when it has no unit).
struct MeminfoField {
  std::string name;
  double value = 0;
};
std::vector<MeminfoField> ParseMeminfo(std::string_view text);

struct LoadAvg {
  double load1 = 0, load5 = 0, load15 = 0;
};
std::optional<LoadAvg> ParseLoadavg(std::string_view text);

// One /proc/diskstats line. `values` holds the counters after the device name
// as the kernel wrote them (11 before Linux 4.18, 15 with discards, 17 with
// flushes); lines with fewer than 11 are dropped.
struct DiskStats {
  std::string device;
  uint64_t major = 0, minor = 0;
  std::vector<uint64_t> values;
};
std::vector<DiskStats> ParseDiskstats(std::string_view text);

// One /proc/net/dev line: receive then transmit columns, in the kernel's order
// (bytes packets errs drop fifo frame compressed multicast |
//  bytes packets errs drop fifo colls carrier compressed).
struct NetDevStats {
  std::string device;
  uint64_t receive[8] = {};
  uint64_t transmit[8] = {};
};
inline constexpr const char* kNetDevReceiveFields[8] = {
    "bytes", "packets", "errs", "drop", "fifo", "frame", "compressed", "multicast"};
inline constexpr const char* kNetDevTransmitFields[8] = {
    "bytes", "packets", "errs", "drop", "fifo", "colls", "carrier", "compressed"};
std::vector<NetDevStats> ParseNetDev(std::string_view text);

// One line of a mounts file (/proc/self/mounts), octal escapes undone.
struct MountEntry {
  std::string device, mount_point, fs_type;
  bool read_only = false;
};
std::vector<MountEntry> ParseMounts(std::string_view text);

// "key value" lines, as in /proc/vmstat.
std::vector<std::pair<std::string, double>> ParseKeyValues(std::string_view text);

// A /proc/pressure/<resource> file: the "total=" stall time of the "some" and
// "full" lines, in seconds.
struct Pressure {
  std::optional<double> some_seconds, full_seconds;
};
std::optional<Pressure> ParsePressure(std::string_view text);

// /proc/sys/fs/file-nr: "allocated unused maximum".
struct FileNr {
  double allocated = 0, maximum = 0;
};
std::optional<FileNr> ParseFileNr(std::string_view text);

// Undoes the kernel's octal escapes (\040 space, \011 tab, \012 newline,
// \134 backslash) in a mounts-file field.
std::string UnescapeMountField(std::string_view s);

}  // namespace vigil::collect::proc

#include "collect/metrics/proc_parse.h"

#include "core/strings.h"

namespace vigil::collect::proc {
namespace {

// Calls `fn` for each line of `text`, including a last line without '\n'.
template <typename Fn>
void ForEachLine(std::string_view text, Fn fn) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    fn(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

std::optional<double> ParseCounter(std::string_view s) {
  auto v = ParseUint64(s);
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

// Parses one "cpuN ..." line; missing trailing columns (old kernels) are zero.
std::optional<CpuTimes> ParseCpuLine(const std::vector<std::string_view>& f) {
  if (f.size() < 5) return std::nullopt;  // user nice system idle at least
  CpuTimes t;
  t.cpu = std::string(f[0].substr(3));
  if (!ParseUint64(t.cpu)) return std::nullopt;
  double* dst[] = {&t.user, &t.nice,    &t.system, &t.idle,  &t.iowait,
                   &t.irq,  &t.softirq, &t.steal,  &t.guest, &t.guest_nice};
  for (size_t i = 1; i < f.size() && i <= std::size(dst); ++i) {
    auto v = ParseCounter(f[i]);
    if (!v) return std::nullopt;
    // Divided, not multiplied by 0.01, so values equal node_exporter's bit for bit.
    *dst[i - 1] = *v / kUserHz;
  }
  return t;
}

// "Active(anon)" -> "Active_anon", as node_exporter's `\((.*)\)` -> `_$1`;
// any other character a metric name cannot hold becomes '_'.
std::string MeminfoName(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == ')') continue;
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  return out;
}

int OctalDigit(char c) { return c >= '0' && c <= '7' ? c - '0' : -1; }

}  // namespace

ProcStat ParseProcStat(std::string_view text) {
  ProcStat st;
  ForEachLine(text, [&](std::string_view line) {
    auto f = SplitFields(line);
    if (f.size() < 2) return;
    if (StartsWith(f[0], "cpu")) {
      if (f[0] == "cpu") return;  // the all-CPU sum; node_exporter reports per CPU only
      if (auto t = ParseCpuLine(f)) st.cpus.push_back(std::move(*t));
      return;
    }
    auto v = ParseCounter(f[1]);
    if (!v) return;
    if (f[0] == "ctxt")
      st.context_switches = v;
    else if (f[0] == "intr")
      st.interrupts = v;  // first column is the total
    else if (f[0] == "processes")
      st.forks = v;
    else if (f[0] == "btime")
      st.boot_time = v;
    else if (f[0] == "procs_running")
      st.procs_running = v;
    else if (f[0] == "procs_blocked")
      st.procs_blocked = v;
  });
  return st;
}

std::vector<MeminfoField> ParseMeminfo(std::string_view text) {
  std::vector<MeminfoField> out;
  ForEachLine(text, [&](std::string_view line) {
    auto f = SplitFields(line);
    if (f.size() != 2 && f.size() != 3) return;
    if (f[0].size() < 2 || f[0].back() != ':') return;
    auto v = ParseCounter(f[1]);
    if (!v) return;
    MeminfoField m{MeminfoName(f[0].substr(0, f[0].size() - 1)), *v};
    if (f.size() == 3) {  // the only unit the kernel writes is kB
      m.value *= 1024;
      m.name += "_bytes";
    }
    out.push_back(std::move(m));
  });
  return out;
}

std::optional<LoadAvg> ParseLoadavg(std::string_view text) {
  auto f = SplitFields(text);
  if (f.size() < 3) return std::nullopt;
  auto a = ParseDouble(f[0]), b = ParseDouble(f[1]), c = ParseDouble(f[2]);
  if (!a || !b || !c) return std::nullopt;
  return LoadAvg{*a, *b, *c};
}

std::vector<DiskStats> ParseDiskstats(std::string_view text) {
  std::vector<DiskStats> out;
  ForEachLine(text, [&](std::string_view line) {
    auto f = SplitFields(line);
    if (f.size() < 14) return;
    DiskStats d;
    auto major = ParseUint64(f[0]), minor = ParseUint64(f[1]);
    if (!major || !minor) return;
    d.major = *major;
    d.minor = *minor;
    d.device = std::string(f[2]);
    for (size_t i = 3; i < f.size() && d.values.size() < 17; ++i) {
      auto v = ParseUint64(f[i]);
      if (!v) return;
      d.values.push_back(*v);
    }
    out.push_back(std::move(d));
  });
  return out;
}

std::vector<NetDevStats> ParseNetDev(std::string_view text) {
  std::vector<NetDevStats> out;
  ForEachLine(text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;  // the two header lines have '|', not ':'
    NetDevStats d;
    d.device = std::string(TrimSpace(line.substr(0, colon)));
    auto f = SplitFields(line.substr(colon + 1));
    if (d.device.empty() || f.size() < 16) return;
    for (size_t i = 0; i < 16; ++i) {
      auto v = ParseUint64(f[i]);
      if (!v) return;
      (i < 8 ? d.receive[i] : d.transmit[i - 8]) = *v;
    }
    out.push_back(std::move(d));
  });
  return out;
}

std::string UnescapeMountField(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int a = OctalDigit(s[i + 1]), b = OctalDigit(s[i + 2]), c = OctalDigit(s[i + 3]);
      if (a >= 0 && a <= 3 && b >= 0 && c >= 0) {
        out += static_cast<char>(a * 64 + b * 8 + c);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::vector<MountEntry> ParseMounts(std::string_view text) {
  std::vector<MountEntry> out;
  ForEachLine(text, [&](std::string_view line) {
    auto f = SplitFields(line);
    if (f.size() < 4) return;
    MountEntry m{UnescapeMountField(f[0]), UnescapeMountField(f[1]), UnescapeMountField(f[2])};
    for (std::string_view opt : Split(f[3], ',')) {
      if (opt == "ro") m.read_only = true;
    }
    out.push_back(std::move(m));
  });
  return out;
}

std::vector<std::pair<std::string, double>> ParseKeyValues(std::string_view text) {
  std::vector<std::pair<std::string, double>> out;
  ForEachLine(text, [&](std::string_view line) {
    auto f = SplitFields(line);
    if (f.size() != 2) return;
    auto v = ParseInt64(f[1]);  // a few vmstat fields are signed
    if (!v) return;
    out.emplace_back(std::string(f[0]), static_cast<double>(*v));
  });
  return out;
}

std::optional<Pressure> ParsePressure(std::string_view text) {
  Pressure p;
  bool any = false;
  ForEachLine(text, [&](std::string_view line) {
    auto f = SplitFields(line);
    if (f.empty() || (f[0] != "some" && f[0] != "full")) return;
    for (size_t i = 1; i < f.size(); ++i) {
      if (!StartsWith(f[i], "total=")) continue;
      auto us = ParseUint64(f[i].substr(6));
      if (!us) return;
      // Two divisions, as node_exporter writes it, so the doubles are identical.
      double secs = static_cast<double>(*us) / 1000.0 / 1000.0;
      (f[0] == "some" ? p.some_seconds : p.full_seconds) = secs;
      any = true;
    }
  });
  if (!any) return std::nullopt;
  return p;
}

std::optional<FileNr> ParseFileNr(std::string_view text) {
  auto f = SplitFields(text);
  if (f.size() != 3) return std::nullopt;
  auto a = ParseCounter(f[0]), m = ParseCounter(f[2]);
  if (!a || !m) return std::nullopt;
  return FileNr{*a, *m};
}

}  // namespace vigil::collect::proc

// Runs Debian's prometheus-node-exporter next to Vigil's SystemCollector on
// this machine and checks that Vigil reports the same families (name, type,
// help), the same series (label sets) and agreeing values.
//
// Values are bracketed rather than timed: node_exporter is scraped before (A)
// and after (B) one Vigil pass (V), so a counter must satisfy A <= V <= B and
// a gauge must lie within [min(A,B), max(A,B)] widened by a tolerance that
// fits how fast it moves. Nothing depends on how long anything takes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collect/metrics/system_collector.h"
#include "core/env.h"
#include "core/strings.h"

namespace vigil {
namespace {

constexpr const char* kNodeExporter = "/usr/bin/prometheus-node-exporter";

// ---- A minimal reader of the Prometheus text exposition format ----

struct Family {
  std::string type, help;
  std::map<std::string, double> series;  // LabelsToString(labels without __name__) -> value
};
using Exposition = std::map<std::string, Family>;

// Parses `{a="x",b="y"}` at *s; empty values are dropped (Prometheus treats
// an empty label as absent, and so does Vigil's NormalizeLabels).
bool ParseLabels(std::string_view* s, wire::Labels* out) {
  s->remove_prefix(1);  // '{'
  while (!s->empty() && s->front() != '}') {
    size_t eq = s->find('=');
    if (eq == std::string_view::npos || eq + 1 >= s->size() || (*s)[eq + 1] != '"') return false;
    wire::Label l{std::string(TrimSpace(s->substr(0, eq))), ""};
    size_t i = eq + 2;
    for (; i < s->size() && (*s)[i] != '"'; ++i) {
      char c = (*s)[i];
      if (c == '\\' && i + 1 < s->size()) {
        c = (*s)[++i];
        if (c == 'n') c = '\n';
      }
      l.value += c;
    }
    if (i >= s->size()) return false;
    s->remove_prefix(i + 1);
    if (!s->empty() && s->front() == ',') s->remove_prefix(1);
    out->push_back(std::move(l));
  }
  if (s->empty()) return false;
  s->remove_prefix(1);  // '}'
  return true;
}

Exposition ParseExposition(std::string_view text) {
  Exposition out;
  for (std::string_view line : Split(text, '\n')) {
    if (StartsWith(line, "# HELP ") || StartsWith(line, "# TYPE ")) {
      std::string_view rest = line.substr(7);
      size_t sp = rest.find(' ');
      std::string name(rest.substr(0, sp));
      std::string val(sp == std::string_view::npos ? "" : rest.substr(sp + 1));
      (line[2] == 'H' ? out[name].help : out[name].type) = val;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    size_t end = line.find_first_of("{ ");
    if (end == std::string_view::npos) continue;
    std::string name(line.substr(0, end));
    std::string_view rest = line.substr(end);
    wire::Labels labels;
    if (!rest.empty() && rest.front() == '{' && !ParseLabels(&rest, &labels)) {
      ADD_FAILURE() << "unparsable exposition line: " << line;
      continue;
    }
    auto fields = SplitFields(rest);
    auto v = fields.empty() ? std::nullopt : ParseDouble(fields[0]);
    if (!v) {
      ADD_FAILURE() << "unparsable value: " << line;
      continue;
    }
    wire::NormalizeLabels(&labels);
    out[name].series[wire::LabelsToString(labels)] = *v;
  }
  return out;
}

Exposition FromBatch(const wire::MetricBatch& b) {
  Exposition out;
  for (const auto& f : b.families) {
    out[f.name].type = wire::MetricTypeName(f.type);
    out[f.name].help = f.help;
  }
  for (const auto& s : b.series) {
    std::string name(wire::MetricName(s.labels));
    wire::Labels rest;
    for (const auto& l : s.labels) {
      if (l.name != wire::kMetricNameLabel) rest.push_back(l);
    }
    out[name].series[wire::LabelsToString(rest)] = s.samples.at(0).value;
  }
  return out;
}

// ---- node_exporter as a child process ----

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

// GET http://127.0.0.1:port/path over HTTP/1.0 (no chunking, no gzip).
Result<std::string> HttpGet(int port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return Unavailable("connect to node_exporter failed");
  }
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  bool sent = ::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
  std::string resp;
  char buf[65536];
  for (ssize_t n; sent && (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) resp.append(buf, n);
  ::close(fd);
  size_t body = resp.find("\r\n\r\n");
  if (!sent || body == std::string::npos || resp.find(" 200 ") > resp.find("\r\n")) {
    return Unavailable("bad HTTP response from node_exporter: " + resp.substr(0, 200));
  }
  return resp.substr(body + 4);
}

// Kills the child however the test ends; the child also dies with us
// (PR_SET_PDEATHSIG) if this process crashes.
class NodeExporter {
 public:
  explicit NodeExporter(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~NodeExporter() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
  }
  bool Exited() {
    int status;
    return pid_ <= 0 || ::waitpid(pid_, &status, WNOHANG) == pid_;
  }

 private:
  pid_t pid_ = -1;
};

// ---- what to compare and how closely ----

bool InScope(const std::string& family) {
  return StartsWith(family, "node_") && family != "node_exporter_build_info";
}

// Families node_exporter has and Vigil deliberately does not.
const std::map<std::string, std::string>& Exceptions() {
  static const auto* m = new std::map<std::string, std::string>{
      {"node_network_address_assign_type", "netclass: only up/mtu/speed are collected"},
      {"node_network_carrier", "netclass: only up/mtu/speed are collected"},
      {"node_network_carrier_changes_total", "netclass: only up/mtu/speed are collected"},
      {"node_network_carrier_down_changes_total", "netclass: only up/mtu/speed are collected"},
      {"node_network_carrier_up_changes_total", "netclass: only up/mtu/speed are collected"},
      {"node_network_device_id", "netclass: only up/mtu/speed are collected"},
      {"node_network_dormant", "netclass: only up/mtu/speed are collected"},
      {"node_network_flags", "netclass: only up/mtu/speed are collected"},
      {"node_network_iface_id", "netclass: only up/mtu/speed are collected"},
      {"node_network_iface_link", "netclass: only up/mtu/speed are collected"},
      {"node_network_iface_link_mode", "netclass: only up/mtu/speed are collected"},
      {"node_network_info", "netclass: only up/mtu/speed are collected"},
      {"node_network_name_assign_type", "netclass: only up/mtu/speed are collected"},
      {"node_network_net_dev_group", "netclass: only up/mtu/speed are collected"},
      {"node_network_protocol_type", "netclass: only up/mtu/speed are collected"},
      {"node_network_transmit_queue_length", "netclass: only up/mtu/speed are collected"},
      {"node_cpu_core_throttles_total", "cpu: thermal throttle counters not collected"},
      {"node_cpu_package_throttles_total", "cpu: thermal throttle counters not collected"},
      {"node_cpu_isolated", "cpu: isolated CPU list not collected"},
      {"node_disk_ata_write_cache", "diskstats: udev ATA properties not collected"},
      {"node_disk_ata_write_cache_enabled", "diskstats: udev ATA properties not collected"},
      {"node_disk_ata_rotation_rate_rpm", "diskstats: udev ATA properties not collected"},
      {"node_disk_device_mapper_info", "diskstats: udev device-mapper info not collected"},
  };
  return *m;
}

struct Tolerance {
  double slack = 0;       // widens the [A, B] bracket
  bool relative = false;  // slack is a fraction of the value
  bool exact = false;     // must equal both A and B
  bool skip = false;      // labels only (durations)
};

Tolerance ToleranceFor(const std::string& f) {
  constexpr double kMiB = 1024 * 1024;
  if (f == "node_scrape_collector_duration_seconds") return {.skip = true};
  if (f == "node_memory_MemTotal_bytes" || f == "node_filesystem_size_bytes" ||
      f == "node_filesystem_files" || f == "node_boot_time_seconds" ||
      f == "node_scrape_collector_success" || f == "node_filefd_maximum" ||
      StartsWith(f, "node_network_mtu") || StartsWith(f, "node_network_speed") ||
      StartsWith(f, "node_filesystem_readonly") || f == "node_filesystem_device_error" ||
      EndsWith(f, "_info") || f == "node_time_zone_offset_seconds") {
    return {.exact = true};
  }
  if (StartsWith(f, "node_memory_") && EndsWith(f, "_bytes")) return {.slack = 64 * kMiB};
  if (f == "node_filesystem_avail_bytes" || f == "node_filesystem_free_bytes") {
    return {.slack = 16 * kMiB};
  }
  if (f == "node_filesystem_files_free") return {.slack = 10000};
  if (StartsWith(f, "node_load")) return {.slack = 0.5};
  if (StartsWith(f, "node_procs_") || f == "node_disk_io_now") return {.slack = 16};
  if (f == "node_filefd_allocated") return {.slack = 2000};
  if (f == "node_time_seconds") return {.slack = 1};
  if (f == "node_network_up") return {.slack = 0};
  // iowait can dip on tickless kernels; each side holds its own maximum.
  if (f == "node_cpu_seconds_total") return {.slack = 0.05};
  // Counters: the same kernel counter read before and after, converted the
  // same way; allow only rounding in the last digits.
  return {.slack = 1e-9, .relative = true};
}

void CompareValue(const std::string& family, const std::string& series, double a, double v,
                  double b) {
  Tolerance t = ToleranceFor(family);
  if (t.skip) return;
  if (t.exact) {
    EXPECT_TRUE(v == a && v == b) << family << series << ": node_exporter " << a << " / " << b
                                  << ", vigil " << v;
    return;
  }
  double lo = std::min(a, b), hi = std::max(a, b);
  double slack = t.relative ? t.slack * std::max(1.0, std::abs(hi)) : t.slack;
  EXPECT_TRUE(v >= lo - slack && v <= hi + slack)
      << family << series << ": vigil " << v << " outside node_exporter [" << a << ", " << b
      << "] +- " << slack;
}

std::string ReadAll(const char* path) {
  auto r = Env::Default()->ReadFile(path, 1 << 20);
  return r.ok() ? *r : "";
}

TEST(NodeExporterCompareTest, SameFamiliesSeriesAndValues) {
  if (::access(kNodeExporter, X_OK) != 0) {
    GTEST_SKIP() << kNodeExporter << " is not installed (apt-get install prometheus-node-exporter)";
  }
  int port = FreePort();
  ASSERT_GT(port, 0);
  NodeExporter ne({kNodeExporter, "--web.listen-address=127.0.0.1:" + std::to_string(port),
                   "--web.disable-exporter-metrics", "--log.level=warn",
                   "--collector.disable-defaults", "--collector.cpu", "--collector.stat",
                   "--collector.meminfo", "--collector.loadavg", "--collector.diskstats",
                   "--collector.netdev", "--collector.netclass", "--collector.filesystem",
                   "--collector.vmstat", "--collector.pressure", "--collector.filefd",
                   "--collector.uname", "--collector.time",
                   // Debian's default (upstream has none); Vigil's default too.
                   "--collector.netdev.device-exclude=^lo$",
                   // Vigil omits a speed of -1 ("unknown") rather than report -125000.
                   "--collector.netclass.ignore-invalid-speed"});
  Result<std::string> first = Unavailable("not started");
  for (int i = 0; i < 400 && !first.ok(); ++i) {  // readiness wait, not a timing check
    ASSERT_FALSE(ne.Exited()) << "node_exporter exited at start";
    Env::Default()->SleepMillis(25);
    first = HttpGet(port, "/metrics");
  }
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  collect::SystemCollectorOptions opts;
  // node_exporter lists PID 1's mounts; Vigil its own namespace's (see
  // SystemCollectorOptions::mounts_file). Compare like with like when they differ.
  if (ReadAll("/proc/1/mounts") != ReadAll("/proc/self/mounts") &&
      !ReadAll("/proc/1/mounts").empty()) {
    std::printf("note: /proc/1/mounts differs from /proc/self/mounts; comparing with PID 1's\n");
    opts.mounts_file = "/proc/1/mounts";
  }
  auto collector = collect::SystemCollector::Create(opts);
  ASSERT_TRUE(collector.ok()) << collector.status().ToString();
  wire::MetricBatchBuilder warmup("node", 0);  // first pass seeds CPU history, like node_exporter's
  (void)(*collector)->Collect(&warmup);

  auto a_text = HttpGet(port, "/metrics");
  wire::MetricBatchBuilder builder("node", Env::Default()->NowMillis());
  Status st = (*collector)->Collect(&builder);
  auto b_text = HttpGet(port, "/metrics");
  ASSERT_TRUE(a_text.ok() && b_text.ok());
  EXPECT_TRUE(st.ok()) << st.ToString();
  Exposition a = ParseExposition(*a_text), b = ParseExposition(*b_text);
  Exposition v = FromBatch(builder.batch());

  int compared = 0;
  for (const auto& [name, fa] : a) {
    if (!InScope(name) || fa.series.empty()) continue;
    if (auto e = Exceptions().find(name); e != Exceptions().end()) {
      std::printf("exception: %s (%s)\n", name.c_str(), e->second.c_str());
      continue;
    }
    auto fv = v.find(name);
    if (fv == v.end()) {
      ADD_FAILURE() << "vigil lacks family " << name;
      continue;
    }
    EXPECT_EQ(fv->second.type, fa.type) << name;
    EXPECT_EQ(fv->second.help, fa.help) << name;
    const Family& fb = b[name];
    for (const auto& [series, av] : fa.series) {
      auto sv = fv->second.series.find(series);
      auto sb = fb.series.find(series);
      if (sv == fv->second.series.end()) {
        ADD_FAILURE() << "vigil lacks series " << name << series;
        continue;
      }
      if (sb == fb.series.end()) continue;  // gone by the second scrape
      CompareValue(name, series, av, sv->second, sb->second);
      ++compared;
    }
  }
  // And nothing extra: every Vigil series is one node_exporter has.
  for (const auto& [name, fv] : v) {
    if (!InScope(name)) continue;
    auto fa = a.find(name);
    auto fb = b.find(name);
    for (const auto& [series, value] : fv.series) {
      bool known = (fa != a.end() && fa->second.series.count(series)) ||
                   (fb != b.end() && fb->second.series.count(series));
      EXPECT_TRUE(known) << "vigil has a series node_exporter lacks: " << name << series << " "
                         << value;
    }
  }
  std::printf("compared %d series in %zu vigil families\n", compared, v.size());
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace vigil

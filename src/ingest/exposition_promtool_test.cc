// Integration: our /metrics text must pass Prometheus' own parser and linter
// (`promtool check metrics`, Debian package `prometheus`), with no warnings.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "ingest/exposition.h"

namespace vigil::ingest {
namespace {

using wire::Labels;
using wire::MetricFamily;
using wire::MetricType;

std::string FindPromtool() {
  if (const char* env = std::getenv("VIGIL_PROMTOOL"); env && *env) return env;
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    std::string path = std::string(dir) + "/promtool";
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

struct RunResult {
  int exit_code = -1;
  std::string output;
};

RunResult RunShell(const std::string& command) {
  RunResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

net::ExpositionPoint P(std::string name, Labels labels, double v) {
  labels.push_back({"__name__", std::move(name)});
  wire::NormalizeLabels(&labels);
  return {std::move(labels), {0, v}};
}

// What a GPU node's /metrics looks like: node_exporter-style system families
// and DCGM-style GPU families, counters with _total, gauges, awkward values.
std::string RealisticExposition() {
  std::vector<MetricFamily> families = {
      {"node_cpu_seconds_total", MetricType::kCounter, "Seconds the CPUs spent in each mode."},
      // node_exporter's own node_memory_MemAvailable_bytes fails promtool's
      // snake_case lint, as does DCGM's modelName label; lint-clean names here.
      {"node_memory_available_bytes", MetricType::kGauge, "Memory available, from MemAvailable."},
      {"node_load1", MetricType::kGauge, "1m load average."},
      {"node_filesystem_avail_bytes", MetricType::kGauge,
       "Filesystem space available to non-root users in bytes."},
      {"node_network_receive_bytes_total", MetricType::kCounter,
       "Network device statistic receive_bytes."},
      {"DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge, "GPU utilization (in %)."},
      {"DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge, "GPU temperature (in C)."},
      {"DCGM_FI_DEV_FB_USED", MetricType::kGauge, "Framebuffer memory used (in MiB)."},
      {"DCGM_FI_DEV_XID_ERRORS", MetricType::kGauge,
       "Value of the last XID error encountered.\nSecond line with a \\ backslash."},
      {"vigil_scrape_errors_total", MetricType::kCounter, "Collector errors, by \"collector\"."},
  };
  std::vector<net::ExpositionPoint> points;
  for (int cpu = 0; cpu < 4; ++cpu) {
    for (const char* mode : {"idle", "iowait", "system", "user"}) {
      points.push_back(P("node_cpu_seconds_total", {{"cpu", std::to_string(cpu)}, {"mode", mode}},
                         12345.67 * (cpu + 1)));
    }
  }
  points.push_back(P("node_memory_available_bytes", {}, 1.6663435264e10));
  points.push_back(P("node_load1", {}, 0.42));
  points.push_back(P("node_filesystem_avail_bytes",
                     {{"device", "/dev/nvme0n1p2"}, {"fstype", "ext4"}, {"mountpoint", "/"}},
                     2.5e11));
  points.push_back(P("node_filesystem_avail_bytes",
                     {{"device", "server:/export \"quoted\""},
                      {"fstype", "nfs4"},
                      {"mountpoint", "/mnt/data\\set\nnewline"}},
                     0));
  points.push_back(P("node_network_receive_bytes_total", {{"device", "eth0"}}, 9.87654321e12));
  for (int gpu = 0; gpu < 2; ++gpu) {
    Labels l = {{"gpu", std::to_string(gpu)},
                {"uuid", "GPU-5fd2b3c4-0000-1111-2222-33334444555" + std::to_string(gpu)},
                {"model_name", "NVIDIA A100-SXM4-80GB"},
                {"hostname", "node-1"}};
    points.push_back(P("DCGM_FI_DEV_GPU_UTIL", l, gpu == 0 ? 97 : 0));
    points.push_back(P("DCGM_FI_DEV_GPU_TEMP", l, 64.5));
    points.push_back(P("DCGM_FI_DEV_FB_USED", l, 81037));
    points.push_back(P("DCGM_FI_DEV_XID_ERRORS", l, gpu == 1 ? 79 : 0));
  }
  points.push_back(P("vigil_scrape_errors_total", {{"collector", "nvml"}},
                     std::numeric_limits<double>::infinity()));
  points.push_back(P("vigil_scrape_errors_total", {{"collector", "proc"}}, std::nan("")));
  return net::RenderExposition(families, points);
}

TEST(ExpositionPromtoolTest, RealisticExpositionPassesPromtoolCheckMetrics) {
  const std::string promtool = FindPromtool();
  if (promtool.empty()) {
    GTEST_SKIP()
        << "promtool not found (install Debian package `prometheus` or set VIGIL_PROMTOOL)";
  }
  const std::string text = RealisticExposition();
  ASSERT_TRUE(ParseExposition(text).ok());  // our parser agrees first

  auto dir =
      std::filesystem::temp_directory_path() / ("vigil_promtool_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto file = dir / "metrics.txt";
  {
    std::ofstream out(file, std::ios::binary);
    out << text;
  }
  RunResult r = RunShell("'" + promtool + "' check metrics < '" + file.string() + "'");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.output << "\n--- exposition ---\n" << text;
  EXPECT_EQ(r.output, "") << "--- exposition ---\n" << text;
}

TEST(ExpositionPromtoolTest, PromtoolCatchesALintProblem) {
  // Guards the test above: a counter without _total must produce lint output,
  // so an empty output there means promtool really checked the text.
  const std::string promtool = FindPromtool();
  if (promtool.empty()) GTEST_SKIP() << "promtool not found";
  std::vector<MetricFamily> families = {{"requests", MetricType::kCounter, "Requests."}};
  std::vector<net::ExpositionPoint> points = {P("requests", {}, 1)};
  auto dir =
      std::filesystem::temp_directory_path() / ("vigil_promtool_neg_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto file = dir / "metrics.txt";
  {
    std::ofstream out(file, std::ios::binary);
    out << net::RenderExposition(families, points);
  }
  RunResult r = RunShell("'" + promtool + "' check metrics < '" + file.string() + "'");
  std::filesystem::remove_all(dir);
  EXPECT_NE(r.output.find("_total"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace vigil::ingest

// `vigil jobs`: the training and inference jobs of the instance's node, their
// state and why, and how busy their GPUs were (GET /api/v1/jobs with their
// efficiency reports, docs/jobs.md), as a table for a person or raw with
// --json.
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <set>
#include <string>

#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/home.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key) { return JsonString(j, key); }
int64_t Int(const json& j, const char* key) { return static_cast<int64_t>(JsonNumber(j, key)); }

std::string Duration(int64_t ms) {
  int64_t s = std::max<int64_t>(0, ms / 1000);
  char buf[32];
  if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s % 3600 / 60));
  }
  return buf;
}

const char* StateColor(const std::string& state) {
  if (state == "running") return "\033[32m";
  if (state == "stalled") return "\033[33m";
  if (state == "crashed") return "\033[31m";
  if (state == "completed") return "\033[34m";
  return "\033[2m";
}

// The BUSY column: the share of the job's GPU time its GPUs were busy, "-"
// without a report with shares (no GPU, or an older server).
std::string BusyText(const json& job) {
  if (!job.contains("efficiency") || !job["efficiency"].is_object()) return "-";
  const json& e = job["efficiency"];
  if (!e.contains("shares") || !e["shares"].is_object()) return "-";
  const json& s = e["shares"];
  if (!s.contains("gpu_busy") || !s["gpu_busy"].is_number()) return "-";
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.0f%%", 100 * s["gpu_busy"].get<double>());
  return buf;
}

}  // namespace

int RunJobs(const JobsFlags& flags) {
  auto base = ResolveServerUrl(flags.server, flags.home);
  if (!base.ok()) {
    std::fprintf(stderr, "%s\n", base.status().message().c_str());
    return 3;
  }
  auto r = GetJson(*base + "/api/v1/jobs?efficiency=1", std::chrono::seconds(10));
  if (!r.ok()) {
    std::fprintf(stderr, "vigil jobs: %s\n", r.status().message().c_str());
    return 1;
  }
  const json& jobs = (*r)["data"]["jobs"];
  if (flags.json) {
    std::printf("%s\n", r->dump().c_str());
    return 0;
  }
  if (!jobs.is_array() || jobs.empty()) {
    std::printf(
        "No training or inference job found on this node.\n"
        "Vigil finds them by themselves (PyTorch, TensorFlow, JAX, ..., torchrun, deepspeed, "
        "vLLM, ...);\nto record a job's exit status too, start it with `vigil run -- CMD`.\n");
    return 0;
  }
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  const int64_t now = std::time(nullptr) * 1000LL;
  // A server with agents lists several nodes' jobs: then say whose.
  std::set<std::string> nodes;
  for (const json& j : jobs) nodes.insert(Str(j, "node"));
  const bool by_node = nodes.size() > 1;
  if (by_node) std::printf("%-16s ", "NODE");
  std::printf("%-20s %-10s %-10s %-10s %-10s %5s %-8s %4s %-14s %-8s  %s\n", "NAME", "STATE",
              "USER", "FRAMEWORK", "LAUNCHER", "RANKS", "GPUS", "BUSY", "STARTED", "TIME",
              "REASON");
  for (const json& j : jobs) {
    std::string state = Str(j, "state");
    int64_t start = Int(j, "start_time_ms");
    int64_t end =
        j.contains("end_time_ms") && j["end_time_ms"].is_number() ? Int(j, "end_time_ms") : now;
    std::string framework = Str(j, "framework");
    std::string launcher = Str(j, "launcher");
    // Whose job: "" when not known (unreadable, or an older server's answer).
    std::string user = Str(j, "user");
    std::string gpus;  // "0,1": the GPUs its processes use, as NVML numbers them
    if (j.contains("gpus") && j["gpus"].is_array()) {
      for (const json& g : j["gpus"]) gpus += (gpus.empty() ? "" : ",") + Str(g, "gpu");
    }
    if (by_node) std::printf("%-16s ", Printable(Str(j, "node"), 16).c_str());
    std::printf("%-20s %s%-10s%s %-10s %-10s %-10s %5lld %-8s %4s %-14s %-8s  %s\n",
                Printable(Str(j, "name"), 20).c_str(), tty ? StateColor(state) : "", state.c_str(),
                tty ? "\033[0m" : "", user.empty() ? "-" : Printable(user, 10).c_str(),
                framework.empty() ? "-" : framework.c_str(),
                launcher.empty() ? "-" : launcher.c_str(),
                static_cast<long long>(Int(j, "world_size")),
                gpus.empty() ? "-" : Printable(gpus, 8).c_str(), BusyText(j).c_str(),
                LocalTime(start).c_str(), Duration(end - start).c_str(),
                Printable(Str(j, "reason_text"), 100).c_str());
  }
  return 0;
}

}  // namespace vigil::cli

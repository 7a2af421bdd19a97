#include "cli/run_efficiency.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "cli/api_client.h"
#include "cli/home.h"
#include "core/crypto.h"
#include "core/env.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

// The wrapper notes its start just before the command's exec: a job whose
// anchor started a little earlier (clocks in ms vs the kernel's ticks) is
// still this run's, one from minutes before is an older process on the pid.
constexpr int64_t kStartSlackMs = 5000;
constexpr auto kPoll = std::chrono::milliseconds(500);

}  // namespace

const json* FindRunJob(const json& jobs, int pid, int64_t started_ms) {
  if (!jobs.is_array()) return nullptr;
  for (const json& j : jobs) {
    if (!j.is_object() || JsonNumber(j, "start_time_ms") < started_ms - kStartSlackMs) continue;
    const auto procs = j.find("processes");
    if (procs == j.end() || !procs->is_array()) continue;
    for (const json& p : *procs) {
      if (p.is_object() && JsonNumber(p, "pid") == pid) return &j;
    }
  }
  return nullptr;
}

bool JobEnded(const json& job) {
  return job.contains("end_time_ms") && job["end_time_ms"].is_number();
}

std::optional<std::string> EfficiencyLineOf(const json& answer) {
  const json* data = answer.is_object() && answer.contains("data") ? &answer["data"] : nullptr;
  if (data == nullptr || !data->is_object() || !data->contains("efficiency")) return std::nullopt;
  const std::string summary = JsonString((*data)["efficiency"], "summary");
  if (summary.empty()) return std::nullopt;
  return "vigil run: " + Printable(JsonString(*data, "name"), 64) + ": " + Printable(summary, 400);
}

void PrintRunEfficiency(const std::string& home, int pid, int64_t started_ms, int64_t wait_ms) {
  auto base = ResolveServerUrl("", home);
  if (!base.ok()) return;  // no instance here: nothing recorded the run's GPUs
  Env* env = Env::Default();
  const int64_t deadline = env->NowMillis() + wait_ms;
  json found;
  // The server sees the run end at its agent's next pass (a second or two).
  for (;;) {
    auto jobs = GetJson(*base + "/api/v1/jobs", std::chrono::seconds(5));
    if (!jobs.ok()) return;
    const json list = jobs->is_object() && jobs->contains("data") && (*jobs)["data"].is_object()
                          ? (*jobs)["data"].value("jobs", json())
                          : json();
    const json* job = FindRunJob(list, pid, started_ms);
    if (job != nullptr) found = *job;
    if ((job != nullptr && JobEnded(*job)) || env->NowMillis() >= deadline) break;
    std::this_thread::sleep_for(kPoll);
  }
  if (found.is_null() || !found.contains("gpus") || !found["gpus"].is_array() ||
      found["gpus"].empty()) {
    return;  // not listed, or no GPU: no efficiency to tell
  }
  auto answer =
      GetJson(*base + "/api/v1/jobs/efficiency?id=" + UrlEncodeComponent(JsonString(found, "id")) +
                  "&node=" + UrlEncodeComponent(JsonString(found, "node")),
              std::chrono::seconds(10));
  if (!answer.ok()) return;
  if (auto line = EfficiencyLineOf(*answer)) std::fprintf(stderr, "%s\n", line->c_str());
}

}  // namespace vigil::cli

// The line `vigil run` prints when its command ends: how the run used its
// GPUs (the efficiency report of the jobs API, docs/jobs.md "Efficiency"),
// from the instance that recorded it: "vigil run: train: GPU busy 62%,
// input-bound 30%, idle 8% (0.16 GPU-h idle, about 0.40 USD)".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace vigil::cli {

// The job of GET /api/v1/jobs' `jobs` that ran the command `vigil run`
// started as `pid` at `started_ms` (one of its processes, started since; a
// pid reused by an older job does not count); null when none is listed.
const nlohmann::json* FindRunJob(const nlohmann::json& jobs, int pid, int64_t started_ms);

// Whether the listed job has ended as far as the server knows.
bool JobEnded(const nlohmann::json& job);

// "vigil run: <name>: <summary>" from GET /api/v1/jobs/efficiency's answer;
// none when it has no shares (no GPU, no samples).
std::optional<std::string> EfficiencyLineOf(const nlohmann::json& answer);

// Asks the instance of `home` (quietly: no instance, no line) for the run's
// report, waiting up to `wait_ms` for the server to see the run end, and
// prints its line on stderr.
void PrintRunEfficiency(const std::string& home, int pid, int64_t started_ms, int64_t wait_ms);

}  // namespace vigil::cli

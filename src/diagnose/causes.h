// The probable causes of an alert, ranked from the signals seen around it.
//
// The rules are data: kCauseRules (causes.cc) lists, for each cause id, the
// signals it needs (all of `all_of`, at least one of `any_of`, none of
// `none_of`), the signals
// that support it (each with a weight), its prior (how often the pattern,
// once its needs are met, is the real reason) and the public source that
// describes the pattern. docs/diagnosis.md renders the same table. Signals
// are plain ids ("alert:gpu_underutilized", "event:cuda_oom",
// "host_cpu_saturated", ...) found by diagnosis.h from the alert, the job's
// report, the node's metrics and the collapsed logs; each carries the
// evidence a person reads ("host CPU 97% busy over the last 5 min").
//
// Cause ids are an interface (tests and users refer to them):
// input_pipeline_cpu, input_pipeline_io, communication_bound,
// batch_too_small, host_device_transfer, thermal_throttle, power_throttle,
// host_memory_pressure, gpu_memory_pressure, learning_rate_too_high,
// bad_input_data, nccl_hang, gpu_hardware_fault, cuda_oom, host_oom_killed,
// code_error, preempted, environment_mismatch, unknown.
//
// Thread safety: pure functions over constant data.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace vigil::diagnose {

// One signal that was seen, and what shows it.
struct Signal {
  std::string id;
  std::string evidence;     // English
  std::string evidence_zh;  // Simplified Chinese
};

struct WeightedSignal {
  std::string_view id;
  double weight = 0;
};

struct CauseRule {
  std::string_view id;
  std::string_view title;
  std::string_view title_zh;
  std::vector<std::string_view> all_of;
  std::vector<std::string_view> any_of;
  std::vector<WeightedSignal> supporting;
  double prior = 0;
  std::string_view source;                     // a public page that describes the pattern
  std::vector<std::string_view> none_of = {};  // signals that rule it out
};

// The table, in the order docs/diagnosis.md lists it (unknown is not in it:
// it is what is left when no rule holds).
const std::vector<CauseRule>& CauseRules();
const CauseRule* FindCauseRule(std::string_view id);

struct RankedCause {
  std::string id;
  double confidence = 0;         // 0..1: prior × (0.75 + 0.25 × supporting weight seen / all)
  std::vector<Signal> evidence;  // the signals it rests on, needed ones first
};

// Every cause whose needs the signals meet, most confident first (ties by
// table order); `unknown` (confidence 0, no evidence) when none does.
std::vector<RankedCause> RankCauses(const std::vector<Signal>& signals);

}  // namespace vigil::diagnose
